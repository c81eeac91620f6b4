import json
import math
from types import SimpleNamespace

import pytest
import torch

from rl.eval_plots import plot_tracking
from rl.evaluation import (EpisodeMetrics, EvalResult, apply_zero_threshold, eval_commands, format_fall_causes,
                           format_table, parse_policy_list, random_policy, round_floats, write_json, zero_policy)

T = torch.tensor


def _step(m, cmd, vel, yaw, tau, qd, xy, rew=1.0, done=False, timeout=False):
    return m.step(T([cmd]), T([vel]), T([yaw]), T([tau]), T([qd]), T([xy]), T([rew]), T([done]), T([timeout]))


def test_metrics_on_a_hand_example():
    # dt 0.5 s; command vx 1 m/s; achieved 0.5 then 1.5 m/s -> error 0.5 both steps -> RMS 0.5.
    # torques (2, -1) N*m at joint speeds (1, 3) rad/s -> |2*1| + |-1*3| = 5 W -> 2.5 J per step, 5 J.
    # the base moves 1 m per step -> 2 m -> 2.5 J/m. Yaw: commanded 0.2, achieved 0 and 0.4 -> RMS 0.2.
    m = EpisodeMetrics(1, dt=0.5, base_xy=T([[0.0, 0.0]]))
    _step(m, (1, 0, 0.2), (0.5, 0.0), 0.0, (2, -1), (1, 3), (1.0, 0.0), rew=0.25)
    _step(m, (1, 0, 0.2), (1.5, 0.0), 0.4, (2, -1), (1, 3), (2.0, 0.0), rew=0.75)
    env = m.per_env()
    assert env["lin_vel_rmse"].item() == pytest.approx(0.5)
    assert env["yaw_rate_rmse"].item() == pytest.approx(0.2)
    assert env["lin_vel_offset"].item() == pytest.approx(0.0, abs=1e-6)  # -0.5 then +0.5: no steady part
    assert env["yaw_rate_offset"].item() == pytest.approx(0.0, abs=1e-6)
    assert env["energy_J"].item() == pytest.approx(5.0)
    assert env["distance_m"].item() == pytest.approx(2.0)
    assert env["displacement_m"].item() == pytest.approx(2.0)  # straight ahead: path and displacement agree
    assert env["task_reward"].item() == pytest.approx(1.0)
    assert env["episode_length_s"].item() == pytest.approx(1.0)
    s = m.summary()
    assert s["energy_per_metre"] == pytest.approx(2.5)
    assert s["fall_rate"] == 0.0 and s["episodes"] == 1


def test_rms_is_over_time_not_of_the_mean_error():
    # errors +1 and -1: mean error 0, RMS 1; lateral errors count in the planar norm
    m = EpisodeMetrics(1, dt=0.1, base_xy=T([[0.0, 0.0]]))
    _step(m, (0, 0, 0), (1.0, 0.0), 0.0, (0,), (0,), (0.0, 0.0))
    _step(m, (0, 0, 0), (-1.0, 0.0), 0.0, (0,), (0,), (0.0, 0.0))
    _step(m, (0, 0, 0), (0.0, 1.0), 0.0, (0,), (0,), (0.0, 0.0))
    assert m.per_env()["lin_vel_rmse"].item() == pytest.approx(1.0)
    assert m.per_env()["lin_vel_offset"].item() == pytest.approx(1 / 3)  # mean error (0, 1/3)
    assert m.summary()["energy_per_metre"] is None  # did not move: J/m undefined


def test_stepping_back_and_forth_is_path_length_not_displacement():
    # 1 m ahead, 1 m back, 0.5 m sideways: a 2.5 m path that ends 0.5 m from the spawn point
    m = EpisodeMetrics(1, dt=0.1, base_xy=T([[3.0, 4.0]]))
    for xy in [(4.0, 4.0), (3.0, 4.0), (3.0, 4.5)]:
        _step(m, (0, 0, 0), (0.0, 0.0), 0.0, (0,), (0,), xy)
    _step(m, (0, 0, 0), (0.0, 0.0), 0.0, (0,), (0,), (9.0, 9.0), done=True)  # the reset robot's new spawn
    env = m.per_env()
    assert env["distance_m"].item() == pytest.approx(2.5)
    assert env["displacement_m"].item() == pytest.approx(0.5)
    assert m.summary()["displacement_m"] == pytest.approx(0.5)


