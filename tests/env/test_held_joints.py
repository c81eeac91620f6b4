"""control.held_joints: joints the PD holds at their default angle while the policy drives the others."""

from __future__ import annotations

import pytest
import torch

from config import load_config
from env.gym_env_wrapper import make_env
from env.sim.scene import RobotFileError, actuated_joint_names, load_mj_model

HELD = ["hip_yaw_l", "hip_yaw_r"]  # a mirror-closed pair of Qmini's joints


def held_cfg(*extra: str):
    return load_config("qmini", ["env.num_envs=4", "sim.nthread=1", f"control.held_joints={HELD}", *extra])


def test_held_joints_get_the_last_actuators_and_the_policy_the_others():
    cfg = held_cfg()
    names = actuated_joint_names(load_mj_model(cfg))
    assert names[-2:] == HELD and len(names) == 10
    env = make_env(cfg, "cpu")
    assert env.num_actions == 8 and env.robot.dof_names == names[:8] and env.robot.held_joint_names == HELD
    assert env.robot.torques.shape == (4, 8) and env.robot.dof_pos.shape == (4, 8)
    assert dict(env.task.obs_layout)["dof_pos"] == 8 and dict(env.task.obs_layout)["actions"] == 8


def test_held_joints_stay_at_their_default_whatever_the_actions():
    cfg = held_cfg("init_state.joint_pos_noise=0.05")
    env = make_env(cfg, "cpu")
    robot = env.robot
    m = robot.model
    qpos_idx = [int(m.jnt_qposadr[m.joint(n).id]) for n in HELD]
    default = torch.tensor([cfg.init_state.default_joint_angles[n] for n in HELD])
    env.reset()
    assert torch.allclose(robot.sim.qpos[:, qpos_idx].float(), default, atol=1e-6)  # spawned there, no noise
    assert torch.allclose(robot.sim.ctrl[:, 8:].float(), default)
    torch.manual_seed(0)
    drift = []
    for _ in range(20):
        env.step(torch.randn(4, 8) * 2.0)  # violent actions on the policy's joints
        assert torch.allclose(robot.sim.ctrl[:, 8:].float(), default)  # the held targets never change
        drift.append((robot.sim.qpos[:, qpos_idx].float() - default).abs().max())
    assert max(drift) < 0.2  # the PD holds them while the legs thrash


def test_unknown_or_all_held_joints_are_one_line_errors():
    with pytest.raises(RobotFileError, match="control.held_joints names wrist_l, which the robot does not have"):
        load_mj_model(load_config("qmini", ["control.held_joints=[wrist_l]"]))
    every = "[" + ",".join(actuated_joint_names(load_mj_model(load_config("qmini")))) + "]"
    with pytest.raises(RobotFileError, match="leave the policy at least one"):
        load_mj_model(load_config("qmini", [f"control.held_joints={every}"]))


def test_the_mirror_covers_the_policy_joints_only():
    env = make_env(held_cfg(), "cpu")
    maps = env.task.mirror_maps()
    names = env.robot.dof_names
    twins = [names[i] for i in maps.actions.index.tolist()]
    assert twins == [n[:-1] + {"l": "r", "r": "l"}[n[-1]] for n in names]  # every policy joint with its twin
    obs = torch.randn(3, env.num_obs)
    assert torch.allclose(maps.obs.apply(maps.obs.apply(obs)), obs)


def test_joint_deviation_weighs_the_named_joints_offsets_only():
    from env.tasks.rewards import joint_deviation

    cfg = load_config("qmini", ["env.num_envs=2", "sim.nthread=1", "rewards.scales.joint_deviation=-1.0",
                                "rewards.joint_deviation_weights={hip_roll: 2.0, hip_yaw: 1.0}"])
    env = make_env(cfg, "cpu")
    task, robot = env.task, env.robot
    names = robot.dof_names
    assert task.joint_deviation_weights.tolist() == [2.0 if "hip_roll" in n else 1.0 if "hip_yaw" in n else 0.0
                                                     for n in names]
    robot.dof_pos = robot.default_dof_pos.repeat(2, 1)
    robot.dof_pos[0, names.index("hip_roll_l")] += 0.1
    robot.dof_pos[0, names.index("knee_pitch_l")] += 0.5  # not weighed
    robot.dof_pos[1, names.index("hip_yaw_r")] -= 0.2
    assert joint_deviation(task).tolist() == pytest.approx([2.0 * 0.01, 0.04], rel=1e-5)
    assert "joint_deviation" in task.reward_terms


def test_a_joint_deviation_key_that_matches_no_policy_joint_is_one_line():
    with pytest.raises(ValueError, match="rewards.joint_deviation_weights .* 'waist' match nothing"):
        make_env(load_config("qmini", ["env.num_envs=2", "rewards.joint_deviation_weights={waist: 1.0}"]), "cpu")
