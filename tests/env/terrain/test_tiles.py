"""Each tile type has the geometry its config fields ask for."""

import numpy as np
import pytest

from config import load_config
from env.terrain import TILE_TYPES, make_tile
from env.terrain.tiles import platform_distance


@pytest.fixture
def terrain():
    t = load_config("go2").terrain
    t.tile_size = 6.0
    t.platform_size = 2.0
    return t


def tile(kind, d, terrain, seed=0):
    return make_tile(kind, d, terrain, np.random.default_rng(seed))


def dist(terrain):
    n = round(terrain.tile_size / terrain.horizontal_scale)
    return platform_distance(n, terrain.horizontal_scale, terrain.platform_size)


def centre_line(heights):
    """Heights along +x from the tile centre."""
    n = heights.shape[0]
    return heights[n // 2:, n // 2]


def runs(mask):
    """(start, length) of each run of True in a 1-D mask."""
    padded = np.concatenate(([False], mask, [False])).astype(int)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2], edges[1::2] - edges[::2]))


@pytest.mark.parametrize("kind", TILE_TYPES)
@pytest.mark.parametrize("d", [0.0, 0.5, 0.9])
def test_every_tile_has_flat_platform_at_zero(kind, d, terrain):
    heights = tile(kind, d, terrain)
    n = round(terrain.tile_size / terrain.horizontal_scale)
    assert heights.shape == (n, n) and heights.dtype == np.float64
    half = round(terrain.platform_size / 2 / terrain.horizontal_scale)
    platform = heights[n // 2 - half:n // 2 + half + 1, n // 2 - half:n // 2 + half + 1]
    assert platform.shape == (2 * half + 1,) * 2  # spans platform_size from vertex to vertex
    np.testing.assert_array_equal(platform, 0.0)


def test_unknown_kind_names_valid_types(terrain):
    with pytest.raises(ValueError, match="stepping_stones"):
        tile("lava", 0.5, terrain)


def test_flat_is_zero(terrain):
    np.testing.assert_array_equal(tile("flat", 0.7, terrain), 0.0)


@pytest.mark.parametrize("d", [0.25, 0.5, 0.75])
def test_slopes_have_requested_grade(d, terrain):
    grade = terrain.slope_range[0] + d * (terrain.slope_range[1] - terrain.slope_range[0])
    outside = dist(terrain) > 0
    for kind, sign in [("slope_up", 1.0), ("slope_down", -1.0)]:
        heights = tile(kind, d, terrain)
        fit = np.polyfit(dist(terrain)[outside], heights[outside], 1)[0]
        assert fit == pytest.approx(sign * grade, rel=0.02)
        line = centre_line(heights)
        steps = np.diff(line)
        assert (sign * steps >= 0).all() and sign * (line[-1] - line[0]) > 0  # up rises, down falls


def test_rough_slope_is_a_bumpy_slope(terrain):
    d = 0.75
    grade = 0.3
    outside = dist(terrain) > 0
    signs = set()
    for seed in range(8):
        heights = tile("rough_slope", d, terrain, seed)
        fit = np.polyfit(dist(terrain)[outside], heights[outside], 1)[0]
        assert abs(fit) == pytest.approx(grade, rel=0.1)
        residual = heights[outside] - fit * dist(terrain)[outside]
        assert residual.std() > 0.01  # bumps are there
        signs.add(np.sign(fit))
    assert signs == {-1.0, 1.0}


@pytest.mark.parametrize("d", [0.0, 0.5, 0.9])
def test_stairs_step_height_and_tread(d, terrain):
    step = terrain.step_height_range[0] + d * (terrain.step_height_range[1] - terrain.step_height_range[0])
    h = terrain.horizontal_scale
    for kind, sign in [("stairs_up", 1.0), ("stairs_down", -1.0)]:
        line = centre_line(tile(kind, d, terrain))
        jumps = np.diff(line)
        where = np.flatnonzero(np.abs(jumps) > 1e-9)
        assert len(where) >= 3
        np.testing.assert_allclose(jumps[where], sign * step, atol=terrain.vertical_scale / 2)
        spacing = np.diff(where) * h
        assert np.abs(spacing - terrain.step_width).max() <= h + 1e-9
        # the first step starts at the platform edge
        assert where[0] * h == pytest.approx(terrain.platform_size / 2, abs=h + 1e-9)


@pytest.mark.parametrize("d", [0.0, 0.25, 0.5, 0.75])
def test_random_rough_amplitude_steps_and_mean(d, terrain):
    amplitude = terrain.rough_amplitude[0] + d * (terrain.rough_amplitude[1] - terrain.rough_amplitude[0])
    step = terrain.rough_step
    heights = tile("random_rough", d, terrain)
    outside = heights[dist(terrain) > 0]
    assert outside.max() - outside.min() == pytest.approx(amplitude, abs=step)
    assert np.abs(outside).max() <= amplitude / 2 + 1e-9
    np.testing.assert_allclose(outside / step, np.round(outside / step), atol=1e-9)
    assert abs(outside.mean()) < step / 2


def test_obstacles_are_plus_minus_height(terrain):
    d = 0.5
    height = 0.15
    heights = tile("obstacles", d, terrain)
    values = np.unique(np.round(heights, 9))
    assert set(values) <= {-height, 0.0, height}
    assert {-height, height} <= set(values)
    assert (heights != 0).mean() > 0.2  # 20 obstacles of 1-2 m cover a good part of a 6 m tile


def test_obstacle_height_fractions_mix_block_heights(terrain):
    """legged_gym's discrete obstacles: each block at one of -h, -h/2, h/2, h; the default draws the same
    blocks as before the option existed (one rng draw per block either way)."""
    height = 0.15  # at d 0.5
    terrain.obstacle_height_fractions = [-1.0, -0.5, 0.5, 1.0]
    values = set(np.unique(np.round(tile("obstacles", 0.5, terrain), 9)))
    assert values <= {-height, -height / 2, 0.0, height / 2, height}
    assert {-height, -height / 2, height / 2, height} <= values


def test_stepping_stones_pits_and_stone_size(terrain):
    terrain.tile_size = 8.0
    d = 0.9
    stone = 1.5 + d * (0.5 - 1.5)
    gap = 0.05 + d * (0.3 - 0.05)
    h = terrain.horizontal_scale
    heights = tile("stepping_stones", d, terrain)
    assert set(np.unique(heights)) == {-terrain.pit_depth, 0.0}
    n = heights.shape[0]
    # a line through a row of stones well off the platform
    j = n // 2 + round(2 * (stone + gap) / h)
    assert j * h - terrain.tile_size / 2 > terrain.platform_size / 2
    line = heights[:, j]
    stones = [length for start, length in runs(line == 0) if start > 0 and start + length < n]
    pits = [length for start, length in runs(line < 0) if start > 0 and start + length < n]
    assert len(stones) >= 4
    for length in stones:  # flat top spans (length - 1) cells
        assert abs((length - 1) * h - stone) <= h + 1e-9
    for length in pits:  # the vertices strictly inside a gap of width G
        assert abs(length * h - gap) <= h + 1e-9


def test_harder_is_harder(terrain):
    def measure(kind, d):
        heights = tile(kind, d, terrain)
        if kind.startswith("stairs"):
            return np.abs(np.diff(centre_line(heights))).max()
        return np.ptp(heights)

    for kind in ["slope_up", "slope_down", "stairs_up", "stairs_down", "random_rough", "obstacles"]:
        values = [measure(kind, d) for d in (0.1, 0.5, 0.9)]
        assert values[0] < values[1] < values[2], kind
    pit = [(tile("stepping_stones", d, terrain) < 0).mean() for d in (0.1, 0.5, 0.9)]
    assert pit[0] < pit[1] < pit[2]  # smaller stones, wider gaps: more pit


def test_qmini_rough_bumps_grow_at_every_level():
    """qmini_rough's ten random_rough levels each hold higher bumps than the level below."""
    from config import load_config

    terrain = load_config("qmini_rough").terrain
    rows = int(terrain.num_rows)
    tops = [np.abs(tile("random_rough", r / rows, terrain)).max() for r in range(rows)]
    assert tops[0] == 0.0 and all(b > a for a, b in zip(tops, tops[1:])), tops
    assert tops[-1] == pytest.approx(0.02, abs=1e-9)  # +-2 cm at the top: the reference's 4 cm peak to peak


def test_rough_cell_makes_bumps_of_that_side_on_a_finer_grid(terrain):
    """go2_rough's 2.5 cm grid with 0.1 m bumps: each bump a flat 4 x 4 vertex block, as wide as on 0.1 m cells."""
    terrain.horizontal_scale, terrain.rough_cell = 0.025, 0.1
    heights = tile("random_rough", 0.9, terrain)
    n = heights.shape[0]
    blocks = heights.reshape(n // 4, 4, n // 4, 4)
    off_platform = (dist(terrain) > 0).reshape(n // 4, 4, n // 4, 4).all(axis=(1, 3))
    constant = (blocks == blocks[:, :1, :, :1]).all(axis=(1, 3))
    assert off_platform.sum() > 0.5 * off_platform.size and constant[off_platform].all()  # flat within a 0.1 m bump
    assert len(np.unique(heights)) > 5  # and different between bumps
    terrain.rough_cell = 0.11
    with pytest.raises(ValueError, match=r"rough_cell \(0.11\) must be 0 or a multiple of terrain.horizontal_scale"):
        tile("random_rough", 0.5, terrain)


PYRAMIDS = ["slope_up", "slope_down", "rough_slope", "stairs_up", "stairs_down"]


@pytest.mark.parametrize("kind", PYRAMIDS)
@pytest.mark.parametrize("d", [0.0, 0.5, 0.9])
def test_flush_edges_put_the_outer_ring_at_zero_and_keep_the_shape(kind, d, terrain):
    flush = load_config("go2", ["terrain.flush_edges=True"]).terrain
    flush.tile_size, flush.platform_size = terrain.tile_size, terrain.platform_size
    shifted, plain = tile(kind, d, flush, seed=3), tile(kind, d, terrain, seed=3)
    n = shifted.shape[0]
    half = round(terrain.platform_size / 2 / terrain.horizontal_scale)
    platform = shifted[n // 2 - half:n // 2 + half + 1, n // 2 - half:n // 2 + half + 1]
    np.testing.assert_array_equal(platform, platform[0, 0])  # still flat
    outer = np.concatenate([shifted[0, :], shifted[:, 0]])
    if kind != "rough_slope":  # (its bumps sit on the ring)
        np.testing.assert_allclose(outer, 0.0, atol=1e-12)
        np.testing.assert_allclose(shifted - plain, -plain[0, 0], atol=1e-12)  # the same tile, moved
    if kind.endswith("_up") and d > 0:
        assert platform[0, 0] < 0  # a pit with the stairs or slope climbing out
    if kind.endswith("_down") and d > 0:
        assert platform[0, 0] > 0  # a plateau


def boundary_jumps(grid, n):
    """Largest height difference between neighbouring vertices across the tile boundaries of a grid."""
    h = grid.heights
    border = round(-grid.origin[0] / grid.horizontal_scale)
    rows, cols = len(grid.difficulties), len(grid.column_types)
    across = [np.abs(h[border + r * n, border:border + cols * n] - h[border + r * n - 1, border:border + cols * n]).max()
              for r in range(1, rows)]
    across += [np.abs(h[border:border + rows * n, border + c * n] - h[border:border + rows * n, border + c * n - 1]).max()
               for c in range(1, cols)]
    return max(across)


def test_flush_stairs_tiles_meet_without_cliffs():
    from env.terrain import generate_terrain
    over = ["terrain.mesh_type=heightfield", "terrain.horizontal_scale=0.1", "terrain.num_rows=4", "terrain.num_cols=4",
            "terrain.terrain_proportions={'stairs_up':0.5,'stairs_down':0.5}"]
    plain = load_config("go2", over).terrain
    flush = load_config("go2", over + ["terrain.flush_edges=True"]).terrain
    n = round(plain.tile_size / plain.horizontal_scale)
    top_step = plain.step_height_range[0] + 0.75 * (plain.step_height_range[1] - plain.step_height_range[0])
    # at 0, the stairs tiles' edges are cliffs several steps high; flush, at most one step remains where the
    # tread does not end on the tile's edge
    assert boundary_jumps(generate_terrain(plain), n) > 4 * top_step
    assert boundary_jumps(generate_terrain(flush), n) <= top_step + plain.vertical_scale
