"""A training stage changes the running env: reward scales at once, randomisation ranges at the next reset."""

from types import SimpleNamespace

import pytest
import torch

from config.stages import LIVE_REWARD_PARAMS
from config.validate import RULES
from env.gym_env_wrapper import make_env
from env.tasks.rewards import REWARDS


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


def _fake_task(rewards) -> SimpleNamespace:
    """Just what the reward terms that read LIVE_REWARD_PARAMS look at, with every term away from 0."""
    env = SimpleNamespace(base_lin_vel=torch.tensor([[0.3, 0.0, 0.0]]), base_ang_vel=torch.tensor([[0.0, 0.0, 0.4]]),
                          dof_pos_limits=torch.tensor([[-1.0, 1.0]]), dof_pos=torch.tensor([[0.95]]),
                          feet_air_time_at_contact=torch.tensor([[0.6]]), feet_first_contact=torch.tensor([[1.0]]))
    return SimpleNamespace(env=env, cfg=SimpleNamespace(rewards=rewards), commands=torch.tensor([[0.5, 0.0, 0.0]]))


@pytest.mark.parametrize("param, term", [("tracking_sigma", "tracking_lin_vel"), ("tracking_sigma_yaw", "tracking_ang_vel"),
                                         ("tracking_sigma_wide", "tracking_lin_vel_wide"),
                                         ("feet_air_time_target", "feet_air_time"),
                                         ("soft_dof_pos_limit", "dof_pos_limits")])
def test_each_live_reward_param_is_read_by_its_term_at_every_call(param, term):
    """LIVE_REWARD_PARAMS is a promise that a stage's new value counts from the next step: the term rereads it."""
    assert param in LIVE_REWARD_PARAMS and f"rewards.{param}" in RULES  # the env checks a new value by its rule
    rewards = SimpleNamespace(tracking_sigma=0.25, tracking_sigma_yaw=0.3, tracking_sigma_wide=1.0,
                              feet_air_time_target=0.3, soft_dof_pos_limit=0.9)
    task = _fake_task(rewards)
    before = REWARDS[term](task).clone()
    setattr(rewards, param, getattr(rewards, param) * 0.5)
    assert not torch.allclose(REWARDS[term](task), before)


def test_the_wide_kernel_still_pays_for_recovering_from_a_push_where_the_tight_one_is_flat():
    """After a 1 m/s kick a sigma-0.1 kernel barely changes over the first quarter of the recovery; the wide one rises."""
    rewards = SimpleNamespace(tracking_sigma=0.1, tracking_sigma_wide=1.0)
    task = _fake_task(rewards)
    gains = {}
    for term in ("tracking_lin_vel", "tracking_lin_vel_wide"):
        values = []
        for speed in (1.5, 1.25):  # commanded 0.5 m/s: a 1 m/s error, then 0.75
            task.env.base_lin_vel = torch.tensor([[speed, 0.0, 0.0]])
            values.append(float(REWARDS[term](task)))
        assert values[1] > values[0]
        gains[term] = values[1] - values[0]
    assert gains["tracking_lin_vel"] < 0.01 < 0.15 < gains["tracking_lin_vel_wide"]


def test_a_tracking_sigma_set_by_a_stage_tightens_the_kernel_from_the_next_step(qmini_cfg):
    env = make_env(qmini_cfg)
    env.reset()
    env.task.commands[:, :2] = 0.5  # far from the standing robot's velocity: the kernel is below 1
    wide = REWARDS["tracking_lin_vel"](env.task).clone()
    sigma = env.task.cfg.rewards.tracking_sigma
    env.apply_settings({"rewards.tracking_sigma": sigma / 4})
    assert env.task.cfg.rewards.tracking_sigma == sigma / 4  # the task reads the wrapper's config
    assert torch.all(REWARDS["tracking_lin_vel"](env.task) < wide)


def test_a_reward_param_a_stage_cannot_change_is_refused(qmini_cfg):
    env = make_env(qmini_cfg)
    with pytest.raises(ValueError, match=r"rewards.tracking_sigma = 0: expects a number > 0"):
        env.check_settings({"rewards.tracking_sigma": 0})
    with pytest.raises(ValueError, match=r"rewards.soft_dof_pos_limit = 1.5: expects a number > 0 and <= 1"):
        env.check_settings({"rewards.soft_dof_pos_limit": 1.5})  # the config's rule for the field, not a second one
    with pytest.raises(ValueError, match="cannot change during a run; a stage sets rewards.scales"):
        env.check_settings({"rewards.base_height_target": 0.3})  # the height scan is measured from it
    before = env.cfg.rewards.tracking_sigma
    env.check_settings({"rewards.tracking_sigma": 0.05})
    assert env.cfg.rewards.tracking_sigma == before  # check only
