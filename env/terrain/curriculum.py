"""Terrain curriculum: each env walks one terrain type, at a level that follows how well it walks.

Game-inspired, as in legged_gym: every env keeps its tile column (its terrain type) for
the whole run and moves between rows (difficulty levels). When an episode ends:

- promoted one level if the robot got farther than half a tile from its spawn point;
- otherwise demoted one level if its displacement is less than half the one its commands
  asked for over the whole episode (every command it was given, not the last, integrated in
  the world frame with the robot's heading: where a perfect tracker would stand);
- an env promoted past the top level goes to a random level, so the top stays populated
  without everyone piling up there; no env goes below level 0;
- with ``demote_falls``, an episode that ended in a fall (not a timeout) is demoted one level
  whatever it walked: a robot that rushes two metres and falls is not promoted for it.

Start levels are drawn from 0..max_init_level. With the curriculum off, every episode
starts on a random level. `pin` puts every env on one tile and freezes the levels
(play.py --terrain/--level).
"""

from __future__ import annotations

import torch

from env.terrain.grid import TerrainGrid, column_types
from utils.yaml import Cfg


class TerrainCurriculum:
    def __init__(self, grid: TerrainGrid, terrain: Cfg, num_envs: int, device: torch.device | str):
        self.device = torch.device(device)
        self.tile_origins = torch.tensor(grid.tile_origins, dtype=torch.float32, device=self.device)  # (rows, cols, 3)
        self.num_rows, self.num_cols = self.tile_origins.shape[:2]
        self.column_types = list(grid.column_types)
        self.half_tile = float(grid.tile_size) / 2
        self.enabled = bool(terrain.curriculum)
        self.demote_falls = bool(terrain.demote_falls)
        self.pinned = False
        self.max_init_level = min(int(terrain.max_init_level), self.num_rows - 1)
        # envs shared out among the types by terrain_proportions, in env order, then over each type's columns
        self.columns = env_columns(num_envs, self.column_types, dict(terrain.terrain_proportions)).to(self.device)
        top = self.max_init_level + 1 if self.enabled else self.num_rows
        self.levels = torch.randint(0, top, (num_envs,), device=self.device)

    def origins(self, env_ids: torch.Tensor) -> torch.Tensor:
        """World xyz of the tile centres (spawn platforms) of env_ids, (n, 3)."""
        return self.tile_origins[self.levels[env_ids], self.columns[env_ids]]

    def mean_level(self) -> torch.Tensor:
        return self.levels.float().mean()

    def mean_level_by_type(self) -> dict[str, float]:
        """Mean level of the envs on each terrain type (one host read; for logs and reports)."""
        return mean_by_type([self.column_types[c] for c in self.columns.tolist()], self.levels.tolist())

    def update(self, env_ids: torch.Tensor, walked: torch.Tensor, commanded: torch.Tensor,
               fell: torch.Tensor) -> None:
        """Move env_ids between levels at the end of their episodes.

        walked: (n,) m, distance from the spawn point at the end; commanded: (n,) m, the
        distance from the spawn point the episode's commands asked for (the task integrates them);
        fell: (n,) bool, episodes that ended in a fall (used with ``demote_falls``).
        """
        if self.pinned or len(env_ids) == 0:
            return
        if not self.enabled:
            self.levels[env_ids] = torch.randint(0, self.num_rows, (len(env_ids),), device=self.device)
            return
        up = walked > self.half_tile
        down = (walked < 0.5 * commanded) & ~up
        if self.demote_falls:
            up, down = up & ~fell, down | fell
        new = self.levels[env_ids] + up.long() - down.long()
        past_top = new >= self.num_rows
        new = torch.where(past_top, torch.randint_like(new, 0, self.num_rows), new.clamp(min=0))
        self.levels[env_ids] = new

    def pin(self, terrain_type: str | None = None, level: int | None = None) -> None:
        """Freeze the curriculum with the envs spread over tiles: every env on ``terrain_type`` (its first
        column) if given, else round-robin over the types; on ``level`` if given, else round-robin over
        the levels (env i on level i % num_rows). play.py --terrain/--level and --eval use it."""
        check_tile_choice(self.column_types, self.num_rows, terrain_type, level)
        types = list(dict.fromkeys(self.column_types))
        first_column = torch.tensor([self.column_types.index(t) for t in types], device=self.device)
        env = torch.arange(len(self.levels), device=self.device)
        chosen = [types.index(terrain_type)] if terrain_type is not None else None
        self.columns = first_column[chosen].expand(len(env)).clone() if chosen else \
            first_column[torch.div(env, self.num_rows, rounding_mode="floor") % len(types)]
        self.levels = torch.full_like(env, level) if level is not None else env % self.num_rows
        self.pinned = True

    def tile_of(self, env_ids: torch.Tensor) -> tuple[list[str], list[int]]:
        """Terrain type and level of env_ids' tiles."""
        return [self.column_types[c] for c in self.columns[env_ids].tolist()], self.levels[env_ids].tolist()

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"levels": self.levels.cpu().clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Continue from saved levels; with a different env count, draw the new envs' levels from the saved ones."""
        saved = torch.as_tensor(state["levels"], dtype=torch.long, device=self.device).clamp(0, self.num_rows - 1)
        if len(saved) == len(self.levels):
            self.levels.copy_(saved)
        elif len(saved):
            self.levels.copy_(saved[torch.randint(0, len(saved), (len(self.levels),), device=self.device)])


