"""Qmini's foot soles against the measured sole profile in docs/robots/qmini.md ("Foot sole").

The model is measured, not its source numbers: rays cast upward from below the floor, restricted
to the feet's collision geoms (every other geom is moved to a hidden group in a private copy of
the model), find the sole's underside at the default standing pose (base upright). Coordinates
are along world axes relative to each ankle joint.
"""

from pathlib import Path

import mujoco
import numpy as np
import pytest

from env.sim.scene import SITE_MARGIN
from test_qmini_model import load_model

REPO_ROOT = Path(__file__).resolve().parents[2]
QMINI_XML = REPO_ROOT / "assets" / "qmini" / "qmini.xml"
DEFAULT_POSE = np.array([0.4, -0.1, -1.5, 1.0, -1.3, -0.4, 0.1, 1.5, -1.0, 1.3])

# Facts sheet: rise of the sole above its lowest point (mm), per x (m); ranges as (lo, hi).
RISE_MM = {-0.08: 18.6, -0.07: 8.7, -0.06: 3.0, -0.05: 2.3, -0.04: 0.8,
           **{x: (0.0, 0.4) for x in (-0.03, -0.02, -0.01, 0.0, 0.01, 0.02)},
           0.03: 1.4, 0.04: 3.0, 0.05: 3.2, 0.06: 5.2, 0.07: 6.5, 0.08: 8.6, 0.09: (11.9, 16.2)}
LOWEST_BELOW_ANKLE = 0.093  # m
STRIP_LEFT = (-0.032, -0.005)  # m, y of the contact strip, left foot; the right mirrors it
TOL = 0.001  # m, on the rise table
STEP = 0.0005  # m, ray spacing across y
SIDES = {"l": 1.0, "r": -1.0}


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return load_model()


@pytest.fixture(scope="module")
def ray_model(model) -> mujoco.MjModel:
    """A copy whose geom group 0 holds only the foot collision geoms, for mj_ray."""
    copy = load_model()
    feet = set(foot_geoms(model, "l") + foot_geoms(model, "r"))
    copy.geom_group[:] = [0 if g in feet else 5 for g in range(model.ngeom)]
    return copy


@pytest.fixture(scope="module")
def data(model) -> mujoco.MjData:
    data = mujoco.MjData(model)
    data.qpos[:7] = [0, 0, 0.45, 1, 0, 0, 0]
    data.qpos[7:] = DEFAULT_POSE
    mujoco.mj_forward(model, data)
    return data


def ankle(model, data, side):
    return data.xanchor[model.joint(f"ankle_pitch_{side}").id].copy()


def foot_geoms(model, side):
    body = model.body(f"ankle_pitch_{side}").id
    return [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and model.geom_contype[g] + model.geom_conaffinity[g]]


def underside(model, data, side, x, ys):
    """(model: the ray_model copy.) Height of the sole's underside above the ankle (negative) at world offset (x, y) from it, NaN if none."""
    a = ankle(model, data, side)
    body = model.body(f"ankle_pitch_{side}").id
    group0 = np.array([1, 0, 0, 0, 0, 0], np.uint8)
    geomid, normal = np.zeros(1, np.int32), np.zeros(3)
    out = np.full(len(ys), np.nan)
    for i, y in enumerate(ys):
        # 1 um off x: a mesh sole has its triangle edges exactly at the table's x values, where a
        # ray can slip between two triangles; a hit whose normal faces up is such a slip (an exit).
        start = a + [x + 1e-6, y, -0.3]
        dist = mujoco.mj_ray(model, data, start, np.array([0.0, 0.0, 1.0]), group0, 0, -1, geomid, normal)
        if dist >= 0 and normal[2] < 0:
            assert model.geom_bodyid[geomid[0]] == body, model.geom(geomid[0]).name  # this foot's sole
            out[i] = start[2] + dist - a[2]
    return out


def strip_ys(sign):
    return -sign * np.arange(0.0025, 0.0405, STEP)  # y from -0.0025 to -0.040 (left), mirrored right


def lowest(ray_model, data, side):
    ys = strip_ys(SIDES[side])
    heights = [underside(ray_model, data, side, x, ys) for x in np.arange(-0.10, 0.105, 0.0025)]
    return np.nanmin(np.concatenate(heights))


@pytest.mark.parametrize("side", SIDES)
def test_lowest_point_below_ankle(ray_model, data, side):
    assert -lowest(ray_model, data, side) == pytest.approx(LOWEST_BELOW_ANKLE, abs=0.002)


