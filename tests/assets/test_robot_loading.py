"""Robots from URDF or MJCF through the one scene-composition path (env/sim/scene.py), and the robot check.

The URDF robot is written by the test (urdf_robot.py: mesh and primitive geometry, feet on
fixed joints, package:// mesh paths) and driven by config/example_quad.py.
"""

import re

import mujoco
import numpy as np
import pytest

import train
from config import load_config
from env.check_robot import main as check_robot
from env.sim.scene import RobotFileError, load_mj_model, write_scene_xml
from urdf_robot import write_quad_urdf

FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]


@pytest.fixture(scope="module")
def urdf(tmp_path_factory):
    return write_quad_urdf(tmp_path_factory.mktemp("robot"))


def quad_cfg(urdf, *overrides):
    return load_config("example_quad", [f"asset.file={urdf}", *overrides])


def test_a_urdf_robot_becomes_a_training_scene(urdf):
    model = load_mj_model(quad_cfg(urdf))
    assert model.nu == 12 and model.njnt == 13
    free = model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and model.body(int(model.jnt_bodyid[0])).name == "trunk"
    assert free  # the URDF has none: the scene added it to asset.base_body
    for foot in FEET:  # fixed-joint links stay bodies (MuJoCo's URDF default would fuse them into the calves)
        assert model.body(foot).mass[0] == pytest.approx(0.03)
        assert model.sensor(f"{foot}_touch").type == mujoco.mjtSensor.mjSENS_TOUCH
        assert model.sensor(f"{foot}_vel").type == mujoco.mjtSensor.mjSENS_FRAMELINVEL
    np.testing.assert_allclose(model.actuator_forcerange, [[-8.0, 8.0]] * 12)  # URDF <limit effort="8">
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], 20.0)  # control.stiffness
    np.testing.assert_allclose(model.dof_armature[6:], 0.005)  # asset.joint_armature: URDFs carry none
    trunk = [g for g in range(model.ngeom) if model.geom_bodyid[g] == model.body("trunk").id]
    assert [model.geom_type[g] for g in trunk] == [mujoco.mjtGeom.mjGEOM_MESH]
    # the STL we wrote (MuJoCo turns a mesh into its principal axes: compare the sorted half-extents)
    np.testing.assert_allclose(sorted(model.geom_aabb[trunk[0], 3:]), [0.04, 0.075, 0.15], atol=1e-6)
    robot = [g for g in range(model.ngeom) if model.geom_bodyid[g] > 0]
    assert all(model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 1 for g in robot)  # no self-collision
    assert model.geom("floor").contype == 1 and model.opt.timestep == 0.005
    key = model.key("home")
    assert key.qpos[2] == pytest.approx(0.24) and key.ctrl[1] == pytest.approx(0.8)


def test_config_options_change_the_scene(urdf):
    model = load_mj_model(quad_cfg(urdf, 'asset.collision_primitives={"calf": "capsule"}', "asset.self_collisions=true",
                                   'control.torque_limits={"calf": 5.5}'))
    calf = model.body("FL_calf").id
    geom = next(g for g in range(model.ngeom) if model.geom_bodyid[g] == calf)
    assert model.geom_type[geom] == mujoco.mjtGeom.mjGEOM_CAPSULE  # fitted to the calf mesh: 0.15 m long
    assert 0.1 < 2 * (model.geom_size[geom][0] + model.geom_size[geom][1]) < 0.2
    assert model.geom_contype[geom] == 1
    assert tuple(model.actuator_forcerange[2]) == (-5.5, 5.5) and tuple(model.actuator_forcerange[1]) == (-8.0, 8.0)


@pytest.mark.parametrize("override, message", [
    ('asset.foot_bodies=["FL_foot", "FR_foot", "RL_foot", "hoof"]', r"asset.foot_bodies: no body \(or collision geom\) named hoof"),
    ('asset.collision_primitives={"calf": "cone"}', "must be one of sphere, capsule"),
    ('asset.joint_armature={"elbow": 0.01}', r"asset.joint_armature key\(s\) 'elbow' match nothing; names: FL_hip_joint"),
    ("asset.base_body=FL_calf", "must be a root link"),
])
def test_config_mistakes_are_one_line(urdf, override, message):
    with pytest.raises(RobotFileError, match=message):
        load_mj_model(quad_cfg(urdf, override))


