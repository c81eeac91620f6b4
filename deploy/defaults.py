"""Defaults of the sim-to-sim check: fall limits and pushes as the policy was trained.

policy.yaml's `training` block holds the training config's termination limits
(asset.terminate_tilt, asset.terminate_height, asset.termination_bodies,
asset.contact_threshold) and pushes (domain_rand.max_push_vel_xy, push_interval_s).
Exports made before that block existed fall back to this table, keyed by policy.yaml's
`config` name, and then to GENERIC (fall height: FALL_HEIGHT_FRACTION of the spawn height).
"""

from __future__ import annotations

from dataclasses import dataclass

from deploy.falls import DEFAULT_CONTACT_FORCE


@dataclass(frozen=True)
class RobotDefaults:
    fall_tilt: float  # rad, base tilt from upright that counts as a fall
    fall_height: float | None  # m, base height below which the robot has fallen (None: from the spawn height)
    push_vel: float  # m/s, largest horizontal velocity kick per axis
    push_interval: float  # s between pushes
    fall_bodies: tuple[str, ...] = ()  # bodies whose contact is a fall (training's termination bodies); () = the base
    contact_force: float = DEFAULT_CONTACT_FORCE  # N, the contact force that counts


ROBOTS: dict[str, RobotDefaults] = {
    "go2": RobotDefaults(fall_tilt=1.0, fall_height=0.12, push_vel=1.0, push_interval=15.0),
    "qmini": RobotDefaults(fall_tilt=0.8, fall_height=0.25, push_vel=0.3, push_interval=8.0),
}
# courses (deploy/courses.py) that `--suite` adds for a policy trained on rough terrain: the
# rough-terrain issue's targets per config; GENERIC_COURSES for other configs whose policy.yaml
# says they trained on a height field
COURSES: dict[str, list[str]] = {
    "go2_rough": ["stairs_up:0.10", "stairs_down:0.10", "slope_up:0.3", "slope_down:0.3", "boxes:0.08"],
    "go2_perceptive": ["stairs_up:0.15", "stairs_down:0.15", "stairs_up:0.10", "stairs_down:0.10", "slope_up:0.3",
                       "slope_down:0.3", "boxes:0.08"],
    "qmini_rough": ["boxes:0.04", "slope_up:0.15", "slope_down:0.15"],
}
GENERIC_COURSES = ["stairs_up:0.05", "stairs_down:0.05", "slope_up:0.15", "slope_down:0.15", "boxes:0.04"]
GENERIC = RobotDefaults(fall_tilt=1.0, fall_height=None, push_vel=1.0, push_interval=15.0)
FALL_HEIGHT_FRACTION = 0.4


def robot_defaults(config: str | None, training: dict | None = None) -> tuple[RobotDefaults, bool]:
    """The defaults from policy.yaml's `training` block, else for `config`; and whether they are known."""
    if training:
        height = float(training.get("terminate_height") or 0.0)
        interval = training.get("push_interval_s")
        fallback = ROBOTS.get(config, GENERIC)
        return RobotDefaults(fall_tilt=float(training.get("terminate_tilt", fallback.fall_tilt)),
                             fall_height=height if height > 0 else fallback.fall_height,
                             push_vel=float(training.get("max_push_vel_xy", fallback.push_vel)),
                             push_interval=float(interval) if interval else fallback.push_interval,
                             fall_bodies=tuple(training.get("termination_bodies") or fallback.fall_bodies),
                             contact_force=float(training.get("contact_threshold", fallback.contact_force))), True
    if config in ROBOTS:
        return ROBOTS[config], True
    return GENERIC, False


def suite_courses(config: str | None, training: dict | None = None) -> list[str]:
    """The courses `--suite` runs for this policy: none for one trained on a flat floor."""
    if config in COURSES:
        return COURSES[config]
    terrain = (training or {}).get("terrain")
    return GENERIC_COURSES if terrain not in (None, "plane") else []