@pytest.mark.parametrize("side", SIDES)
def test_rise_matches_profile_table(ray_model, data, side):
    low = lowest(ray_model, data, side)
    ys = strip_ys(SIDES[side])
    errors = {}
    for x, want in RISE_MM.items():
        lo, hi = want if isinstance(want, tuple) else (want, want)
        rise = (np.nanmin(underside(ray_model, data, side, x, ys)) - low) * 1000.0
        errors[x] = max(lo - rise, rise - hi, 0.0)
    assert max(errors.values()) <= TOL * 1000.0, errors


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("x", [-0.03, -0.01, 0.01])
def test_contact_strip_width_and_place(ray_model, data, side, x):
    sign = SIDES[side]
    low = lowest(ray_model, data, side)
    ys = strip_ys(sign)
    z = underside(ray_model, data, side, x, ys)
    touching = ys[z - low <= 0.001]
    width = touching.max() - touching.min() + STEP
    assert width == pytest.approx(STRIP_LEFT[1] - STRIP_LEFT[0], abs=0.003)
    lo, hi = sorted(sign * np.array(STRIP_LEFT))
    assert touching.min() == pytest.approx(lo, abs=0.003)
    assert touching.max() == pytest.approx(hi, abs=0.003)


def sole_vertices_in_site_frame(model, data, side):
    site = model.site(f"ankle_pitch_{side}_contact").id
    rot, pos = data.site_xmat[site].reshape(3, 3), data.site_xpos[site]
    pts = []
    for g in foot_geoms(model, side):
        assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH
        m = model.geom_dataid[g]
        verts = model.mesh_vert[model.mesh_vertadr[m]:model.mesh_vertadr[m] + model.mesh_vertnum[m]]
        world = verts @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g]
        pts.append((world - pos) @ rot)
    return np.concatenate(pts), model.site_size[site]


@pytest.mark.parametrize("side", SIDES)
def test_touch_site_tightly_encloses_the_sole(model, data, side):
    assert model.site_type[model.site(f"ankle_pitch_{side}_contact").id] == mujoco.mjtGeom.mjGEOM_BOX
    pts, half = sole_vertices_in_site_frame(model, data, side)
    margin_lo = half - pts.max(axis=0)
    margin_hi = half + pts.min(axis=0)
    assert np.all(margin_lo >= 0.001) and np.all(margin_hi >= 0.001), (margin_lo, margin_hi)
    assert np.all(margin_lo <= SITE_MARGIN + 1e-9) and np.all(margin_hi <= SITE_MARGIN + 1e-9), (margin_lo, margin_hi)


def test_sole_contacts_register_on_touch_sensors(model, ray_model):
    """Soles pressed 1 mm into the floor: every sole contact lies in its site and both touch sensors read it."""
    data = mujoco.MjData(model)
    data.qpos[:7] = [0, 0, 0.45, 1, 0, 0, 0]
    data.qpos[7:] = DEFAULT_POSE
    mujoco.mj_kinematics(model, data)
    low = min(data.xanchor[model.joint(f"ankle_pitch_{s}").id][2] + lowest(ray_model, data, s) for s in SIDES)
    data.qpos[2] -= low + 0.001
    mujoco.mj_forward(model, data)
    assert data.ncon > 0
    for side in SIDES:
        geoms = set(foot_geoms(model, side))
        site = model.site(f"ankle_pitch_{side}_contact").id
        rot, pos, half = data.site_xmat[site].reshape(3, 3), data.site_xpos[site], model.site_size[site]
        contacts = [c for c in data.contact[:data.ncon] if {int(c.geom1), int(c.geom2)} & geoms]
        assert contacts
        for c in contacts:
            assert np.all(np.abs((c.pos - pos) @ rot) <= half)
        assert data.sensor(f"ankle_pitch_{side}_touch").data[0] > 0.0


def test_default_pose_com_over_flat_sole(model, data):
    """At the rigid default pose the whole-body COM lies over the flat part (x in [-0.04, 0.02] from the ankle).

    Only just: it is 1.9 cm ahead of the ankles, 1 mm inside the flat part's front end, which is
    why the PD alone (joint sag under load) tips the robot forward (see test_qmini_model.py).
    """
    com = data.subtree_com[model.body("base_link").id]
    for side in SIDES:
        assert -0.04 < com[0] - ankle(model, data, side)[0] < 0.02
