import math

import pytest
import torch

from config.base import Base
from env.domain_rand import DRAWS, restitution_to_dampratio
from env.gym_env_wrapper import make_env

ALL_ON = sorted({d.switch for d in DRAWS} | {"randomize_link_mass"})


def all_randomised(cfg, latency=0, num_envs=16):
    for flag in ALL_ON:
        setattr(cfg.domain_rand, flag, True)
    cfg.domain_rand.max_action_latency = latency
    cfg.env.num_envs = num_envs
    return make_env(cfg)


def test_restitution_maps_to_the_damping_ratio_that_bounces_back_that_much():
    e = torch.tensor([0.05, 0.2, 0.5, 0.8])
    z = restitution_to_dampratio(e)
    assert torch.allclose(torch.exp(-z * math.pi / torch.sqrt(1 - z**2)), e, atol=1e-5)
    assert restitution_to_dampratio(torch.tensor([0.0])).item() > 0.99  # no bounce: critically damped


def test_new_randomisations_default_off_in_base_and_on_in_the_walking_configs(qmini_cfg):
    from config import load_config
    for switch in ["randomize_armature", "randomize_contact_softness", "randomize_joint_damping",
                   "randomize_joint_friction"]:
        assert getattr(Base.domain_rand, switch) is False  # older saved runs rebuild as they trained
        for name in ["go2", "qmini"]:
            assert getattr(load_config(name).domain_rand, switch) is True, (name, switch)
    assert qmini_cfg.domain_rand.joint_damping_range[1] / qmini_cfg.domain_rand.joint_damping_range[0] >= 100


def test_every_parameter_is_drawn_per_env_within_its_range(qmini_cfg):
    env = all_randomised(qmini_cfg, latency=2, num_envs=64)
    c, p = qmini_cfg.domain_rand, env.robot.domain_rand.params
    for d in DRAWS:
        lo, hi = getattr(c, d.range_field)
        assert p[d.key].min() >= lo - 1e-6 and p[d.key].max() <= hi + 1e-6 and p[d.key].std() > 0, d.key
    lo, hi = c.link_mass_range
    assert p["link_mass_scale"].min() >= lo and p["link_mass_scale"].max() <= hi
    # joint damping is log-uniform over two decades: about as many envs below 1x as above
    below = (p["joint_damping_scale"] < 1.0).float().mean()
    assert 0.25 < below < 0.75
    assert set(p["latency_steps"][:, 0].long().tolist()) == {0, 1, 2}


def test_each_drawn_value_reaches_the_model_field_it_names(qmini_cfg):
    env = all_randomised(qmini_cfg)
    robot, p = env.robot, env.robot.domain_rand.params
    batch, model = robot.sim.batch, robot.model
    x = lambda name: torch.tensor(batch.expanded(name))  # noqa: E731  (per-env model field)
    col = lambda key: p[key][:, 0].double()  # noqa: E731
    joints = slice(6, None)  # the robot's hinge dofs after the free joint
    assert torch.allclose(x("geom_friction")[:, :, 0], col("friction").unsqueeze(1).expand(-1, model.ngeom))
    assert torch.allclose(x("dof_damping")[:, joints], torch.tensor(model.dof_damping[joints]) * col("joint_damping_scale")[:, None])
    assert torch.allclose(x("dof_frictionloss")[:, joints],
                          torch.tensor(model.dof_frictionloss[joints]) * col("joint_friction_scale")[:, None])
    assert torch.allclose(x("dof_armature")[:, joints], torch.tensor(model.dof_armature[joints]) * col("armature_scale")[:, None])
    solref, solimp = x("geom_solref"), x("geom_solimp")
    assert torch.allclose(solref[:, :, 0], col("contact_timeconst").unsqueeze(1).expand(-1, model.ngeom))
    assert torch.allclose(solref[:, :, 1], restitution_to_dampratio(p["restitution"]).double().expand(-1, model.ngeom))
    assert torch.allclose(solimp[:, :, 0], col("contact_dmin").unsqueeze(1).expand(-1, model.ngeom))
    assert (solimp[:, :, 1] >= solimp[:, :, 0]).all()
    # payload and link scaling reach the masses, and set_const propagated them to the subtree mass
    base = robot.base_body_id
    masses = x("body_mass")
    expected = torch.tensor(model.body_mass) * torch.cat([torch.ones(16, 1), p["link_mass_scale"]], 1).double()
    expected[:, base] += col("payload")
    assert torch.allclose(masses, expected)
    assert abs(batch.expanded("body_subtreemass")[3, 0] - float(masses[3].sum())) < 1e-9
    ipos = x("body_ipos")[:, base]
    assert torch.allclose(ipos - torch.tensor(model.body_ipos[base]), p["com"].double(), atol=1e-6)
    # motor strength and gain scales reach the actuators
    kp = x("actuator_gainprm")[:, 0, 0]
    assert torch.allclose(kp, model.actuator_gainprm[0, 0] * (col("motor_strength") * col("kp_scale")))
    kd = -x("actuator_biasprm")[:, 0, 2]
    assert torch.allclose(kd, -model.actuator_biasprm[0, 2] * (col("motor_strength") * col("kd_scale")))
    limit = x("actuator_forcerange")[:, 0, 1]
    assert torch.allclose(limit, model.actuator_forcerange[0, 1] * col("motor_strength"))
    # armature changes what set_const derives (the dofs' inverse weights)
    invweight = x("dof_invweight0")[:, 6]
    assert invweight.std() > 0
    # the critic sees every drawn number
    dr = robot.domain_rand
    _, critic_obs = env.reset()
    assert dr.privileged_obs().shape[1] == dr.num_privileged == len(dr.privileged_names())
    assert torch.allclose(critic_obs[:, -dr.num_privileged:], dr.privileged_obs())


