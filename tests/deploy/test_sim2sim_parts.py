"""The pieces of deploy against the training code they mirror (tests may import both; deploy may not)."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
import torch

from deploy.commands import parse_schedule, random_schedule
from deploy.episodes import EpisodePlan, RunOptions, plan_episodes, run_episodes
from deploy.observation import GaitClock, ObservationBuilder, RobotState, quat_rotate_inverse
from deploy.policy_io import DeployError, read_policy_yaml
from deploy.robot_model import build_robot
from tests.deploy.conftest import GO2_MODEL, QMINI_MODEL


def test_quat_rotate_inverse_matches_mujoco():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(5, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    v = rng.normal(size=(5, 3))
    for qi, vi, got in zip(q, v, quat_rotate_inverse(q, v)):
        conj, want = np.array([qi[0], -qi[1], -qi[2], -qi[3]]), np.zeros(3)
        mujoco.mju_rotVecQuat(want, vi, conj)
        np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("text", ["0.5,0,0@5;0,0,1@5", "0.3,0,0", "0.2,0.1,-0.5@1.5;0,0,0@2;", "1,0,0@2;0,0,0"])
def test_schedule_parser_agrees_with_play(text):
    from env.utils.command_schedule import CommandSchedule

    ours, theirs = parse_schedule(text), CommandSchedule.parse(text)
    assert str(ours) == str(theirs)
    for t in np.arange(0.0, 12.0, 0.25):
        np.testing.assert_allclose(ours.at(float(t)), theirs.at(float(t)))


@pytest.mark.parametrize("text", ["", "1,2@3", "1,2,x@1", "1,0,0;0,0,0@1", "1,0,0@-1", "nan,0,0@1", "a.yaml"])
def test_schedule_parser_rejects(text):
    with pytest.raises(DeployError):
        parse_schedule(text)


def test_random_schedule_zero_threshold():
    ranges = np.array([[-1.0, 1.0], [-0.5, 0.5], [-1.0, 1.0]])
    s = random_schedule(np.random.default_rng(0), ranges, 0.2, 20.0, 5.0)
    assert len(s.commands) == 4 and list(s.starts) == [0, 5, 10, 15]
    planar = np.linalg.norm(s.commands[:, :2], axis=1)
    assert ((planar == 0) | (planar >= 0.2)).all() and ((s.commands[:, 2] == 0) | (abs(s.commands[:, 2]) >= 0.2)).all()


def test_random_schedule_jitter_spreads_the_command_changes():
    """With jitter each command lasts every +- jitter, the schedule still covers the episode, and the changes
    fall at many moments (a 2 Hz gait clock: every phase), not on multiples of `every` (one phase)."""
    ranges = np.array([[-1.0, 1.0], [0.0, 0.0], [-1.0, 1.0]])
    starts = []
    for seed in range(20):
        s = random_schedule(np.random.default_rng(seed), ranges, 0.2, 20.0, 5.0, jitter=2.0)
        assert ((s.durations >= 3.0) & (s.durations <= 7.0)).all()
        assert s.durations.sum() >= 20.0 and len(s.commands) == 7  # ceil(20 / 3): enough for the shortest draws
        starts += [t for t in s.starts[1:] if t < 20.0]
    phases = np.remainder(np.array(starts) * 2.0, 1.0)  # gait phase at each change, at 2 Hz
    assert np.histogram(phases, bins=4, range=(0, 1))[0].min() >= 5  # every quarter of the cycle is hit
    plain = random_schedule(np.random.default_rng(0), ranges, 0.2, 20.0, 5.0)
    assert np.allclose(np.remainder(plain.starts * 2.0, 1.0), 0.0)  # without: every change at phase 0


def _env_state(env, robot, gait_clock: np.ndarray) -> RobotState:
    """Our RobotState of the training env's own simulation state (float64, as a robot program would hold it)."""
    qpos, qvel = env.robot.sim.qpos.numpy().astype(np.float64), env.robot.sim.qvel.numpy().astype(np.float64)
    fq, fv = robot.free_qpos, robot.free_qvel
    return RobotState(base_quat=qpos[:, fq + 3:fq + 7], base_ang_vel=qvel[:, fv + 3:fv + 6],
                      dof_pos=qpos[:, robot.qpos_idx], dof_vel=qvel[:, robot.qvel_idx],
                      commands=env.task.commands.numpy().astype(np.float64),
                      last_action=env.robot.actions.numpy().astype(np.float64), gait_clock=gait_clock)


