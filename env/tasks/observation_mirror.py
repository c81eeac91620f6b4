"""Left-right mirror of the locomotion task's observations, built term by term from its declared layouts.

Every term of `policy_obs_layout` and `critic_obs_layout` (env/tasks/locomotion.py) has a rule in `TERMS`, and
every privileged column one in `PRIVILEGED`; a term or column without a rule is an error naming it, so a new
observation cannot be mirrored silently wrong. The rules, in the base frame (x forward, y left, z up):

- a velocity and gravity (polar vectors) keep x and z and negate y; an angular velocity (axial) negates x and z;
- commands (vx, vy, yaw rate) negate vy and the yaw rate (a heading command steers through the yaw rate);
- joint positions, velocities and actions go through the robot's joint mirror (env/robot_mirror.py), per-foot
  terms through its foot twins, per-link ones through its link twins, a centre-of-mass offset negates y;
- the height scan takes each point's value from the point at (x, -y) of the yaw-aligned grid;
- the gait clock shifts its phase so that the twin feet swap schedules: half a cycle for Qmini's alternating
  feet and a quadruped's trot (sin and cos negate), none for a gait whose twins step together;
- the policy observation's history mirrors each frame alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import torch

from env.robot_mirror import robot_mirror
from env.utils.mirror import MirrorMaps, SignedPermutation

if TYPE_CHECKING:
    from env.tasks.locomotion import LocomotionTask

# Privileged columns (env/domain_rand.py's privileged_names) that a mirror leaves alone: per-env scalars.
UNCHANGED = {"friction", "restitution", "contact_timeconst", "contact_dmin", "payload", "com_x", "com_z",
             "motor_strength", "kp_scale", "kd_scale", "joint_friction_scale", "joint_damping_scale",
             "armature_scale", "latency_steps"}
LINK_COLUMN = "link_mass_scale_"  # + the link's 1-based place among the links with mass


@dataclass
class MirrorParts:
    """The robot- and task-specific pieces the term rules are made of."""

    joints: SignedPermutation  # over the actuated joints
    feet: SignedPermutation  # over asset.foot_bodies
    privileged: SignedPermutation  # over the privileged columns
    gait_clock: SignedPermutation | None = None  # None: the task has no gait clock
    height_scan: SignedPermutation | None = None  # None: no height scan


def _signs(*signs: float) -> Callable[[MirrorParts], SignedPermutation]:
    return lambda parts: SignedPermutation.signs(signs)


TERMS: dict[str, Callable[[MirrorParts], SignedPermutation | None]] = {
    "base_lin_vel": _signs(1, -1, 1),
    "projected_gravity": _signs(1, -1, 1),
    "base_ang_vel": _signs(-1, 1, -1),
    "commands": _signs(1, -1, -1),
    "base_height": _signs(1),
    "dof_pos": lambda parts: parts.joints,
    "dof_vel": lambda parts: parts.joints,
    "actions": lambda parts: parts.joints,
    "foot_forces": lambda parts: parts.feet,
    "privileged": lambda parts: parts.privileged,
    "gait_clock": lambda parts: parts.gait_clock,
    "height_scan": lambda parts: parts.height_scan,
}


def layout_mirror(layout: list[tuple[str, int]], parts: MirrorParts) -> SignedPermutation:
    """The mirror of an observation laid out as `layout` (term name, size), term by term."""
    mirrors = []
    for name, size in layout:
        if name not in TERMS:
            raise ValueError(f"observation term '{name}' has no left-right mirror rule; add one to TERMS in "
                             f"env/tasks/observation_mirror.py")
        mirror = TERMS[name](parts)
        if mirror is None or len(mirror) != size:
            raise ValueError(f"observation term '{name}' has {size} entries but its mirror rule covers "
                             f"{0 if mirror is None else len(mirror)}")
        mirrors.append(mirror)
    return SignedPermutation.concat(mirrors)


def task_mirror_maps(task: LocomotionTask) -> MirrorMaps:
    """The mirror of the task's policy observation (with its history), critic observation and actions."""
    env = task.env
    robot = robot_mirror(env.model, task.cfg)
    feet = SignedPermutation(robot.feet, [1.0] * len(robot.feet), list(task.cfg.asset.foot_bodies))
    links = env.domain_rand.link_ids.tolist()
    parts = MirrorParts(robot.joints, feet, privileged_mirror(env.domain_rand.privileged_names(), links, robot.bodies))
    if task.gait is not None:
        parts.gait_clock = gait_clock_mirror(task.gait.offsets, robot.feet)
    if env.ground.scan is not None:
        parts.height_scan = scan_mirror(env.ground.scan)
    return MirrorMaps(obs=layout_mirror(task.obs_layout, parts).repeat(task.history_length),
                      critic_obs=layout_mirror(task.critic_obs_layout, parts), actions=robot.joints)


def privileged_mirror(names: list[str], links: list[int], body_twins: list[int]) -> SignedPermutation:
    """Columns by name: `UNCHANGED` ones stay, com_y negates, a link's mass scale swaps with its twin link's."""
    column = {name: i for i, name in enumerate(names)}
    index, sign = [], []
    for name in names:
        if name in UNCHANGED or name == "com_y":
            index.append(column[name])
            sign.append(-1.0 if name == "com_y" else 1.0)
        elif name.startswith(LINK_COLUMN):
            twin = links.index(body_twins[links[int(name[len(LINK_COLUMN):]) - 1]]) + 1
            index.append(column[f"{LINK_COLUMN}{twin}"])
            sign.append(1.0)
        else:
            raise ValueError(f"privileged observation column '{name}' has no left-right mirror rule; add one to "
                             f"env/tasks/observation_mirror.py")
    return SignedPermutation(index, sign, names)


def gait_clock_mirror(offsets: torch.Tensor, feet: list[int]) -> SignedPermutation:
    """(sin, cos, frequency) of the phase: the mirror shifts the phase by what takes each foot's offset to its twin's."""
    shifts = {round(float(offsets[i] - offsets[twin]) % 1.0, 6) % 1.0 for i, twin in enumerate(feet)}
    if shifts == {0.0}:
        return SignedPermutation.identity(3)
    if shifts == {0.5}:
        return SignedPermutation.signs([-1.0, -1.0, 1.0])
    raise ValueError(f"the gait clock cannot be mirrored: the twin feet's phase offsets {offsets.tolist()} differ by "
                     f"{sorted(shifts)} of a cycle, not all 0 or all 0.5")


def scan_mirror(points: torch.Tensor) -> SignedPermutation:
    """Each scan point (x, y) of the yaw-aligned pattern (P, 2) takes the value of the point at (x, -y)."""
    mirrored = points * torch.tensor([1.0, -1.0], device=points.device)
    distance, index = (mirrored[:, None] - points[None]).norm(dim=-1).min(dim=1)
    if float(distance.max()) > 1e-4:
        raise ValueError("the height scan pattern is not left-right symmetric (terrain.scan_size / scan_points): "
                         f"a point is {float(distance.max()):.3f} m from the mirror image of its nearest point")
    return SignedPermutation(index.tolist(), [1.0] * len(points))
