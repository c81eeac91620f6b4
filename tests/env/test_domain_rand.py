import math

import torch

from env.domain_rand import PRIVILEGED_PARAMS, restitution_to_dampratio
from env.gym_env_wrapper import make_env

ALL_ON = ["randomize_friction", "randomize_restitution", "randomize_link_mass", "randomize_base_mass",
          "randomize_com", "randomize_motor_strength", "randomize_gains", "randomize_joint_friction",
          "randomize_joint_damping"]


def all_randomised(cfg, latency=0):
    for flag in ALL_ON:
        setattr(cfg.domain_rand, flag, True)
    cfg.domain_rand.max_action_latency = latency
    cfg.env.num_envs = 16
    return make_env(cfg)


def test_restitution_maps_to_the_damping_ratio_that_bounces_back_that_much():
    e = torch.tensor([0.05, 0.2, 0.5, 0.8])
    z = restitution_to_dampratio(e)
    assert torch.allclose(torch.exp(-z * math.pi / torch.sqrt(1 - z**2)), e, atol=1e-5)
    assert restitution_to_dampratio(torch.tensor([0.0])).item() > 0.99  # no bounce: critically damped


def test_every_parameter_is_drawn_per_env_within_its_range_and_written_to_the_sim(qmini_cfg):
    env = all_randomised(qmini_cfg)
    robot, dr = env.robot, env.robot.domain_rand
    c = qmini_cfg.domain_rand
    p = dr.params
    for key, rng in [("friction", c.friction_range), ("restitution", c.restitution_range),
                     ("payload", c.added_mass_range), ("motor_strength", c.motor_strength_range),
                     ("kp_scale", c.kp_range), ("kd_scale", c.kd_range)]:
        assert p[key].min() >= rng[0] and p[key].max() <= rng[1] and p[key].std() > 0, key
    batch, model = robot.sim.batch, robot.model
    base = robot.base_body_id
    # payload and link scaling reach the masses, and set_const propagated them to the subtree mass
    masses = batch.expanded("body_mass")
    assert not torch.allclose(torch.tensor(masses[0]), torch.tensor(masses[1]))
    subtree = batch.expanded("body_subtreemass")
    assert subtree is not None and abs(subtree[3, 0] - masses[3].sum()) < 1e-9
    # centre-of-mass offset of the base
    ipos = torch.tensor(batch.expanded("body_ipos")[:, base])
    assert torch.allclose(ipos - torch.tensor(model.body_ipos[base]), p["com"].double(), atol=1e-6)
    # motor strength and gain scales reach the actuators
    kp = torch.tensor(batch.expanded("actuator_gainprm")[:, 0, 0])
    expected = model.actuator_gainprm[0, 0] * (p["motor_strength"] * p["kp_scale"])[:, 0].double()
    assert torch.allclose(kp, expected)
    limit = torch.tensor(batch.expanded("actuator_forcerange")[:, 0, 1])
    assert torch.allclose(limit, model.actuator_forcerange[0, 1] * p["motor_strength"][:, 0].double())
    # the critic sees the same numbers
    _, critic_obs = env.reset()
    assert torch.allclose(critic_obs[:, -len(PRIVILEGED_PARAMS):], dr.privileged_obs())


def test_reset_redraws_only_the_reset_envs(qmini_cfg):
    env = all_randomised(qmini_cfg)
    dr = env.robot.domain_rand
    before = dr.privileged_obs().clone()
    env.robot.reset_idx(torch.tensor([2, 5]))
    after = dr.privileged_obs()
    changed = (after != before).any(dim=1)
    assert changed[[2, 5]].all() and not changed[[0, 1, 3, 4, 6]].any()


def test_randomised_envs_still_stand(qmini_cfg):
    qmini_cfg.domain_rand.push_robots = False
    qmini_cfg.domain_rand.com_offset_range = [-0.01, 0.01]  # Qmini's feet are small: +-3 cm tips a few over
    env = all_randomised(qmini_cfg, latency=2)
    env.reset()
    falls = diverged = 0
    for _ in range(60):
        *_, done, info, _ = env.step(torch.zeros(16, 10))
        falls += int((done & ~info["time_outs"]).sum())
        diverged += info["diverged"]
    assert falls == 0 and diverged == 0


def test_action_latency_applies_old_targets(qmini_cfg):
    env = all_randomised(qmini_cfg, latency=2)
    env.reset()
    robot = env.robot
    latency = robot.domain_rand.params["latency_steps"][:, 0].long()
    assert set(latency.tolist()) <= {0, 1, 2} and len(set(latency.tolist())) > 1
    targets = []
    for k in range(3):
        env.step(torch.full((16, 10), 0.1 * (k + 1)))
        targets.append(robot.joint_targets.clone())
    applied = robot.sim.ctrl.float()
    for i in range(16):
        assert torch.allclose(applied[i], targets[2 - latency[i]][i])
