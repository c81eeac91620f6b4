import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from env.sim.mujoco_log import send_mujoco_log_to


@pytest.fixture(autouse=True)
def _seed_everything():
    """Every test starts from the same RNG state, so a failure reproduces."""
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


ROOT_MUJOCO_LOG = Path(__file__).resolve().parents[1] / "MUJOCO_LOG.TXT"


@pytest.fixture(autouse=True, scope="session")
def _mujoco_log_in_a_temp_folder(tmp_path_factory):
    """MuJoCo's warnings from in-process tests go to a temp folder, not MUJOCO_LOG.TXT in the repository.

    (train.py sends a run's log into its experiment; `pytest_sessionfinish` checks
    that no test, in process or not, left the file in the repository root.)
    """
    send_mujoco_log_to(tmp_path_factory.mktemp("mujoco_log"))
    yield


def pytest_sessionstart(session):
    session.config._mujoco_log_before = ROOT_MUJOCO_LOG.stat().st_mtime if ROOT_MUJOCO_LOG.exists() else None


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_mujoco_log_before", None)
    after = ROOT_MUJOCO_LOG.stat().st_mtime if ROOT_MUJOCO_LOG.exists() else None
    if after is not None and after != before:
        print(f"\nerror: a test wrote {ROOT_MUJOCO_LOG}; MuJoCo's log belongs in a temp or experiment folder")
        session.exitstatus = 1


@pytest.fixture
def headless_gl(monkeypatch):
    """Offscreen rendering as on a headless Linux machine: no display, MUJOCO_GL=egl unless osmesa is chosen."""
    if not sys.platform.startswith("linux"):
        pytest.skip("headless EGL rendering is a Linux set-up")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if os.environ.get("MUJOCO_GL", "") not in ("egl", "osmesa"):
        monkeypatch.setenv("MUJOCO_GL", "egl")
