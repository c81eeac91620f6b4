"""Shared check for robot-model tests: hold the default pose under PD and watch it stand."""

from __future__ import annotations

import mujoco
import numpy as np


def projected_gravity(data: mujoco.MjData) -> np.ndarray:
    rot = data.xmat[1].reshape(3, 3)  # body 1 = the base
    return rot.T @ np.array([0.0, 0.0, -1.0])


def stand(model: mujoco.MjModel, pose: np.ndarray, seconds: float = 5.0, settle_s: float = 0.5,
          min_upright: float = 0.95) -> tuple[float, np.ndarray, mujoco.MjData]:
    """Hold `pose` from keyframe home for `seconds`; assert limits, uprightness, finiteness every step.

    Returns (height at settle_s, base heights after settle_s, final data).
    """
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    lo, hi = model.jnt_range[1:].T
    dt = model.opt.timestep
    n_steps, n_settle = int(round(seconds / dt)), int(round(settle_s / dt))
    heights = np.empty(n_steps)
    for k in range(n_steps):
        data.ctrl[:] = pose
        mujoco.mj_step(model, data)
        heights[k] = data.qpos[2]
        q = data.qpos[7:]
        assert np.all(q >= lo - 1e-3) and np.all(q <= hi + 1e-3), (k, q)
        assert projected_gravity(data)[2] < -min_upright, k
        assert np.all(np.isfinite(data.qpos))
    return heights[n_settle - 1], heights[n_settle:], data


def home_data(model: mujoco.MjModel, base_z: float, pose: np.ndarray) -> mujoco.MjData:
    """Check keyframe home (base at base_z upright, joints and targets at pose); return its forwarded data."""
    key = model.key("home")
    np.testing.assert_allclose(key.qpos[:7], [0, 0, base_z, 1, 0, 0, 0])
    np.testing.assert_allclose(key.qpos[7:], pose)
    np.testing.assert_allclose(key.ctrl, pose)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, key.id)
    mujoco.mj_forward(model, data)
    return data