def test_missing_mesh_file_is_named(tmp_path, capsys):
    urdf = write_quad_urdf(tmp_path, trunk_mesh="package://tinyquad/meshes/lost.stl")
    assert check_robot(["--config", "example_quad", "--set", f"asset.file={urdf}", "--no-png"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "mesh file 'package://tinyquad/meshes/lost.stl' (mesh 'lost') not found" in err


def test_a_missing_foot_body_is_one_line(urdf, capsys):
    args = ["--config", "example_quad", "--set", f"asset.file={urdf}", "--set",
            'asset.foot_bodies=["FL_foot", "FR_foot", "RL_foot", "RR_toe"]', "--no-png"]
    assert check_robot(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: asset.foot_bodies: no body (or collision geom) named RR_toe in ")


def test_a_joint_named_in_the_config_but_absent_is_one_line(capsys):
    angles = dict(load_config("go2").init_state.default_joint_angles, FL_toe_joint=0.0)
    args = ["--config", "go2", "--set", f"init_state.default_joint_angles={angles}".replace("'", '"'), "--no-png"]
    assert check_robot(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "names joint(s) FL_toe_joint, which the robot does not have" in err


@pytest.mark.parametrize("config", ["go2", "qmini", "example_quad", "g1"])
def test_check_passes_for_our_robots(config, tmp_path, capsys):
    png = tmp_path / "stand.png"
    assert check_robot(["--config", config, "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "robot check passed" in out and "problem:" not in out
    share = int(re.search(r"feet carry (\d+)% of the weight", out).group(1))
    assert 98 <= share <= 102  # the PD carries the weight; the mean of the last 0.5 s varies by a percent or so
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_check_passes_for_the_test_urdf(urdf, capsys):
    assert check_robot(["--config", "example_quad", "--set", f"asset.file={urdf}", "--no-png"]) == 0


@pytest.mark.parametrize("config, override, problem", [
    ("go2", 'control.stiffness={"joint": 3.0}', "problem: cannot stand: base_link touched the ground"),
    ("qmini", "asset.stands_passively=true", "problem: cannot stand: tilted"),  # a biped tips without its policy
])
def test_a_robot_that_cannot_stand_fails(config, override, problem, capsys):
    assert check_robot(["--config", config, "--set", override, "--no-png"]) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("problem:")][0].startswith(problem)
    assert out.rstrip().endswith("robot check FAILED: 1 problem(s)")


def test_train_refuses_a_robot_that_fails_the_fast_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    code = train.main(["--config", "go2", "--name", "bad", "--set", "init_state.pos=[0, 0, 0.1]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "robot check: the feet spawn" in err and "inside the floor" in err
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("config", ["example_quad", "go2", "qmini", "g1"])
def test_every_robot_trains_through_the_scene(config, urdf, tmp_path, monkeypatch):
    """The test's URDF, and the Go2, Qmini and G1 MJCFs: 2 PPO iterations each."""
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    args = ["--config", config, "--name", "run", "--num_envs", "8", "--max_iterations", "2",
            "--set", "runner.num_steps_per_env=8"] + (["--set", f"asset.file={urdf}"] if config == "example_quad" else [])
    assert train.main(args) == 0
    assert (tmp_path / "run" / "model" / "policy.pt").is_file()


def test_the_scene_exports_as_one_standalone_mjcf(urdf, tmp_path):
    cfg = quad_cfg(urdf)
    path = write_scene_xml(cfg, tmp_path / "export" / "scene.xml")
    assert sorted(p.name for p in (tmp_path / "export" / "meshes").iterdir()) == ["calf.stl", "trunk.stl"]
    exported = mujoco.MjModel.from_xml_path(str(path))  # no package://, no config: the file alone
    original = load_mj_model(cfg)
    for field in ("body_mass", "actuator_gainprm", "actuator_forcerange", "dof_armature", "geom_size", "key_qpos"):
        np.testing.assert_allclose(getattr(exported, field), getattr(original, field), rtol=1e-5, err_msg=field)
    assert exported.sensor("FL_foot_touch").type == mujoco.mjtSensor.mjSENS_TOUCH
