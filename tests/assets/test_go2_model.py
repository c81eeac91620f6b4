"""Sanity tests for our Go2 MJCF (assets/go2/go2.xml) and its config (config/go2.py)."""

from pathlib import Path

import mujoco
import numpy as np
import pytest
import torch

from config import load_config
from env.sim.scene import load_mj_model
from standing import home_data, projected_gravity, stand

REPO_ROOT = Path(__file__).resolve().parents[2]
GO2_XML = REPO_ROOT / "assets" / "go2" / "go2.xml"

LEGS = ("FL", "FR", "RL", "RR")
# docs/robots/go2.md: trunk + 4 * (hip + thigh + calf); the feet carry no mass
BODY_MASSES = {"base_link": 6.921, "hip": 0.678, "thigh": 1.152, "calf": 0.241352}
TOTAL_MASS = 6.921 + 4 * (0.678 + 1.152 + 0.241352)  # 15.206408 kg
JOINT_NAMES = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf")]
HIP, CALF = (-1.0472, 1.0472), (-2.7227, -0.83776)
FRONT_THIGH, REAR_THIGH = (-1.5708, 3.4907), (-0.5236, 4.5379)
# dof order 0..11: FL, FR, RL, RR; each hip, thigh, calf
JOINT_RANGES = [HIP, FRONT_THIGH, CALF] * 2 + [HIP, REAR_THIGH, CALF] * 2
JOINT_AXES = [(1, 0, 0), (0, 1, 0), (0, 1, 0)] * 4
EFFORTS = [23.7, 23.7, 45.43] * 4
DEFAULT_POSE = np.array([0.0, 0.9, -1.8] * 4)
FOOT_SENSORS = tuple(f"{leg}_foot_touch" for leg in LEGS)
THIGH_SENSORS = tuple(f"{leg}_thigh_touch" for leg in LEGS)


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    """The training scene composed from the robot file and config/go2.py (env.sim.scene)."""
    assert GO2_XML.is_file(), GO2_XML
    return load_mj_model(load_config("go2"))


@pytest.fixture(scope="module")
def cfg():
    return load_config("go2")


@pytest.fixture(scope="module")
def cfg_model(cfg) -> mujoco.MjModel:
    """The model as the env builds it: the config's sim options and PD gains applied."""
    return load_mj_model(cfg)


def sensor(data, name) -> float:
    return float(data.sensor(name).data[0])


def weight(model) -> float:
    return model.body_mass.sum() * -model.opt.gravity[2]


def test_total_mass(model):
    assert TOTAL_MASS == pytest.approx(15.206408, abs=1e-9)
    assert model.body_mass.sum() == pytest.approx(TOTAL_MASS, rel=0.01)


def test_every_body_has_the_sheets_mass_and_inertia(model):
    # geoms must not add mass: each link's mass equals the sheet's value
    assert model.body("base_link").mass[0] == pytest.approx(BODY_MASSES["base_link"], rel=1e-9)
    np.testing.assert_allclose(model.body("base_link").inertia, [0.107027, 0.0980771, 0.0244531], rtol=1e-6)
    np.testing.assert_allclose(model.body("base_link").ipos, [0.021112, 0, -0.005366], atol=1e-9)
    for leg in LEGS:
        for part in ("hip", "thigh", "calf"):
            assert model.body(f"{leg}_{part}").mass[0] == pytest.approx(BODY_MASSES[part], rel=1e-9)
    # COMs mirror by side (y) and, for the hip, by front/rear (x)
    np.testing.assert_allclose(model.body("FL_hip").ipos, [-0.0054, 0.00194, -0.000105], atol=1e-9)
    np.testing.assert_allclose(model.body("RR_hip").ipos, [0.0054, -0.00194, -0.000105], atol=1e-9)
    np.testing.assert_allclose(model.body("FL_thigh").ipos, [-0.00374, -0.0223, -0.0327], atol=1e-9)
    np.testing.assert_allclose(model.body("FR_thigh").ipos, [-0.00374, 0.0223, -0.0327], atol=1e-9)
    np.testing.assert_allclose(model.body("RL_calf").ipos, [0.0063, -0.0006, -0.1414], atol=1e-9)


