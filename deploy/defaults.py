"""Per-robot defaults of the sim-to-sim check, keyed by policy.yaml's `config` name.

Fall thresholds are the training config's termination limits (asset.terminate_tilt,
asset.terminate_height); pushes are its domain_rand.max_push_vel_xy / push_interval_s.
A robot not listed falls back to GENERIC (fall height: FALL_HEIGHT_FRACTION of the spawn height).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RobotDefaults:
    fall_tilt: float  # rad, base tilt from upright that counts as a fall
    fall_height: float | None  # m, base height below which the robot has fallen (None: from the spawn height)
    push_vel: float  # m/s, largest horizontal velocity kick per axis
    push_interval: float  # s between pushes


ROBOTS: dict[str, RobotDefaults] = {
    "go2": RobotDefaults(fall_tilt=1.0, fall_height=0.12, push_vel=1.0, push_interval=15.0),
    "qmini": RobotDefaults(fall_tilt=0.8, fall_height=0.25, push_vel=0.3, push_interval=8.0),
}
GENERIC = RobotDefaults(fall_tilt=1.0, fall_height=None, push_vel=1.0, push_interval=15.0)
FALL_HEIGHT_FRACTION = 0.4


def robot_defaults(config: str | None) -> tuple[RobotDefaults, bool]:
    """The defaults for `config` and whether it is a known robot."""
    if config in ROBOTS:
        return ROBOTS[config], True
    return GENERIC, False
