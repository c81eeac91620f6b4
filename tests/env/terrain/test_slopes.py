"""Pyramid slope tiles in terrain.box_tiles: built from convex mesh pieces that cover exactly their tile at the
exact pyramid surface, the height lookup on that surface, and a foot on a face getting contacts normal to it."""

import math

import mujoco
import numpy as np
import pytest
import torch

from config import load_config
from env.sim.scene import load_mj_model
from env.terrain import generate_terrain
from env.terrain.heights import HeightMap
from env.terrain.slopes import Pyramid, pyramid_index, pyramid_pieces
from env.terrain.tiles import make_tile
from env.terrain.window import TerrainWindow
from tests.env.terrain.conftest import ray_down

TERRAIN = ["env.num_envs=1", "terrain.num_rows=3", "terrain.num_cols=4", "terrain.tile_size=4.0",
           "terrain.platform_size=1.0", "terrain.border_size=1.0", "terrain.horizontal_scale=0.1",
           "terrain.rough_cell=0.1", "terrain.box_tiles=[]",
           'terrain.terrain_proportions={"random_rough": 1, "slope_up": 1, "slope_down": 1, "stairs_up": 1}']
SLOPES = 'terrain.box_tiles=["slope_up", "slope_down", "stairs_up"]'
MESH = int(mujoco.mjtGeom.mjGEOM_MESH)


@pytest.fixture(scope="module")
def cfg():
    return load_config("go2_rough", [*TERRAIN, SLOPES])


def _inside(polygon: np.ndarray, x: float, y: float) -> bool:
    """Whether (x, y) is strictly inside the counter-clockwise convex polygon."""
    edges = np.roll(polygon, -1, axis=0) - polygon
    return bool(np.all(edges[:, 0] * (y - polygon[:, 1]) - edges[:, 1] * (x - polygon[:, 0]) > 1e-9))


def _plane_height(top: np.ndarray, x: float, y: float) -> float:
    """Height at (x, y) of the plane through a piece's top polygon."""
    a, b, c = top[0], top[1], top[2]
    normal = np.cross(b - a, c - a)
    return float(a[2] - (normal[0] * (x - a[0]) + normal[1] * (y - a[1])) / normal[2])


@pytest.mark.parametrize("grade, half_platform", [(0.3, 0.5), (-0.25, 1.0), (0.4, 0.0)])
def test_the_pieces_cover_the_tile_once_at_the_pyramid_surface(grade, half_platform):
    p = Pyramid(centre=(2.0, 6.0), half_platform=half_platform, platform_z=0.1, grade=grade, bounds=(-0.05, 3.95, 3.95, 7.95))
    pieces = pyramid_pieces(p, (-10.0, 10.0, -10.0, 10.0))
    assert len(pieces) == (5 if half_platform else 4)
    rng = np.random.default_rng(0)
    for x, y in zip(rng.uniform(-0.05, 3.95, 500), rng.uniform(3.95, 7.95, 500)):
        holders = [top for top in pieces if _inside(top[:, :2], x, y)]
        assert len(holders) == 1
        assert _plane_height(holders[0], x, y) == pytest.approx(float(p.height(x, y)), abs=1e-9)


def test_pieces_are_cut_at_the_edge_of_a_cropped_grid():
    p = Pyramid(centre=(2.0, 2.0), half_platform=0.5, platform_z=0.0, grade=0.2, bounds=(0.0, 4.0, 0.0, 4.0))
    cut = pyramid_pieces(p, (3.0, 9.0, -9.0, 9.0))
    assert cut and all(top[:, 0].min() >= 3.0 - 1e-12 for top in cut)
    assert len(cut) == 3  # the +x face whole, slivers of the +y and -y faces
    assert pyramid_pieces(p, (5.0, 9.0, -9.0, 9.0)) == []
    index = pyramid_index((p,), (10, 10), (-1.0, -1.0), 1.0)  # vertices at -1, 0, ..., 8
    assert index[1:5, 1:5].all() and index.sum() == 16


def test_pyramid_tiles_have_their_exact_surface_and_the_rest_is_unchanged(cfg, grid):
    assert len(grid.pyramids) == 6  # 3 rows x the two slope columns
    plain = generate_terrain(load_config("go2_rough", TERRAIN).terrain)
    for c, kind in enumerate(grid.column_types):
        for r in range(3):
            i, j = grid.tile_slices(r, c)
            if kind == "random_rough":
                assert np.array_equal(grid.heights[i, j], plain.heights[i, j])
            else:  # not multiples of vertical_scale: the faces' exact heights
                exact = make_tile(kind, grid.difficulties[r], cfg.terrain, np.random.default_rng(0))
                assert np.allclose(grid.heights[i, j], exact, atol=1e-6)
                assert np.abs(grid.heights[i, j] - plain.heights[i, j]).max() <= cfg.terrain.vertical_scale / 2 + 1e-6
    assert grid.solid[grid.tile_slices(1, grid.column_types.index("slope_up"))].all()


