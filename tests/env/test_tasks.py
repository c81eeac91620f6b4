import pytest
import torch

from env.gym_env_wrapper import make_env
from env.tasks.curriculum import CommandCurriculum
from env.tasks.gait import GaitSchedule
from env.tasks.rewards import foot_slip, gait_contact, tracking_ang_vel


def test_gait_schedule_alternates_feet_and_stands_at_zero_command():
    gait = GaitSchedule(2, 2, [2.0, 2.0], 0.5, dt=0.05, device=torch.device("cpu"))
    gait.resample(torch.tensor([True, True]), torch.tensor([True, False]))
    seen = set()
    for _ in range(10):  # one full cycle at 2 Hz
        gait.advance()
        desired = gait.desired_contact()
        seen.add(tuple(desired[0].tolist()))
        assert desired[1].all()  # zero command: both feet down
    assert seen == {(True, False), (False, True)}  # the moving env alternates, never both up
    assert torch.allclose(gait.phase, torch.zeros(2), atol=1e-5) or torch.allclose(gait.phase, torch.ones(2), atol=1e-5)


def test_gait_phase_adds_the_clock_to_the_observation_and_rewards_matching_contacts(qmini_cfg):
    qmini_cfg.commands.gait_phase = False
    qmini_cfg.rewards.scales.gait_contact = 0.0
    plain = make_env(qmini_cfg)
    qmini_cfg.commands.gait_phase = True
    qmini_cfg.rewards.scales.gait_contact = 1.0
    env = make_env(qmini_cfg)
    assert env.num_obs == plain.num_obs + 3 * qmini_cfg.env.history_length
    assert env.task.obs_layout[-1] == ("gait_clock", 3)
    env.reset()
    for _ in range(15):  # land from the spawn height
        env.task.commands.zero_()
        env.task.gait.moving[:] = False
        env.step(torch.zeros(8, 10))
    # standing on both feet while asked to stand: every contact matches the schedule
    assert torch.allclose(gait_contact(env.task), torch.ones(8))


def test_gait_contact_without_gait_phase_is_an_error(qmini_cfg):
    qmini_cfg.commands.gait_phase = False
    qmini_cfg.rewards.scales.gait_contact = 1.0
    env = make_env(qmini_cfg)
    env.reset()
    with pytest.raises(ValueError, match="gait_phase"):
        env.step(torch.zeros(8, 10))


def test_curriculum_starts_narrow_and_widens_on_good_tracking(qmini_cfg):
    qmini_cfg.commands.curriculum = True
    qmini_cfg.env.num_envs = 64
    env = make_env(qmini_cfg)
    env.reset()
    cur = env.task.curriculum
    assert cur.level == pytest.approx(0.3)
    assert env.task.commands[:, 0].max() <= 0.7 * 0.3 + 1e-6 and env.task.commands[:, 0].min() >= -0.3 * 0.3 - 1e-6
    ids = torch.arange(4)
    cur.tracking_sum[ids], cur.steps[ids] = 90.0, 100.0
    cur.finish_episodes(ids)  # 0.9 per step > threshold 0.75
    assert cur.level == pytest.approx(0.4)
    cur.tracking_sum[ids], cur.steps[ids] = 10.0, 100.0
    cur.finish_episodes(ids)  # poor tracking: no promotion
    assert cur.level == pytest.approx(0.4)
    assert (cur.tracking_sum[ids] == 0).all() and (cur.steps[ids] == 0).all()


def test_curriculum_off_uses_full_ranges():
    from types import SimpleNamespace

    c = SimpleNamespace(curriculum=False, curriculum_initial_level=0.2, curriculum_step=0.1, curriculum_threshold=0.7)
    cur = CommandCurriculum(c, 4, torch.device("cpu"))
    assert cur.scaled([-1.0, 2.0]) == (-1.0, 2.0)


def test_foot_slip_is_zero_standing_and_positive_when_feet_are_dragged(qmini_cfg):
    qmini_cfg.domain_rand.push_robots = False
    env = make_env(qmini_cfg)
    env.reset()
    for _ in range(20):
        env.step(torch.zeros(8, 10))
    standing = foot_slip(env.task)
    assert standing.max() < 0.01
    env.robot.sim.qvel[:, 0] = 1.5  # shove the base forward: the soles skid
    env.step(torch.zeros(8, 10))
    assert foot_slip(env.task).mean() > 10 * standing.mean() + 0.01


def test_yaw_tracking_kernel_has_its_own_width_and_falls_back_to_the_linear_one():
    from types import SimpleNamespace

    commands = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.5]])
    env = SimpleNamespace(base_ang_vel=torch.tensor([[0.0, 0.0, 0.5], [0.0, 0.0, 0.5]]))
    rewards = SimpleNamespace(tracking_sigma=0.1, tracking_sigma_yaw=None)
    task = SimpleNamespace(commands=commands, env=env, cfg=SimpleNamespace(rewards=rewards))
    assert torch.allclose(tracking_ang_vel(task), torch.tensor([torch.exp(torch.tensor(-2.5)), 1.0]))
    rewards.tracking_sigma_yaw = 0.25
    assert torch.allclose(tracking_ang_vel(task), torch.tensor([torch.exp(torch.tensor(-1.0)), 1.0]))


def test_heading_fraction_steers_some_envs_and_leaves_the_others_their_yaw_rate():
    from config import load_config
    from env.utils.math import wrap_to_pi, yaw_from_quat

    cfg = load_config("qmini_rough", ["env.num_envs=64", "sim.nthread=2", "commands.heading_fraction=0.5",
                                      "terrain.num_rows=2", "terrain.num_cols=4"])
    torch.manual_seed(0)
    env = make_env(cfg)
    env.reset()
    task = env.task
    steer = task.steering.clone()
    assert 16 < int(steer.sum()) < 48  # about half
    for _ in range(3):
        env.step(torch.zeros(64, 10))
    c = cfg.commands
    error = wrap_to_pi(task.heading - yaw_from_quat(env.robot.base_quat))
    steered = torch.clamp(c.heading_gain * error, *c.ang_vel_yaw)
    assert torch.allclose(task.commands[steer, 2], steered[steer], atol=0.01)  # steered before the last step
    free = task.commands[~steer, 2]
    assert (free.abs() > 0.3).any() and not torch.allclose(free, steered[~steer], atol=1e-3)  # drawn yaw rates
