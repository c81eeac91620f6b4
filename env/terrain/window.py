"""A small render copy of the rough terrain that follows the camera, for videos.

Drawing the whole terrain costs a software renderer ~0.25 s a frame (go2_rough: 1.5 M
height-field vertices, 3 M triangles), though a video only shows the ground near the
robot. `TerrainWindow` crops the grid to a square around the camera's look-at point,
most of it ahead along the (fixed) view direction, and has the scene built on the crop
(`build`, e.g. `load_mj_model(cfg, crop)`); when the look-at point has moved
`recentre` metres, it builds the next one.

The frames show the same pixels as the full terrain's within the window: MuJoCo lays a
height field's texture out from its centre, so every crop's centre sits a whole number
of checker repeats (`CHECK`) from the full grid's, with the same vertex parity.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import mujoco
import numpy as np
import torch

from env.terrain.grid import TerrainGrid
from env.terrain.heights import HeightMap
from env.terrain.mjcf import CHECK

HALF_SIZE = 12.0  # m, half side of the square of terrain drawn
RECENTRE = 4.0  # m, the look-at point's move that brings the next window
BEHIND = 1.0  # m, terrain kept behind the camera


class TerrainWindow:
    """Render models of the part of ``grid`` in view, and the grid's ground heights (for the camera).

    Args:
        grid: the full terrain.
        build: compiles the scene on a piece of the grid (only its heights and origin count).
        azimuth, distance: the tracking camera's (deg, m); the window reaches ahead along the view.
        half_size, recentre: see the constants above (m); the window grows with the camera's distance.
    """

    def __init__(self, grid: TerrainGrid, build: Callable[[TerrainGrid], mujoco.MjModel], azimuth: float = 135.0,
                 distance: float = 2.0, half_size: float = HALF_SIZE, recentre: float = RECENTRE):
        self.grid, self.build, self.recentre = grid, build, float(recentre)
        self.half_size = max(float(half_size), 2 * float(distance) + self.recentre)
        az = math.radians(float(azimuth))
        shift = max(0.0, self.half_size - float(distance) - BEHIND)  # the camera stays BEHIND inside the window
        self.ahead = shift * np.array([math.cos(az), math.sin(az)])  # window centre from the look-at point
        self.height_map = HeightMap(grid, "cpu")
        cells = round(2 * self.half_size / grid.horizontal_scale) + 1
        self.shape = tuple(n if cells >= n else cells + (n - cells) % 2 for n in grid.heights.shape)
        self.period = max(1, round(CHECK / grid.horizontal_scale))  # cells per texture repeat
        self.centre: np.ndarray | None = None  # world xy the current window was cut around

    def crop(self, xy: Sequence[float]) -> TerrainGrid:
        """The window nearest to centred on world point ``xy``, inside the grid, aligned with the texture."""
        g = self.grid
        starts = [_aligned_start((xy[a] - g.origin[a]) / g.horizontal_scale, n, k, self.period)
                  for a, (n, k) in enumerate(zip(g.heights.shape, self.shape))]
        (i, j), (kx, ky) = starts, self.shape
        return dataclasses.replace(g, heights=g.heights[i:i + kx, j:j + ky],
                                   solid=None if g.solid is None else g.solid[i:i + kx, j:j + ky],
                                   origin=(g.origin[0] + i * g.horizontal_scale, g.origin[1] + j * g.horizontal_scale))

    def model_near(self, lookat_xy: Sequence[float]) -> mujoco.MjModel | None:
        """A render model on the window in view of the camera looking at ``lookat_xy``; None while the
        current one still serves (the window's centre would move less than `recentre`)."""
        centre = np.asarray(lookat_xy, dtype=float)[:2] + self.ahead
        if self.centre is not None and np.hypot(*(centre - self.centre)) < self.recentre:
            return None
        self.centre = centre
        return self.build(self.crop(centre))

    def height_at(self, xy: np.ndarray) -> np.ndarray:
        """Ground height (m) of the full grid under world points (..., 2)."""
        with torch.no_grad():
            return self.height_map.height_at(torch.as_tensor(np.asarray(xy), dtype=torch.float32)).numpy()


def _aligned_start(index: float, n: int, k: int, period: int) -> int:
    """First vertex of a k-vertex window of an n-vertex axis, centred near vertex ``index``: its centre a
    multiple of ``period`` cells from the axis's centre (n - k is even), clamped inside the axis."""
    centred = (n - k) // 2  # the start of the window centred on the axis: aligned by definition
    span = centred // period * period
    start = centred + period * round((index - (k - 1) / 2 - centred) / period)
    return int(min(max(start, centred - span), centred + span))


__all__ = ["TerrainWindow"]
