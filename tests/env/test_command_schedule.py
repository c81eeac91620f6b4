import math
from types import SimpleNamespace

import pytest
import torch

from env.gym_env_wrapper import make_env
from env.utils.command_schedule import (CommandDriver, CommandSchedule, CommandScheduleError,
                                        clamp_to_ranges)


def test_parse_string_and_lookup():
    s = CommandSchedule.parse("0.5,0,0@5;0,0,1@5")
    assert [seg.command for seg in s.segments] == [(0.5, 0.0, 0.0), (0.0, 0.0, 1.0)]
    assert s.duration == 10.0
    assert s.at(0.0) == (0.5, 0.0, 0.0)
    assert s.at(4.99) == (0.5, 0.0, 0.0)
    assert s.at(5.0) == (0.0, 0.0, 1.0)
    assert s.at(100.0) == (0.0, 0.0, 1.0)  # the last command holds after the end
    assert s.num_steps(0.02) == 500
    assert str(s) == "0.5,0,0@5;0,0,1@5"


def test_parse_tolerates_spaces_trailing_separator_and_open_end():
    s = CommandSchedule.parse(" 0.3, 0 ,-0.5 @ 2 ; 0.1,0,0 ;")
    assert s.segments[0].command == (0.3, 0.0, -0.5) and s.segments[0].duration == 2.0
    assert math.isinf(s.duration) and s.num_steps(0.02) is None
    assert s.at(1e6) == (0.1, 0.0, 0.0)


def test_a_schedule_longer_than_a_file_name_is_read_as_a_schedule():
    s = CommandSchedule.parse(";".join(["0.5,0,0@1"] * 40))  # 399 characters: os.stat would refuse the name
    assert s.duration == 40.0 and s.at(39.5) == (0.5, 0.0, 0.0)


def test_step_boundaries_do_not_drift():
    dt = 0.015
    s = CommandSchedule.parse("1,0,0@0.3;2,0,0@0.3")
    seen = [s.at(k * dt)[0] for k in range(s.num_steps(dt))]
    assert seen.count(1.0) == 20 and seen.count(2.0) == 20


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("  ", "empty"),
    ("0.5,0@5", "needs 3 values"),
    ("0.5,0,0,1@5", "needs 3 values"),
    ("a,0,0@5", "not a number"),
    ("0.5,0,0@x", "not a number"),
    ("0.5,0,0@0", "duration must be > 0"),
    ("0.5,0,0@-1", "duration must be > 0"),
    ("nan,0,0@1", "finite"),
    ("0.5,0,0;0,0,1@5", "needs a duration"),
    ("0.5,0,0@5;;0,0,1@5", "empty"),
])
def test_bad_strings_give_one_line_errors(text, message):
    with pytest.raises(CommandScheduleError, match=message) as info:
        CommandSchedule.parse(text)
    assert "\n" not in str(info.value)


def test_yaml_file(tmp_path):
    path = tmp_path / "walk.yaml"
    path.write_text("commands:\n"
                    "  - {command: [0.5, 0, 0], duration: 2}\n"
                    "  - {yaw: 1.0, duration: 1.5}\n"
                    "  - 0.2,0,0@1\n")
    s = CommandSchedule.parse(str(path))
    assert [seg.command for seg in s.segments] == [(0.5, 0.0, 0.0), (0.0, 0.0, 1.0), (0.2, 0.0, 0.0)]
    assert s.duration == 4.5


@pytest.mark.parametrize("body, message", [
    ("{a: 1}", "list of commands"),
    ("- {command: [1, 2], duration: 1}", r"\[vx, vy, yaw\]"),
    ("- {vx: 1, speed: 2, duration: 1}", "unknown keys"),
    ("- {vx: 1}\n- {vx: 2, duration: 1}", "needs a duration"),
    ("- [1, 2", "not valid YAML"),
])
def test_bad_yaml_files(tmp_path, body, message):
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(CommandScheduleError, match=message):
        CommandSchedule.parse(str(path))


def test_missing_yaml_file(tmp_path):
    with pytest.raises(CommandScheduleError, match="not found"):
        CommandSchedule.parse(str(tmp_path / "nope.yaml"))


def test_out_of_range_notes_and_clamp():
    cfg = SimpleNamespace(lin_vel_x=[-0.3, 0.7], lin_vel_y=[0.0, 0.0], ang_vel_yaw=[-1.0, 1.0])
    notes = CommandSchedule.parse("1.0,0,0@1;0,0.2,0@1;0.5,0,-1@1").out_of_range(cfg)
    assert len(notes) == 2 and "vx=1" in notes[0] and "vy=0.2" in notes[1]
    assert clamp_to_ranges((1.0, 0.2, -3.0), cfg) == (0.7, 0.0, -1.0)


def test_driver_holds_commands_through_resets(qmini_cfg):
    qmini_cfg.env.episode_length_s = 0.1  # episodes end every few steps: resets must keep the command
    env = make_env(qmini_cfg)
    driver = CommandDriver(env.task)
    driver.set((0.4, 0.0, -0.5))
    obs, _ = env.reset()
    expected = torch.tensor([0.4, 0.0, -0.5])
    cmd_cols = slice(6, 9)  # commands in the newest frame: after base_ang_vel(3), projected_gravity(3)
    frame = env.task.frame_size
    scale = env.task.command_scale
    resets = 0
    for _ in range(12):
        obs, _, _, done, _, _ = env.step(torch.zeros(env.num_envs, env.num_actions))
        resets += int(done.sum())
        assert torch.allclose(env.task.commands, expected.expand_as(env.task.commands))
        assert torch.allclose(obs[:, -frame:][:, cmd_cols], expected * scale)
    assert resets > 0
    per_env = torch.stack([torch.tensor([0.1 * i, 0.0, 0.0]) for i in range(env.num_envs)])
    driver.set(per_env)
    assert torch.equal(env.task.commands, per_env)


def test_driver_needs_a_commanded_task():
    with pytest.raises(ValueError, match="no velocity commands"):
        CommandDriver(SimpleNamespace())
