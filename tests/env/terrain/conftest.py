"""Shared by the terrain tests: a module's ``cfg`` fixture gives its ``grid`` and compiled ``model``; rays cast down."""

import mujoco
import numpy as np
import pytest

from env.sim.scene import load_mj_model
from env.terrain import generate_terrain


@pytest.fixture(scope="module")
def grid(cfg):
    return generate_terrain(cfg.terrain)


@pytest.fixture(scope="module")
def model(cfg, grid):
    return load_mj_model(cfg, grid)


def ray_down(model: mujoco.MjModel, data: mujoco.MjData, x: float, y: float) -> tuple[float, int]:
    """Height and geom type of the first thing a ray from 5 m up at (x, y) hits (robot geoms excluded)."""
    geom = np.zeros(1, dtype=np.int32)
    dist = mujoco.mj_ray(model, data, np.array([x, y, 5.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geom)
    return 5.0 - dist, int(model.geom_type[geom[0]])
