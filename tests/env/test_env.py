import math

import pytest
import torch

from config import load_config
from env.gym_env_wrapper import GymEnvWrapper, make_env
from env.legged_robot import LeggedRobotEnv
from env.tasks import load_task_cls


def test_64_envs_200_random_steps_terminate_reset_and_stay_finite():
    torch.manual_seed(0)
    env = make_env(load_config("qmini", ["env.num_envs=64"]))
    obs, critic_obs = env.reset()
    done_count = 0
    for _ in range(200):
        obs, critic_obs, rew, done, info, task_rew = env.step(torch.randn(64, env.num_actions))
        for t in (obs, critic_obs, rew, task_rew):
            assert torch.isfinite(t).all()
        done_count += int(done.sum())
        # reset envs start a new episode: their counters are back at zero
        assert (env.robot.episode_length_buf[done] == 0).all()
    assert done_count > 0, "random actions must make some Qmini fall"
    # most envs fell and restarted (with 10x joint damping drawn, a few ride random actions out)
    assert (env.robot.episode_length_buf < 200).float().mean() > 0.5


def test_spaces_and_shapes(qmini_cfg):
    env = make_env(qmini_cfg)
    obs, critic_obs = env.reset()
    assert env.observation_space.shape == (env.num_obs,) == (obs.shape[1],)
    assert env.critic_observation_space.shape == (critic_obs.shape[1],)
    assert env.action_space.shape == (10,)
    assert obs.dtype == torch.float32 and obs.shape[0] == 8
    with pytest.raises(ValueError, match=r"\(8, 10\)"):
        env.step(torch.zeros(8, 9))


def test_zero_actions_stand_and_time_out_with_bootstrap_flag(qmini_cfg):
    # Qmini with zero actions lands on its soles, then tips over from about 0.45 s on (balancing is the policy's job)
    qmini_cfg.env.episode_length_s = 0.3
    qmini_cfg.domain_rand.push_robots = False
    env = make_env(qmini_cfg)
    env.reset()
    steps = env.max_episode_length
    for i in range(steps):
        obs, _, rew, done, info, _ = env.step(torch.zeros(8, 10))
        if i < steps - 1:
            assert not done.any()
    assert done.all() and info["time_outs"].all()
    assert "rew_tracking_lin_vel" in info["episode"]
    assert (env.robot.episode_length_buf == 0).all()
    # the returned observation is the first of the new episode: history is one frame repeated
    frames = obs.view(8, env.task.history_length, -1)
    assert torch.allclose(frames[:, 0], frames[:, -1], atol=0.2)


def test_actions_map_to_clipped_joint_targets(qmini_cfg):
    qmini_cfg.domain_rand.max_action_latency = 0  # targets reach the actuators in the same step
    env = make_env(qmini_cfg)
    env.reset()
    robot = env.robot
    actions = torch.zeros(8, 10)
    actions[0, 0] = 1.0  # +0.25 rad on hip_yaw_l
    actions[1, 0] = 100.0  # far beyond the joint range
    env.step(actions)
    assert torch.allclose(robot.joint_targets[0, 0], robot.default_dof_pos[0, 0] + 0.25)
    assert robot.joint_targets[1, 0] == robot.dof_pos_limits[0, 1]
    assert torch.equal(robot.sim.ctrl.float(), robot.joint_targets)


def test_tipped_robot_terminates_and_is_not_a_timeout(qmini_cfg):
    env = make_env(qmini_cfg)
    env.reset()
    robot = env.robot
    half = math.pi / 4  # 90 deg roll
    robot.sim.qpos[2, 3:7] = torch.tensor([math.cos(half), math.sin(half), 0.0, 0.0], dtype=torch.float64)
    _, _, _, done, info, _ = env.step(torch.zeros(8, 10))
    assert done[2] and not info["time_outs"][2]
    assert not done[[0, 1, 3]].any()


