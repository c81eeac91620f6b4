"""Terrain boxes (terrain.box_tiles): the flat-faced tiles built from MuJoCo boxes that cover exactly their ground,
the height field sunk out of their way, and a foot on them getting one upward contact as on a plane
(the warp backend on them: test_slopes.py)."""

import math

import mujoco
import numpy as np
import pytest
import torch

from config import load_config
from env.sim.scene import load_mj_model
from env.terrain import generate_terrain
from env.terrain.boxes import EDGE_DROP, SINK, box_rectangles, sunken_heights, terrain_boxes
from env.terrain.curriculum import env_columns
from env.terrain.grid import column_types
from env.terrain.tiles import make_tile
from env.terrain.window import TerrainWindow
from tests.env.terrain.conftest import ray_down

TERRAIN = ["env.num_envs=1", "terrain.num_rows=2", "terrain.num_cols=3", "terrain.tile_size=4.0",
           "terrain.platform_size=2.0", "terrain.border_size=1.0", "terrain.horizontal_scale=0.05",
           "terrain.rough_cell=0.1", "terrain.box_tiles=[]", 'terrain.terrain_proportions={"random_rough": 1, "stairs_up": 1, "obstacles": 1}']
BOXES = 'terrain.box_tiles=["stairs_up", "obstacles"]'


@pytest.fixture(scope="module")
def cfg():
    return load_config("go2_rough", [*TERRAIN, BOXES])


@pytest.mark.parametrize("kind", ["stairs_up", "stairs_down", "obstacles", "stepping_stones"])
def test_rectangles_cover_every_solid_vertex_once_at_its_height(kind):
    t = load_config("go2_rough", ["terrain.horizontal_scale=0.05"]).terrain
    heights = np.round(make_tile(kind, 0.5, t, np.random.default_rng(3)) / 0.005) * 0.005
    solid = np.ones(heights.shape, dtype=bool)
    solid[:7] = False  # part of it height field
    cover = np.zeros(heights.shape, dtype=int)
    rects = box_rectangles(heights, solid)
    for i0, i1, j0, j1, top in rects:
        cover[i0:i1, j0:j1] += 1
        assert np.all(heights[i0:i1, j0:j1] == top)
    assert np.array_equal(cover, solid.astype(int))
    assert len(rects) < solid.sum() / 20  # merged, not one box per vertex


def test_stair_rings_take_at_most_four_boxes_each():
    t = load_config("go2_rough", ["terrain.horizontal_scale=0.05"]).terrain
    heights = make_tile("stairs_up", 0.5, t, np.random.default_rng(0))
    rings = len(np.unique(heights)) - 1  # the platform is one box; the outermost ring may be cut by the tile edge
    assert 4 * (rings - 1) + 1 < len(box_rectangles(heights, np.ones(heights.shape, dtype=bool))) <= 4 * rings + 1


def test_boxes_span_the_squares_around_their_vertices():
    heights = np.zeros((4, 6))
    heights[1:3, 2:5] = 0.1
    boxes = terrain_boxes(heights, np.ones(heights.shape, dtype=bool), (10.0, 20.0), 0.5)
    raised = [b for b in boxes if b.top == pytest.approx(0.1)]
    assert len(raised) == 1
    b = raised[0]  # vertices x 1..2, y 2..4: x from 10.25 to 11.25, y from 20.75 to 22.25
    assert (b.x - b.half_x, b.x + b.half_x, b.y - b.half_y, b.y + b.half_y) == pytest.approx((10.25, 11.25, 20.75, 22.25))


def test_the_height_field_sinks_under_the_boxes_and_meets_them_at_their_edge():
    heights = np.full((8, 8), 0.2)
    heights[:, 5:] = 0.3  # a step inside the solid part
    solid = np.zeros((8, 8), dtype=bool)
    solid[:, 3:] = True
    sunk = sunken_heights(heights, solid)
    assert np.array_equal(sunk[:, :3], heights[:, :3])  # height field ground untouched
    assert np.allclose(sunk[:, 3], 0.2 - EDGE_DROP)  # next to the height field: just under the boxes' edge
    assert np.allclose(sunk[:, 4:], 0.2 - SINK)  # the rest out of the way


def test_grid_marks_the_box_tiles_and_the_border_solid(grid):
    solid = grid.solid
    assert solid is not None and solid.shape == grid.heights.shape
    b = grid.border_cells
    assert solid[:b].all() and solid[-b:].all() and solid[:, :b].all() and solid[:, -b:].all()
    for c, kind in enumerate(grid.column_types):
        i, j = grid.tile_slices(1, c)
        assert solid[i, j].all() == (kind in ("stairs_up", "obstacles"))
        assert solid[i, j].any() == (kind in ("stairs_up", "obstacles"))


def test_no_box_tiles_means_no_solid_part_and_unknown_types_are_one_line():
    t = load_config("go2_rough", TERRAIN).terrain
    assert generate_terrain(t).solid is None
    bad = load_config("go2_rough", [*TERRAIN, 'terrain.box_tiles=["stairs"]']).terrain
    with pytest.raises(ValueError, match="terrain.box_tiles names unknown tile type.*stairs_up"):
        generate_terrain(bad)


