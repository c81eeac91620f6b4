"""A training stage changes the running env: reward scales at once, randomisation ranges at the next reset."""

import pytest
import torch

from env.gym_env_wrapper import make_env


def test_a_reward_scale_set_by_a_stage_is_summed_from_the_next_step(qmini_cfg):
    qmini_cfg.rewards.scales.alive = 0.0
    env = make_env(qmini_cfg)
    env.reset()
    assert "alive" not in env.task.reward_terms
    env.apply_settings({"rewards.scales.alive": 3.0})
    *_, info, _ = env.step(torch.zeros(env.num_envs, env.num_actions))
    assert env.task.reward_terms["alive"][1] == 3.0
    assert torch.all(env.task.episode_sums["alive"] > 0)
    env.apply_settings({"rewards.scales.alive": 0.0})
    assert "alive" not in env.task.reward_terms


def test_a_range_set_by_a_stage_is_drawn_from_at_the_next_reset(qmini_cfg):
    qmini_cfg.domain_rand.joint_damping_range = [0.5, 2.0]
    env = make_env(qmini_cfg)
    env.reset()
    rand = env.robot.domain_rand
    before = rand.params["joint_damping_scale"].clone()
    assert torch.all((before >= 0.5) & (before <= 2.0))
    env.apply_settings({"domain_rand.joint_damping_range": [8.0, 9.0]})
    assert torch.equal(rand.params["joint_damping_scale"], before)  # nothing changes mid-episode
    rand.randomize(torch.arange(env.num_envs))
    after = rand.params["joint_damping_scale"]
    assert torch.all((after >= 8.0) & (after <= 9.0))


def test_settings_the_env_cannot_take_are_refused_before_anything_changes(qmini_cfg):
    qmini_cfg.domain_rand.randomize_armature = False
    env = make_env(qmini_cfg)
    with pytest.raises(ValueError, match="randomize_armature = true"):
        env.check_settings({"domain_rand.armature_range": [0.5, 2.0]})
    with pytest.raises(ValueError, match="unknown reward term 'nonsense'"):
        env.check_settings({"rewards.scales.nonsense": 1.0})
    with pytest.raises(ValueError, match="cannot change during a run"):
        env.check_settings({"sim.dt": 0.01})
    env.check_settings({"rewards.scales.termination": -1.0})
    assert env.task.reward_terms["termination"][1] == qmini_cfg.rewards.scales.termination  # check only