def check_observation_parity(experiment, export, model_path, steps: int = 12) -> None:
    """Step the training env; our observation of its state, history and gait clock included, equals its own."""
    from config import load_saved_config
    from env.gym_env_wrapper import make_env

    cfg = load_saved_config(experiment / "model" / "cfg.yaml")
    cfg.env.num_envs = 3
    cfg.noise.add_noise = False
    env = make_env(cfg, "cpu")
    spec = read_policy_yaml(export)
    robot = build_robot(model_path, spec)
    obs, _ = env.reset()
    gait = env.task.gait
    clock = GaitClock(3, gait.frequency.numpy() if gait is not None else 0.0, spec.control_dt)
    builder = ObservationBuilder(spec, 3)
    builder.reset(np.arange(3), _env_state(env, robot, clock.observation()))
    np.testing.assert_allclose(builder.observe(_env_state(env, robot, clock.observation())), obs.numpy(), atol=2e-5)
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        obs, _, _, done, _, _ = env.step(torch.randn(3, env.num_actions, generator=gen) * 0.5)
        assert not done.any()
        clock.advance()
        ours = builder.observe(_env_state(env, robot, clock.observation()))
        np.testing.assert_allclose(ours, obs.numpy(), atol=2e-5)


def test_observation_matches_the_training_env_go2(experiments, go2_export):
    check_observation_parity(experiments / "walk", go2_export, GO2_MODEL)


def test_observation_matches_the_training_env_qmini(qmini_experiment):
    """Qmini's policy observes a 3-frame history and the gait clock."""
    spec = read_policy_yaml(qmini_experiment / "export")
    assert spec.history_length == 3 and spec.terms[-1].name == "gait_clock"
    check_observation_parity(qmini_experiment, qmini_experiment / "export", QMINI_MODEL)


def test_spawn_height_and_feet(go2_export):
    robot = build_robot(GO2_MODEL, read_policy_yaml(go2_export))
    assert robot.keyframe_height is None  # a robot-only MJCF: no keyframe, and no floor (one is added)
    assert robot.model.geom(robot.floor_geoms[0]).name == "floor"
    # the MJCF's comment: at 0.29 the soles are 1.6 mm above the floor; computed: 1.5 mm
    assert robot.spawn_height == robot.computed_height == pytest.approx(0.29 - 0.0001, abs=5e-4)
    assert [robot.geom_name(g) for g in robot.foot_geoms] == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]


class ConstantPolicy:
    def __init__(self, value: float, num_actions: int):
        self.value, self.num_actions = value, num_actions

    def act(self, obs: np.ndarray) -> np.ndarray:
        return np.full((len(obs), self.num_actions), self.value, dtype=np.float32)


def test_latency_applies_targets_late(go2_export):
    spec = read_policy_yaml(go2_export)
    robot = build_robot(GO2_MODEL, spec)
    opts = RunOptions(episodes=1, duration=0.1, seed=0, spawn_height=0.29, fall_tilt=1.0, fall_height=0.0,
                      schedule=parse_schedule("0,0,0"), latency=2)
    ctrl = []
    run_episodes(robot, robot.model, spec, ConstantPolicy(1.0, spec.num_actions), opts,
                 [EpisodePlan(0.0, opts.schedule, np.zeros((0, 2)), np.zeros(0, dtype=int))],
                 frame_sink=lambda d: ctrl.append(d.ctrl.copy()))
    target = np.clip(spec.default_joint_pos + spec.action_scale, spec.joint_pos_limits[:, 0],
                     spec.joint_pos_limits[:, 1])
    assert len(ctrl) == 5
    for k, c in enumerate(ctrl):
        np.testing.assert_allclose(c, spec.default_joint_pos if k < 2 else target)