def test_a_steady_error_is_all_offset():
    m = EpisodeMetrics(1, dt=0.1, base_xy=T([[0.0, 0.0]]))
    for _ in range(3):
        _step(m, (0.5, 0.0, 1.0), (0.3, 0.0), 0.7, (0,), (0,), (0.0, 0.0))
    s = m.summary()
    assert s["lin_vel_offset"] == pytest.approx(s["lin_vel_rmse"]) == pytest.approx(0.2)
    assert s["yaw_rate_offset"] == pytest.approx(s["yaw_rate_rmse"]) == pytest.approx(0.3)


def test_falls_timeouts_and_steps_after_the_end():
    # env 0 falls at step 2, env 1 times out at step 3; later steps (new episodes) are ignored.
    m = EpisodeMetrics(2, dt=1.0, base_xy=torch.zeros(2, 2))
    z2, one = torch.zeros(2, 2), torch.ones(2)
    seq = [((False, False), (False, False)), ((True, False), (False, False)), ((False, True), (False, True)),
           ((True, True), (False, True))]
    for done, timeout in seq:
        m.step(torch.zeros(2, 3), z2, torch.zeros(2), torch.zeros(2, 1), torch.zeros(2, 1), z2, one,
               T(done), T(timeout))
    env = m.per_env()
    assert env["episode_length_s"].tolist() == [2.0, 3.0]
    assert env["task_reward"].tolist() == [2.0, 3.0]
    assert env["fell"].tolist() == [1.0, 0.0]
    assert m.samples.tolist() == [1.0, 2.0]  # the ending step is not sampled (the robot was already reset)
    s = m.summary()
    assert s["fall_rate"] == 0.5 and s["timeout_rate"] == 0.5
    assert not m.active.any()