def test_diverged_sim_is_reset_and_counted(qmini_cfg):
    env = make_env(qmini_cfg)
    env.reset()
    env.robot.sim.qvel[5, 0] = float("nan")
    obs, _, _, done, info, _ = env.step(torch.zeros(8, 10))
    assert info["diverged"] == 1 and done[5]
    assert torch.isfinite(obs).all() and env.diverged_total == 1


def test_commands_resample_in_range_and_small_ones_are_zero(qmini_cfg):
    qmini_cfg.env.num_envs = 256
    env = make_env(qmini_cfg)
    env.reset()
    c = env.task.commands
    assert (c[:, 0] >= -0.3).all() and (c[:, 0] <= 0.7).all() and (c[:, 1] == 0).all()
    assert (c[:, 2].abs() <= 1.0).all()
    lin = c[:, :2].norm(dim=1)
    assert ((lin == 0) | (lin >= 0.15)).all()
    assert ((c[:, 2] == 0) | (c[:, 2].abs() >= 0.15)).all()
    assert (lin == 0).any() and (lin > 0).any()


def test_friction_is_randomised_per_env_and_shown_to_the_critic(qmini_cfg):
    qmini_cfg.env.num_envs = 16
    env = make_env(qmini_cfg)
    _, critic_obs = env.reset()
    mu = env.robot.domain_rand.params["friction"][:, 0]
    assert mu.min() >= 0.6 and mu.max() <= 1.2 and mu.std() > 0.01
    geom = env.robot.sim.expand("geom_friction")[:, 0, 0]
    assert torch.allclose(geom.float(), mu)
    dr = env.robot.domain_rand
    assert torch.allclose(critic_obs[:, -dr.num_privileged + dr.privileged_names().index("friction")], mu)


def test_pushes_kick_the_base(qmini_cfg):
    qmini_cfg.domain_rand.push_interval_s = 0.045  # every policy step
    qmini_cfg.domain_rand.max_push_vel_xy = 1.0
    env = make_env(qmini_cfg)
    env.reset()
    env.step(torch.zeros(8, 10))
    assert env.robot.sim.qvel[:, :2].abs().max() > 0.05


def test_each_env_is_pushed_on_its_own_episode_clock(qmini_cfg, monkeypatch):
    qmini_cfg.domain_rand.push_interval_s = 0.045  # 3 policy steps
    qmini_cfg.domain_rand.push_random_phase = False
    env = make_env(qmini_cfg)
    env.reset()
    pushed = []
    monkeypatch.setattr(env.robot, "push_robots", lambda due: pushed.append(due.nonzero().flatten().tolist()))
    env.robot.episode_length_buf[:] = torch.tensor([2, 2, 0, 0, 1, 1, 5, 5])  # +1 this step: 3, 1, 2, 6 due
    env.step(torch.zeros(8, 10))
    assert pushed == [[0, 1, 6, 7]]


def test_spread_episode_starts_covers_the_episode(qmini_cfg):
    qmini_cfg.env.num_envs = 64
    env = make_env(qmini_cfg)
    env.reset()
    buf = env.robot.episode_length_buf
    env.spread_episode_starts()
    assert env.robot.episode_length_buf is buf  # in place
    assert buf.min() >= 0 and buf.max() < env.max_episode_length
    assert buf.float().std() > env.max_episode_length / 8  # uniform: std is max/sqrt(12)


def test_a_push_is_a_velocity_impulse(qmini_cfg):
    env = make_env(qmini_cfg)
    env.reset()
    env.robot.sim.qvel[:, 0] = 0.5  # walking forward
    before = env.robot.sim.qvel.clone()
    env.robot.push_robots(torch.ones(8, dtype=torch.bool))
    after = env.robot.sim.qvel
    delta = after[:, :2] - before[:, :2]
    assert delta.abs().max() <= 1.0 and delta.abs().max() > 0.05  # a change of velocity, not a new velocity
    assert torch.equal(after[:, 2:], before[:, 2:])  # only the horizontal base velocity is kicked