def test_reset_redraws_only_the_reset_envs_and_their_model_fields(qmini_cfg):
    env = all_randomised(qmini_cfg)
    dr, batch = env.robot.domain_rand, env.robot.sim.batch
    before = dr.privileged_obs().clone()
    damping_before = torch.tensor(batch.expanded("dof_damping")).clone()
    env.robot.reset_idx(torch.tensor([2, 5]))
    after = dr.privileged_obs()
    changed = (after != before).any(dim=1)
    assert changed[[2, 5]].all() and not changed[[0, 1, 3, 4, 6]].any()
    # every drawn column (all but latency, which may redraw the same integer) changes for a reset env
    assert (after[[2, 5], :-1] != before[[2, 5], :-1]).all()
    damping_changed = (torch.tensor(batch.expanded("dof_damping")) != damping_before).any(dim=1)
    assert damping_changed[[2, 5]].all() and not damping_changed[[0, 1, 3, 4]].any()


# Go2 stands under its PD for 60 policy steps (1.2 s); Qmini on its true rocker soles lands on them and
# then tips forward at about 0.8 s with zero actions (its centre of mass is at the front edge of the flat
# part of the sole: balancing is the policy's job), so it is checked over the landing, 12 steps (0.54 s).
@pytest.mark.parametrize("name,steps", [("go2", 60), ("qmini", 12)])
def test_randomised_walking_configs_land_and_stay_finite(name, steps):
    from config import load_config
    cfg = load_config(name, ["env.num_envs=16", "sim.nthread=2", "domain_rand.push_robots=false"])
    env = make_env(cfg)
    env.reset()
    falls = diverged = 0
    for _ in range(steps):
        *_, done, info, _ = env.step(torch.zeros(16, env.num_actions))
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


def _resting_sphere_height(timeconst: float, dt: float) -> float:
    import mujoco
    xml = f"""<mujoco><option timestep="{dt}"/><worldbody><geom type="plane" size="1 1 0.1" solref="{timeconst} 1"/>
      <body pos="0 0 0.05"><freejoint/><geom type="sphere" size="0.05" mass="10" solref="{timeconst} 1"/></body>
      </worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 200)
    return float(data.qpos[2])


def test_mujoco_simulates_time_constants_under_two_steps_as_two_steps():
    # the premise of the floor below: a softer contact sinks deeper, a "stiffer" one than 2 dt does not
    dt = 0.01
    assert _resting_sphere_height(0.01, dt) == _resting_sphere_height(0.02, dt)
    assert _resting_sphere_height(0.04, dt) < _resting_sphere_height(0.02, dt) - 1e-4


def test_softness_draws_under_the_floor_are_recorded_as_the_physics_uses_them(qmini_cfg):
    # at dt 0.01 MuJoCo's floor is 0.02 s: a third of the draws from [0.01, 0.04] act as 0.02 s, and the critic
    # must see 0.02 for them, not the 0.01-0.02 that was drawn
    qmini_cfg.sim.dt = 0.01
    qmini_cfg.domain_rand.contact_timeconst_range = [0.01, 0.04]
    env = all_randomised(qmini_cfg, num_envs=96)
    dr = env.robot.domain_rand
    drawn = dr.params["contact_timeconst"][:, 0]
    assert dr.timeconst_floor == pytest.approx(0.02)
    assert drawn.min().item() == pytest.approx(0.02)
    at_floor = (drawn == drawn.min()).float().mean().item()
    assert 0.15 < at_floor < 0.55 and drawn.max().item() > 0.03
    solref = torch.tensor(env.robot.sim.batch.expanded("geom_solref"))[:, 0, 0]
    assert torch.allclose(solref, drawn.double())
