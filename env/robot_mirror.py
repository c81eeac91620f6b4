"""A robot's left-right mirror: every joint's, foot's and link's twin, and the sign of each joint angle's image.

Derived from the robot where it can be, at the default pose, in the base frame (x forward, y left):

- joints of twin legs: the legs the robot check pairs (env/robot_symmetry.py), joint k with joint k;
- other joints (arms, tails) pair by name (FL_/FR_, _l/_r, left/right...) when the twin sits at the mirror
  image of the joint's anchor; a joint anchored on the robot's xz plane (a waist) is its own twin;
- the sign: the mirror maps a hinge axis a to (-ax, ay, -az) (a slide axis to (ax, -ay, az)). If that is the
  twin's axis, equal angles are mirror images (+1: Go2's thighs and calves); if it is minus the twin's axis,
  opposite angles are (-1: Go2's hip abduction, every Qmini joint, a waist yaw).

What cannot be derived is declared in ``asset.mirror_joints``: ``{"joint": "twin"}`` (+1) or
``{"joint": "-twin"}`` (-1), one entry per pair (the twin's follows), ``{"waist": "-waist"}`` for a joint that
is its own twin; a declared pair overrides a derived one. Links (bodies) are twins when they carry twin joints,
or, without joints, sit at mirror-image places under twin parents; feet likewise. The default pose and the
joint ranges must be mirror images too: actions are offsets from the default pose, clipped to the ranges.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from env.robot_check import home_data
from env.robot_symmetry import TWIN_DISTANCE, leg_twins, mirror_name, twin_sign
from env.sim.scene import contact_geoms, policy_joint_names
from env.utils.mirror import SignedPermutation
from utils.yaml import Cfg

MIRROR_XZ = np.diag([1.0, -1.0, 1.0])  # left <-> right in the base frame
ON_PLANE = 1e-3  # m, a joint anchored this close to the xz plane can be its own twin
POSE_TOLERANCE = 1e-3  # rad (or m), how far a default angle or range end may be from its twin's mirror image
_ONE_DOF = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@dataclass(frozen=True)
class RobotMirror:
    joints: SignedPermutation  # over the actuated joints, in the env's dof (actuator) order
    joint_names: list[str]  # the actuated joints, in that order
    feet: list[int]  # foot i's twin, as indices into asset.foot_bodies
    bodies: list[int]  # body id -> its twin's body id (-1: none found; only massless bodies may have none)


def robot_mirror(model: mujoco.MjModel, cfg: Cfg) -> RobotMirror:
    """The mirror of the robot in `model` (compiled from `cfg`); ValueError, one line, naming what has no twin."""
    asset = cfg.asset
    data = home_data(model)
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, asset.base_body)
    rot, origin = data.xmat[base].reshape(3, 3), data.xpos[base]
    anchors, axes = (data.xanchor - origin) @ rot, data.xaxis @ rot
    names = policy_joint_names(model, cfg.control)
    ids = [model.joint(n).id for n in names]
    feet = {name: contact_geoms(model, name)[1] for name in asset.foot_bodies}

    twins = _declared(model, dict(getattr(asset, "mirror_joints", {}) or {}), names)
    for left, right in leg_twins(model, data, base, feet):
        for k, (a, b) in enumerate(zip(left.joints, right.joints)):
            sign = twin_sign(model, a, left.axes[k], right.axes[k])
            if sign and a not in twins and b not in twins:
                twins[a], twins[b] = (b, sign), (a, sign)
    for j in ids:
        if j not in twins:
            twins.update(_named_or_on_plane(model, j, anchors, axes))
    column = {j: i for i, j in enumerate(ids)}
    try:
        joints = SignedPermutation([column[twins[j][0]] for j in ids], [twins[j][1] for j in ids], names)
    except (KeyError, ValueError) as err:
        raise ValueError(f"robot mirror: {err}") from None  # a declared twin that is not actuated, or not mutual
    _check_pose(model, cfg, names, ids, joints)
    bodies = _body_twins(model, data, base, twins)
    return RobotMirror(joints, names, _foot_twins(model, data, base, feet, bodies), bodies)


def _declared(model: mujoco.MjModel, declared: dict[str, str], names: list[str]) -> dict[int, tuple[int, int]]:
    """asset.mirror_joints as joint id -> (twin id, sign), both ways."""
    twins: dict[int, tuple[int, int]] = {}
    for joint, twin in declared.items():
        sign, twin_name = (-1, twin[1:]) if twin.startswith("-") else (1, twin)
        for name in (joint, twin_name):
            if name not in names:
                raise ValueError(f"asset.mirror_joints names '{name}', which is not an actuated joint; actuated: "
                                 f"{', '.join(names)}")
        a, b = model.joint(joint).id, model.joint(twin_name).id
        for x, y in ((a, b), (b, a)):
            if twins.get(x, (y, sign)) != (y, sign):
                other, other_sign = twins[x]
                raise ValueError(f"asset.mirror_joints contradicts itself: {model.joint(x).name} mirrors to "
                                 f"{'-' if sign < 0 else ''}{model.joint(y).name} in one entry and to "
                                 f"{'-' if other_sign < 0 else ''}{model.joint(other).name} in another")
            twins[x] = (y, sign)
    return twins


def _named_or_on_plane(model: mujoco.MjModel, j: int, anchors: np.ndarray, axes: np.ndarray
                       ) -> dict[int, tuple[int, int]]:
    """A joint outside the twin legs: its name's twin at the mirror image of its anchor, or itself on the xz plane."""
    name = model.joint(j).name
    twin = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, mirror_name(name))
    if twin >= 0 and twin != j:
        near = np.linalg.norm(MIRROR_XZ @ anchors[j] - anchors[twin]) <= TWIN_DISTANCE * np.linalg.norm(anchors[j])
        sign = twin_sign(model, j, axes[j], axes[twin]) if near else 0
        if sign:
            return {j: (twin, sign), twin: (j, sign)}
    sign = twin_sign(model, j, axes[j], axes[j]) if abs(anchors[j][1]) <= ON_PLANE else 0
    if sign:
        return {j: (j, sign)}
    raise ValueError(f"robot mirror: joint '{name}' has no left-right twin (no twin leg, no joint named like it at "
                     f"the mirror image of its anchor, and it is not on the robot's xz plane with a mirrored axis); "
                     f"declare it in asset.mirror_joints, e.g. {{'{name}': 'TWIN'}} (equal angles are mirror images) "
                     f"or {{'{name}': '-TWIN'}} (opposite angles are)")


