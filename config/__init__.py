"""Config lookup, command-line overrides and validation.

``--config NAME`` loads module ``config.NAME`` and its class ``NAME``;
``--set section.field=value`` overrides one field and rejects unknown keys.
Every way in (a config class, a saved cfg.yaml, overrides) ends in
`config.validate.validate_config`, so a bad value is refused with one line before
anything is built or written.
"""

from __future__ import annotations

import ast
import copy
import importlib
import pkgutil
import re
import sys
from pathlib import Path
from typing import Any, Iterable

import yaml

from config.base import Base
from config.legacy import LegacyConfigError
from config.legacy import migrate as migrate_legacy_fields
from config.fields import OVERRIDES, set_field
from config.stages import final_stage_config
from config.validate import ConfigError, validate_config
from utils.yaml import Cfg, ParamsProcess


__all__ = ["ConfigError", "apply_overrides", "available_configs", "load_config", "load_saved_config",
           "reference_config", "validate_config"]


def available_configs() -> list[str]:
    """Names accepted by ``--config``: modules of this package that define a class of the same name.

    The modules are read, not imported (the config machinery beside them, such as
    `validate` or `legacy`, has no such class and is not offered).
    """
    folder = Path(__file__).parent
    names = []
    for info in pkgutil.iter_modules([str(folder)]):
        if not info.name.startswith("_") and info.name != "base" and _defines_class(folder / f"{info.name}.py", info.name):
            names.append(info.name)
    return sorted(names)


def _defines_class(path: Path, name: str) -> bool:
    """Whether the module at `path` defines (or assigns) a top-level class called `name`.

    A module that does not parse is kept, so that choosing it shows the syntax error.
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except SyntaxError:
        return True
    except (OSError, UnicodeDecodeError):
        return False
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
    return False


def load_config_class(name: str) -> type:
    if name not in available_configs():
        raise ConfigError(f"unknown config '{name}'; available configs: {', '.join(available_configs())}")
    module = importlib.import_module(f"config.{name}")
    if not hasattr(module, name):
        raise ConfigError(f"config/{name}.py must define a class named '{name}'")
    return getattr(module, name)


def load_config(name: str, overrides: Iterable[str] = (), final_stage: bool = False) -> Cfg:
    """The `Cfg` tree of config NAME with ``section.field=value`` overrides applied, validated.

    final_stage: the settings the config's stages end with hold from the start, and no stages are left
    (`config.stages.final_stage_config`); an override of a field a stage sets still wins.
    """
    overrides = list(overrides)
    cfg = ParamsProcess.from_class(load_config_class(name))
    cfg.name = name  # which config class this came from, kept in cfg.yaml
    validate_config(cfg, reference_config(cfg)[0], f"config/{name}.py")
    apply_overrides(cfg, overrides)
    if final_stage:
        later = [item for item in overrides if item.partition("=")[0].strip() != "runner.stages"]
        cfg = apply_overrides(final_stage_config(cfg), later)
    return cfg


def reference_config(cfg: Cfg) -> tuple[Cfg, bool]:
    """The defaults `cfg` is checked against: its config class when it exists, else `Base`.

    Returns the reference and whether fields unknown to it are tolerated (only when
    the run's config class is gone, so its own extra fields cannot be checked).
    """
    name = getattr(cfg, "name", None)
    known = isinstance(name, str) and name in available_configs()
    reference = ParamsProcess.from_class(load_config_class(name) if known else Base)
    reference.name = str(name) if known else ""
    return reference, not known


def load_saved_config(path: str | Path) -> Cfg:
    """A run's saved cfg.yaml, with the fields added to `Base` since it was saved filled in, validated.

    A field added to Base defaults to the behaviour from before it existed (e.g.
    ``rewards.tracking_sigma_yaw = None``: the linear sigma), so an older run
    rebuilds as it trained. The filled fields are named once on stderr. A file that
    cannot be read, is not YAML or holds a bad value raises one-line `ConfigError`.
    """
    try:
        cfg = ParamsProcess.load(path)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or type(err).__name__
        raise ConfigError(f"{path} is not valid YAML{where}: {problem}; fix the file or train the run again") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read {path}: {getattr(err, 'strerror', None) or err}") from None
    except ValueError as err:
        raise ConfigError(f"{path}: {err}") from None
    try:
        renamed = migrate_legacy_fields(cfg)
    except LegacyConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    if renamed:
        print(f"note: {path} uses the old fields {', '.join(renamed)}; read as today's (bodies, not sensors)",
              file=sys.stderr)
        _take_torque_limits_from_class(cfg)
    filled = fill_missing_fields(cfg, ParamsProcess.from_class(Base))
    if filled:
        more = f" and {len(filled) - 3} more" if len(filled) > 3 else ""
        print(f"note: {path} predates {len(filled)} config field(s) ({', '.join(filled[:3])}{more}); "
              "they take Base's defaults", file=sys.stderr)
    reference, allow_unknown = reference_config(cfg)
    validate_config(cfg, reference, str(path), allow_unknown)
    return cfg


def _take_torque_limits_from_class(cfg: Cfg) -> None:
    """Torque limits lived in the robot MJCFs before the scene was composed in code; take today's from the config class."""
    name = getattr(cfg, "name", None)
    control = getattr(cfg, "control", None)
    if isinstance(control, Cfg) and not hasattr(control, "torque_limits") and name in available_configs():
        control.torque_limits = dict(ParamsProcess.from_class(load_config_class(name)).control.torque_limits)


def fill_missing_fields(cfg: Cfg, defaults: Cfg, prefix: str = "") -> list[str]:
    """Copy into `cfg` every field of `defaults` it lacks, at any depth; return their dotted names."""
    filled: list[str] = []
    for name in defaults.fields():
        default = getattr(defaults, name)
        if name not in cfg.fields():
            setattr(cfg, name, copy.deepcopy(default))
            filled.append(prefix + name)
        elif isinstance(default, Cfg) and isinstance(getattr(cfg, name), Cfg):
            filled += fill_missing_fields(getattr(cfg, name), default, f"{prefix}{name}.")
    return filled


def apply_overrides(cfg: Cfg, overrides: Iterable[str]) -> Cfg:
    """Apply ``section.field=value`` overrides in order, then validate the result."""
    overrides = list(overrides)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override '{item}' must look like section.field=value")
        set_field(cfg, key.strip(), _parse_value(text.strip()))
    if overrides:
        reference, allow_unknown = reference_config(cfg)
        validate_config(cfg, reference, OVERRIDES, allow_unknown)
    return cfg


# YAML 1.1, which PyYAML reads, takes 1e-4 and 3E5 for text (its floats need a dot); on a command line they are numbers
_EXPONENT_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _parse_value(text: str) -> Any:
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text
    return _exponents_as_numbers(value)


def _exponents_as_numbers(value: Any) -> Any:
    if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value):
        return float(value)
    if isinstance(value, list):
        return [_exponents_as_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _exponents_as_numbers(v) for k, v in value.items()}
    return value
