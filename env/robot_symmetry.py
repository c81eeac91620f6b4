"""Left-right (and, for quadrupeds, front-back) symmetry of a robot's legs at the default pose.

A symmetric robot edited by hand can carry a joint axis turned the wrong way (a thigh that
yaws where its twin pitches) or an axis sign flipped (a calf whose positive motion moves the
foot the other way from its twin's while their ranges and default angles say they move
alike). Nothing downstream notices: the policy learns a lopsided gait, or never stands.

Twins come from geometry, names only break ties. A leg is the chain of hinge and slide
joints from the base to a foot; its left-right twin is the leg whose first joint sits at the
mirror image, across the base's xz plane, of this one's. With exactly two such pairs (a
quadruped) the two legs on a side are front-back twins. Joint k of a leg meets joint k of
its twins:

- axis lines: a mirror maps a hinge axis (an axial vector) a to (-ax, ay, -az), a slide axis
  (a polar one) to (ax, -ay, az); front-back twins are translated copies (same line) or mirror
  images across yz.
- signs: the mirrored axis of a twin is +a (equal angles make mirror images: Go2's thighs and
  calves) or -a (opposite angles do: Go2's hip abduction, every Qmini joint). The twins' ranges
  and default angles say which the robot file meant; a mismatch moves one foot the other way.
  Where they cannot tell (symmetric range, zero default), a quadruped's front and rear pairs
  must at least agree.

Robots without twin legs are not checked. A pure function of the compiled model and its data
at the default pose: about a millisecond, so train.py's fast check runs it.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

AXIS_TOLERANCE = np.cos(np.radians(10.0))  # twin axes closer than 10 deg to each other (as lines) are alike
TWIN_DISTANCE = 0.1  # a twin's first joint within this fraction of its distance from the base of the mirror point
SIGN_MARGIN = 0.1  # rad (or m), how much better one sign must fit the twins' ranges and default angles to decide
_ONE_DOF = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
_MIRROR_XZ = np.diag([1.0, -1.0, 1.0])  # left <-> right, in the base frame (x forward, y left, z up)
_MIRROR_YZ = np.diag([-1.0, 1.0, 1.0])  # front <-> back
_SIDE_NAMES = [("FL", "FR"), ("RL", "RR"), ("HL", "HR"), ("left", "right"), ("Left", "Right"), ("LEFT", "RIGHT"),
               ("_l", "_r"), ("l_", "r_"), ("_L", "_R"), ("L_", "R_")]


@dataclass
class Leg:
    foot: str
    point: np.ndarray  # foot position, base frame
    joints: list[int]  # hinge and slide joints from the base down to the foot
    anchors: np.ndarray  # (n, 3) joint positions, base frame, default pose
    axes: np.ndarray  # (n, 3) joint axes, base frame, default pose


def check_symmetry(model: mujoco.MjModel, data: mujoco.MjData, base: int,
                   feet: dict[str, list[int]]) -> tuple[list[str], list[str]]:
    """(report lines, problems one line each) for the legs ending in `feet` (foot name -> its geoms) at `data`'s
    pose, `base` the base body's id."""
    legs = find_legs(model, data, base, feet)
    pairs = _mirror_pairs(legs)
    if not pairs:
        return ["symmetry: no legs are left-right mirror twins; not checked"], []
    front_back = {}
    if len(pairs) == 2:  # a quadruped: the legs on each side are front-back twins
        (a, b), (c, d) = pairs
        if len(legs[a].joints) == len(legs[c].joints):
            front_back = {a: c, c: a, b: d, d: b}
    problems: list[str] = []
    broken: set[int] = set()  # legs already reported: joints further down inherit the wrong pose
    for k in range(max(len(legs[a].joints) for a, _ in pairs)):
        live = [(a, b) for a, b in pairs if a not in broken and b not in broken and k < len(legs[a].joints)]
        problems += _check_lines(model, legs, live, front_back, k, broken)
        live = [(a, b) for a, b in live if a not in broken and b not in broken]
        problems += _check_signs(model, data, legs, live, front_back, k, broken)
    twins = ", ".join(f"{legs[a].foot}/{legs[b].foot}" for a, b in pairs)
    fb = ", ".join(f"{legs[a].foot}/{legs[a2].foot}" for a, a2 in front_back.items() if a < a2)
    fb = f"; front-back twins {fb}" if fb else ""
    return [f"symmetry: left-right twins {twins}{fb}; joint axes and signs compared at the default pose"], problems