def _check_pose(model: mujoco.MjModel, cfg: Cfg, names: list[str], ids: list[int], joints: SignedPermutation) -> None:
    """The default pose and the joint ranges must be mirror images: actions are offsets from one, clipped to the other."""
    default = cfg.init_state.default_joint_angles
    for i, (name, j) in enumerate(zip(names, ids)):
        t, sign = int(joints.index[i]), float(joints.sign[i])
        twin = names[t]
        if abs(sign * default[twin] - default[name]) > POSE_TOLERANCE:
            raise ValueError(f"robot mirror: init_state.default_joint_angles is not mirror symmetric: {name} = "
                             f"{default[name]:g} but its twin {twin} = {default[twin]:g} (the mirror image is "
                             f"{sign * default[twin]:g}); mirrored actions would start from another pose")
        if model.jnt_limited[j] and model.jnt_limited[ids[t]]:
            mirrored = np.sort(sign * model.jnt_range[ids[t]])
            if np.abs(mirrored - model.jnt_range[j]).max() > POSE_TOLERANCE:
                lo, hi = model.jnt_range[j]
                raise ValueError(f"robot mirror: {name}'s range [{lo:g}, {hi:g}] is not the mirror image of its twin "
                                 f"{twin}'s [{mirrored[0]:g}, {mirrored[1]:g}] (sign {sign:+g}); mirrored joint "
                                 f"targets would be clipped differently")


def _body_twins(model: mujoco.MjModel, data: mujoco.MjData, base: int, twins: dict[int, tuple[int, int]]
                ) -> list[int]:
    """Body id -> its twin: the body of its joint's twin, else the child of its parent's twin at its mirror image."""
    rot, origin = data.xmat[base].reshape(3, 3), data.xpos[base]
    pos = (data.xpos - origin) @ rot
    out = [-1] * model.nbody
    for b in range(model.nbody):  # parents come before their children
        joints = [j for j in range(model.body_jntadr[b], model.body_jntadr[b] + model.body_jntnum[b]) if j in twins]
        parent = int(model.body_parentid[b])
        if b in (0, base):
            out[b] = b
        elif joints:
            out[b] = int(model.jnt_bodyid[twins[joints[0]][0]])
        elif out[parent] >= 0:
            children = [c for c in range(1, model.nbody) if model.body_parentid[c] == out[parent]]
            gap = {c: float(np.linalg.norm(MIRROR_XZ @ pos[b] - pos[c])) for c in children}
            best = min(children, key=lambda c: (gap[c], model.body(c).name != mirror_name(model.body(b).name)))
            if gap[best] <= max(ON_PLANE, TWIN_DISTANCE * float(np.linalg.norm(pos[b] - pos[parent]))):
                out[b] = best
    lonely = [model.body(b).name for b in range(1, model.nbody) if out[b] < 0 and model.body_mass[b] > 0]
    if lonely:
        raise ValueError(f"robot mirror: link '{lonely[0]}' has no left-right twin (no twin joint, and no link at its "
                         f"mirror image under its parent's twin); its mass and inertia cannot be mirrored")
    return out


def _foot_twins(model: mujoco.MjModel, data: mujoco.MjData, base: int, feet: dict[str, list[int]],
                bodies: list[int]) -> list[int]:
    """Foot i -> the foot on its body's twin closest to the mirror image of its contact geoms' centre."""
    rot, origin = data.xmat[base].reshape(3, 3), data.xpos[base]
    names = list(feet)
    body = [int(model.geom_bodyid[feet[n][0]]) for n in names]
    centre = [(data.geom_xpos[feet[n]].mean(axis=0) - origin) @ rot for n in names]
    out = []
    for i, name in enumerate(names):
        candidates = [k for k in range(len(names)) if body[k] == bodies[body[i]]]
        if not candidates:
            raise ValueError(f"robot mirror: foot '{name}' has no left-right twin among asset.foot_bodies "
                             f"({', '.join(names)})")
        out.append(min(candidates, key=lambda k: float(np.linalg.norm(MIRROR_XZ @ centre[i] - centre[k]))))
    for i, twin in enumerate(out):
        if out[twin] != i:
            raise ValueError(f"robot mirror: foot '{names[i]}' mirrors to '{names[twin]}', which mirrors to "
                             f"'{names[out[twin]]}'; feet must be each other's twins")
    return out
