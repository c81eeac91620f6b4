"""Sanity tests for our Unitree G1 MJCF (assets/g1/g1.xml) against docs/robots/g1.md.

The raw robot file is loaded (config/g1.py does not exist yet), so there are no actuators,
floor or keyframe here: those come from env/sim/scene.py and a config.
"""

from pathlib import Path

import mujoco
import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
G1_XML = REPO_ROOT / "assets" / "g1" / "g1.xml"

URDF_TOTAL_MASS = 33.34114202  # sum of the 35 URDF link masses (sheet, Overview)

# Motor types (sheet, Joints): armature (kg m^2), effort (N m)
M7520_14, M7520_22 = (0.01017752004, 88.0), (0.025101925, 139.0)
M5020X2, M5020, M4010 = (0.00721945, 50.0), (0.003609725, 25.0), (0.00425, 5.0)
X, Y, Z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
W_ROLL, W_PY = 1.972222054, 1.614429558

# (joint, lower, upper, axis, motor) in the sheet's actuator order 0..28
JOINTS = [
    ("left_hip_pitch_joint", -2.5307, 2.8798, Y, M7520_14),
    ("left_hip_roll_joint", -0.5236, 2.9671, X, M7520_22),
    ("left_hip_yaw_joint", -2.7576, 2.7576, Z, M7520_14),
    ("left_knee_joint", -0.087267, 2.8798, Y, M7520_22),
    ("left_ankle_pitch_joint", -0.87267, 0.5236, Y, M5020X2),
    ("left_ankle_roll_joint", -0.2618, 0.2618, X, M5020X2),
    ("right_hip_pitch_joint", -2.5307, 2.8798, Y, M7520_14),
    ("right_hip_roll_joint", -2.9671, 0.5236, X, M7520_22),
    ("right_hip_yaw_joint", -2.7576, 2.7576, Z, M7520_14),
    ("right_knee_joint", -0.087267, 2.8798, Y, M7520_22),
    ("right_ankle_pitch_joint", -0.87267, 0.5236, Y, M5020X2),
    ("right_ankle_roll_joint", -0.2618, 0.2618, X, M5020X2),
    ("waist_yaw_joint", -2.618, 2.618, Z, M7520_14),
    ("waist_roll_joint", -0.52, 0.52, X, M5020X2),
    ("waist_pitch_joint", -0.52, 0.52, Y, M5020X2),
    ("left_shoulder_pitch_joint", -3.0892, 2.6704, Y, M5020),
    ("left_shoulder_roll_joint", -1.5882, 2.2515, X, M5020),
    ("left_shoulder_yaw_joint", -2.618, 2.618, Z, M5020),
    ("left_elbow_joint", -1.0472, 2.0944, Y, M5020),
    ("left_wrist_roll_joint", -W_ROLL, W_ROLL, X, M5020),
    ("left_wrist_pitch_joint", -W_PY, W_PY, Y, M4010),
    ("left_wrist_yaw_joint", -W_PY, W_PY, Z, M4010),
    ("right_shoulder_pitch_joint", -3.0892, 2.6704, Y, M5020),
    ("right_shoulder_roll_joint", -2.2515, 1.5882, X, M5020),
    ("right_shoulder_yaw_joint", -2.618, 2.618, Z, M5020),
    ("right_elbow_joint", -1.0472, 2.0944, Y, M5020),
    ("right_wrist_roll_joint", -W_ROLL, W_ROLL, X, M5020),
    ("right_wrist_pitch_joint", -W_PY, W_PY, Y, M4010),
    ("right_wrist_yaw_joint", -W_PY, W_PY, Z, M4010),
]
JOINT_NAMES = [j[0] for j in JOINTS]

# Link masses (sheet, Bodies); per side for the limbs
LEG_MASSES = {"hip_pitch_link": 1.35, "hip_roll_link": 1.52, "hip_yaw_link": 1.702, "knee_link": 1.932,
              "ankle_pitch_link": 0.074, "ankle_roll_link": 0.608}
ARM_MASSES = {"shoulder_pitch_link": 0.718, "shoulder_roll_link": 0.643, "shoulder_yaw_link": 0.734,
              "elbow_link": 0.6, "wrist_roll_link": 0.08544498, "wrist_pitch_link": 0.48404956,
              "wrist_yaw_link": 0.08457647 + 0.170}  # + rubber hand, fused