def find_legs(model: mujoco.MjModel, data: mujoco.MjData, base: int, feet: dict[str, list[int]]) -> list[Leg]:
    """One leg per joint chain from the base to a foot (several feet on one leg count once)."""
    legs: list[Leg] = []
    for name, geoms in feet.items():
        leg = _leg(model, data, base, name, geoms)
        if leg is not None and all(leg.joints != other.joints for other in legs):
            legs.append(leg)
    return legs


def leg_twins(model: mujoco.MjModel, data: mujoco.MjData, base: int, feet: dict[str, list[int]]
              ) -> list[tuple[Leg, Leg]]:
    """The (left, right) legs that are mirror twins, as the check pairs them; [] when there are none."""
    legs = find_legs(model, data, base, feet)
    return [(legs[a], legs[b]) for a, b in _mirror_pairs(legs)]


def _leg(model: mujoco.MjModel, data: mujoco.MjData, base: int, foot: str, geoms: list[int]) -> Leg | None:
    joints, body = [], int(model.geom_bodyid[geoms[0]]) if geoms else base
    while body != base:
        if body == 0:
            return None  # not below the base
        adr, num = model.body_jntadr[body], model.body_jntnum[body]
        joints = [j for j in range(adr, adr + num) if int(model.jnt_type[j]) in _ONE_DOF] + joints
        body = int(model.body_parentid[body])
    if not joints:
        return None
    rot, origin = data.xmat[base].reshape(3, 3), data.xpos[base]
    return Leg(foot, (data.geom_xpos[geoms].mean(axis=0) - origin) @ rot, joints,
               (data.xanchor[joints] - origin) @ rot, data.xaxis[joints] @ rot)


def _mirror_pairs(legs: list[Leg]) -> list[tuple[int, int]]:
    """(left, right) leg indices whose first joints are mirror images across the xz plane; names break ties."""
    pairs = []
    for a, leg in enumerate(legs):
        root = leg.anchors[0]
        if root[1] <= 0:
            continue
        mirror = _MIRROR_XZ @ root
        close = [(round(float(np.linalg.norm(other.anchors[0] - mirror)), 3), mirror_name(leg.foot) != other.foot,
                  b) for b, other in enumerate(legs) if b != a and len(other.joints) == len(leg.joints)]
        close = [c for c in close if c[0] <= TWIN_DISTANCE * np.linalg.norm(root)]
        if close:
            pairs.append((a, min(close)[2]))
    right = [b for _, b in pairs]
    return sorted(pairs, key=lambda p: -legs[p[0]].anchors[0][0]) if len(set(right)) == len(right) else []


def mirror_name(name: str) -> str:
    """The name of a left part's right twin and vice versa (FL_ <-> FR_, _l <-> _r, ...); the name itself if none."""
    for left, right in _SIDE_NAMES:
        if left in name:
            return name.replace(left, right)
        if right in name:
            return name.replace(right, left)
    return name


def _is_hinge(model: mujoco.MjModel, j: int) -> bool:
    return int(model.jnt_type[j]) == _ONE_DOF[0]


def _mirror_axis(model: mujoco.MjModel, j: int, axis: np.ndarray, mirror: np.ndarray) -> np.ndarray:
    """A mirror maps a slide axis as a position, a hinge axis (axial) as a position negated."""
    return -(mirror @ axis) if _is_hinge(model, j) else mirror @ axis


def _front_back_relation(model: mujoco.MjModel, legs: list[Leg], a: int, b: int, k: int) -> int:
    """+1/-1: b's axis as a's (translated copies) or its yz mirror image, signed; 0: neither line."""
    axis_a, axis_b = legs[a].axes[k], legs[b].axes[k]
    for candidate in (axis_a, _mirror_axis(model, legs[a].joints[k], axis_a, _MIRROR_YZ)):
        dot = float(candidate @ axis_b)
        if abs(dot) >= AXIS_TOLERANCE:
            return 1 if dot > 0 else -1
    return 0


def _name(model: mujoco.MjModel, legs: list[Leg], leg: int, k: int) -> str:
    return model.joint(legs[leg].joints[k]).name or f"joint {legs[leg].joints[k]}"


def _vec(v: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:+.2f}" for x in v) + ")"


