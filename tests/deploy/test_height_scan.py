"""Perceptive policies in deploy: the ray-cast height scan equals the training scan on the same terrain,
the exported description rebuilds the training observation, and a perceptive export runs in sim2sim."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import yaml

from config import load_config
from deploy.height_scan import HeightScanner
from deploy.observation import ObservationBuilder, RobotState
from deploy.policy_io import read_policy_yaml
from env.gym_env_wrapper import make_env
from env.sim.scene import compose_scene
from env.utils.math import yaw_from_quat
from model.policy_metadata import policy_metadata
from tests.deploy.conftest import ROOT, run_sim2sim

SMALL_TERRAIN = ["terrain.num_rows=3", "terrain.num_cols=7", "terrain.tile_size=4.0", "terrain.platform_size=1.0"]


@pytest.fixture(scope="module")
def perceptive_env():
    cfg = load_config("go2_perceptive", ["env.num_envs=6", "sim.nthread=2", "noise.add_noise=false"] + SMALL_TERRAIN)
    torch.manual_seed(0)
    env = make_env(cfg)
    env.reset()
    return cfg, env


def scanner_for(cfg, env, **kw) -> HeightScanner:
    """deploy's map of the training scene (the same height field), at the training scan's points."""
    spec = compose_scene(cfg, env.robot.ground.grid)
    return HeightScanner(spec, cfg.asset.base_body, env.robot.ground.scan.numpy(), cfg.rewards.base_height_target, **kw)


def test_ray_cast_scan_equals_the_training_scan(perceptive_env):
    """Over every tile type (stairs, obstacles, slopes, bumps) at random poses: equal to a millimetre where the
    ground is smooth, and never outside the training heights within one height-field cell of the point."""
    cfg, env = perceptive_env
    ground = env.robot.ground
    grid = ground.grid
    rng = np.random.default_rng(0)
    n = 64
    lo, hi = np.array(grid.origin) + 2.0, np.array(grid.origin) + np.array(grid.heights.shape) * grid.horizontal_scale - 2.0
    xy = rng.uniform(lo, hi, size=(n, 2))
    yaw = rng.uniform(-math.pi, math.pi, size=n)
    base_xy = torch.tensor(xy, dtype=torch.float32)
    z = ground.height_at(base_xy).numpy() + 0.3
    pos = np.concatenate([xy, z[:, None]], axis=1)
    quat = torch.tensor(np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=1), dtype=torch.float32)

    training = ground.scan_heights(torch.tensor(pos, dtype=torch.float32), quat).numpy()  # (n, P) ground z
    deploy = scanner_for(cfg, env).ground(pos, yaw_from_quat(quat).numpy().astype(np.float64))
    err = np.abs(deploy - training)
    assert np.quantile(err, 0.95) < 1e-3, np.quantile(err, 0.95)
    # near steep edges a ray 0.6 degrees off vertical lands up to ~2 cm off the point: within a cell's heights
    pts = scanner_for(cfg, env).world_points(pos[:, :2], yaw)
    cell = grid.horizontal_scale
    around = [ground.height_at(torch.tensor(pts + np.array(d) * cell, dtype=torch.float32)).numpy()
              for d in [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]]
    assert (deploy >= np.min(around, axis=0) - 5e-3).all() and (deploy <= np.max(around, axis=0) + 5e-3).all()
    assert training.max() - training.min() > 0.2  # the poses did see steps and slopes


def test_the_export_rebuilds_the_training_observation(perceptive_env, tmp_path):
    """policy.yaml's description (points, offset, clip, scale) and deploy's scan give the env's policy frame."""
    cfg, env = perceptive_env
    for _ in range(5):
        env.step(torch.zeros(env.num_envs, env.num_actions))
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(policy_metadata(env, cfg)))
    spec = read_policy_yaml(tmp_path)
    scan_term = next(t for t in spec.terms if t.name == "height_scan")
    assert scan_term.clip == pytest.approx(1.0) and scan_term.noise == 0.0 and len(scan_term.points) == 187
    assert scan_term.drift == 0.0  # the fixture trains without noise: no drift either
    noisy = copy.deepcopy(cfg)
    noisy.noise.add_noise = True  # go2_perceptive's own noise: 0.1 m per value and step, a drift of up to 0.1 m
    (tmp_path / "noisy").mkdir()
    (tmp_path / "noisy" / "policy.yaml").write_text(yaml.safe_dump(policy_metadata(env, noisy)))
    trained = next(t for t in read_policy_yaml(tmp_path / "noisy").terms if t.name == "height_scan")
    assert trained.noise == pytest.approx(0.1) and trained.drift == pytest.approx(0.1)

    robot, task = env.robot, env.task
    pos = robot.base_pos.double().numpy()
    yaw = yaw_from_quat(robot.base_quat).double().numpy()
    state = RobotState(base_quat=robot.base_quat.double().numpy(), base_ang_vel=robot.base_ang_vel.double().numpy(),
                       dof_pos=robot.dof_pos.double().numpy(), dof_vel=robot.dof_vel.double().numpy(),
                       commands=task.commands.double().numpy(), last_action=robot.actions.double().numpy(),
                       gait_clock=task.gait.observation().double().numpy(),  # the trot clock, before the scan
                       height_scan=scanner_for(cfg, env).values(pos, yaw))
    ours = ObservationBuilder(spec, env.num_envs).frame(state)
    theirs = task._policy_frame().double().numpy()
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours[:, :48], theirs[:, :48], atol=1e-4)  # proprioception and the clock
    scan_err = np.abs(ours[:, 48:] - theirs[:, 48:]) / 5.0  # back to metres (scale 5)
    assert np.quantile(scan_err, 0.95) < 1e-3


def test_noise_and_drift(perceptive_env):
    cfg, env = perceptive_env
    pos = np.array([[float(env.robot.ground.grid.origin[0]) + 6.0, float(env.robot.ground.grid.origin[1]) + 6.0, 0.5]])
    yaw = np.zeros(1)
    clean = scanner_for(cfg, env).values(pos, yaw)
    drifted = scanner_for(cfg, env, drift=0.05).values(pos, yaw)
    np.testing.assert_allclose(drifted, clean - 0.05)  # the map reads the ground 5 cm higher: the base looks lower
    noisy = scanner_for(cfg, env, noise=0.02).values(pos, yaw)
    assert 0.005 < np.abs(noisy - clean).mean() < 0.02 and np.abs(noisy - clean).max() <= 0.02


def test_a_perceptive_export_runs_in_sim2sim(tmp_path):
    """Train one iteration of go2_perceptive, export, and walk it on a course from the exported files."""
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(tmp_path))
    for cmd in (["train.py", "--config", "go2_perceptive", "--name", "p", "--max_iterations", "1", "--num_envs", "4"]
                + [a for s in SMALL_TERRAIN for a in ("--set", s)], ["play.py", "--name", "p", "--export"]):
        proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    out = tmp_path / "course.json"
    proc = run_sim2sim("--export", str(tmp_path / "p"), "--course", "stairs_up:0.1", "--episodes", "2", "--duration",
                       "2", "--scan-noise", "0.01", "--out", str(out), "--quiet", timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["config"] == "go2_perceptive" and report["courses"]["stairs_up:0.1"]["summary"]["episodes"] == 2
    assert report["options"]["scan_noise"] == 0.01
