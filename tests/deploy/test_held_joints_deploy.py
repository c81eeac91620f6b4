"""A policy that drives some joints while the PD holds the rest (control.held_joints): export and deploy."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import mujoco
import numpy as np
import pytest
import yaml

from deploy.policy_io import DeployError, read_policy_yaml
from deploy.robot_model import build_robot, default_pose_qpos

from conftest import ROOT, run_sim2sim

HELD = ["hip_yaw_l", "hip_yaw_r"]


def train_and_export(root, *extra: str):
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(root))
    for cmd in (["train.py", "--config", "qmini", "--name", "h", "--max_iterations", "1", "--num_envs", "8",
                 "--set", f"control.held_joints={HELD}", *extra], ["play.py", "--name", "h", "--export"]):
        proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    return root / "h" / "export"


@pytest.fixture(scope="module")
def held_export(tmp_path_factory):
    return train_and_export(tmp_path_factory.mktemp("experiments_held"))


def test_policy_yaml_lists_the_held_joints_with_their_targets_and_gains(held_export):
    meta = yaml.safe_load((held_export / "policy.yaml").read_text())
    assert meta["num_actions"] == 8 and not set(HELD) & set(meta["joint_names"])
    held = meta["held_joints"]
    assert held["names"] == HELD
    assert held["target"] == [0.4, -0.4]  # qmini's default hip yaw angles
    assert held["kp"] == [55.0, 55.0] and held["kd"] == [1.5, 1.5] and held["torque_limits"] == [20.0, 20.0]
    spec = read_policy_yaml(held_export)
    assert spec.held.names == HELD and spec.held.target.tolist() == [0.4, -0.4]


def test_deploy_actuates_the_held_joints_after_the_policy_s_and_holds_them(held_export):
    spec = read_policy_yaml(held_export)
    robot = build_robot(held_export / "scene.xml", spec)
    m = robot.model
    assert [m.actuator(i).name for i in range(m.nu)][-2:] == [f"pd_{n}" for n in HELD] and m.nu == 10
    qpos = default_pose_qpos(m, robot.qpos_idx, robot.free_qpos, spec, 0.5)
    assert [qpos[m.jnt_qposadr[m.joint(n).id]] for n in HELD] == [0.4, -0.4]


def test_sim2sim_runs_a_policy_with_held_joints(held_export, tmp_path):
    out = tmp_path / "r.json"
    proc = run_sim2sim("--export", str(held_export), "--episodes", "2", "--duration", "1", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert len(report["results"]["nominal"]["episodes"]) == 2


def test_a_malformed_held_section_is_one_line(held_export, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    meta = yaml.safe_load((held_export / "policy.yaml").read_text())
    meta["held_joints"]["kp"] = [55.0]
    (bad / "policy.yaml").write_text(yaml.safe_dump(meta))
    with pytest.raises(DeployError, match=r"held_joints.kp must be a list of 2 numbers"):
        read_policy_yaml(bad)
    assert np.isfinite(mujoco.MjModel.from_xml_path(str(held_export / "scene.xml")).body_mass).all()


def test_held_joints_made_rigid_in_training_are_exported_as_the_robot_s_joints(held_export, tmp_path_factory, tmp_path):
    """control.held_joints_rigid trains without them; the export describes the robot, which has them under PD."""
    rigid = train_and_export(tmp_path_factory.mktemp("experiments_rigid"), "--set", "control.held_joints_rigid=true")
    meta, pd_meta = (yaml.safe_load((d / "policy.yaml").read_text()) for d in (rigid, held_export))
    assert meta["held_joints"] == pd_meta["held_joints"] and meta["joint_names"] == pd_meta["joint_names"]
    scene = mujoco.MjModel.from_xml_path(str(rigid / "scene.xml"))
    assert scene.nu == 10 and all(scene.joint(n).id >= 0 for n in HELD)
    out = tmp_path / "r.json"
    proc = run_sim2sim("--export", str(rigid), "--episodes", "2", "--duration", "1", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