def _check_lines(model: mujoco.MjModel, legs: list[Leg], pairs: list[tuple[int, int]], front_back: dict[int, int],
                 k: int, broken: set[int]) -> list[str]:
    """Twin joints must turn about mirror-image lines (left-right) and the same or mirrored lines (front-back)."""
    problems = []
    for a, b in pairs:
        mirrored = _mirror_axis(model, legs[a].joints[k], legs[a].axes[k], _MIRROR_XZ)
        if abs(float(mirrored @ legs[b].axes[k])) >= AXIS_TOLERANCE:
            continue
        broken |= {a, b}
        odd = [x for x in (a, b) if x in front_back and not _front_back_relation(model, legs, x, front_back[x], k)]
        if len(odd) == 1:
            x, twin, fb = odd[0], b if odd[0] == a else a, front_back[odd[0]]
            problems.append(f"{_name(model, legs, x, k)}'s axis breaks the robot's symmetry: it turns about "
                            f"{_vec(legs[x].axes[k])}, its mirror twin {_name(model, legs, twin, k)} about "
                            f"{_vec(legs[twin].axes[k])} and its front-back twin {_name(model, legs, fb, k)} about "
                            f"{_vec(legs[fb].axes[k])} (base frame, default pose; check the joint's axis in the "
                            f"robot file)")
        else:
            problems.append(f"{_name(model, legs, a, k)} and its mirror twin {_name(model, legs, b, k)} turn about axes "
                            f"that are not mirror images across the robot's left-right (xz) plane: "
                            f"{_vec(legs[a].axes[k])} and {_vec(legs[b].axes[k])} (base frame, default pose; one of "
                            f"the two axes in the robot file is turned)")
    for a, b in front_back.items():
        if a < b and a not in broken and b not in broken and not _front_back_relation(model, legs, a, b, k):
            broken |= {a, b}
            problems.append(f"{_name(model, legs, a, k)} and its front-back twin {_name(model, legs, b, k)} turn about "
                            f"{_vec(legs[a].axes[k])} and {_vec(legs[b].axes[k])}: neither the same line nor mirror "
                            f"images, which breaks the front-back symmetry (check the joints' axes in the robot file)")
    return problems


def config_sign(model: mujoco.MjModel, data: mujoco.MjData, ja: int, jb: int) -> int | None:
    """+1 when jb's range and default angle are ja's, -1 when they are ja's negated, None when both fit alike."""
    qa, qb = (float(data.qpos[model.jnt_qposadr[j]]) for j in (ja, jb))

    def misfit(sign: int) -> float:
        cost = abs(sign * qa - qb)
        if model.jnt_limited[ja] and model.jnt_limited[jb]:
            lo, hi = sorted(sign * model.jnt_range[ja])
            cost += 0.5 * (abs(lo - model.jnt_range[jb][0]) + abs(hi - model.jnt_range[jb][1]))
        return cost

    same, opposite = misfit(1), misfit(-1)
    return None if abs(same - opposite) < SIGN_MARGIN else (1 if same < opposite else -1)


def _check_signs(model: mujoco.MjModel, data: mujoco.MjData, legs: list[Leg], pairs: list[tuple[int, int]],
                 front_back: dict[int, int], k: int, broken: set[int]) -> list[str]:
    """Twin joints must turn the way their ranges and default angles say (alike, or negated); where those cannot
    tell, a quadruped's front and rear pairs must at least agree."""
    axes = {p: _mirror_sign(model, legs, *p, k) for p in pairs}
    meant = {p: config_sign(model, data, legs[p[0]].joints[k], legs[p[1]].joints[k]) for p in pairs}
    settled = [axes[p] for p in pairs if meant[p] == axes[p]]  # pairs whose ranges and default angles confirm them
    problems = []
    for p in pairs:
        if meant[p] is not None and axes[p] != meant[p]:
            blamed, why = p, f"their ranges and default angles {_ALIKE[meant[p]]}"
            odd = _odd_leg(model, data, legs, list(p), front_back, k)
        elif meant[p] is None and settled and axes[p] != settled[0]:
            blamed, why = p, f"the other twins {_MOVE[settled[0]]}{_UNTOLD}"
            odd = _odd_leg(model, data, legs, list(p), front_back, k)
        elif meant[p] is None and not settled and p == pairs[0] and any(axes[q] != axes[p] for q in pairs):
            odd = _odd_leg(model, data, legs, [x for q in pairs for x in q], front_back, k)  # reported once
            blamed = next((q for q in pairs if odd and odd[0] in q), p)
            why = f"the other twins {_MOVE[-axes[blamed]]}{_UNTOLD}"
        else:
            continue
        broken |= set(blamed)
        problems.append(_sign_problem(model, legs, blamed, odd, k, why))
    return problems


