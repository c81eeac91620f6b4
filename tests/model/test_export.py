import shutil

import mujoco
import numpy as np
import pytest
import torch
import yaml

from config import load_config
from env.gym_env_wrapper import make_env
from model import load_actor
from model.export import (JIT_NAME, ONNX_NAME, SCENE_NAME, YAML_NAME, ExportError, check_export, export_onnx, export_policy,
                          load_jit, load_onnx_session, policy_metadata, recorded_checkpoint)
from rl.inference import InferencePolicy
from rl.normalizer import EmpiricalNormalizer

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def env():
    cfg = load_config("qmini", ["env.num_envs=2", "sim.nthread=2", "noise.add_noise=false",
                                "domain_rand.push_robots=false"])
    return make_env(cfg)


@pytest.fixture(scope="module")
def policy(env):
    torch.manual_seed(0)
    actor = load_actor(env.cfg.policy, env.num_obs, env.num_actions, "cpu")
    norm = EmpiricalNormalizer(env.num_obs)
    norm.update(torch.randn(500, env.num_obs) * 3.0 + 1.0)  # non-trivial statistics, so they must be exported
    return InferencePolicy(actor, norm)


@pytest.fixture(scope="module")
def exported(env, policy, tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    export_policy(policy, env, env.cfg, out, {"checkpoint": "model/policy.pt"})
    return out


def test_files_and_parity(env, policy, exported):
    assert {p.name for p in exported.iterdir()} >= {ONNX_NAME, JIT_NAME, YAML_NAME, SCENE_NAME}
    obs = torch.randn(256, env.num_obs, generator=torch.Generator().manual_seed(1)) * 2.0
    with torch.no_grad():
        ref = policy(obs).numpy()
        jit = load_jit(exported / JIT_NAME)(obs).numpy()
    session = load_onnx_session(exported / ONNX_NAME)
    onnx = session.run(None, {"obs": obs.numpy()})[0]
    assert onnx.shape == ref.shape == (256, env.num_actions)
    np.testing.assert_allclose(onnx, ref, atol=1e-5, rtol=0)
    np.testing.assert_allclose(jit, ref, atol=1e-5, rtol=0)
    # the normaliser is inside: a network without it gives other actions
    with torch.no_grad():
        assert not np.allclose(policy.mean_net(obs).numpy(), ref, atol=1e-3)
    diffs = check_export(exported, policy_metadata(env, env.cfg), policy)
    assert diffs["onnx"] <= 1e-5 and diffs["jit"] <= 1e-5


def test_scene_is_the_training_model(env, exported):
    """export/scene.xml alone rebuilds the model the env simulates (for deploy.sim2sim's default --model)."""
    scene = mujoco.MjModel.from_xml_path(str(exported / SCENE_NAME))
    m = env.robot.model
    assert (scene.nq, scene.nu, scene.nsensor) == (m.nq, m.nu, m.nsensor)
    for field in ("body_mass", "body_inertia", "actuator_gainprm", "actuator_biasprm", "geom_friction", "dof_armature"):
        np.testing.assert_allclose(getattr(scene, field), getattr(m, field), rtol=1e-5, err_msg=field)  # MJCF: 6 digits
    assert scene.opt.timestep == m.opt.timestep and scene.opt.iterations == m.opt.iterations
    assert yaml.safe_load((exported / YAML_NAME).read_text())["files"]["scene"] == SCENE_NAME


def test_yaml_describes_the_robot(env, exported):
    meta = yaml.safe_load((exported / YAML_NAME).read_text())
    m = env.robot.model
    assert meta["joint_names"] == env.robot.dof_names
    assert meta["num_obs"] == env.num_obs and meta["num_actions"] == env.num_actions
    assert meta["default_joint_pos"] == [env.cfg.init_state.default_joint_angles[n] for n in env.robot.dof_names]
    assert meta["kp"] == pytest.approx(m.actuator_gainprm[:, 0].tolist())
    assert meta["kp"][0] == 55.0 and meta["kd"][0] == 1.5  # config gains override the MJCF
    assert meta["torque_limits"] == pytest.approx(m.actuator_forcerange[:, 1].tolist())
    assert meta["control_dt"] == pytest.approx(env.cfg.sim.dt * env.cfg.control.decimation)
    assert meta["action_scale"] == env.cfg.control.action_scale
    assert meta["commands"]["lin_vel_x"] == env.cfg.commands.lin_vel_x
    assert meta["observation"]["history_order"] == "oldest_first"
    assert meta["checkpoint"] == "model/policy.pt"
    training = meta["training"]  # how it was trained: deploy.sim2sim's fall limits and pushes
    assert training["terminate_tilt"] == env.cfg.asset.terminate_tilt
    assert training["terminate_height"] == env.cfg.asset.terminate_height
    assert training["termination_bodies"] == list(env.cfg.asset.termination_bodies)
    assert training["contact_threshold"] == env.cfg.asset.contact_threshold
    assert training["max_push_vel_xy"] == env.cfg.domain_rand.max_push_vel_xy


def test_a_robot_program_can_rebuild_the_observation_from_the_yaml(env, exported):
    """(value - offset) * scale per term, frames oldest first, reproduces the env's observation exactly."""
    meta = yaml.safe_load((exported / YAML_NAME).read_text())["observation"]
    robot, task = env.robot, env.task
    raw = {"base_ang_vel": lambda: robot.base_ang_vel, "projected_gravity": lambda: robot.projected_gravity,
           "commands": lambda: task.commands, "dof_pos": lambda: robot.dof_pos, "dof_vel": lambda: robot.dof_vel,
           "actions": lambda: robot.actions, "gait_clock": lambda: task.gait.observation()}

    def frame() -> torch.Tensor:
        parts = [(raw[t["name"]]() - torch.tensor(t["offset"])) * torch.tensor(t["scale"]) for t in meta["terms"]]
        return torch.clamp(torch.cat(parts, dim=1), -meta["clip"], meta["clip"])

    env.reset()
    frames = []
    gen = torch.Generator().manual_seed(0)
    for _ in range(4):
        obs, *_ = env.step(torch.randn(env.num_envs, env.num_actions, generator=gen) * 0.3)
        frames.append(frame())
    size, n = meta["frame_size"], meta["history_length"]
    assert obs.shape[1] == size * n == meta["size"]
    expected = torch.cat(frames[-n:], dim=1)  # oldest first
    torch.testing.assert_close(obs, expected, atol=1e-5, rtol=0)


def test_check_export_rejects_a_yaml_that_disagrees(env, policy, exported, tmp_path):
    expected = policy_metadata(env, env.cfg)
    text = (exported / YAML_NAME).read_text()
    for key, value, message in [("num_obs", 999, "num_obs=999"),
                                ("joint_names", list(reversed(env.robot.dof_names)), "joint_names"),
                                ("control_dt", 0.02, "control_dt")]:
        meta = yaml.safe_load(text)
        meta[key] = value
        folder = tmp_path / key
        folder.mkdir()
        for name in (ONNX_NAME, JIT_NAME):
            (folder / name).write_bytes((exported / name).read_bytes())
        (folder / YAML_NAME).write_text(yaml.safe_dump(meta))
        with pytest.raises(ExportError, match=message) as info:
            check_export(folder, expected, policy)
        assert "\n" not in str(info.value)


def test_check_export_rejects_a_network_of_the_wrong_size(env, policy, exported, tmp_path):
    folder = tmp_path / "wrong"
    folder.mkdir()
    for name in (YAML_NAME, JIT_NAME):
        (folder / name).write_bytes((exported / name).read_bytes())
    other = InferencePolicy(load_actor(env.cfg.policy, env.num_obs - 39, env.num_actions, "cpu"))
    export_onnx(other, env.num_obs - 39, folder / ONNX_NAME)
    with pytest.raises(ExportError, match=f"input of shape .*num_obs is {env.num_obs}"):
        check_export(folder, policy_metadata(env, env.cfg), policy)


def test_check_export_rejects_other_weights_and_missing_files(env, exported, tmp_path):
    other = InferencePolicy(load_actor(env.cfg.policy, env.num_obs, env.num_actions, "cpu"))
    with pytest.raises(ExportError, match="away from the checkpoint's policy"):
        check_export(exported, policy_metadata(env, env.cfg), other)
    with pytest.raises(ExportError, match="no policy.yaml"):
        check_export(tmp_path, policy_metadata(env, env.cfg))


def test_recorded_checkpoint_reads_the_yaml_and_tolerates_a_missing_or_garbled_one(exported, tmp_path):
    assert recorded_checkpoint(exported) == "model/policy.pt"
    assert recorded_checkpoint(tmp_path) is None
    (tmp_path / YAML_NAME).write_text("checkpoint: [unclosed\n")
    assert recorded_checkpoint(tmp_path) is None
    (tmp_path / YAML_NAME).write_text("- a list, not a mapping\n")
    assert recorded_checkpoint(tmp_path) is None


@pytest.mark.parametrize("text, expected", [("checkpoint: [unclosed\n", "is not valid YAML"),
                                            ("- a list\n", "does not hold a mapping")])
def test_check_export_names_a_broken_policy_yaml_in_one_line(env, exported, tmp_path, text, expected):
    folder = tmp_path / "export"
    shutil.copytree(exported, folder)
    (folder / YAML_NAME).write_text(text)
    with pytest.raises(ExportError, match=expected) as err:
        check_export(folder, policy_metadata(env, env.cfg))
    assert "\n" not in str(err.value)
