import pytest
import torch

import env.viewer as viewer
from env.gym_env_wrapper import make_env
from env.utils.command_schedule import CommandDriver
from env.viewer import (KEY_BACKSPACE, KEY_DOWN, KEY_ENTER, KEY_KP, KEY_LEFT, KEY_PAGE_DOWN, KEY_PAGE_UP,
                        KEY_RIGHT, KEY_UP, apply_key, display_available, status_text)

RANGES = [[-1.0, 1.0], [-0.5, 0.5], [-1.0, 1.0]]


def test_arrow_keys_step_vx_and_yaw():
    assert apply_key(KEY_UP, (0, 0, 0), RANGES).command == (0.1, 0.0, 0.0)
    assert apply_key(KEY_DOWN, (0, 0, 0), RANGES).command == (-0.1, 0.0, 0.0)
    assert apply_key(KEY_LEFT, (0, 0, 0), RANGES).command == (0.0, 0.0, 0.2)  # + turns left
    assert apply_key(KEY_RIGHT, (0, 0, 0), RANGES).command == (0.0, 0.0, -0.2)
    assert apply_key(KEY_PAGE_UP, (0, 0, 0), RANGES).command == (0.0, 0.1, 0.0)
    assert apply_key(KEY_PAGE_DOWN, (0, 0, 0), RANGES).command == (0.0, -0.1, 0.0)
    assert apply_key(KEY_KP[8], (0, 0, 0), RANGES).command == (0.1, 0.0, 0.0)
    assert apply_key(KEY_KP[6], (0, 0, 0), RANGES).command == (0.0, -0.1, 0.0)


def test_repeated_presses_accumulate_without_float_drift_and_clamp():
    cmd = (0.0, 0.0, 0.0)
    for _ in range(3):
        cmd = apply_key(KEY_UP, cmd, RANGES).command
    assert cmd[0] == 0.3
    for _ in range(20):
        cmd = apply_key(KEY_UP, cmd, RANGES).command
    assert cmd[0] == 1.0  # the trained range's upper end
    fixed = apply_key(KEY_PAGE_UP, (0, 0, 0), [[-1, 1], [0.0, 0.0], [-1, 1]])
    assert fixed.command == (0.0, 0.0, 0.0) and fixed.handled


def test_zero_reset_and_unknown_keys():
    r = apply_key(KEY_ENTER, (0.5, 0.1, -0.4), RANGES)
    assert r.command == (0.0, 0.0, 0.0) and not r.reset and r.handled
    r = apply_key(KEY_BACKSPACE, (0.5, 0.1, -0.4), RANGES)
    assert r.command == (0.5, 0.1, -0.4) and r.reset
    r = apply_key(ord("W"), (0.5, 0.1, -0.4), RANGES)  # the viewer's own wireframe toggle: not ours
    assert r.command == (0.5, 0.1, -0.4) and not r.handled and not r.reset


def test_status_text():
    text = status_text((0.5, 0.0, -0.2), (0.45, 0.01, -0.19), [[-1, 1], [0, 0], [-1, 1]])
    assert "vx +0.50 (+0.45)" in text and "[fixed]" in text and "\n" not in text


def test_display_detection(monkeypatch):
    monkeypatch.setattr(viewer.sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not display_available()
    monkeypatch.setenv("DISPLAY", ":0")
    assert display_available()


class FakeViewer:
    """Stands in for MuJoCo's window: replays scripted key presses, records what is shown."""

    script: dict[int, list[int]] = {}
    shown: list[str] = []

    def __init__(self, robot, viewer_cfg, ref_env=0):
        self.step = 0
        FakeViewer.shown = []

    def pop_keys(self):
        return FakeViewer.script.get(self.step, [])

    def is_running(self):
        return True

    def show(self, text):
        FakeViewer.shown.append(text)
        self.step += 1

    def close(self):
        pass


def test_viewer_loop_drives_commands_from_keys(qmini_cfg, monkeypatch):
    env = make_env(qmini_cfg)
    driver = CommandDriver(env.task)
    FakeViewer.script = {1: [KEY_UP, KEY_UP], 3: [KEY_LEFT], 5: [KEY_BACKSPACE], 6: [KEY_ENTER]}
    monkeypatch.setattr(viewer, "InteractiveViewer", FakeViewer)
    seen = []
    policy = lambda obs: (seen.append(env.task.commands[0].clone()), torch.zeros(env.num_envs, env.num_actions))[1]  # noqa: E731
    steps = viewer.run_viewer(env, policy, driver, qmini_cfg, steps=8, realtime=False)
    assert steps == 8 and len(FakeViewer.shown) == 8
    assert torch.allclose(seen[0], torch.zeros(3))
    assert torch.allclose(seen[1], torch.tensor([0.2, 0.0, 0.0]))
    assert torch.allclose(seen[3], torch.tensor([0.2, 0.0, 0.2]))
    assert torch.allclose(seen[5], torch.tensor([0.2, 0.0, 0.2]))  # reset keeps the command
    assert torch.allclose(seen[6], torch.zeros(3))
    assert "vx +0.20" in FakeViewer.shown[2]


@pytest.mark.parametrize("key", [KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT])
def test_keys_never_leave_the_ranges(key):
    cmd = (0.0, 0.0, 0.0)
    for _ in range(50):
        cmd = apply_key(key, cmd, RANGES).command
    assert all(lo <= v <= hi for v, (lo, hi) in zip(cmd, RANGES))


def test_frame_pacer_keeps_real_time_with_a_slow_renderer():
    """A window that takes 5 policy steps to draw lowers the frame rate, not the simulation's speed."""
    import time

    pacer = viewer.FramePacer(dt=0.01)
    frames = steps = 0
    start = time.perf_counter()
    while steps < 50:
        if pacer.frame_due():
            with pacer.drawing():
                time.sleep(0.05)
            frames += 1
        steps += 1
        pacer.wait_for_step(steps)
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5 + 0.25  # 50 steps of 10 ms: real time (plus a frame of lag and scheduling noise)
    assert 2 <= frames <= 8  # about half the wall time drawing, not one frame per step
