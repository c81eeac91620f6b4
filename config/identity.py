"""Which config fields make a run what it is, for the checkpoint's config hash.

Run length, logging, the device and thread count, the seed (a resume restores the
RNG states instead) and the viewer change how a run is carried out, not what it
trains: resuming with another ``--max_iterations`` is the normal case and must not
be reported as a different config. Everything else (env, task, physics, policy,
algorithm) counts.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import yaml

# Dotted names (a section name covers the whole section) left out of the hash.
RUN_ONLY_FIELDS = (
    "runner.max_iterations", "runner.save_interval", "runner.log_interval", "runner.device", "runner.seed",
    "runner.max_skipped_updates", "runner.logger", "runner.wandb_project", "runner.wandb_entity", "runner.precision",
    "sim.nthread", "viewer",
)


def identity_dict(cfg_dict: dict[str, Any]) -> dict[str, Any]:
    """A copy of the config dict without `RUN_ONLY_FIELDS`."""
    out = copy.deepcopy(cfg_dict)
    for dotted in RUN_ONLY_FIELDS:
        *sections, last = dotted.split(".")
        node: Any = out
        for part in sections:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return out


def cfg_hash(cfg_dict: dict[str, Any] | None) -> str | None:
    """sha256 of the YAML dump of the fields that define the run (see `RUN_ONLY_FIELDS`)."""
    if cfg_dict is None:
        return None
    data = identity_dict(cfg_dict)
    try:
        text = yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
    except yaml.YAMLError:
        text = json.dumps(data, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def changed_fields(old: dict[str, Any], new: dict[str, Any], prefix: str = "",
                   include_absent: bool = True) -> list[str]:
    """``key: old -> new`` for every defining field that differs.

    A field only one side has counts unless `include_absent` is False: a field
    added to the config since `old` was saved takes the default that behaves as
    before it existed, and `load_saved_config` has already named it once.
    """
    old, new = identity_dict(old) if not prefix else old, identity_dict(new) if not prefix else new
    changes: list[str] = []
    for key in list(old) + [k for k in new if k not in old]:
        if not include_absent and (key not in old or key not in new):
            continue
        a, b = old.get(key, "(absent)"), new.get(key, "(absent)")
        if isinstance(a, dict) and isinstance(b, dict):
            changes += changed_fields(a, b, f"{prefix}{key}.", include_absent)
        elif a != b:
            changes.append(f"{prefix}{key}: {a!r} -> {b!r}")
    return changes
