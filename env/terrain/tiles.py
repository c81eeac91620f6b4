"""One square tile of the rough-terrain grid, per terrain type, in pure numpy.

Every tile keeps a flat square platform at its centre, where robots spawn, so a
curriculum level change can drop a robot on any tile safely. The platform is at
height 0, unless `terrain.flush_edges` shifts the slope and stairs tiles so that
their outer edge is at 0 instead: then neighbouring tiles meet without cliffs
(a stairs-up tile is a pit with stairs climbing out of it, a stairs-down tile a
plateau); at 0, go2_rough's 8-ring stairs end in a drop of 0.4 m at level 0 and 1.8 m at the top.
Difficulty d in [0, 1) moves every ``*_range`` field linearly from its first
value to its second, so each grid row is uniformly harder than the one before.

A tile is an (n, n) float64 array of heights in metres, n = tile_size /
horizontal_scale, indexed [ix, iy]; vertex [ix, iy] sits at local (ix*h, iy*h)
and the tile centre at (tile_size/2, tile_size/2). Heights are not quantised
here: the grid quantises once, after assembling all tiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from utils.yaml import Cfg

TILE_TYPES = ("flat", "random_rough", "slope_up", "slope_down", "rough_slope",
              "stairs_up", "stairs_down", "obstacles", "stepping_stones")

_EPS = 1e-9  # metres; absorbs float error of positions that lie exactly on an edge


def lerp(bounds: Sequence[float], difficulty: float) -> float:
    """Value of a ``[at d=0, at d->1]`` range field at `difficulty`."""
    lo, hi = bounds
    return float(lo + difficulty * (hi - lo))


def tile_cells(terrain: Cfg) -> int:
    """Vertices along one tile side; checks the tile fits the grid exactly."""
    h, size = float(terrain.horizontal_scale), float(terrain.tile_size)
    if h <= 0:
        raise ValueError(f"terrain.horizontal_scale must be > 0, got {h}")
    n = round(size / h)
    if n < 1 or abs(n * h - size) > 1e-6 * size:
        raise ValueError(f"terrain.tile_size ({size}) must be a multiple of terrain.horizontal_scale ({h}), "
                         f"e.g. {max(n, 1) * h:g}")
    platform = float(terrain.platform_size)
    if not 0 <= platform <= size:
        raise ValueError(f"terrain.platform_size ({platform}) must be between 0 and terrain.tile_size ({size})")
    return n


def _offsets(n: int, h: float) -> np.ndarray:
    """Position of each vertex along one axis relative to the tile centre."""
    return (np.arange(n) - n / 2) * h


def platform_distance(n: int, h: float, platform_size: float) -> np.ndarray:
    """(n, n) Chebyshev distance of each vertex beyond the central platform square (0 on it).

    Square rings of equal distance are what make pyramid slopes and stairs.
    """
    u = np.abs(_offsets(n, h))
    beyond = np.maximum(u[:, None], u[None, :]) - platform_size / 2
    return np.where(beyond > _EPS, beyond, 0.0)


def _platform(terrain: Cfg, n: int) -> np.ndarray:
    """Boolean (n, n) mask of the central spawn platform."""
    return platform_distance(n, float(terrain.horizontal_scale), float(terrain.platform_size)) == 0


def _bumps(amplitude: float, terrain: Cfg, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, n) independent uniform draws from the multiples of `rough_step` in [-amplitude/2, amplitude/2], one per
    bump of side `rough_cell` (0: one per vertex); a bump spans rough_cell / horizontal_scale vertices a side."""
    step, cell = float(terrain.rough_step), bump_vertices(terrain)
    if step <= 0:
        raise ValueError(f"terrain.rough_step must be > 0, got {step}")
    k = int(np.floor(max(amplitude, 0.0) / 2 / step + 1e-6))
    coarse = -(-n // cell)
    draws = rng.integers(-k, k + 1, size=(coarse, coarse)) * step
    return np.repeat(np.repeat(draws, cell, axis=0), cell, axis=1)[:n, :n]


def bump_vertices(terrain: Cfg) -> int:
    """Vertices along one side of a random bump: terrain.rough_cell / horizontal_scale (1 when rough_cell is 0)."""
    cell, h = float(getattr(terrain, "rough_cell", 0.0) or 0.0), float(terrain.horizontal_scale)
    if cell == 0:
        return 1
    k = round(cell / h)
    if k < 1 or abs(k * h - cell) > 1e-6 * cell:
        raise ValueError(f"terrain.rough_cell ({cell}) must be 0 or a multiple of terrain.horizontal_scale ({h})")
    return k


def flat_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Flat ground: the baseline every policy must master."""
    n = tile_cells(terrain)
    return np.zeros((n, n))


def random_rough_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Uniform random bumps, peak-to-peak `rough_amplitude` at d, in steps of `rough_step`."""
    n = tile_cells(terrain)
    amplitude = lerp(terrain.rough_amplitude, difficulty)
    heights = _bumps(amplitude, terrain, n, rng)
    heights[_platform(terrain, n)] = 0.0
    return heights


def _flush(heights: np.ndarray, terrain: Cfg) -> np.ndarray:
    """With `terrain.flush_edges`, a pyramid tile shifted so that its outermost ring (vertex [0, 0]) is at 0."""
    return heights - heights[0, 0] if getattr(terrain, "flush_edges", False) else heights


PYRAMID_TYPES = ("slope_up", "slope_down")


def pyramid_shape(kind: str, difficulty: float, terrain: Cfg) -> tuple[float, float]:
    """(grade, platform height) of a pyramid tile: its height is platform + grade * `platform_distance`.

    The grade is signed (slope_up rises away from the platform); with `terrain.flush_edges` the
    platform sits so that the outermost ring (vertex [0, 0]) is at 0.
    """
    grade = (1.0 if kind == "slope_up" else -1.0) * lerp(terrain.slope_range, difficulty)
    if not getattr(terrain, "flush_edges", False):
        return grade, 0.0
    n, h = tile_cells(terrain), float(terrain.horizontal_scale)
    return grade, -grade * float(platform_distance(n, h, float(terrain.platform_size))[0, 0])


def _pyramid(difficulty: float, terrain: Cfg, kind: str) -> np.ndarray:
    n = tile_cells(terrain)
    dist = platform_distance(n, float(terrain.horizontal_scale), float(terrain.platform_size))
    grade, platform = pyramid_shape(kind, difficulty, terrain)
    return platform + grade * dist


def slope_up_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Pyramid slope rising away from the platform at grade `slope_range` at d (rise over run)."""
    return _pyramid(difficulty, terrain, "slope_up")


def slope_down_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Pyramid slope falling away from the platform: the robot walks downhill when leaving."""
    return _pyramid(difficulty, terrain, "slope_down")


def rough_slope_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """A slope (up or down, 50/50) with random bumps on it: slopes that are not perfectly smooth."""
    n = tile_cells(terrain)
    kind = "slope_up" if rng.random() < 0.5 else "slope_down"
    bumps = _bumps(lerp(terrain.rough_amplitude, difficulty), terrain, n, rng)
    bumps[_platform(terrain, n)] = 0.0
    return _pyramid(difficulty, terrain, kind) + bumps


def _stairs(difficulty: float, terrain: Cfg, sign: float) -> np.ndarray:
    n = tile_cells(terrain)
    width = float(terrain.step_width)
    if width <= 0:
        raise ValueError(f"terrain.step_width must be > 0, got {width}")
    dist = platform_distance(n, float(terrain.horizontal_scale), float(terrain.platform_size))
    ring = np.ceil(dist / width - 1e-9)  # ring k covers distances in ((k-1)*w, k*w]; 0 on the platform
    return _flush(sign * lerp(terrain.step_height_range, difficulty) * ring, terrain)


def stairs_up_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Square rings of tread `step_width`, each `step_height_range` at d above the inner one."""
    return _stairs(difficulty, terrain, 1.0)


def stairs_down_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Square rings of tread `step_width`, each `step_height_range` at d below the inner one."""
    return _stairs(difficulty, terrain, -1.0)


def obstacles_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Rectangular blocks and holes; later ones overwrite earlier.

    Each block's height is the level's `obstacle_height_range` at d times one of `obstacle_height_fractions`,
    drawn per block: (-1, 1) raises or sinks every block by the full height; legged_gym's discrete obstacles
    use (-1, -0.5, 0.5, 1), so that neighbouring blocks differ by uneven amounts.
    """
    n = tile_cells(terrain)
    h, size = float(terrain.horizontal_scale), float(terrain.tile_size)
    height = lerp(terrain.obstacle_height_range, difficulty)
    count = int(terrain.num_obstacles)
    lo, hi = terrain.obstacle_size
    sides = np.minimum(rng.uniform(lo, hi, size=(count, 2)), size)
    corners = rng.uniform(0.0, 1.0, size=(count, 2)) * (size - sides)  # rectangle stays inside the tile
    fractions = rng.choice(np.asarray(terrain.obstacle_height_fractions, dtype=float), size=count)
    start = np.rint(corners / h).astype(int)
    stop = np.rint((corners + sides) / h).astype(int)
    heights = np.zeros((n, n))
    for (i0, j0), (i1, j1), fraction in zip(start, stop, fractions):
        heights[i0:i1, j0:j1] = fraction * height
    heights[_platform(terrain, n)] = 0.0
    return heights


def stepping_stones_tile(difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """A pit at -`pit_depth` with square stones at 0 on a lattice centred on the tile.

    Stones shrink (`stone_size_range`) and gaps widen (`stone_gap_range`) with d.
    A stone covers the vertices within S/2 of its centre, so its flat top spans S.
    """
    n = tile_cells(terrain)
    stone = lerp(terrain.stone_size_range, difficulty)
    gap = lerp(terrain.stone_gap_range, difficulty)
    if stone <= 0 or gap < 0:
        raise ValueError(f"stepping stones need stone size > 0 and gap >= 0, got {stone} and {gap} "
                         f"at difficulty {difficulty}")
    period = stone + gap
    u = _offsets(n, float(terrain.horizontal_scale))
    on = np.abs(u - np.round(u / period) * period) <= stone / 2 + _EPS
    heights = np.full((n, n), -float(terrain.pit_depth))
    heights[np.outer(on, on)] = 0.0
    heights[_platform(terrain, n)] = 0.0
    return heights


_TILES: dict[str, Callable[[float, Cfg, np.random.Generator], np.ndarray]] = {
    "flat": flat_tile,
    "random_rough": random_rough_tile,
    "slope_up": slope_up_tile,
    "slope_down": slope_down_tile,
    "rough_slope": rough_slope_tile,
    "stairs_up": stairs_up_tile,
    "stairs_down": stairs_down_tile,
    "obstacles": obstacles_tile,
    "stepping_stones": stepping_stones_tile,
}
assert tuple(_TILES) == TILE_TYPES


def make_tile(kind: str, difficulty: float, terrain: Cfg, rng: np.random.Generator) -> np.ndarray:
    """Heights (m, float64, shape (n, n), [ix, iy]) of one tile of type `kind` at `difficulty`."""
    if kind not in _TILES:
        raise ValueError(f"unknown tile type '{kind}'; valid types: {', '.join(TILE_TYPES)}")
    if not 0.0 <= difficulty <= 1.0:
        raise ValueError(f"difficulty must be in [0, 1], got {difficulty}")
    return _TILES[kind](float(difficulty), terrain, rng)