def test_swing_height_counts_feet_off_the_ground_and_moving_in_sampled_envs():
    m = EpisodeMetrics(2, dt=0.1, base_xy=torch.zeros(2, 2))
    assert m.summary()["swing_height_m"] is None  # no foot swung yet
    fast, still = [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    # env 0: foot 0 swinging at 0.02-0.10 m over five steps; foot 1 down (in contact, moving: a slip), foot 2
    # airborne but still (lifted, not swinging). env 1 swings high but was not sampled (its episode ended).
    for h in (0.02, 0.04, 0.06, 0.08, 0.10):
        m.add_swing(T([[h, 0.3, 0.3], [0.5, 0.5, 0.5]]), T([[False, True, False], [False, False, False]]),
                    T([[fast, fast, still], [fast, fast, fast]]), T([True, False]))
    s = m.summary()
    assert s["swing_height_m"] == pytest.approx(0.06)
    assert s["swing_height_p10_m"] == pytest.approx(0.028)  # linear interpolation between 0.02 and 0.04


def test_fall_causes_count_the_conditions_set_when_each_first_episode_fell():
    m = EpisodeMetrics(3, dt=1.0, base_xy=torch.zeros(3, 2))
    z2, one = torch.zeros(3, 2), torch.ones(3)

    def step(done, timeout, contact, tilt):
        m.step(torch.zeros(3, 3), z2, torch.zeros(3), torch.zeros(3, 1), torch.zeros(3, 1), z2, one, T(done), T(timeout))
        m.add_fall_causes({"contact": T(contact), "tilt": T(tilt)})

    # step 1: env 0 falls by contact and tilt; env 1's tilt flag is set but it did not end (not a fall)
    step((True, False, False), (False, False, False), (True, False, False), (True, True, False))
    # step 2: env 1 times out with contact set (not a fall); env 0's second episode falls (not counted)
    step((True, True, False), (False, True, False), (True, True, False), (False, False, False))
    # step 3: env 2 falls by contact
    step((False, False, True), (False, False, False), (False, False, True), (False, False, False))
    s = m.summary()
    assert s["fall_rate"] == pytest.approx(2 / 3)
    assert s["fall_causes"] == {"contact": 2, "tilt": 1}
    line = format_fall_causes({"trained": s, "zero": {"fall_causes": {"contact": 0}}})
    assert line == "trained: falls by cause (one fall can have several): contact 2, tilt 1"


def test_grid_commands_cover_the_ranges():
    cfg = SimpleNamespace(lin_vel_x=[-0.3, 0.7], lin_vel_y=[0.0, 0.0], ang_vel_yaw=[-1.0, 1.0], zero_threshold=0.15)
    cmds, mode = eval_commands(cfg, 9, torch.Generator().manual_seed(0))
    assert mode == "grid" and cmds.shape == (9, 3)
    assert sorted(set(cmds[:, 0].tolist())) == pytest.approx([-0.3, 0.2, 0.7])
    assert sorted(set(cmds[:, 2].tolist())) == pytest.approx([-1.0, 0.0, 1.0])
    assert torch.all(cmds[:, 1] == 0)
    cmds, mode = eval_commands(cfg, 5, torch.Generator().manual_seed(0))
    assert mode == "grid 4 + random 1"
    cmds, _ = eval_commands(SimpleNamespace(lin_vel_x=[0.0, 0.1], lin_vel_y=[0.0, 0.0], ang_vel_yaw=[0.0, 0.0],
                                            zero_threshold=0.15), 4)
    assert torch.all(cmds == 0)  # like training: commands below the threshold are exact zeros
    cmds, mode = eval_commands(cfg, 3, torch.Generator().manual_seed(0))
    assert mode == "random" and torch.all(cmds[:, 0] >= -0.3) and torch.all(cmds[:, 0] <= 0.7)


def test_zero_threshold_matches_training():
    out = apply_zero_threshold(T([[0.1, 0.1, 0.1], [0.3, 0.0, -0.5]]), 0.2)
    assert torch.equal(out, T([[0.0, 0.0, 0.0], [0.3, 0.0, -0.5]]))


def test_baselines():
    obs = torch.zeros(5, 7)
    assert torch.equal(zero_policy(3)(obs), torch.zeros(5, 3))
    std = T([0.1, 1.0, 3.0])
    a = torch.cat([random_policy(std, 3, seed=1)(torch.zeros(4000, 7))])
    assert a.std(0).tolist() == pytest.approx(std.tolist(), rel=0.1)
    assert torch.equal(random_policy(std, 3, seed=1)(obs), random_policy(std, 3, seed=1)(obs))  # seeded


def test_policy_list_and_table():
    assert parse_policy_list("trained, zero,random") == ["trained", "zero", "random"]
    with pytest.raises(ValueError, match="unknown policy 'best'"):
        parse_policy_list("trained,best")
    with pytest.raises(ValueError, match="twice"):
        parse_policy_list("zero,zero")
    table = format_table({"trained": {"fall_rate": 0.0, "energy_per_metre": None},
                          "zero": {"fall_rate": 1.0, "energy_per_metre": 12.0}})
    lines = table.splitlines()
    assert "trained" in lines[0] and "zero" in lines[0]
    assert any(line.startswith("fall rate") and "1.00" in line for line in lines)
    assert any(line.startswith("energy (J/m)") and "-" in line and "12.0" in line for line in lines)


def test_json_has_no_nan(tmp_path):
    path = write_json(tmp_path / "eval.json", round_floats({"a": float("nan"), "b": [1.23456789, math.inf]}))
    assert json.loads(path.read_text()) == {"a": None, "b": [1.234568, None]}


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    t = [0.1, 0.2, 0.3]
    cmd = torch.zeros(3, 2, 3)
    res = EvalResult({}, {}, torch.zeros(2, 3), t, cmd, torch.randn(3, 2, 3))
    path = plot_tracking({"trained": res, "zero": res}, tmp_path / "p.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