BODY_MASSES = {"pelvis": 3.813 + 0.001,  # + pelvis_contour_link, fused
               "waist_yaw_link": 0.214, "waist_roll_link": 0.086,
               "torso_link": 6.78 + 1.036 + 0.001}  # + head_link + logo_link, fused
for _side in ("left", "right"):
    BODY_MASSES |= {f"{_side}_{k}": v for k, v in (LEG_MASSES | ARM_MASSES).items()}

# Parts of the fused bodies: (mass, COM in the parent link frame, [ixx iyy izz ixy ixz iyz] about the COM)
TORSO_PARTS = [
    (6.78, (0.000931, 0.000346, 0.15082), (0.05905, 0.047014, 0.025652, 3.3302e-05, -0.0017715, -2.2399e-05)),
    (1.036, (0.0039635 + 0.005267, 0.000299, -0.044 + 0.449869),  # head, fixed at (0.0039635, 0, -0.044)
     (0.00408505, 0.00418521, 0.00180791, -2.543e-06, -6.9455e-05, -3.726e-06)),
    (0.001, (0.0039635, 0, -0.044), (1e-07, 1e-07, 1e-07, 0, 0, 0)),  # logo
]
LEFT_WRIST_PARTS = [
    (0.08457647, (0.0220038, 0.000494851, 0.000538611),
     (4.92913e-05, 5.97334e-05, 3.92808e-05, -4.57355e-07, 4.45868e-06, 4.32172e-07)),
    (0.170, (0.0415 + 0.0536131, 0.003 - 0.00295905, 0.00215413),  # rubber hand, fixed at (0.0415, 0.003, 0)
     (0.000100995, 0.000281359, 0.000218948, 3.61859e-05, -7.43015e-07, 3.3019e-06)),
]
# the published MJCFs' fused wrist yaw + hand: COM, principal inertia (sheet, under Bodies)
MJCF_WRIST = ((0.0708244, 0.000191745, 0.00161742), (0.000646113, 0.000559993, 0.000147566))

DEFAULT_LEGS = {"hip_pitch_joint": -0.1, "knee_joint": 0.3, "ankle_pitch_joint": -0.2}
DEFAULT_POSE = {f"{s}_{j}": v for s in ("left", "right") for j, v in DEFAULT_LEGS.items()}


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    assert G1_XML.is_file(), G1_XML
    return mujoco.MjModel.from_xml_path(str(G1_XML))


def posed(model, pose: dict[str, float]) -> mujoco.MjData:
    """Pelvis at the origin, upright; joints at `pose` (others 0); kinematics and subtree COMs computed."""
    data = mujoco.MjData(model)
    data.qpos[:] = 0.0
    data.qpos[3] = 1.0
    for name, angle in pose.items():
        data.qpos[model.joint(name).qposadr[0]] = angle
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    return data


def box_corners(model, data, geom: int) -> np.ndarray:
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    return (signs * model.geom_size[geom]) @ data.geom_xmat[geom].reshape(3, 3).T + data.geom_xpos[geom]


def sole_plane_depth(model, data) -> float:
    """How far below the pelvis origin the soles' lowest corners are; both feet flat and level."""
    lows = []
    for side in ("left", "right"):
        z = np.sort(box_corners(model, data, model.geom(f"{side}_foot").id)[:, 2])
        assert z[3] - z[0] < 1e-9  # the four bottom corners level: the sole is flat on the plane
        lows.append(z[0])
    assert lows[0] == pytest.approx(lows[1], abs=1e-9)
    return data.qpos[2] - lows[0]


def full_inertia(model, body: str) -> np.ndarray:
    """A body's inertia tensor about its COM, in the body frame (MuJoCo stores principal axes + values)."""
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body(body).iquat)
    rot = rot.reshape(3, 3)
    return rot @ np.diag(model.body(body).inertia) @ rot.T


