"""The foot position and contact-force sensors, and the rough-terrain reward terms built on them."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import pytest
import torch

from config import load_config
from env.gym_env_wrapper import make_env
from env.legged_robot import LeggedRobotEnv
from env.sim.scene import force_sensor
from env.tasks.rewards import STUMBLE_RATIO, feet_clearance, feet_swing_height, stumble


@pytest.fixture(scope="module")
def standing_go2():
    """Go2 at rest on its default pose, with the nominal masses and motors (no payload, no pushes)."""
    off = ["push_robots", "randomize_base_mass", "randomize_link_mass", "randomize_com", "randomize_motor_strength",
           "randomize_gains", "randomize_contact_softness", "randomize_joint_damping", "randomize_armature",
           "randomize_joint_friction", "randomize_friction"]
    cfg = load_config("go2", ["env.num_envs=4", "sim.nthread=2", "domain_rand.max_action_latency=0"]
                      + [f"domain_rand.{k}=false" for k in off])
    torch.manual_seed(0)
    env = make_env(cfg)
    env.reset()
    for _ in range(100):  # land and settle at the default pose
        env.step(torch.zeros(4, 12))
    return env


def test_foot_position_is_the_foot_geom_centre(standing_go2):
    robot = standing_go2.robot
    model = robot.model
    data = mujoco.MjData(model)
    data.qpos[:] = robot.sim.qpos[0].numpy()
    mujoco.mj_kinematics(model, data)
    for k, name in enumerate(robot.cfg.asset.foot_bodies):
        geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
        # sensors are computed at the start of MuJoCo's last physics step: at rest that is where the feet are
        assert torch.allclose(robot.foot_pos[0, k].double(), torch.tensor(data.geom_xpos[geom]), atol=1e-3)
    # standing: each foot sphere's centre about one radius above the floor (soft contacts sink a few mm)
    radius = float(model.geom_size[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "FL_foot"), 0])
    height = robot.foot_pos[..., 2]
    assert (height - radius).abs().median() < 3e-3 and height.min() > radius - 8e-3


def test_contact_force_carries_the_weight_upright(standing_go2):
    robot = standing_go2.robot
    weight = float(robot.model.body_subtreemass[1]) * 9.81
    force = robot.foot_contact_force
    assert torch.allclose(force[..., 2].sum(dim=1), torch.full((4,), weight), rtol=0.1)  # the feet hold the robot
    assert (force[..., :2].norm(dim=-1) < 0.3 * force[..., 2].abs()).all()  # splayed legs push a little sideways...
    assert (force[..., :2].sum(dim=1).norm(dim=-1) < 0.05 * weight).all()  # ...and the pushes cancel: at rest
    assert stumble(standing_go2.task).sum() == 0
    assert feet_clearance(standing_go2.task).max() < 0.1 * 0.08 ** 2  # feet still: under a tenth of one low foot at 1 m/s


def test_contact_sensor_is_mujocos_net_force():
    """The sensor the scene adds is MJCF's <contact data="force" reduce="netforce"/> on the foot's site."""
    xml = """<mujoco><worldbody><body><freejoint/><geom size=".1"/><site name="s" size=".1"/></body></worldbody>
             <sensor><contact site="s" data="force" reduce="netforce"/></sensor></mujoco>"""
    reference = mujoco.MjModel.from_xml_string(xml)
    cfg = load_config("go2", ["env.num_envs=1"])
    from env.sim.scene import load_mj_model

    model = load_mj_model(cfg)
    sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, force_sensor("FL_foot"))
    assert model.sensor_type[sid] == mujoco.mjtSensor.mjSENS_CONTACT and model.sensor_dim[sid] == 3
    assert model.sensor_intprm[sid].tolist() == reference.sensor_intprm[0].tolist()


def fake_task(foot_pos, foot_vel, force=None, ground=0.0, target=0.1):
    ground_fn = lambda xy: torch.full(xy.shape[:-1], ground)  # noqa: E731
    env = SimpleNamespace(foot_pos=torch.tensor(foot_pos), foot_vel=torch.tensor(foot_vel),
                          foot_contact_force=None if force is None else torch.tensor(force),
                          ground=SimpleNamespace(height_at=ground_fn), cfg=SimpleNamespace(
                              asset=SimpleNamespace(contact_threshold=1.0)))
    env.foot_clearance = lambda: LeggedRobotEnv.foot_clearance(env)  # the robot's own method on the fake state
    return SimpleNamespace(env=env, cfg=SimpleNamespace(rewards=SimpleNamespace(foot_clearance_target=target)))


def test_feet_clearance_charges_low_fast_feet_above_the_ground_under_them():
    # foot 0: 2 cm up moving 1 m/s; foot 1: 15 cm up (above the target) moving fast; foot 2: low but still
    pos = [[[0.0, 0.0, 0.02], [0.0, 0.0, 0.15], [0.0, 0.0, 0.02]]]
    vel = [[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.3]]]
    assert feet_clearance(fake_task(pos, vel)).item() == pytest.approx(0.08 ** 2 * 1.0)
    # on a step 5 cm up the same foot is 5 cm lower than the target more: the ground under it counts
    raised = [[[0.0, 0.0, 0.07], [0.0, 0.0, 0.2], [0.0, 0.0, 0.07]]]
    assert feet_clearance(fake_task(raised, vel, ground=0.05)).item() == pytest.approx(0.08 ** 2)


def test_feet_swing_height_charges_low_feet_in_swing_whatever_their_speed():
    # foot 0: in swing, 2 cm up and still; foot 1: in swing, 15 cm up (above the target); foot 2: in stance, low
    pos = [[[0.0, 0.0, 0.02], [0.0, 0.0, 0.15], [0.0, 0.0, 0.02]]]
    still = [[[0.0, 0.0, 0.0]] * 3]
    task = fake_task(pos, still)
    task.gait = SimpleNamespace(desired_contact=lambda: torch.tensor([[False, False, True]]))
    assert feet_swing_height(task).item() == pytest.approx(0.08 ** 2)  # feet_clearance would charge nothing
    assert feet_clearance(task).item() == 0.0
    # the ground under the foot counts: on a 5 cm step the same foot is 5 cm further below the target
    raised = fake_task([[[0.0, 0.0, 0.07], [0.0, 0.0, 0.2], [0.0, 0.0, 0.07]]], still, ground=0.05)
    raised.gait = task.gait
    assert feet_swing_height(raised).item() == pytest.approx(0.08 ** 2)
    task.gait = None
    with pytest.raises(ValueError, match="gait_phase"):
        feet_swing_height(task)


def test_stumble_counts_feet_pushed_sideways():
    force = [[[100.0, 0.0, 10.0], [0.0, 30.0, 100.0], [0.5, 0.0, 0.0], [60.0, 0.0, 60.0 / STUMBLE_RATIO + 1.0]]]
    pos = [[[0.0, 0.0, 0.0]] * 4]
    # a riser hit (mostly horizontal); a foot on the ground; a contact below the threshold; just within the ratio
    assert stumble(fake_task(pos, pos, force)).tolist() == [1.0]
