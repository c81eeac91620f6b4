"""Shared fixtures: the committed Go2 test policy and a 1-iteration Qmini run, exported into temporary folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GO2_MODEL = ROOT / "assets" / "go2" / "go2.xml"
QMINI_MODEL = ROOT / "assets" / "qmini" / "qmini.xml"
FIXTURE = ROOT / "tests" / "data" / "go2_walk"


def run_sim2sim(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """python -m deploy.sim2sim ARGS in the project root, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "deploy.sim2sim", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="session")
def experiments(tmp_path_factory) -> Path:
    """A temporary experiments folder holding a copy of tests/data/go2_walk as 'walk', exported."""
    root = tmp_path_factory.mktemp("experiments")
    shutil.copytree(FIXTURE, root / "walk")
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(root))
    proc = subprocess.run([sys.executable, "play.py", "--name", "walk", "--export"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture(scope="session")
def go2_export(experiments) -> Path:
    """The folder with policy.yaml and policy.onnx."""
    return experiments / "walk" / "export"


@pytest.fixture(scope="session")
def qmini_experiment(tmp_path_factory) -> Path:
    """A Qmini run of one training iteration (an untrained policy with history and gait clock), exported."""
    root = tmp_path_factory.mktemp("experiments_qmini")
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(root))
    for cmd in (["train.py", "--config", "qmini", "--name", "q", "--max_iterations", "1", "--num_envs", "8"],
                ["play.py", "--name", "q", "--export"]):
        proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    return root / "q"