def fuse(parts) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM and inertia about the COM of rigidly joined parts (parallel-axis theorem)."""
    mass = sum(p[0] for p in parts)
    com = sum(p[0] * np.array(p[1]) for p in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, (ixx, iyy, izz, ixy, ixz, iyz) in parts:
        d = np.array(c) - com
        inertia += np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        inertia += m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def test_total_mass(model):
    assert model.body_mass.sum() == pytest.approx(URDF_TOTAL_MASS, rel=0.01)
    assert model.body_mass.sum() == pytest.approx(URDF_TOTAL_MASS, rel=1e-6)
    assert sum(BODY_MASSES.values()) == pytest.approx(URDF_TOTAL_MASS, rel=1e-12)


def test_every_body_has_the_sheets_mass(model):
    assert model.nbody == 1 + len(BODY_MASSES)  # the world plus one body per (fused) link
    for name, mass in BODY_MASSES.items():
        assert model.body(name).mass[0] == pytest.approx(mass, rel=1e-9), name


def test_fused_bodies_follow_the_parallel_axis_theorem(model):
    mass, com, inertia = fuse(TORSO_PARTS)
    assert model.body("torso_link").mass[0] == pytest.approx(mass, rel=1e-9)
    np.testing.assert_allclose(model.body("torso_link").ipos, com, atol=1e-8)
    np.testing.assert_allclose(full_inertia(model, "torso_link"), inertia, atol=1e-7)
    for side, sign in (("left", 1), ("right", -1)):
        parts = [(m, (c[0], sign * c[1], c[2]), (i[0], i[1], i[2], sign * i[3], i[4], sign * i[5]))
                 for m, c, i in LEFT_WRIST_PARTS]
        mass, com, inertia = fuse(parts)
        body = f"{side}_wrist_yaw_link"
        assert model.body(body).mass[0] == pytest.approx(mass, rel=1e-9)
        np.testing.assert_allclose(model.body(body).ipos, com, atol=1e-8)
        np.testing.assert_allclose(full_inertia(model, body), inertia, atol=1e-9)
        # and the published MJCFs' fused body agrees
        mj_com, mj_principal = MJCF_WRIST
        np.testing.assert_allclose(model.body(body).ipos, (mj_com[0], sign * mj_com[1], mj_com[2]), atol=1e-6)
        np.testing.assert_allclose(np.sort(model.body(body).inertia), np.sort(mj_principal), rtol=1e-4)


def test_joints_in_the_sheets_order(model):
    assert model.njnt == 30 and model.nq == 36 and model.nv == 35
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and model.joint(0).name == "root"
    assert model.body(model.jnt_bodyid[0]).name == "pelvis"
    for i, name in enumerate(JOINT_NAMES):
        jid = i + 1
        assert model.joint(jid).name == name
        assert model.jnt_type[jid] == mujoco.mjtJoint.mjJNT_HINGE
        assert model.jnt_qposadr[jid] == 7 + i and model.jnt_dofadr[jid] == 6 + i


def test_joint_ranges_axes_armature_and_efforts(model):
    for name, lower, upper, axis, (armature, effort) in JOINTS:
        j = model.joint(name).id
        assert model.jnt_limited[j], name
        np.testing.assert_allclose(model.jnt_range[j], (lower, upper), atol=1e-9, err_msg=name)
        np.testing.assert_allclose(model.jnt_axis[j], axis, atol=1e-12, err_msg=name)
        assert model.dof_armature[model.jnt_dofadr[j]] == pytest.approx(armature, rel=1e-9), name
        assert model.jnt_actfrclimited[j], name
        np.testing.assert_allclose(model.jnt_actfrcrange[j], (-effort, effort), err_msg=name)
        assert 0 < model.dof_damping[model.jnt_dofadr[j]] <= 0.5  # modest passive terms
        assert 0 < model.dof_frictionloss[model.jnt_dofadr[j]] <= 0.2


def test_origin_rotations_match_the_published_quats(model):
    # sheet, "For MJCF authoring" ([GYM-XML] quats, w x y z)
    quats = {"left_hip_roll_link": (0.996179, 0, -0.0873386, 0), "left_knee_link": (0.996179, 0, 0.0873386, 0),
             "left_shoulder_pitch_link": (0.990264, 0.139201, 1.38722e-05, -9.86868e-05),
             "right_shoulder_pitch_link": (0.990264, -0.139201, 1.38722e-05, 9.86868e-05),
             "left_shoulder_roll_link": (0.990268, -0.139172, 0, 0),
             "right_shoulder_roll_link": (0.990268, 0.139172, 0, 0)}
    for body, quat in quats.items():
        np.testing.assert_allclose(model.body(body).quat, quat, atol=2e-6, err_msg=body)


def test_foot_soles(model):
    for side in ("left", "right"):
        g = model.geom(f"{side}_foot").id
        assert model.body(model.geom_bodyid[g]).name == f"{side}_ankle_roll_link"
        assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX
        assert model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 1
        np.testing.assert_allclose(model.geom_quat[g], [1, 0, 0, 0])  # box axes = ankle roll frame
        pos, half = model.geom_pos[g], model.geom_size[g]
        assert 0.17 <= 2 * half[0] <= 0.21
        assert 0.05 <= 2 * half[1] <= 0.08
        assert pos[2] - half[2] == pytest.approx(-0.035, abs=1e-9)  # bottom 0.035 below the ankle roll axis
        assert pos[1] == 0.0
        assert 0.03 <= pos[0] <= 0.045  # the ankle axis is 0.035-0.04 behind the sole centre


def test_pelvis_height_at_joint_zero(model):
    assert sole_plane_depth(model, posed(model, {})) == pytest.approx(0.7919, abs=0.003)


def test_pelvis_height_at_the_default_pose(model):
    assert sole_plane_depth(model, posed(model, DEFAULT_POSE)) == pytest.approx(0.7842, abs=0.003)


def test_whole_body_com(model):
    # sheet, Overview: pelvis frame; the pelvis sits at the origin with identity rotation here
    com = posed(model, {}).subtree_com[1]
    np.testing.assert_allclose(com, (0.02033, 0.00008, -0.08867), atol=0.005)
    np.testing.assert_allclose(com, (0.02033, 0.00008, -0.08867), atol=2e-5)  # the sheet's 5 printed digits
    np.testing.assert_allclose(posed(model, DEFAULT_POSE).subtree_com[1], (0.0247, 0.00008, -0.0872), atol=2e-4)


def test_legs_mirror_left_to_right(model):
    data = posed(model, {})
    mirror = np.array([1.0, -1.0, 1.0])
    for part in LEG_MASSES:
        left, right = model.body(f"left_{part}"), model.body(f"right_{part}")
        np.testing.assert_allclose(right.pos, left.pos * mirror, atol=1e-12, err_msg=part)
        np.testing.assert_allclose(right.quat, left.quat, atol=1e-12, err_msg=part)  # only pitch offsets
        np.testing.assert_allclose(data.xpos[right.id], data.xpos[left.id] * mirror, atol=1e-12, err_msg=part)
        np.testing.assert_allclose(right.ipos, left.ipos * mirror, atol=1e-12, err_msg=part)
        jl, jr = model.joint(f"left_{part.replace('_link', '_joint')}"), model.joint(f"right_{part.replace('_link', '_joint')}")
        np.testing.assert_allclose(model.jnt_axis[jr.id], model.jnt_axis[jl.id])
        lo, hi = model.jnt_range[jl.id]
        expected = (lo, hi) if "pitch" in part or "knee" in part else (-hi, -lo)  # roll and yaw flip sign
        np.testing.assert_allclose(model.jnt_range[jr.id], expected, atol=1e-12, err_msg=part)
    # the feet splay outwards (sheet, Limb lengths): ankle roll joints at y +-0.118506
    assert data.xpos[model.body("left_ankle_roll_link").id][1] == pytest.approx(0.118506, abs=1e-6)
    # the published asymmetries are kept: right knee ixz, right shoulder pitch origin y
    assert not np.allclose(model.body("left_knee_link").inertia, model.body("right_knee_link").inertia, rtol=1e-5)
    assert model.body("left_shoulder_pitch_link").pos[1] == pytest.approx(0.10022)
    assert model.body("right_shoulder_pitch_link").pos[1] == pytest.approx(-0.10021)


def test_robot_only_and_collision_flags(model):
    assert model.nu == 0 and model.nkey == 0
    assert not any(model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE)
    assert model.geom_bodyid.min() > 0  # nothing in the world body
    for g in range(model.ngeom):
        assert model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 1, model.geom(g).name
    # with self-collision switched on (as the scene would), nothing overlaps at joint zero or the default pose
    selfish = mujoco.MjModel.from_xml_path(str(G1_XML))
    selfish.geom_contype[:] = 1
    for pose in ({}, DEFAULT_POSE):
        data = mujoco.MjData(selfish)
        data.qpos[:] = posed(selfish, pose).qpos
        mujoco.mj_forward(selfish, data)
        assert data.ncon == 0, [(selfish.geom(c.geom[0]).name, selfish.geom(c.geom[1]).name) for c in data.contact]
