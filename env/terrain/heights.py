"""Ground height lookup in torch: the same surface MuJoCo collides with, for every env and point at once.

MuJoCo draws and collides a height field as two triangles per grid cell, split along
the diagonal from vertex (i, j) to (i+1, j+1) (x index i, y index j). Interpolating on
those triangles (not bilinearly) gives exactly the height a ray cast straight down
would hit, so base heights, height scans and spawns agree with the physics. Where the ground is
boxes (`TerrainGrid.solid`), a point takes the height of its nearest vertex: the top of the box
over the square around that vertex; on a pyramid slope tile (`TerrainGrid.pyramids`), its exact surface.
The triangles are those of the height field MuJoCo gets, sunk under the solids (`TerrainGrid.field_heights`), so the
lookup also has the shallow dip where height-field ground meets a solid.
"""

from __future__ import annotations

import math

import torch

from env.terrain.grid import TerrainGrid
from env.utils.math import rotate_by_yaw, yaw_from_quat


class HeightMap:
    """Heights of a `TerrainGrid` on a device; points outside the grid take the nearest edge's height."""

    def __init__(self, grid: TerrainGrid, device: torch.device | str):
        self.heights = torch.tensor(grid.heights, dtype=torch.float32, device=device)  # (nx, ny)
        # the height field MuJoCo gets: under the solids it is sunk (and dips beside them, half a cell wide)
        self.field = self.heights if grid.solid is None else torch.tensor(grid.field_heights, dtype=torch.float32,
                                                                          device=device)
        self.scale = float(grid.horizontal_scale)
        self.origin = torch.tensor(grid.origin, dtype=torch.float32, device=device)
        self.nx, self.ny = self.heights.shape
        self.solid = None if grid.solid is None else torch.tensor(grid.solid, dtype=torch.bool, device=device).view(-1)
        self.pyramid_of = self.pyramids = None  # per vertex 1 + index into pyramids (0: none); their parameters
        if grid.pyramids:
            self.pyramid_of = torch.tensor(grid.pyramid_of, device=device).view(-1)
            self.pyramids = torch.tensor([[0.0] * 5] + [p.params() for p in grid.pyramids], dtype=torch.float32,
                                         device=device)

    def height_at(self, xy: torch.Tensor) -> torch.Tensor:
        """Ground height under world points ``xy`` (..., 2) -> (...)."""
        g = (xy - self.origin) / self.scale
        gx = g[..., 0].clamp(0, self.nx - 1 - 1e-4)
        gy = g[..., 1].clamp(0, self.ny - 1 - 1e-4)
        i, j = gx.floor().long(), gy.floor().long()
        u, v = gx - i, gy - j
        h, ny = self.field.view(-1), self.ny
        h00, h10 = h[i * ny + j], h[(i + 1) * ny + j]
        h01, h11 = h[i * ny + j + 1], h[(i + 1) * ny + j + 1]
        lower = h00 + u * (h10 - h00) + v * (h11 - h10)  # triangle (0,0) (1,0) (1,1): u >= v
        upper = h00 + v * (h01 - h00) + u * (h11 - h01)  # triangle (0,0) (0,1) (1,1): u < v
        surface = torch.where(u >= v, lower, upper)
        if self.solid is None:
            return surface
        near = (i + (u >= 0.5).long()).clamp(max=self.nx - 1) * ny + (j + (v >= 0.5).long()).clamp(max=ny - 1)
        top = self.heights.view(-1)[near]  # a box's top over the square around its vertex
        if self.pyramid_of is not None:
            k = self.pyramid_of[near].long()
            cx, cy, half, platform, grade = self.pyramids[k].unbind(-1)
            beyond = torch.maximum((xy[..., 0] - cx).abs(), (xy[..., 1] - cy).abs()) - half
            top = torch.where(k > 0, platform + grade * beyond.clamp(min=0), top)
        # over a solid the height field may still reach above its edge where it meets higher height-field ground
        return torch.where(self.solid[near], torch.maximum(top, surface), surface)

    def mean_height_near(self, xy: torch.Tensor, half_size: float, samples: int = 3) -> torch.Tensor:
        """Mean ground height over a ``samples x samples`` grid spanning +-``half_size`` around each point (N, 2)."""
        return self.height_at(xy.unsqueeze(1) + _square(half_size, samples, xy.device)).mean(dim=1)

    def max_height_near(self, xy: torch.Tensor, half_size: float, samples: int = 7) -> torch.Tensor:
        """Highest ground within the square of half side ``half_size`` around each point (N, 2) -> (N,).

        Sampled at least once per grid cell, so no vertex inside the square is missed by more
        than one cell's slope.
        """
        n = max(samples, int(math.ceil(2 * half_size / self.scale)) + 1)
        return self.height_at(xy.unsqueeze(1) + _square(half_size, n, xy.device)).amax(dim=1)


def _grid_points(x_size: float, y_size: float, nx: int, ny: int, device: torch.device | str) -> torch.Tensor:
    """(nx * ny, 2) points of an nx x ny grid over x_size by y_size centred on 0; x varies slowest."""
    xs = torch.linspace(-x_size / 2, x_size / 2, int(nx), device=device)
    ys = torch.linspace(-y_size / 2, y_size / 2, int(ny), device=device)
    return torch.stack(torch.meshgrid(xs, ys, indexing="ij"), dim=-1).view(-1, 2)


def _square(half_size: float, n: int, device: torch.device | str) -> torch.Tensor:
    return _grid_points(2 * half_size, 2 * half_size, n, n, device)


def scan_pattern(size: list[float], points: list[int], device: torch.device | str = "cpu") -> torch.Tensor:
    """The height scan's points in the base's yaw frame, (P, 2): a ``points[0] x points[1]`` grid over
    ``size[0]`` m (x, forward) by ``size[1]`` m (y, left), centred on the base; x varies slowest."""
    return _grid_points(size[0], size[1], points[0], points[1], device)


def scan_points_world(pattern: torch.Tensor, base_pos: torch.Tensor, base_quat: torch.Tensor) -> torch.Tensor:
    """The pattern (P, 2) turned by each base's yaw and moved to its xy: (N, P, 2)."""
    return rotate_by_yaw(pattern.unsqueeze(0), yaw_from_quat(base_quat).unsqueeze(1)) + base_pos[:, None, :2]
