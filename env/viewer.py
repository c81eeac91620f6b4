"""Interactive viewer for play.py: MuJoCo's passive viewer following the robot, steered from the keyboard.

Keys (GLFW key codes; chosen to stay clear of the viewer's own one-letter
rendering toggles, so WASD is not used):

    Up / Down arrows, keypad 8 / 2        vx  +/- 0.1 m/s
    Page Up / Page Down, keypad 4 / 6     vy  +/- 0.1 m/s (+ is to the left)
    Left / Right arrows, keypad 7 / 9     yaw rate +/- 0.2 rad/s (+ turns left)
    Enter, keypad 5                       zero the command
    Backspace, keypad 0                   reset the robot (new episode)

Commands are clamped to the config's trained ranges (``commands.*``). The key
handling is the pure function `apply_key`; `InteractiveViewer` only moves key
presses from the viewer's thread to the loop and draws the overlay.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import torch

from env.utils.command_schedule import COMMAND_NAMES, RANGE_FIELDS, Command
from utils.video import with_near_clip

# GLFW key codes (glfw.KEY_*), spelled out so that this module imports without glfw.
KEY_ENTER, KEY_BACKSPACE = 257, 259
KEY_RIGHT, KEY_LEFT, KEY_DOWN, KEY_UP = 262, 263, 264, 265
KEY_PAGE_UP, KEY_PAGE_DOWN = 266, 267
KEY_KP = {d: 320 + d for d in range(10)}  # keypad 0..9

STEP = (0.1, 0.1, 0.2)  # m/s, m/s, rad/s change of vx, vy, yaw rate per key press

# key -> (command index, direction)
VELOCITY_KEYS: dict[int, tuple[int, int]] = {
    KEY_UP: (0, +1), KEY_DOWN: (0, -1), KEY_KP[8]: (0, +1), KEY_KP[2]: (0, -1),
    KEY_PAGE_UP: (1, +1), KEY_PAGE_DOWN: (1, -1), KEY_KP[4]: (1, +1), KEY_KP[6]: (1, -1),
    KEY_LEFT: (2, +1), KEY_RIGHT: (2, -1), KEY_KP[7]: (2, +1), KEY_KP[9]: (2, -1),
}
ZERO_KEYS = {KEY_ENTER, KEY_KP[5]}
RESET_KEYS = {KEY_BACKSPACE, KEY_KP[0]}

HELP = ("Up/Down: vx   PgUp/PgDn: vy   Left/Right: yaw rate   Enter: zero   Backspace: reset   "
        "(keypad 8/2, 4/6, 7/9, 5, 0)")


@dataclass(frozen=True)
class KeyResult:
    command: Command  # the command after the key
    reset: bool = False  # the key asks for a new episode
    handled: bool = False  # the key is one of ours


def apply_key(key: int, command: Sequence[float], ranges: Sequence[Sequence[float]],
              step: Sequence[float] = STEP) -> KeyResult:
    """The command after pressing `key`, clamped to `ranges` ([lo, hi] for vx, vy, yaw rate).

    Pure: no state, no viewer. Unknown keys leave the command as it is.
    """
    cmd = [float(c) for c in command]
    if key in ZERO_KEYS:
        return KeyResult((0.0, 0.0, 0.0), handled=True)
    if key in RESET_KEYS:
        return KeyResult(tuple(cmd), reset=True, handled=True)  # type: ignore[arg-type]
    if key not in VELOCITY_KEYS:
        return KeyResult(tuple(cmd))  # type: ignore[arg-type]
    index, sign = VELOCITY_KEYS[key]
    lo, hi = ranges[index]
    value = round(cmd[index] + sign * step[index], 6)  # no 0.30000000000000004 drift
    cmd[index] = min(max(value, float(lo)), float(hi))
    return KeyResult(tuple(cmd), handled=True)  # type: ignore[arg-type]


def command_ranges(commands_cfg: Any) -> list[list[float]]:
    """The config's [lo, hi] ranges of vx, vy, yaw rate."""
    return [list(getattr(commands_cfg, f)) for f in RANGE_FIELDS]


def status_text(command: Sequence[float], measured: Sequence[float] | None = None,
                ranges: Sequence[Sequence[float]] | None = None) -> str:
    """One line: commanded (and measured) vx, vy, yaw rate."""
    parts = []
    for i, name in enumerate(COMMAND_NAMES):
        part = f"{name} {command[i]:+.2f}"
        if measured is not None:
            part += f" ({measured[i]:+.2f})"
        if ranges is not None and ranges[i][0] == ranges[i][1]:
            part += " [fixed]"
        parts.append(part)
    return "cmd " + "  ".join(parts) + ("  (measured)" if measured is not None else "")


def display_available() -> bool:
    """Whether a window can be opened: always on macOS and Windows, with $DISPLAY/$WAYLAND_DISPLAY on Linux."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def copy_sim_state(sim: Any, env_id: int, model: Any, data: Any) -> None:
    """Write env `env_id`'s state from a physics backend into an MjData and recompute derived fields."""
    import mujoco

    data.qpos[:] = sim.qpos[env_id].detach().cpu().numpy()
    data.qvel[:] = sim.qvel[env_id].detach().cpu().numpy()
    mujoco.mj_forward(model, data)


