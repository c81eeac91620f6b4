"""The terrain a video draws: a window of the grid ahead of the camera, compiled as a small render model that
holds the grid's heights, follows the robot when it walks on, and renders the same pixels as the full terrain."""

import math

import mujoco
import numpy as np
import pytest

from config import load_config
from env.sim.scene import load_mj_model
from env.terrain import generate_terrain
from env.terrain.mjcf import CHECK
from env.terrain.window import TerrainWindow

TERRAIN = ["terrain.num_rows=6", "terrain.num_cols=6", "terrain.tile_size=4.0", "terrain.platform_size=2.0",
           "terrain.border_size=1.0", 'terrain.terrain_proportions={"stairs_up": 1, "obstacles": 1}',
           "terrain.horizontal_scale=0.1", "terrain.rough_cell=0.0",  # 0.1 m cells: the sizes below count them
           "terrain.box_tiles=[]"]  # all height field (test_boxes.py, test_slopes.py: windows keep the solids)
HALF = 6.0  # m: 121 vertices a side, 122 to share the parity of the 260 x 260 grid (the texture)
K = 122


@pytest.fixture(scope="module")
def cfg():
    return load_config("go2_rough", ["env.num_envs=1", *TERRAIN])


@pytest.fixture(scope="module")
def grid(cfg):
    return generate_terrain(cfg.terrain)


def window_of(cfg, grid, **kw):
    return TerrainWindow(grid, lambda crop: load_mj_model(cfg, crop), **{"half_size": HALF, "recentre": 2.0, **kw})


def floor_heights(model):
    """World x, y of the floor's vertices and their heights, decoded from the compiled height field."""
    floor = model.geom("floor")
    hf = int(model.geom_dataid[floor.id])
    nrow, ncol = int(model.hfield_nrow[hf]), int(model.hfield_ncol[hf])
    sx, sy, sz, _ = model.hfield_size[hf]
    adr = int(model.hfield_adr[hf])
    heights = model.hfield_data[adr:adr + nrow * ncol].reshape(nrow, ncol).T * sz + floor.pos[2]  # (x, y)
    xs = floor.pos[0] + np.linspace(-sx, sx, ncol)
    ys = floor.pos[1] + np.linspace(-sy, sy, nrow)
    return xs, ys, heights


def grid_index(grid, x, y):
    h = grid.horizontal_scale
    return round((x - grid.origin[0]) / h), round((y - grid.origin[1]) / h)


@pytest.mark.parametrize("xy", [(9.3, 14.1), (0.2, 22.9), (-3.0, -3.0)])  # inside; near an edge; off the grid
def test_crop_is_the_grid_near_the_point_with_the_texture_in_step(grid, cfg, xy):
    window = window_of(cfg, grid)
    crop = window.crop(xy)
    assert crop.heights.shape == window.shape == (K, K)
    i, j = grid_index(grid, *crop.origin)
    assert 0 <= i <= grid.heights.shape[0] - K and 0 <= j <= grid.heights.shape[1] - K  # inside the grid
    np.testing.assert_array_equal(crop.heights, grid.heights[i:i + K, j:j + K])
    # MuJoCo lays the checker texture out from a height field's centre: a whole number of repeats apart
    centre = np.array(crop.origin) + (K - 1) / 2 * grid.horizontal_scale
    full_centre = np.array(grid.origin) + (np.array(grid.heights.shape) - 1) / 2 * grid.horizontal_scale
    steps = (centre - full_centre) / CHECK
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-9)
    lo, hi = np.array(grid.origin), np.array(grid.origin) + (np.array(grid.heights.shape) - 1) * grid.horizontal_scale
    inner = np.clip(xy, lo + HALF, hi - HALF)  # where the point can be centred
    assert np.abs(centre - inner).max() <= CHECK / 2 + 1e-9


