"""The tile grid: layout, quantisation, spawn points, column shares, determinism, speed."""

import time

import numpy as np
import pytest
import torch

from config import load_config
from env.terrain import TILE_TYPES, column_types, generate_terrain, make_tile
from env.terrain.heights import HeightMap


@pytest.fixture
def terrain():
    t = load_config("go2").terrain
    t.num_rows, t.num_cols = 3, 4
    t.tile_size, t.platform_size, t.border_size = 4.0, 2.0, 1.0
    t.terrain_proportions = {"slope_up": 1.0, "stairs_down": 1.0, "obstacles": 1.0, "stepping_stones": 1.0}
    return t


def test_shape_and_quantisation(terrain):
    grid = generate_terrain(terrain)
    n, b = 40, 10
    assert grid.heights.shape == (3 * n + 2 * b, 4 * n + 2 * b)
    assert grid.heights.dtype == np.float32
    q = grid.heights / terrain.vertical_scale
    np.testing.assert_allclose(q, np.round(q), atol=1e-3)
    assert grid.origin == pytest.approx((-1.0, -1.0))
    np.testing.assert_allclose(grid.difficulties, [0, 1 / 3, 2 / 3])
    assert np.abs(grid.heights).max() > 0.1  # the tiles are not all flat


def test_border_is_flat(terrain):
    heights = generate_terrain(terrain).heights
    b = 10
    for edge in (heights[:b], heights[-b:], heights[:, :b], heights[:, -b:]):
        np.testing.assert_array_equal(edge, 0.0)


def test_tiles_sit_where_the_layout_says(terrain):
    grid = generate_terrain(terrain)
    assert grid.column_types == ["slope_up", "stairs_down", "obstacles", "stepping_stones"]
    for r in range(3):
        for c in range(4):
            expected = make_tile(grid.column_types[c], r / 3, terrain, np.random.default_rng([terrain.seed, r, c]))
            expected = np.round(expected / terrain.vertical_scale) * terrain.vertical_scale
            np.testing.assert_allclose(grid.heights[grid.tile_slices(r, c)], expected, atol=1e-6)
            # world position of the tile's first vertex
            i0 = grid.tile_slices(r, c)[0].start
            assert grid.origin[0] + i0 * grid.horizontal_scale == pytest.approx(r * terrain.tile_size)


def test_tile_origins_are_centres_on_the_platform(terrain):
    grid = generate_terrain(terrain)
    assert grid.tile_origins.shape == (3, 4, 3) and grid.tile_origins.dtype == np.float32
    h = grid.horizontal_scale
    lookup = HeightMap(grid, "cpu")
    for r in range(3):
        for c in range(4):
            x, y, z = grid.tile_origins[r, c]
            assert (x, y) == pytest.approx(((r + 0.5) * 4.0, (c + 0.5) * 4.0))
            # the ground there and on the whole platform around it is flat (the env's lookup, as MuJoCo sees it)
            points = torch.tensor([[x + dx, y + dy] for dx in (-0.9, 0.0, 0.9) for dy in (-0.9, 0.0, 0.9)])
            assert z == 0.0 and torch.all(lookup.height_at(points) == z)
    i = round((grid.tile_origins[1, 2, 0] - grid.origin[0]) / h)
    assert grid.heights[i, round((grid.tile_origins[1, 2, 1] - grid.origin[1]) / h)] == grid.tile_origins[1, 2, 2]


def test_harder_rows_are_rougher(terrain):
    grid = generate_terrain(terrain)
    for c in range(4):
        spread = [np.ptp(grid.heights[grid.tile_slices(r, c)]) for r in range(3)]
        assert spread[0] <= spread[1] <= spread[2], grid.column_types[c]
    slope = [grid.heights[grid.tile_slices(r, 0)].max() for r in range(1, 3)]
    assert slope[0] < slope[1]


def test_column_types_share_by_proportion():
    default = load_config("go2").terrain.terrain_proportions
    cols = column_types(default, 20)
    assert len(cols) == 20
    counts = {t: cols.count(t) for t in TILE_TYPES}
    assert counts == {**{t: 2 for t in TILE_TYPES}, "stairs_up": 3, "stairs_down": 3}
    assert cols == sorted(cols, key=TILE_TYPES.index)  # grouped in TILE_TYPES order
    assert column_types(default, 20) == cols  # deterministic
    # every type present gets a column when there is room, even a tiny share
    few = column_types({"flat": 0.98, "obstacles": 0.01, "stepping_stones": 0.01}, 5)
    assert few == ["flat", "flat", "flat", "obstacles", "stepping_stones"]
    assert column_types({"flat": 3, "slope_up": 1}, 8) == ["flat"] * 6 + ["slope_up"] * 2
    assert column_types({"flat": 0.0, "slope_up": 1}, 3) == ["slope_up"] * 3
    assert len(column_types(default, 4)) == 4


def test_column_types_errors():
    with pytest.raises(ValueError, match="stairs_up"):
        column_types({"stairs": 1.0}, 4)
    with pytest.raises(ValueError):
        column_types({"flat": 0.0}, 4)


def test_deterministic_for_seed(terrain):
    a = generate_terrain(terrain).heights
    b = generate_terrain(terrain).heights
    np.testing.assert_array_equal(a, b)
    terrain.seed = 2
    assert not np.array_equal(a, generate_terrain(terrain).heights)


def test_bad_sizes_are_rejected(terrain):
    terrain.tile_size = 4.05
    with pytest.raises(ValueError, match="multiple of terrain.horizontal_scale"):
        generate_terrain(terrain)
    terrain.tile_size = 4.0
    terrain.platform_size = 5.0
    with pytest.raises(ValueError, match="platform_size"):
        generate_terrain(terrain)


def test_default_grid_is_fast():
    terrain = load_config("go2").terrain
    start = time.perf_counter()
    grid = generate_terrain(terrain)
    elapsed = time.perf_counter() - start
    assert grid.heights.shape == (10 * 80 + 100, 20 * 80 + 100)
    assert elapsed < 5.0
