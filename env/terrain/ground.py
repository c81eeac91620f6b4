"""The ground an env stands on, as the env sees it: a plane, or the rough-terrain grid.

One object behind one interface so that the env never branches on the terrain kind:
the height under any point (base height above ground, height scan), where each episode
spawns, the curriculum that moves envs between levels, and what a checkpoint keeps of it.
"""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from env.terrain.curriculum import TerrainCurriculum
from env.terrain.grid import TerrainGrid, generate_terrain
from env.terrain.heights import HeightMap, scan_pattern, scan_points_world
from utils.yaml import Cfg


class Ground:
    def __init__(self, terrain: Cfg, num_envs: int, device: torch.device, grid: TerrainGrid | None):
        self.cfg, self.num_envs, self.device, self.grid = terrain, num_envs, device, grid
        self.height_map = HeightMap(grid, device) if grid is not None else None
        self.curriculum = TerrainCurriculum(grid, terrain, num_envs, device) if grid is not None else None
        self.scan = scan_pattern(terrain.scan_size, terrain.scan_points, device) if terrain.measure_heights else None
        self.footprint = 0.0  # m, half side of the square the robot covers around its base (fit_robot)

    @property
    def num_scan_points(self) -> int:
        return 0 if self.scan is None else len(self.scan)

    def height_at(self, xy: torch.Tensor) -> torch.Tensor:
        """Ground height (m) under world points (..., 2)."""
        return self.height_map.height_at(xy) if self.height_map is not None else torch.zeros_like(xy[..., 0])

    def height_under(self, base_xy: torch.Tensor) -> torch.Tensor:
        """The ground level (m) under each robot (N, 2): the mean height over the inner half of its footprint.

        Not the single point under the base: a base above a stair edge would look 15 cm lower
        or higher than the ground its feet stand on, and end episodes that did not fall.
        """
        if self.height_map is None:
            return torch.zeros_like(base_xy[..., 0])
        return self.height_map.mean_height_near(base_xy, self.footprint / 2)

    def scan_heights(self, base_pos: torch.Tensor, base_quat: torch.Tensor) -> torch.Tensor:
        """Ground height (m) at each env's scan points (N, P), the pattern turned with the base's yaw."""
        return self.height_at(scan_points_world(self.scan, base_pos, base_quat))

    def fit_robot(self, model: mujoco.MjModel, init: Cfg) -> None:
        """Measure the robot's footprint in its home pose: the spawn keeps it on the platform and above the ground."""
        data = mujoco.MjData(model)
        mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
        mujoco.mj_forward(model, data)
        robot = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0]
        reach = np.abs(data.geom_xpos[robot, :2] - np.asarray(init.pos[:2])).max(axis=1) + model.geom_rbound[robot]
        self.footprint = float(reach.max()) if robot else 0.0

    def spawn_points(self, env_ids: torch.Tensor, nominal: torch.Tensor) -> torch.Tensor:
        """Base positions (n, 3) of new episodes: `nominal` (init_state.pos, a spawn on flat ground at the
        origin) moved to each env's tile centre, jittered within its platform, raised by the highest
        ground under the robot's footprint; on a plane, `nominal` itself."""
        if self.curriculum is None:
            return nominal.expand(len(env_ids), 3)
        n = len(env_ids)
        jitter = max(0.0, self.cfg.platform_size / 2 - self.footprint)
        xy = self.curriculum.origins(env_ids)[:, :2] + nominal[:2] + (2 * torch.rand(n, 2, device=self.device) - 1) * jitter
        z = self.height_map.max_height_near(xy, self.footprint) + nominal[2]
        return torch.cat([xy, z.unsqueeze(1)], dim=1)

    def finish_episodes(self, env_ids: torch.Tensor, walked: torch.Tensor, commanded: torch.Tensor,
                        fell: torch.Tensor) -> None:
        if self.curriculum is not None:
            self.curriculum.update(env_ids, walked, commanded, fell)

    def mean_level(self) -> torch.Tensor | None:
        return self.curriculum.mean_level() if self.curriculum is not None else None

    def state_dict(self) -> dict[str, torch.Tensor]:
        return self.curriculum.state_dict() if self.curriculum is not None else {}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        if self.curriculum is not None and state:
            self.curriculum.load_state_dict(state)


def terrain_grid(terrain: Cfg) -> TerrainGrid | None:
    """The height grid of a "heightfield" terrain (generated from terrain.seed); None for a plane."""
    return generate_terrain(terrain) if terrain.mesh_type == "heightfield" else None


def build_ground(terrain: Cfg, num_envs: int, device: torch.device) -> Ground:
    """The ground of ``terrain.mesh_type``: "plane", or "heightfield"."""
    return Ground(terrain, num_envs, torch.device(device), terrain_grid(terrain))


__all__ = ["Ground", "build_ground", "terrain_grid"]
