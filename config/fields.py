"""Setting one field of a config tree by its dotted name (``section.field``), keeping its type.

Used by ``--set`` overrides and by training stages (config/stages.py), so that both
refuse an unknown key or a changed type with the same one-line message.
"""

from __future__ import annotations

from typing import Any

from config.errors import ConfigError
from utils.yaml import DICT_FIELDS, Cfg

OVERRIDES = "the overrides (--set and flags)"  # where override values come from, in messages


def set_field(cfg: Cfg, key: str, value: Any, origin: str = OVERRIDES) -> None:
    """Set ``a.b.c`` in the tree; unknown parts or a changed type raise `ConfigError` naming what is valid.

    `origin` says in every message where the value came from (the overrides, a training stage).
    """
    parts = key.split(".")

    def refuse(problem: str) -> ConfigError:  # every message names the key and where it came from
        return ConfigError(f"{key} in {origin}: {problem}")

    if len(parts) < 2:
        raise refuse(f"needs a section, e.g. runner.{key}; sections: {_sections(cfg)}")
    node: Any = cfg
    path: list[str] = []
    for part in parts[:-1]:
        if not isinstance(node, Cfg):
            raise refuse(f"'{'.'.join(path)}' is a field, not a section; use {'.'.join(path)}=value")
        if part not in node.fields():
            if path:
                raise refuse(f"unknown key '{part}' in section '{'.'.join(path)}'; valid: {', '.join(node.fields())}")
            raise refuse(f"unknown section '{part}'; sections: {_sections(cfg)}")
        node = getattr(node, part)
        path.append(part)
    field, section = parts[-1], ".".join(path)
    if isinstance(node, dict) and path[-1] in DICT_FIELDS:  # e.g. control.stiffness.hip_yaw=50
        node[field] = _coerce(key, node[field], value, origin) if field in node else value
        return
    if not isinstance(node, Cfg):
        raise refuse(f"'{section}' is a field, not a section; use {section}=value")
    if field not in node.fields():
        raise refuse(f"unknown field '{field}' in section '{section}'; valid fields: {', '.join(node.fields())}")
    old = getattr(node, field)
    if isinstance(old, Cfg):
        raise refuse(f"'{key}' is a section; set one of its fields: {', '.join(old.fields())}")
    setattr(node, field, _coerce(key, old, value, origin))


_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a number", list: "a list", dict: "a mapping"}


def _coerce(key: str, old: Any, value: Any, origin: str) -> Any:
    """Keep the field's type: ints become floats for float fields; a type change is an error."""
    if isinstance(old, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} = {value!r} in {origin}: expects true or false")
        return value
    if isinstance(old, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(old, int) and isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(old, str):
        return str(value)
    if isinstance(old, list) and isinstance(value, list):
        return value
    if isinstance(old, dict) and isinstance(value, dict):
        return value
    if old is None:
        return value
    raise ConfigError(f"{key} = {value!r} in {origin}: expects {_TYPE_NAMES.get(type(old), type(old).__name__)}, "
                      f"e.g. {old!r}")


def _sections(cfg: Cfg) -> str:
    return ", ".join(f for f in cfg.fields() if isinstance(getattr(cfg, f), Cfg))
