"""Config objects and their YAML round trip.

`Cfg` is the run-time form of a config: nested sections with attribute access.
It is built either from a config class (`ParamsProcess.from_class`) or from a
saved ``cfg.yaml`` (`ParamsProcess.load`), and both give identical trees, so
play.py can rebuild env and policy without the Python config class.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
from pathlib import Path
from typing import Any

import yaml


class Cfg:
    """A config section: attributes are fields (plain data) or nested `Cfg`s."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def fields(self) -> list[str]:
        return list(self.__dict__)

    def to_dict(self) -> dict[str, Any]:
        return {k: v.to_dict() if isinstance(v, Cfg) else copy.deepcopy(v) for k, v in self.__dict__.items()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cfg) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Cfg({', '.join(self.__dict__)})"


def _plain(value: Any) -> Any:
    """Tuples become lists so that YAML and the class give the same values."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return copy.deepcopy(value)


class ParamsProcess:
    """Conversions between config classes, `Cfg` trees, dicts and YAML files."""

    @staticmethod
    def from_class(cls: type) -> Cfg:
        """Instantiate a config class tree (inherited fields included) as a `Cfg`."""
        fields: dict[str, Any] = {}
        for name in _public_names(cls):
            value = getattr(cls, name)
            fields[name] = ParamsProcess.from_class(value) if inspect.isclass(value) else _plain(value)
        return Cfg(**fields)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Cfg:
        return Cfg(**{
            k: ParamsProcess.from_dict(v) if isinstance(v, dict) and k not in DICT_FIELDS else _plain(v)
            for k, v in data.items()
        })

    @staticmethod
    def dumps(cfg: Cfg) -> str:
        return yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=None)

    @staticmethod
    def loads(text: str) -> Cfg:
        data = yaml.safe_load(text)
        if not isinstance(data, dict):
            raise ValueError("config YAML must hold a mapping of sections at the top level")
        return ParamsProcess.from_dict(data)

    @staticmethod
    def load(path: str | Path) -> Cfg:
        return ParamsProcess.loads(Path(path).read_text())

    @staticmethod
    def digest(cfg: Cfg) -> str:
        """sha256 of the YAML dump: equal configs give equal digests."""
        return hashlib.sha256(ParamsProcess.dumps(cfg).encode()).hexdigest()


# A section and a dict-valued field (e.g. control.stiffness, by joint name) are
# both mappings in YAML; the dict-valued fields are named here. A new dict-valued
# field must be added to this set, or it would be read back as a section.
DICT_FIELDS = {"stiffness", "damping", "torque_limits", "default_joint_angles", "collision_primitives",
               "joint_armature", "joint_damping", "joint_friction", "terrain_proportions", "mirror_joints",
               "joint_deviation_weights"}


def _public_names(cls: type) -> list[str]:
    """Attribute names of a class and its bases, base-first, without dunders or methods."""
    names: list[str] = []
    for klass in reversed(inspect.getmro(cls)):
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or callable(value) and not inspect.isclass(value):
                continue
            if isinstance(value, (staticmethod, classmethod, property)):
                continue
            if name not in names:
                names.append(name)
    return names
