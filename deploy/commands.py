"""Velocity command schedules: the --commands text format, and random schedules from the trained ranges.

Same format as play.py's --commands (units m/s, m/s, rad/s, s):

    "0.5,0,0@5;0,0,1@5"     vx 0.5 m/s for 5 s, then a yaw rate of 1 rad/s for 5 s
    "0.3,0,0"               one command held throughout (only the last entry may leave out @s)
    path/to/schedule.yaml   a list of "vx,vy,yaw@s" strings or {command: [vx, vy, yaw], duration: s}
                            / {vx:, vy:, yaw:, duration:} mappings, optionally under `commands:`

After the last entry ends, its command is held.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from deploy.policy_io import DeployError


def attach_negative_schedule(argv: list[str]) -> list[str]:
    """`argv` with a schedule that starts with a minus glued to its flag (`--commands=-0.5,0,0@5`): argparse
    would take `--commands -0.5,0,0@5` for two options (play.py: env/utils/args.glue_dash_values)."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--commands" and re.match(r"-[\d.]", arg):
            out[-1] = f"--commands={arg}"
        else:
            out.append(arg)
    return out


FORMAT = "expected 'vx,vy,yaw@seconds;vx,vy,yaw@seconds;...' or a YAML file"


@dataclass(frozen=True)
class Schedule:
    commands: np.ndarray  # (K, 3) vx m/s, vy m/s, yaw rate rad/s
    durations: np.ndarray  # (K,) s; the last may be inf (held open-ended)

    starts: np.ndarray = field(init=False)  # (K,) s, when each command begins (starts[0] = 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "starts", np.concatenate([[0.0], np.cumsum(self.durations[:-1])]))

    def index(self, t: float) -> int:
        """The segment in force at time t (s); the last one holds after the end."""
        return int(np.searchsorted(self.starts, t + 1e-9, side="right") - 1)

    def at(self, t: float) -> np.ndarray:
        return self.commands[self.index(t)]

    def __str__(self) -> str:
        parts = []
        for cmd, duration in zip(self.commands, self.durations):
            text = ",".join(f"{v:g}" for v in cmd)
            parts.append(text if math.isinf(duration) else f"{text}@{duration:g}")
        return ";".join(parts)


def _segments_to_schedule(items: list[tuple[tuple[float, float, float], float]]) -> Schedule:
    return Schedule(np.array([c for c, _ in items], dtype=np.float64), np.array([d for _, d in items]))


def _number(text: Any, what: str) -> float:
    try:
        value = float(str(text))
    except ValueError:
        raise DeployError(f"--commands {what}: '{str(text).strip()}' is not a number; {FORMAT}") from None
    if not math.isfinite(value):
        raise DeployError(f"--commands {what}: '{str(text).strip()}' is not a finite number")
    return value


def _duration(value: float, what: str) -> float:
    if value <= 0:
        raise DeployError(f"--commands {what}: duration must be > 0 s, got {value:g}")
    return value


def _item(text: str, index: int, count: int) -> tuple[tuple[float, float, float], float]:
    what = f"command {index + 1} '{text.strip()}'"
    if not text.strip():
        raise DeployError(f"--commands: command {index + 1} is empty; {FORMAT}")
    cmd_text, at, dur_text = text.partition("@")
    parts = cmd_text.split(",")
    if len(parts) != 3:
        raise DeployError(f"--commands {what} needs 3 values vx,vy,yaw, got {len(parts)}; {FORMAT}")
    command = tuple(_number(p, what) for p in parts)
    if not at:
        if index != count - 1:
            raise DeployError(f"--commands {what} needs a duration (@seconds); only the last one may leave it out")
        return command, math.inf  # type: ignore[return-value]
    return command, _duration(_number(dur_text, what), what)  # type: ignore[return-value]


def _yaml_item(item: Any, index: int, count: int, path: Path) -> tuple[tuple[float, float, float], float]:
    what = f"{path} item {index + 1}"
    if isinstance(item, str):
        return _item(item, index, count)
    if not isinstance(item, dict):
        raise DeployError(f"--commands {what} must be 'vx,vy,yaw@s' or a mapping with command/duration")
    unknown = set(item) - {"command", "cmd", "vx", "vy", "yaw", "duration"}
    if unknown:
        raise DeployError(f"--commands {what} has unknown keys {sorted(unknown)}")
    raw = item.get("command", item.get("cmd"))
    if raw is not None and (not isinstance(raw, (list, tuple)) or len(raw) != 3):
        raise DeployError(f"--commands {what}: command must be a list [vx, vy, yaw], got {raw!r}")
    values = raw if raw is not None else [item.get(k, 0.0) for k in ("vx", "vy", "yaw")]
    command = tuple(_number(v, what) for v in values)
    if "duration" not in item:
        if index != count - 1:
            raise DeployError(f"--commands {what} needs a duration; only the last item may leave it out")
        return command, math.inf  # type: ignore[return-value]
    return command, _duration(_number(item["duration"], what), what)  # type: ignore[return-value]


def _is_file(path: Path) -> bool:
    """Whether a --commands value names a file; a long schedule is no file name (ENAMETOOLONG), not an error."""
    try:
        return path.is_file()
    except OSError:
        return False


def parse_schedule(text: str) -> Schedule:
    """A schedule from "vx,vy,yaw@s;..." or from a YAML file path."""
    text = (text or "").strip()
    if not text:
        raise DeployError(f"--commands is empty; {FORMAT}")
    path = Path(text)
    if text.endswith((".yaml", ".yml")) or _is_file(path):
        if not path.is_file():
            raise DeployError(f"--commands: schedule file not found: {path}")
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as err:
            raise DeployError(f"--commands: {path} is not valid YAML: {' '.join(str(err).split())[:160]}") from None
        if isinstance(data, dict) and "commands" in data:
            data = data["commands"]
        if not isinstance(data, list) or not data:
            raise DeployError(f"--commands: {path} must hold a non-empty list of commands")
        return _segments_to_schedule([_yaml_item(it, i, len(data), path) for i, it in enumerate(data)])
    items = text.split(";")
    if items[-1].strip() == "":  # a trailing ';' is harmless
        items = items[:-1]
    return _segments_to_schedule([_item(it, i, len(items)) for i, it in enumerate(items)])


def random_schedule(rng: np.random.Generator, ranges: np.ndarray, zero_threshold: float, duration: float,
                    every: float, jitter: float = 0.0) -> Schedule:
    """Commands drawn uniformly from the trained ranges (3, 2), a new one every `every` s, or, with `jitter`,
    after a duration drawn uniformly from every +- jitter (0 <= jitter < every).

    As in training, a planar command with norm below zero_threshold becomes (0, 0) and a yaw
    rate below it becomes 0, so standing still is part of the test. Why the jitter: a gait clock that
    starts at phase 0 and a period of whole gait cycles (5 s at 2 Hz) put every command change of every
    episode at the same phase of the gait; the jitter spreads them over all phases.
    """
    count = max(1, int(math.ceil(duration / (every - jitter) - 1e-9)))
    cmds = rng.uniform(ranges[:, 0], ranges[:, 1], size=(count, 3))
    cmds[np.linalg.norm(cmds[:, :2], axis=1) < zero_threshold, :2] = 0.0
    cmds[np.abs(cmds[:, 2]) < zero_threshold, 2] = 0.0
    durations = np.full(count, float(every)) if jitter == 0 else every + rng.uniform(-jitter, jitter, size=count)
    return Schedule(cmds, durations)
