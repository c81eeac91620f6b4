"""The full terrain: a grid of tiles (rows = difficulty, columns = type) in one heightfield.

Rows run along x with difficulty row / num_rows, so a terrain curriculum moves a
robot to a harder level by moving it one tile along x; columns run along y and
share out the tile types by `terrain_proportions`. A flat border surrounds the
grid so robots pushed off the edge still stand on ground. The result is one
height array, ready to become a single MuJoCo hfield.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from env.terrain.boxes import sunken_heights
from env.terrain.slopes import Pyramid, pyramid_index
from env.terrain.tiles import PYRAMID_TYPES, TILE_TYPES, make_tile, pyramid_shape, tile_cells
from utils.yaml import Cfg


@dataclass
class TerrainGrid:
    """Heights of the whole terrain plus where each tile is.

    heights: (nx, ny) float32 metres, multiples of vertical_scale; vertex [i, j]
        sits at world (origin[0] + i*h, origin[1] + j*h).
    origin: world xy of vertex [0, 0], (-border, -border).
    tile_origins: (num_rows, num_cols, 3) float32 world xyz of each tile centre,
        z = ground height there (the spawn platform).
    column_types: tile type of each column; difficulties: (num_rows,) row / num_rows.
    solid: (nx, ny) bool, vertices whose ground is built from solids, not the height field (the tiles of
        `terrain.box_tiles` and then the flat border too): boxes (`env.terrain.boxes`) except in `pyramids`;
        None: all height field.
    pyramids: the slope tiles of `terrain.box_tiles`, built as convex pieces (`env.terrain.slopes`); their
        vertices' heights are the exact surface, not multiples of vertical_scale.
    """

    heights: np.ndarray
    horizontal_scale: float
    vertical_scale: float
    origin: tuple[float, float]
    tile_size: float
    tile_origins: np.ndarray
    column_types: list[str]
    difficulties: np.ndarray
    solid: np.ndarray | None = None
    pyramids: tuple[Pyramid, ...] = ()

    @cached_property
    def field_heights(self) -> np.ndarray:
        """(nx, ny) float64: the heights the MuJoCo height field gets, sunk under the solid part."""
        heights = np.asarray(self.heights, dtype=np.float64)
        return heights if self.solid is None else sunken_heights(heights, self.solid)

    @cached_property
    def pyramid_of(self) -> np.ndarray:
        """(nx, ny) int16: 1 + the index into `pyramids` of the pyramid each vertex belongs to, 0 none."""
        return pyramid_index(self.pyramids, self.heights.shape, self.origin, self.horizontal_scale)

    @property
    def tile_cells(self) -> int:
        """Vertices along one tile side."""
        return round(self.tile_size / self.horizontal_scale)

    @property
    def border_cells(self) -> int:
        """Vertices of flat border before the first tile, on each side."""
        return round(-self.origin[0] / self.horizontal_scale)

    def tile_slices(self, row: int, col: int) -> tuple[slice, slice]:
        """Index slices of `heights` covered by tile (row, col)."""
        return _tile_slices(self.border_cells, self.tile_cells, row, col)


def _tile_slices(border: int, n: int, row: int, col: int) -> tuple[slice, slice]:
    return slice(border + row * n, border + (row + 1) * n), slice(border + col * n, border + (col + 1) * n)


def column_types(proportions: dict[str, float], num_cols: int) -> list[str]:
    """Tile type of each column: the columns shared in proportion, grouped in TILE_TYPES order.

    Every type with proportion > 0 gets at least one column when num_cols allows;
    the rest go by largest remainder (ties to the earlier type), so the result is
    deterministic and as close to the proportions as whole columns permit.
    """
    unknown = sorted(set(proportions) - set(TILE_TYPES))
    if unknown:
        raise ValueError(f"unknown tile type(s) {', '.join(unknown)} in terrain_proportions; "
                         f"valid types: {', '.join(TILE_TYPES)}")
    if num_cols < 1:
        raise ValueError(f"terrain.num_cols must be >= 1, got {num_cols}")
    weights = np.array([float(proportions.get(t, 0.0)) for t in TILE_TYPES])
    if (weights < 0).any() or weights.sum() <= 0:
        raise ValueError(f"terrain_proportions must be >= 0 with a positive sum, got {dict(proportions)}")
    quota = weights / weights.sum() * num_cols
    used = weights > 0
    counts = np.floor(quota + 1e-9).astype(int)
    if used.sum() <= num_cols:
        counts[used] = np.maximum(counts[used], 1)
    order = np.arange(len(TILE_TYPES))
    while counts.sum() > num_cols:  # the minimum of one column overshot: take from the most over-served
        spare = np.where(counts > 1, counts - quota, -np.inf)
        counts[np.lexsort((order, -spare))[0]] -= 1
    while counts.sum() < num_cols:  # hand the rest out by largest shortfall, earlier type first on ties
        short = np.where(used, quota - counts, -np.inf)
        counts[np.lexsort((order, -short))[0]] += 1
    return [t for t, k in zip(TILE_TYPES, counts) for _ in range(k)]


def generate_terrain(terrain: Cfg) -> TerrainGrid:
    """Build the tile grid described by the `terrain` config section.

    Each tile draws from its own ``default_rng([seed, row, col])``, so one tile
    never depends on the others and the same seed gives the same ground.
    """
    n = tile_cells(terrain)
    h, vs = float(terrain.horizontal_scale), float(terrain.vertical_scale)
    size = float(terrain.tile_size)
    rows, cols, seed = int(terrain.num_rows), int(terrain.num_cols), int(terrain.seed)
    if vs <= 0:
        raise ValueError(f"terrain.vertical_scale must be > 0, got {vs}")
    if rows < 1:
        raise ValueError(f"terrain.num_rows must be >= 1, got {rows}")
    if seed < 0:
        raise ValueError(f"terrain.seed must be >= 0, got {seed}")
    types = column_types(terrain.terrain_proportions, cols)
    border = round(float(terrain.border_size) / h)
    difficulties = np.arange(rows) / rows

    heights = np.zeros((rows * n + 2 * border, cols * n + 2 * border))
    for r in range(rows):
        for c in range(cols):
            tile = make_tile(types[c], difficulties[r], terrain, np.random.default_rng([seed, r, c]))
            heights[_tile_slices(border, n, r, c)] = tile
    heights = (np.round(heights / vs) * vs).astype(np.float32)
    kinds = box_tile_types(terrain)
    pyramids = []
    for c in [c for c in range(cols) if types[c] in PYRAMID_TYPES and types[c] in kinds]:
        for r in range(rows):
            p = _pyramid(terrain, r, c, types[c], difficulties[r])
            i, j = _tile_slices(border, n, r, c)  # exact faces: the meshes' surface at each vertex
            x, y = np.meshgrid((np.arange(i.start, i.stop) - border) * h, (np.arange(j.start, j.stop) - border) * h,
                               indexing="ij")
            heights[i, j] = p.height(x, y)
            pyramids.append(p)

    centre_i = border + np.arange(rows) * n + n // 2
    centre_j = border + np.arange(cols) * n + n // 2
    tile_origins = np.empty((rows, cols, 3), dtype=np.float32)
    tile_origins[..., 0] = ((np.arange(rows) + 0.5) * size)[:, None]
    tile_origins[..., 1] = ((np.arange(cols) + 0.5) * size)[None, :]
    tile_origins[..., 2] = heights[np.ix_(centre_i, centre_j)]
    return TerrainGrid(heights=heights, horizontal_scale=h, vertical_scale=vs, origin=(-border * h, -border * h),
                       tile_size=size, tile_origins=tile_origins, column_types=types, difficulties=difficulties,
                       solid=_solid_mask(heights.shape, border, n, rows, types, kinds), pyramids=tuple(pyramids))


def _pyramid(terrain: Cfg, row: int, col: int, kind: str, difficulty: float) -> Pyramid:
    """Tile (row, col) of a pyramid type in world coordinates: it covers the squares around its vertices."""
    size, h = float(terrain.tile_size), float(terrain.horizontal_scale)
    grade, platform = pyramid_shape(kind, difficulty, terrain)
    x0, y0 = row * size - h / 2, col * size - h / 2
    return Pyramid(centre=((row + 0.5) * size, (col + 0.5) * size), half_platform=float(terrain.platform_size) / 2,
                   platform_z=platform, grade=grade, bounds=(x0, x0 + size, y0, y0 + size))


def box_tile_types(terrain: Cfg) -> list[str]:
    """``terrain.box_tiles``, checked (older saved configs lack it: none)."""
    kinds = list(getattr(terrain, "box_tiles", None) or [])
    unknown = [k for k in kinds if k not in TILE_TYPES]
    if unknown:
        raise ValueError(f"terrain.box_tiles names unknown tile type(s) {', '.join(unknown)}; "
                         f"valid types: {', '.join(TILE_TYPES)}")
    return kinds


def _solid_mask(shape: tuple[int, int], border: int, n: int, rows: int, types: list[str],
                kinds: list[str]) -> np.ndarray | None:
    """The vertices built from boxes: every tile of a type in `kinds` and the flat border; None if no type."""
    if not kinds:
        return None
    solid = np.ones(shape, dtype=bool)
    solid[border:shape[0] - border, border:shape[1] - border] = False
    for c, kind in enumerate(types):
        if kind in kinds:
            solid[border:border + rows * n, border + c * n:border + (c + 1) * n] = True
    return solid