def test_render_model_holds_the_grid_heights_in_a_fraction_of_the_vertices(cfg, grid):
    full = load_mj_model(cfg, grid)
    model = window_of(cfg, grid).model_near([12.1, 13.7])
    xs, ys, heights = floor_heights(model)
    i, j = grid_index(grid, xs[0], ys[0])
    np.testing.assert_allclose(heights, grid.heights[i:i + len(xs), j:j + len(ys)], atol=1e-5)
    assert np.ptp(heights) > 0.3  # stairs and obstacles, not flat ground
    assert model.nhfielddata * 4 < full.nhfielddata  # go2_rough: 58 k of 1.5 M
    # the same robot, so the recorded qpos draws it
    assert (model.nq, model.nbody, model.ngeom) == (full.nq, full.nbody, full.ngeom)
    robot = full.geom_bodyid > 0
    np.testing.assert_array_equal(model.geom_size[robot], full.geom_size[robot])
    np.testing.assert_array_equal(model.geom_rgba, full.geom_rgba)


def test_window_lies_ahead_of_the_camera_and_follows_the_look_at_point(cfg, grid):
    azimuth = 135.0  # the camera looks towards -x, +y
    window = window_of(cfg, grid, azimuth=azimuth, distance=2.0)
    lookat = np.array([16.0, 6.0])
    first = window.model_near(lookat)
    ahead = window.centre - lookat
    assert first is not None and np.linalg.norm(ahead) > 1.0
    assert math.degrees(math.atan2(ahead[1], ahead[0])) == pytest.approx(azimuth)
    xs, ys, _ = floor_heights(first)
    camera = lookat - 2.0 * np.array([math.cos(math.radians(azimuth)), math.sin(math.radians(azimuth))])
    assert xs[0] < camera[0] < xs[-1] and ys[0] < camera[1] < ys[-1]  # the ground under the camera is drawn
    assert window.model_near(lookat + [-1.0, 1.0]) is None  # 1.4 m on: the same window serves
    moved = lookat + [-4.0, 0.0]
    second = window.model_near(moved)
    assert second is not None
    xs, ys, heights = floor_heights(second)
    assert xs[0] < moved[0] < xs[-1] and ys[0] < moved[1] < ys[-1]
    i, j = grid_index(grid, xs[0], ys[0])
    np.testing.assert_allclose(heights, grid.heights[i:i + len(xs), j:j + len(ys)], atol=1e-5)


class FullTerrain:
    """The recording's camera over the full terrain: the window's heights, never another model."""

    def __init__(self, window):
        self.height_at = window.height_at

    def model_near(self, lookat_xy):
        return None


def test_recording_frames_are_the_full_terrains_as_the_robot_walks_on(cfg, grid, headless_gl):
    """Drawn through the window, which the renderer swaps as the robot goes from tile to tile, a frame is the
    full terrain's wherever the window reaches (checker texture included)."""
    from utils.video import FrameRenderer

    full, window = load_mj_model(cfg, grid), window_of(cfg, grid)
    base = mujoco.mj_name2id(full, mujoco.mjtObj.mjOBJ_BODY, cfg.asset.base_body)
    stairs = grid.column_types.index("stairs_up")
    qpos = full.key_qpos[0].copy()
    drawn = []
    for row, dx in ((4, 1.2), (2, 0.6)):  # by the edge of a stairs platform, then two levels (8 m) down
        x, y, z = grid.tile_origins[row, stairs]
        qpos[:3] = [x + dx, y - 0.4, z + 0.45]
        if not drawn:
            renderers = [FrameRenderer(full, base, width=160, height=120, ground=FullTerrain(window)),
                         FrameRenderer(window.model_near(qpos[:2]), base, width=160, height=120, ground=window)]
        frames, depths = [], []
        for renderer in renderers:
            frames.append(renderer.render(qpos).astype(int))
            renderer.renderer.enable_depth_rendering()
            depths.append(renderer.renderer.render())  # m from the camera, of the scene just drawn
            renderer.renderer.disable_depth_rendering()
        drawn.append(renderers[1].model)
        assert renderers[0].camera.elevation == renderers[1].camera.elevation
        assert frames[0].std() > 10  # a scene, not a blank frame
        near = depths[0] < HALF - 1.0  # the full terrain's pixels inside the window (the camera is 1 m inside it)
        assert near.mean() > 0.6
        diff = np.abs(frames[0] - frames[1]).max(axis=2)
        assert (diff[near] > 8).sum() == 0, f"row {row}: {(diff[near] > 8).sum()} pixels differ"
    assert drawn[0] is not drawn[1]  # the window moved on with the robot
    for renderer in renderers:
        renderer.close()