def test_pushes_change_base_velocity(go2_export):
    """A kick is a velocity impulse: with zero actions the base starts moving right after it."""
    spec = read_policy_yaml(go2_export)
    robot = build_robot(GO2_MODEL, spec)
    opts = RunOptions(episodes=1, duration=0.6, seed=0, spawn_height=0.29, fall_tilt=math.pi, fall_height=0.0,
                      schedule=parse_schedule("0,0,0"), push=True, push_vel=1.0, push_interval=0.5)
    vel = []
    run_episodes(robot, robot.model, spec, ConstantPolicy(0.0, spec.num_actions), opts,
                 [EpisodePlan(0.0, opts.schedule, np.array([[0.8, -0.6]]), np.array([17]))],
                 frame_sink=lambda d: vel.append(d.qvel[0:2].copy()))
    before, after = vel[16], vel[17]  # the kick lands after control step 17 (of 25 in the 0.5 s interval)
    np.testing.assert_allclose(after - before, [0.8, -0.6], atol=0.05)


def test_push_moments_are_random_one_per_interval(go2_export):
    spec = read_policy_yaml(go2_export)
    opts = RunOptions(episodes=40, duration=20.0, seed=0, spawn_height=0.29, fall_tilt=1.0, fall_height=0.1,
                      push=True, push_vel=1.0, push_interval=6.0)
    steps = np.stack([plan.push_steps for plan in plan_episodes(opts, spec)])  # (40, 3) pushes at 6, 12, 18 s
    every = round(6.0 / spec.control_dt)
    assert steps.shape == (40, 3)
    for j in range(3):
        assert (steps[:, j] >= j * every).all() and (steps[:, j] < (j + 1) * every).all()
    assert len(np.unique(steps[:, 0])) > 20  # spread over the interval, not on one clock


def test_fall_limits_and_pushes_come_from_the_training_block():
    from deploy.defaults import GENERIC, robot_defaults

    block = {"terminate_tilt": 0.7, "terminate_height": 0.3, "push_interval_s": 6.0, "max_push_vel_xy": 0.4}
    defaults, known = robot_defaults("my_robot", block)
    assert known and (defaults.fall_tilt, defaults.fall_height, defaults.push_interval, defaults.push_vel) == \
        (0.7, 0.3, 6.0, 0.4)
    # an export without the block: the per-robot table, then the generic fallback
    assert robot_defaults("go2", None)[0].push_interval == 15.0
    assert robot_defaults("my_robot", None) == (GENERIC, False)


def test_a_schedule_starting_with_a_minus_is_read_as_the_value_of_commands():
    from deploy.commands import attach_negative_schedule
    from deploy.sim2sim import get_args

    assert attach_negative_schedule(["--commands", "-0.5,0,0@5", "--seed", "-1"]) == \
        ["--commands=-0.5,0,0@5", "--seed", "-1"]  # only --commands' value is glued
    assert get_args(["--export", "x", "--commands", "-.3,0,0@2;0,0,1"]).commands == "-.3,0,0@2;0,0,1"
    assert get_args(["--export", "x", "--commands", "0.3,0,0"]).commands == "0.3,0,0"


def test_wilson_interval_brackets_the_rate_and_narrows_with_episodes():
    from deploy.metrics import wilson_interval

    lo, hi = wilson_interval(7, 128)
    assert lo == pytest.approx(0.0267, abs=2e-4) and hi == pytest.approx(0.1086, abs=2e-4)  # Wilson: 2.7-10.9%
    lo4, hi4 = wilson_interval(28, 512)  # the same rate over four times the episodes
    assert lo < lo4 < 7 / 128 < hi4 < hi
    assert wilson_interval(0, 32)[0] == 0.0 and wilson_interval(0, 32)[1] > 0.05  # none in 32 is not "never"
    assert wilson_interval(32, 32)[1] == 1.0 and wilson_interval(0, 0) is None