def env_columns(num_envs: int, column_types: list[str], proportions: dict[str, float]) -> torch.Tensor:
    """The tile column of every env, in env order: each type's envs in proportion to ``proportions`` (largest
    remainder), spread evenly over that type's columns. With columns already shared in proportion (legged_gym's
    20) this is legged_gym's env i -> column i * num_cols // num_envs; it also lets a grid hold one column of a
    deterministic type (stairs, slopes) that takes a large share of the envs, which keeps terrain boxes few."""
    types = list(dict.fromkeys(column_types))  # column_types gives columns only to types with a positive share
    weights = torch.tensor([float(proportions[t]) for t in types], dtype=torch.float64)
    quota = weights / weights.sum() * num_envs
    counts = quota.floor().long()
    for k in torch.argsort(-(quota - counts), stable=True)[:num_envs - int(counts.sum())]:
        counts[k] += 1
    columns = []
    for kind, count in zip(types, counts.tolist()):
        own = torch.tensor([c for c, t in enumerate(column_types) if t == kind])
        columns.append(own[torch.div(torch.arange(count) * len(own), max(count, 1), rounding_mode="floor")])
    return torch.cat(columns)


def mean_by_type(types: list[str], levels: list[int]) -> dict[str, float]:
    """Mean level per terrain type, given each env's type and level."""
    return {t: sum(lv for k, lv in zip(types, levels) if k == t) / types.count(t) for t in dict.fromkeys(types)}


def check_tile_flags(terrain: Cfg, terrain_type: str | None, level: int | None, config_name: str) -> None:
    """play.py's --terrain/--level checked against a config's terrain, before anything is built or printed."""
    if terrain_type is None and level is None:
        return
    if terrain.mesh_type != "heightfield":
        raise ValueError(f"--terrain/--level need a rough-terrain config (terrain.mesh_type heightfield); "
                         f"'{config_name}' walks on a {terrain.mesh_type}")
    types = column_types(dict(terrain.terrain_proportions), int(terrain.num_cols))
    check_tile_choice(types, int(terrain.num_rows), terrain_type, level)


def check_tile_choice(column_types: list[str], num_rows: int, terrain_type: str | None, level: int | None) -> None:
    """`ValueError` (one line, with what is valid) unless the type is one of the columns' and the level a row."""
    types = list(dict.fromkeys(column_types))
    if terrain_type is not None and terrain_type not in types:
        raise ValueError(f"terrain type '{terrain_type}' is not in this terrain; its types: {', '.join(types)}")
    if level is not None and not 0 <= level < num_rows:
        raise ValueError(f"terrain level {level} is out of range; this terrain has levels 0..{num_rows - 1}")