def test_the_compiled_slopes_and_the_height_lookup_agree_everywhere(model, grid):
    data = mujoco.MjData(model)
    data.qpos[2] = 100.0  # the robot out of the rays' way
    mujoco.mj_forward(model, data)
    lookup = HeightMap(grid, "cpu")
    rng = np.random.default_rng(1)
    hits = 0
    for x, y in zip(rng.uniform(0.0, 11.9, 600), rng.uniform(4.0, 11.9, 600)):  # the two slope columns
        height, kind = ray_down(model, data, x, y)
        assert kind == MESH
        assert float(lookup.height_at(torch.tensor([[x, y]], dtype=torch.float32))[0]) == pytest.approx(height, abs=1e-4)
        hits += 1
    assert hits == 600 and len(grid.pyramids) * 5 == sum(model.geom_type == MESH)


def _settled_contacts(model, grid, kind):
    """Contact normals' tilts (deg) of the robot at home pose settled on the +x face of the steepest ``kind`` tile."""
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home"))
    x, y = grid.tile_origins[2, grid.column_types.index(kind), :2] + np.array([1.2, 0.0])
    ground = float(HeightMap(grid, "cpu").height_at(torch.tensor([[x, y]], dtype=torch.float32))[0])
    data.qpos[:3] += [x, y, ground + 0.05]
    for _ in range(100):
        mujoco.mj_step(model, data)
    return [math.degrees(math.acos(min(1.0, abs(c.frame[2])))) for c in data.contact[:data.ncon]]


@pytest.mark.parametrize("kind", ["slope_up", "slope_down"])
def test_a_foot_on_a_face_touches_it_along_its_normal(model, grid, kind):
    face = math.degrees(math.atan(abs(grid.pyramids[2].grade)))  # row 2 of slope_up: the same grade as slope_down's
    tilts = _settled_contacts(model, grid, kind)
    assert len(tilts) >= 4 and all(t == pytest.approx(face, abs=0.5) for t in tilts)
    hf_cfg = load_config("go2_rough", TERRAIN)
    hf_grid = generate_terrain(hf_cfg.terrain)
    assert max(abs(t - face) for t in _settled_contacts(load_mj_model(hf_cfg, hf_grid), hf_grid, kind)) > 3.0


def test_a_video_window_keeps_the_slope_pieces_it_shows(cfg, grid):
    window = TerrainWindow(grid, lambda crop: load_mj_model(cfg, crop), distance=0.5, half_size=2.0, recentre=1.0)
    near = window.model_near(grid.tile_origins[1, 1, :2])
    assert 0 < sum(near.geom_type == MESH) < len(grid.pyramids) * 5


def test_the_warp_backend_stands_robots_on_a_slope_face_and_a_box_within_its_contact_budget(cfg, grid, model):
    pytest.importorskip("mujoco_warp", reason="the gpu extra is part of the test extra")
    from env.sim import load_backend
    from env.sim.warp_setup import buffer_sizes

    plain = load_mj_model(load_config("go2_rough", TERRAIN), generate_terrain(load_config("go2_rough", TERRAIN).terrain))
    assert buffer_sizes(model, 0, 0)[0] > buffer_sizes(plain, 0, 0)[0]  # a foot may touch two pieces
    warp = load_backend("warp", model, 2, 1, "cpu")
    home = torch.tensor(model.key_qpos[0], dtype=torch.float64).repeat(2, 1)
    spots = [grid.tile_origins[2, grid.column_types.index("slope_down"), :2] + np.array([1.2, 0.0]),  # on a face
             grid.tile_origins[0, grid.column_types.index("stairs_up"), :2]]  # on a box platform
    ground = HeightMap(grid, "cpu").height_at(torch.tensor(np.array(spots), dtype=torch.float32)).double()
    home[:, :2] += torch.tensor(np.array(spots), dtype=torch.float64)
    home[:, 2] += ground
    warp.reset(torch.arange(2), home, torch.zeros(2, model.nv, dtype=torch.float64), home[:, 7:])
    assert not warp.step(40).any()  # nothing diverged
    assert warp.overflow_total == 0
    standing = warp.qpos[:, 2].double() - ground
    assert torch.all((standing > 0.15) & (standing < 0.45))  # on the ground, not through it
