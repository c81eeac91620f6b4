"""The height scan of a perceptive policy, as an elevation map on the robot would supply it.

policy.yaml's `height_scan` term lists its points (x forward, y left, m, in the base's yaw
frame: turned with the heading only). Each control step, for every robot,

    value_i = base_z - ground_z(point_i)      (m; the base height above the ground at point i)

and the frame holds clip(value_i - offset, -clip, clip) * scale (deploy/observation.py).
ground_z comes from ray casting the scene's terrain with the robot removed (a copy of the
scene without the robot's body tree), so the robot's own legs never shadow the ground, as
they do not in an elevation map. The rays start RAY_HEIGHT m above each base and pass
through the points at the base's nominal ground level: at RAY_HEIGHT = 100 m they are
within 0.6 degrees of vertical over a 1.6 m scan, so a 15 cm edge lands less than 2 mm
away from where a vertical ray would put it. A ray that meets nothing reads MISS_DEPTH m
below the base (clipped like any deep hole).

Map errors a robot meets: `noise` adds a uniform draw in +-noise m to every value every
step; `drift` reads the ground `drift` m higher than it is (a map whose height estimate
drifted against the base's).
"""

from __future__ import annotations

import mujoco
import numpy as np

RAY_HEIGHT = 100.0  # m above the base: the virtual sensor the rays start from
MISS_DEPTH = 10.0  # m, ground depth below the base reported where a ray meets nothing


class HeightScanner:
    """Ground heights at the scan points of B robots, from the terrain of `spec` (the robot's body tree removed)."""

    def __init__(self, spec: mujoco.MjSpec, base_body: str, points: np.ndarray, nominal_height: float,
                 noise: float = 0.0, drift: float = 0.0, seed: int = 0):
        terrain = spec.copy()
        for key in list(terrain.keys):  # they hold the robot's qpos and ctrl
            terrain.delete(key)
        terrain.delete(terrain.body(base_body))  # its subtree, joints, actuators and sensors with it
        self.model = terrain.compile()
        self.data = mujoco.MjData(self.model)
        mujoco.mj_forward(self.model, self.data)  # place the static geoms
        self.points = np.asarray(points, dtype=np.float64).reshape(-1, 2)  # (P, 2) m, base yaw frame
        self.nominal_height = float(nominal_height)  # m, base above the ground standing (where rays aim)
        self.noise, self.drift = float(noise), float(drift)
        self.rng = np.random.default_rng(seed)
        n = len(self.points)
        self._geomid = np.zeros(n, dtype=np.int32)
        self._dist = np.zeros(n)

    def world_points(self, base_xy: np.ndarray, yaw: np.ndarray) -> np.ndarray:
        """(B, P, 2) world xy of the scan points of bases at base_xy (B, 2) heading yaw (B,)."""
        c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
        px, py = self.points[None, :, 0], self.points[None, :, 1]
        return np.stack([c * px - s * py, s * px + c * py], axis=-1) + base_xy[:, None, :]

    def ground(self, base_pos: np.ndarray, yaw: np.ndarray) -> np.ndarray:
        """(B, P) m, the true ground height under each scan point of bases at base_pos (B, 3)."""
        pts = self.world_points(base_pos[:, :2], yaw)
        out = np.empty(pts.shape[:2])
        for b in range(len(base_pos)):
            origin = np.array([base_pos[b, 0], base_pos[b, 1], base_pos[b, 2] + RAY_HEIGHT])
            target = np.concatenate([pts[b], np.full((len(pts[b]), 1), base_pos[b, 2] - self.nominal_height)], axis=1)
            vec = target - origin
            vec /= np.linalg.norm(vec, axis=1, keepdims=True)
            mujoco.mj_multiRay(self.model, self.data, origin, vec.reshape(-1), None, True, -1, self._geomid,
                               self._dist, None, len(vec), np.inf)
            hit = self._dist >= 0
            out[b] = np.where(hit, origin[2] + self._dist * vec[:, 2], base_pos[b, 2] - MISS_DEPTH)
        return out

    def values(self, base_pos: np.ndarray, yaw: np.ndarray) -> np.ndarray:
        """(B, P) m, the scan as the policy reads it before offset and scale: base height above the mapped ground."""
        heights = base_pos[:, 2:3] - self.ground(base_pos, yaw) - self.drift
        if self.noise > 0:
            heights = heights + self.rng.uniform(-self.noise, self.noise, size=heights.shape)
        return heights