def test_dof_and_actuator_order(model):
    assert model.njnt == 13 and model.nq == 19 and model.nv == 18 and model.nu == 12
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert model.joint(0).name == "root"
    for i, name in enumerate(JOINT_NAMES):
        jid = i + 1
        assert model.joint(jid).name == name
        assert model.jnt_type[jid] == mujoco.mjtJoint.mjJNT_HINGE
        assert model.jnt_qposadr[jid] == 7 + i and model.jnt_dofadr[jid] == 6 + i
        assert model.jnt_limited[jid]
        np.testing.assert_allclose(model.jnt_range[jid], JOINT_RANGES[i], atol=1e-9)
        np.testing.assert_allclose(model.jnt_axis[jid], JOINT_AXES[i], atol=1e-12)
        assert model.body(model.jnt_bodyid[jid]).name == name.removesuffix("_joint")
        assert model.dof_armature[6 + i] == pytest.approx(0.01)
        assert model.dof_frictionloss[6 + i] == pytest.approx(0.2)

        act = model.actuator(i)
        assert act.name == name
        assert model.actuator_trnid[i, 0] == jid
        assert model.actuator_forcelimited[i]
        np.testing.assert_allclose(model.actuator_forcerange[i], (-EFFORTS[i], EFFORTS[i]))
        np.testing.assert_allclose(model.actuator_ctrlrange[i], JOINT_RANGES[i], atol=1e-9)
        assert model.actuator_gainprm[i, 0] > 0.0
        assert model.actuator_biasprm[i, 1] == pytest.approx(-model.actuator_gainprm[i, 0])
        assert model.actuator_biasprm[i, 2] < 0.0  # some velocity damping (kv)


def test_config_gains_and_solver_reach_the_model(cfg, cfg_model):
    assert cfg_model.opt.timestep == pytest.approx(cfg.sim.dt)
    assert cfg_model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    assert cfg_model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON
    assert cfg_model.opt.iterations == cfg.sim.iterations
    for i, name in enumerate(JOINT_NAMES):
        part = name.split("_")[1]
        assert cfg_model.actuator_gainprm[i, 0] == pytest.approx(cfg.control.stiffness[part])
        assert cfg_model.actuator_biasprm[i, 2] == pytest.approx(-cfg.control.damping[part])
    assert set(cfg.init_state.default_joint_angles) == set(JOINT_NAMES)
    np.testing.assert_allclose([cfg.init_state.default_joint_angles[n] for n in JOINT_NAMES], DEFAULT_POSE)


def test_home_keyframe_and_foot_geometry(model):
    data = home_data(model, 0.29, DEFAULT_POSE)
    for leg in LEGS:
        g = model.geom(f"{leg}_foot").id
        assert model.geom_size[g][0] == pytest.approx(0.022)
        # knee (0.9) and calf (-0.9 absolute) of 0.213 m each put the sole 0.2884 m below the base
        sole_z = data.geom_xpos[g][2] - model.geom_size[g][0]
        assert data.qpos[2] - sole_z == pytest.approx(0.2884, abs=5e-4)
        assert 0.0 < sole_z < 0.003  # spawned just above the floor
        # the touch site (a box the scene put around the foot body's geoms) is centred on its foot
        s = model.site(f"{leg}_foot_contact").id
        np.testing.assert_allclose(data.site_xpos[s], data.geom_xpos[g], atol=1e-12)
        assert model.site_size[s][0] > model.geom_size[g][0]
    assert data.ncon == 0


def test_only_robot_floor_contacts(model):
    colliding = {model.geom(i).name for i in range(model.ngeom)
                 if model.geom_contype[i] or model.geom_conaffinity[i]}
    expected = {"floor", "base_box", "base_head", "base_chin"}
    for leg in LEGS:
        expected |= {f"{leg}_foot", f"{leg}_thigh", f"{leg}_knee", f"{leg}_calf_upper", f"{leg}_calf_lower"}
    assert colliding == expected
    for name in colliding - {"floor"}:
        g = model.geom(name).id
        assert model.geom_contype[g] == 0  # no self-collision
        assert model.geom_conaffinity[g] == 1
    floor = model.geom("floor").id
    assert model.geom_contype[floor] == 1 and model.geom_conaffinity[floor] == 0
    for leg in LEGS:
        assert model.geom_friction[model.geom(f"{leg}_foot").id][0] == pytest.approx(0.8)