def test_zero_scale_drops_a_term_and_unknown_terms_fail(qmini_cfg):
    qmini_cfg.rewards.scales.alive = 0.0
    robot = LeggedRobotEnv(qmini_cfg)
    task = load_task_cls("locomotion")(robot, qmini_cfg)
    assert "alive" not in task.reward_terms and "tracking_lin_vel" in task.reward_terms
    qmini_cfg.rewards.scales.moonwalk = 1.0
    with pytest.raises(ValueError, match="unknown reward term 'moonwalk'.*tracking_lin_vel"):
        load_task_cls("locomotion")(robot, qmini_cfg)


def test_unknown_task_lists_registered():
    with pytest.raises(ValueError, match="locomotion"):
        load_task_cls("backflip")


def test_task_reward_is_the_unshaped_tracking_kernel(qmini_cfg):
    env = make_env(qmini_cfg)
    env.reset()
    env.task.commands.zero_()
    *_, task_rew = env.step(torch.zeros(8, 10))
    # standing still while asked to stand still tracks almost perfectly
    assert (task_rew > 0.5).all() and (task_rew <= 1.0).all()


def test_history_stacks_frames(qmini_cfg):
    env = make_env(qmini_cfg)
    obs, _ = env.reset()
    frame = env.task.frame_size
    assert env.num_obs == 3 * frame
    obs2, *_ = env.step(torch.ones(8, 10) * 0.5)
    names = [name for name, _ in env.task.obs_layout]
    start = sum(size for _, size in env.task.obs_layout[:names.index("actions")])
    newest, previous = obs2[:, 2 * frame:], obs2[:, frame:2 * frame]
    # the newest frame's action block holds the action just taken; the previous frame has none
    assert torch.allclose(newest[:, start:start + 10], torch.full((8, 10), 0.5))
    assert torch.allclose(previous[:, start:start + 10], torch.zeros(8, 10))


def test_wrapper_is_a_thin_layer(qmini_cfg):
    env = make_env(qmini_cfg)
    assert isinstance(env, GymEnvWrapper) and env.task.env is env.robot


def test_env_state_stays_usable_after_stepping_under_no_grad_and_inference_mode(qmini_cfg):
    env = make_env(qmini_cfg)
    env.reset()
    with torch.no_grad():
        env.step(torch.zeros(8, 10))
    env.reset()  # a second training call resets outside the collection context
    env.step(torch.zeros(8, 10))


def test_send_timeouts_off_reports_timeouts_as_plain_episode_ends(qmini_cfg):
    qmini_cfg.env.episode_length_s = 0.15
    qmini_cfg.env.send_timeouts = False
    qmini_cfg.domain_rand.push_robots = False
    env = make_env(qmini_cfg)
    env.reset()
    for _ in range(env.max_episode_length):
        *_, done, info, _ = env.step(torch.zeros(8, 10))
    assert done.all() and not info["time_outs"].any()


def test_random_push_phase_spreads_pushes_over_the_interval(qmini_cfg, monkeypatch):
    qmini_cfg.env.num_envs = 64
    qmini_cfg.domain_rand.push_interval_s = 0.15  # 10 policy steps of 0.015 s
    qmini_cfg.domain_rand.push_random_phase = True
    env = make_env(qmini_cfg)
    env.reset()
    first_push = torch.full((64,), -1)

    def record(due):
        ids = due.nonzero().flatten()
        new = ids[first_push[ids] < 0]
        first_push[new] = env.robot.episode_length_buf[new]

    monkeypatch.setattr(env.robot, "push_robots", record)
    for _ in range(10):
        env.step(torch.zeros(64, 10))
    assert (first_push >= 1).all() and (first_push <= 10).all()  # one push in the first interval
    assert len(first_push.unique()) >= 6  # at many moments, not at step 10 for all