def test_the_compiled_ground_has_the_grid_heights_boxes_where_solid(model, grid):
    data = mujoco.MjData(model)
    data.qpos[2] = 100.0  # the robot out of the rays' way
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(0)
    nx, ny = grid.heights.shape
    checked = {int(mujoco.mjtGeom.mjGEOM_BOX): 0, int(mujoco.mjtGeom.mjGEOM_HFIELD): 0}
    for _ in range(300):  # at a vertex both are exact: the height field passes through it, a box steps halfway
        i, j = int(rng.integers(1, nx - 1)), int(rng.integers(1, ny - 1))
        x, y = grid.origin[0] + i * grid.horizontal_scale, grid.origin[1] + j * grid.horizontal_scale
        height, kind = ray_down(model, data, x, y)
        assert height == pytest.approx(float(grid.heights[i, j]), abs=1e-4)
        assert kind == (mujoco.mjtGeom.mjGEOM_BOX if grid.solid[i, j] else mujoco.mjtGeom.mjGEOM_HFIELD)
        checked[kind] += 1
    assert min(checked.values()) > 20


def _foot_contacts(cfg, tile_type):
    """Contacts of the robot standing at its home pose on the level-0 platform of a ``tile_type`` tile."""
    grid = generate_terrain(cfg.terrain)
    model = load_mj_model(cfg, grid)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home"))
    data.qpos[:3] += grid.tile_origins[0, grid.column_types.index(tile_type)]
    for _ in range(50):  # settle
        mujoco.mj_step(model, data)
    return model, data.contact[:data.ncon]


def test_a_foot_on_a_box_gets_one_upward_contact_and_on_the_height_field_several(cfg):
    model, contacts = _foot_contacts(cfg, "stairs_up")
    assert len(contacts) == 4  # one per foot, as on a plane
    for c in contacts:
        assert mujoco.mjtGeom.mjGEOM_BOX in (model.geom_type[c.geom1], model.geom_type[c.geom2])
        assert math.degrees(math.acos(min(1.0, abs(c.frame[2])))) < 1.0
    hf_cfg = load_config("go2_rough", TERRAIN)
    _, contacts = _foot_contacts(hf_cfg, "stairs_up")
    assert len(contacts) > 4  # the reason for boxes: each cell's prisms touch a foot on their own


def test_a_video_window_keeps_the_boxes(cfg, grid):
    window = TerrainWindow(grid, lambda crop: load_mj_model(cfg, crop), half_size=2.0, recentre=1.0)
    crop = window.crop(grid.tile_origins[1, 1, :2])
    assert crop.solid is not None and crop.solid.shape == crop.heights.shape
    assert crop.solid.any() and window.model_near(grid.tile_origins[1, 1, :2]).ngeom > load_mj_model(cfg, None).ngeom


def test_env_shares_follow_the_proportions_whatever_the_columns():
    proportions = {"random_rough": 0.1, "slope_up": 0.05, "slope_down": 0.05, "rough_slope": 0.1,
                   "stairs_up": 0.25, "stairs_down": 0.25, "obstacles": 0.2}
    twenty = column_types(proportions, 20)
    legged_gym = torch.div(torch.arange(1000) * 20, 1000, rounding_mode="floor")
    assert torch.equal(env_columns(1000, twenty, proportions), legged_gym)
    seven = column_types(proportions, 7)  # one column each
    counts = torch.bincount(env_columns(1000, seven, proportions), minlength=7).tolist()
    assert counts == [round(1000 * proportions[t]) for t in seven]


def test_the_height_lookup_equals_a_ray_cast_everywhere(model, grid):
    """Between two vertices of different height the height field ramps; boxes step halfway, and so does the lookup;
    where height-field ground meets a box, the height field dips (sunk under the box's edge), and so does the lookup."""
    from env.terrain.heights import HeightMap
    data = mujoco.MjData(model)
    data.qpos[2] = 100.0
    mujoco.mj_forward(model, data)
    lookup = HeightMap(grid, "cpu")
    rng = np.random.default_rng(1)
    h = grid.horizontal_scale
    kinds = {"box": 0, "height field": 0, "where they meet": 0}
    seam = np.argwhere(grid.solid[1:-1, 1:-1] != grid.solid[2:, 1:-1]) + 1  # a solid vertex beside a height-field one
    anywhere = rng.uniform(h, (np.array(grid.heights.shape) - 2) * h, size=(600, 2))
    near_seam = (seam[rng.integers(len(seam), size=300)] + rng.uniform(-1, 1, size=(300, 2))) * h
    for x, y in np.concatenate([anywhere, near_seam]) + np.array(grid.origin):
        i, j = round((x - grid.origin[0]) / h), round((y - grid.origin[1]) / h)
        around = grid.solid[i - 1:i + 2, j - 1:j + 2]
        kinds["box" if around.all() else "height field" if not around.any() else "where they meet"] += 1
        height, _ = ray_down(model, data, x, y)
        assert float(lookup.height_at(torch.tensor([[x, y]], dtype=torch.float32))[0]) == pytest.approx(height, abs=1e-4)
    assert min(kinds.values()) > 30, kinds