def test_stands_in_default_pose(cfg, cfg_model):
    model = cfg_model
    settled, after, data = stand(model, DEFAULT_POSE, min_upright=0.98)  # within ~11 deg of upright
    assert 0.22 < settled < 0.28, settled
    assert np.abs(after - settled).max() < 0.03
    assert np.abs(data.qvel).max() < 2e-2  # at rest at the end
    assert abs(settled - cfg.rewards.base_height_target) < 0.02

    feet = [sensor(data, n) for n in FOOT_SENSORS]
    assert all(f > 0 for f in feet), feet
    assert sum(feet) == pytest.approx(weight(model), rel=0.10)
    for name in ("base_link_touch",) + THIGH_SENSORS:
        assert sensor(data, name) == 0.0
    # only the feet touch the floor
    touching = {model.geom(int(g)).name for c in data.contact[: data.ncon] for g in c.geom}
    assert touching == {"floor"} | {f"{leg}_foot" for leg in LEGS}


def test_trunk_touch_when_upside_down(cfg_model):
    model = cfg_model
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    data.qpos[2] = 0.15
    data.qpos[3:7] = [0.0, 1.0, 0.0, 0.0]  # rotated 180 deg about x: trunk down
    for _ in range(300):  # 1.5 s at dt 0.005
        data.ctrl[:] = DEFAULT_POSE
        mujoco.mj_step(model, data)
    # resting on the trunk, the sensor carries the whole weight without chatter (low solver
    # iteration counts make this contact flicker, see assets/go2/go2.xml)
    assert sensor(data, "base_link_touch") == pytest.approx(weight(model), rel=0.10)
    assert projected_gravity(data)[2] > 0.9  # really upside down
    assert all(sensor(data, n) == 0.0 for n in FOOT_SENSORS)


def test_thigh_touch_when_kneeling(cfg_model):
    model = cfg_model
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    # thighs vertical, calves folded up (thigh 0, calf -2.7): the knees are the lowest points
    folded = np.array([0.0, 0.0, -2.7] * 4)
    data.qpos[7:] = folded
    data.qpos[2] = 0.25
    for _ in range(300):
        data.ctrl[:] = folded
        mujoco.mj_step(model, data)
    thighs = [sensor(data, n) for n in THIGH_SENSORS]
    assert all(f > 0.0 for f in thighs), thighs
    assert sum(thighs) == pytest.approx(weight(model), rel=0.10)
    assert all(sensor(data, n) == 0.0 for n in FOOT_SENSORS + ("base_link_touch",))


def test_imu_sensors_present(model):
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.sensor("imu_quat").data, [1, 0, 0, 0], atol=1e-9)
    assert data.sensor("imu_gyro").data.shape == (3,)
    assert data.sensor("imu_linvel").data.shape == (3,)
    np.testing.assert_allclose(data.site("imu").xpos, [-0.02557, 0, 0.29 + 0.04232], atol=1e-9)


def test_env_smoke_zero_actions():
    from env.gym_env_wrapper import make_env

    cfg = load_config("go2", ["env.num_envs=8", "sim.nthread=2", "domain_rand.push_robots=false"])
    env = make_env(cfg)
    obs, critic_obs = env.reset()
    assert obs.shape == (8, env.num_obs) and torch.isfinite(obs).all()
    actions = torch.zeros(env.num_envs, env.num_actions)
    for _ in range(50):
        obs, critic_obs, rew, dones, info, *_ = env.step(actions)
        assert torch.isfinite(obs).all() and torch.isfinite(rew).all()
        assert not dones.any(), "a standing Go2 terminated under zero actions"
    assert env.diverged_total == 0
