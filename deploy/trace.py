"""Trace one episode to CSV: the base's pose and velocity and each foot's contact at every control step.

A video shows how an episode went; the trace gives the same episode as numbers: where a course episode
stopped, how the body was pitched, which feet carried it, whether it stood still (deploy.sim2sim
--trace, the first episode of the first model or course run, as --video). Columns, one row per control
step while the robot stands:

    t_s, x_m, y_m, z_m            episode time and the base's world position
    height_m                      base z above the ground under it (the course's ground; 0 off a course)
    roll_rad, pitch_rad, yaw_rad  the base's Z-Y-X Euler angles (pitch > 0: nose down)
    vx_m_s, vy_m_s, yaw_rate_rad_s  base-frame linear velocity and yaw rate
    <foot>_contact                1 while that foot geom touches anything, else 0
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import mujoco
import numpy as np

from deploy.episodes import base_linear_velocity, yaw_of
from deploy.report import write_text


class Tracer:
    """A frame sink (called with the MjData after every control step) that writes a CSV on finish()."""

    def __init__(self, model: mujoco.MjModel, path: str | Path, free_qpos: int, free_qvel: int,
                 foot_geoms: dict[str, int], ground: Callable[[np.ndarray], np.ndarray] | None = None):
        """foot_geoms: name -> id of each foot geom in the robot's own model."""
        self.path = Path(path)
        self.fq, self.fv = free_qpos, free_qvel
        self.foot_names = list(foot_geoms)
        # by name where it has one: a course model holds the robot's geoms and the course's, so ids may differ
        by_name = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, n) for n in self.foot_names]
        self.foot_ids = [i if i >= 0 else gid for i, gid in zip(by_name, foot_geoms.values())]
        self.ground = ground
        self.rows: list[list[float]] = []

    @property
    def header(self) -> list[str]:
        return ["t_s", "x_m", "y_m", "z_m", "height_m", "roll_rad", "pitch_rad", "yaw_rad", "vx_m_s", "vy_m_s",
                "yaw_rate_rad_s"] + [f"{n}_contact" for n in self.foot_names]

    def __call__(self, data: mujoco.MjData) -> None:
        q, v, fq, fv = data.qpos, data.qvel, self.fq, self.fv
        pos, quat = q[fq:fq + 3], q[fq + 3:fq + 7]
        ground = float(self.ground(pos[None, :2])[0]) if self.ground is not None else 0.0
        vel = base_linear_velocity(q[None], v[None], fq, fv)[0]
        n = data.ncon
        touching = set(data.contact.geom1[:n].tolist()) | set(data.contact.geom2[:n].tolist())
        contacts = [1.0 if int(g) in touching else 0.0 for g in self.foot_ids]
        self.rows.append([data.time, *pos, pos[2] - ground, *euler_zyx(quat), vel[0], vel[1], v[fv + 5], *contacts])

    def finish(self) -> Path:
        lines = [",".join(self.header)]
        k = len(self.header) - len(self.foot_names)
        lines += [",".join([f"{x:.4f}" for x in row[:k]] + [str(int(c)) for c in row[k:]]) for row in self.rows]
        return write_text(self.path, "\n".join(lines) + "\n")

    def abort(self) -> None:
        self.rows.clear()


def euler_zyx(quat: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) in rad of a unit quaternion (w, x, y, z), rotations applied z, then y, then x."""
    w, x, y, z = (float(c) for c in quat)
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    return roll, pitch, float(yaw_of(np.asarray(quat, dtype=float)[None])[0])