class InteractiveViewer:
    """`mujoco.viewer.launch_passive` on the env's model, camera tracking the base of env `ref_env`."""

    def __init__(self, robot: Any, viewer_cfg: Any, ref_env: int = 0):
        import mujoco
        import mujoco.viewer

        self._mujoco = mujoco
        self.robot = robot
        self.ref_env = ref_env
        self.model = with_near_clip(robot.model)  # on rough terrain MuJoCo's default cuts the near ground away
        self.data = mujoco.MjData(self.model)
        copy_sim_state(robot.sim, ref_env, self.model, self.data)
        self._keys: list[int] = []
        self._lock = threading.Lock()
        self.handle = mujoco.viewer.launch_passive(self.model, self.data, key_callback=self._on_key,
                                                   show_left_ui=False, show_right_ui=False)
        cam = self.handle.cam
        cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        cam.trackbodyid = robot.base_body_id
        cam.distance = float(viewer_cfg.distance)
        cam.elevation = float(viewer_cfg.elevation)
        cam.azimuth = float(viewer_cfg.azimuth)

    def _on_key(self, key: int) -> None:  # runs on the viewer's thread
        with self._lock:
            self._keys.append(int(key))

    def pop_keys(self) -> list[int]:
        with self._lock:
            keys, self._keys = self._keys, []
        return keys

    def is_running(self) -> bool:
        return self.handle.is_running()

    def show(self, text: str) -> None:
        """Copy the tracked env's state into the viewer and draw `text` in the top-left corner."""
        with self.handle.lock():
            copy_sim_state(self.robot.sim, self.ref_env, self.model, self.data)
        mj = self._mujoco
        try:
            self.handle.set_texts([(mj.mjtFontScale.mjFONTSCALE_150, mj.mjtGridPos.mjGRID_TOPLEFT, text, ""),
                                   (mj.mjtFontScale.mjFONTSCALE_100, mj.mjtGridPos.mjGRID_BOTTOMLEFT, HELP, "")])
        except AttributeError:  # a MuJoCo without text overlays: the loop prints instead
            pass
        self.handle.sync()

    def close(self) -> None:
        self.handle.close()


class FramePacer:
    """Keeps the simulation at real time however slowly the window draws.

    Each policy step is due at ``start + step * dt``; the loop sleeps only when it is
    ahead. A frame is drawn only after the simulation has had as much time as the last
    frame took, so a slow renderer (software GL, a remote display) lowers the frame
    rate, never the simulation's speed.
    """

    def __init__(self, dt: float, realtime: bool = True) -> None:
        self.dt = dt
        self.realtime = realtime
        self.start = time.perf_counter()
        self.next_frame = self.start
        self.frame_cost = 0.0

    def frame_due(self) -> bool:
        return time.perf_counter() >= self.next_frame

    @contextlib.contextmanager
    def drawing(self) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            ended = time.perf_counter()
            self.frame_cost = ended - began
            self.next_frame = ended + self.frame_cost

    def wait_for_step(self, step: int) -> None:
        if self.realtime:
            time.sleep(max(0.0, self.start + step * self.dt - time.perf_counter()))


def console_status(t: float, command: Sequence[float], measured: Sequence[float], base_xy: Sequence[float],
                   ranges: Sequence[Sequence[float]] | None = None) -> str:
    """The periodic terminal line of watch mode: episode time, command and measured velocities, base position."""
    return (f"t {t:6.1f} s  {status_text(command, measured, ranges)}  "
            f"base x {base_xy[0]:+.2f} y {base_xy[1]:+.2f} m")


def run_viewer(env: Any, policy: Callable[[torch.Tensor], torch.Tensor], driver: Any, cfg: Any,
               steps: int | None = None, ref_env: int = 0, realtime: bool = True,
               status_every_s: float = 1.0) -> int:
    """Watch the policy in the interactive viewer until the window closes (or `steps` policy steps).

    `driver` is a `CommandDriver` on the env's task; the keyboard sets one command for all envs.
    Every `status_every_s` of simulated time one line goes to the terminal (`console_status`),
    so a run can be followed, or checked, without looking at the window.
    Returns the number of policy steps run.
    """
    ranges = command_ranges(cfg.commands)
    command: Command = (0.0, 0.0, 0.0)
    driver.set(command)
    obs, _ = env.reset()
    viewer = InteractiveViewer(env.robot, cfg.viewer, ref_env)
    print(f"viewer: {HELP}", flush=True)
    print(status_text(command, ranges=ranges), flush=True)
    dt = env.robot.dt
    status_every = max(1, int(round(status_every_s / dt)))
    pacer = FramePacer(dt, realtime)
    step = 0
    try:
        while viewer.is_running() and (steps is None or step < steps):
            reset = False
            for key in viewer.pop_keys():
                result = apply_key(key, command, ranges)
                if result.handled and result.command != command:
                    command = result.command
                    print(status_text(command, ranges=ranges), flush=True)
                reset |= result.reset
            driver.set(command)
            if reset:
                obs, _ = env.reset()
            with torch.inference_mode():
                actions = policy(obs)
            obs, _, _, _, _, _ = env.step(actions)
            robot = env.robot
            measured = (float(robot.base_lin_vel[ref_env, 0]), float(robot.base_lin_vel[ref_env, 1]),
                        float(robot.base_ang_vel[ref_env, 2]))
            if pacer.frame_due():
                with pacer.drawing():
                    viewer.show(status_text(command, measured, ranges))
            step += 1
            if step % status_every == 0:
                t = float(robot.episode_length_buf[ref_env]) * dt
                base = robot.base_pos[ref_env]
                print(console_status(t, command, measured, (float(base[0]), float(base[1])), ranges), flush=True)
            pacer.wait_for_step(step)
    finally:
        viewer.close()
    return step