_MOVE = {1: "move their feet as mirror images", -1: "move their feet opposite ways"}
_ALIKE = {1: "are alike", -1: "are negated copies of each other"}
_UNTOLD = " (ranges and default angles cannot tell which is meant)"


def _mirror_sign(model: mujoco.MjModel, legs: list[Leg], a: int, b: int, k: int) -> int:
    """+1: equal angles of the mirror twins' k-th joints make mirror images; -1: opposite angles do."""
    mirrored = _mirror_axis(model, legs[a].joints[k], legs[a].axes[k], _MIRROR_XZ)
    return 1 if float(mirrored @ legs[b].axes[k]) > 0 else -1


def twin_sign(model: mujoco.MjModel, joint: int, axis: np.ndarray, twin_axis: np.ndarray) -> int:
    """+1 when equal angles of a joint turning about `axis` and its twin turning about `twin_axis` (base frame) make
    mirror images, -1 when opposite angles do, 0 when the axes are not mirror-image lines (not twins)."""
    dot = float(_mirror_axis(model, joint, axis, _MIRROR_XZ) @ twin_axis)
    return 0 if abs(dot) < AXIS_TOLERANCE else (1 if dot > 0 else -1)


def _odd_leg(model: mujoco.MjModel, data: mujoco.MjData, legs: list[Leg], suspects: list[int],
             front_back: dict[int, int], k: int) -> tuple[int, str] | None:
    """The suspect whose front-back twin disagrees with it too (by their ranges and default angles), else the one
    whose axis points against the other three legs'; None when neither tells (a biped)."""
    odd = [x for x in suspects if x in front_back and (meant := config_sign(
        model, data, legs[x].joints[k], legs[front_back[x]].joints[k])) is not None
        and meant != _front_back_relation(model, legs, x, front_back[x], k)]
    if len(odd) == 1:
        return odd[0], "is flipped"
    odd = [x for x in suspects if front_back and all(float(legs[x].axes[k] @ legs[y].axes[k]) < 0
                                                     for y in front_back if y != x)]
    return (odd[0], "looks flipped, as it points against the other three legs'") if len(odd) == 1 else None


def _sign_problem(model: mujoco.MjModel, legs: list[Leg], pair: tuple[int, int], odd: tuple[int, str] | None, k: int,
                  why: str) -> str:
    """One line: the flipped joint (or the twins, when it cannot tell which), how both move the foot from the
    same mirrored pose, and what their ranges and default angles say instead."""
    a, b = (odd[0], pair[1] if odd[0] == pair[0] else pair[0]) if odd else pair
    effect = "the other way from" if _mirror_sign(model, legs, a, b, k) < 0 else "the same way as"
    moves = ", ".join(f"{legs[x].foot} {_direction(model, legs, x, b, k)}" for x in (a, b))
    said = (f"{_name(model, legs, a, k)} turns {effect} its mirror twin {_name(model, legs, b, k)}: from the same "
            f"(mirrored) pose a positive motion moves {moves}, though {why}")
    if odd:
        return f"{said}; its axis sign in the robot file {odd[1]} (flip it back, or negate its range and default angle)"
    return f"{said}; one of the two axis signs in the robot file is flipped"


def _direction(model: mujoco.MjModel, legs: list[Leg], x: int, pose: int, k: int) -> str:
    """Which way a small positive motion of leg x's k-th joint moves the foot (forward, outward, up...) with the
    lever of leg `pose` (its twin, mirrored onto x's side)."""
    lever = legs[pose].point - legs[pose].anchors[k]
    if np.sign(legs[x].anchors[0][1]) != np.sign(legs[pose].anchors[0][1]):
        lever = _MIRROR_XZ @ lever
    axis = legs[x].axes[k]
    move = np.cross(axis, lever) if _is_hinge(model, legs[x].joints[k]) else axis
    move = move * np.array([1.0, 1.0 if legs[x].anchors[0][1] >= 0 else -1.0, 1.0])  # outward: +y left, -y right
    scale = float(np.linalg.norm(move))
    if scale < 1e-9:
        return "nowhere (the foot is on the axis)"
    words = [(pos if v > 0 else neg) for v, (pos, neg) in zip(move, [("forward", "backward"), ("outward", "inward"),
                                                                    ("up", "down")]) if abs(v) > 0.35 * scale]
    return " and ".join(words)
