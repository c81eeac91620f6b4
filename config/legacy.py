"""Read configs saved by older versions: fields that were renamed, translated to today's.

Until the scene was composed in code (`env.sim.scene`), the robot MJCFs carried their
own touch sensors and configs named those sensors (``asset.foot_sensors`` ...). Now
configs name bodies and the scene puts the sensors on them. A saved cfg.yaml with the
old fields is translated here so that old runs still play, evaluate and resume.
"""

from __future__ import annotations

from utils.yaml import Cfg

# Sensor -> body for the sensors of the models we shipped; any other "<body>_touch" maps to "<body>".
_SHIPPED_SENSOR_BODIES = {
    "base_touch": "base_link",  # go2 and qmini trunks
    "foot_l_touch": "ankle_pitch_l", "foot_r_touch": "ankle_pitch_r",  # qmini soles
    "knee_l_touch": "knee_pitch_l", "knee_r_touch": "knee_pitch_r",  # qmini shanks
}
_RENAMED = {"foot_sensors": "foot_bodies", "termination_sensors": "termination_bodies",
            "penalized_sensors": "penalized_bodies"}


class LegacyConfigError(ValueError):
    """A saved config uses an old field that cannot be translated; the message says what to write instead."""


def sensor_body(sensor: str, field: str) -> str:
    if sensor in _SHIPPED_SENSOR_BODIES:
        return _SHIPPED_SENSOR_BODIES[sensor]
    if sensor.endswith("_touch"):
        return sensor[: -len("_touch")]
    raise LegacyConfigError(f"asset.{field} names sensor '{sensor}', which cannot be mapped to a body; "
                            f"replace asset.{field} with asset.{_RENAMED[field]} (the bodies' names)")


def migrate(cfg: Cfg) -> list[str]:
    """Translate old fields of `cfg` in place; return the old field names that were translated."""
    asset = getattr(cfg, "asset", None)
    if not isinstance(asset, Cfg):
        return []
    done = []
    for old, new in _RENAMED.items():
        if hasattr(asset, old):
            setattr(asset, new, [sensor_body(s, old) for s in getattr(asset, old)])
            delattr(asset, old)
            done.append(f"asset.{old}")
    if hasattr(asset, "foot_velocity_sensors"):  # every foot has a velocity sensor now
        delattr(asset, "foot_velocity_sensors")
        done.append("asset.foot_velocity_sensors")
    return done
