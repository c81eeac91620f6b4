"""Scripted velocity commands for play.py, and holding them in a task.

A schedule is a list of (vx, vy, yaw rate) commands, each held for a duration:

    "0.5,0,0@5;0,0,1@5"     vx 0.5 m/s for 5 s, then a yaw rate of 1 rad/s for 5 s
    "0.3,0,0"               one command held for the whole rollout (only the last
                            entry may leave out its duration)
    path/to/schedule.yaml   a YAML list; each item is "vx,vy,yaw@s", or a mapping
                            {command: [vx, vy, yaw], duration: s} or
                            {vx: .., vy: .., yaw: .., duration: s} (missing keys are 0);
                            the list may also sit under a top-level `commands:` key

After the last entry ends its command is held. Units: m/s, m/s, rad/s, s. The text is read by
deploy/commands.py, the format's robot-side reference, so play.py and deploy.sim2sim take the same schedules.

`CommandDriver` makes a task follow commands chosen from outside (a schedule,
the keyboard, an evaluation grid) instead of its own random resampling, through
the task's `hold_commands` hook, so episode resets keep them too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from deploy.commands import parse_schedule
from deploy.policy_io import DeployError

Command = tuple[float, float, float]
COMMAND_NAMES = ("vx", "vy", "yaw")  # m/s, m/s, rad/s
RANGE_FIELDS = ("lin_vel_x", "lin_vel_y", "ang_vel_yaw")  # the config's commands.* range of each


class CommandScheduleError(ValueError):
    """A malformed schedule; the message is one line saying what is wrong and what is expected."""


@dataclass(frozen=True)
class Segment:
    command: Command  # (vx m/s, vy m/s, yaw rate rad/s)
    duration: float  # s (inf: held to the end)


class CommandSchedule:
    """Piecewise-constant commands over time."""

    def __init__(self, segments: Sequence[Segment]):
        if not segments:
            raise CommandScheduleError("empty command schedule: give at least one vx,vy,yaw command")
        for seg in segments[:-1]:
            if math.isinf(seg.duration):
                raise CommandScheduleError("only the last command of a schedule may leave out its duration (@seconds)")
        self.segments = list(segments)
        self._ends = []
        t = 0.0
        for seg in self.segments:
            t += seg.duration
            self._ends.append(t)

    @classmethod
    def parse(cls, text: str) -> "CommandSchedule":
        """A schedule from a string like "0.5,0,0@5;0,0,1@5" or from a YAML file path.

        Read by deploy.commands, the robot-side reference of the format, so that play.py and
        deploy.sim2sim accept exactly the same schedules with the same one-line errors.
        """
        try:
            schedule = parse_schedule(text)
        except DeployError as err:
            raise CommandScheduleError(str(err)) from None
        return cls([Segment(tuple(float(v) for v in command), float(duration))  # type: ignore[arg-type]
                    for command, duration in zip(schedule.commands, schedule.durations)])

    # ------------------------------------------------------------------ use
    @property
    def duration(self) -> float:
        """s, the end of the last entry (inf when it is held open-ended)."""
        return self._ends[-1]

    def num_steps(self, dt: float) -> int | None:
        """Policy steps of period dt that cover the schedule, or None if it is open-ended."""
        if math.isinf(self.duration):
            return None
        return max(1, int(math.ceil(self.duration / dt - 1e-9)))

    def at(self, t: float) -> Command:
        """The command at time t (s from the start); the last one holds after the end."""
        for seg, end in zip(self.segments, self._ends):
            if t + 1e-9 < end:
                return seg.command
        return self.segments[-1].command

    def out_of_range(self, commands_cfg: Any) -> list[str]:
        """Human-readable notes for commands outside the config's trained ranges."""
        notes = []
        for seg in self.segments:
            for value, name, field in zip(seg.command, COMMAND_NAMES, RANGE_FIELDS):
                lo, hi = getattr(commands_cfg, field)
                if not lo - 1e-9 <= value <= hi + 1e-9:
                    notes.append(f"{name}={value:g} is outside the trained range commands.{field}=[{lo:g}, {hi:g}]")
        return notes

    def __str__(self) -> str:
        parts = []
        for seg in self.segments:
            cmd = ",".join(f"{v:g}" for v in seg.command)
            parts.append(cmd if math.isinf(seg.duration) else f"{cmd}@{seg.duration:g}")
        return ";".join(parts)


def clamp_to_ranges(command: Sequence[float], commands_cfg: Any) -> Command:
    """Clamp (vx, vy, yaw) to the config's trained command ranges."""
    out = []
    for value, field in zip(command, RANGE_FIELDS):
        lo, hi = getattr(commands_cfg, field)
        out.append(float(min(max(value, lo), hi)))
    return tuple(out)  # type: ignore[return-value]


class CommandDriver:
    """Holds a task's velocity commands at values chosen from outside.

    Build it before the first ``env.reset()`` (so the first observation already
    carries the driven commands), then call `set` with one command for every env
    or an (N, 3) tensor before each step. It uses the task's `hold_commands`
    hook, so neither the resampling timer nor episode resets replace them.
    """

    def __init__(self, task: Any):
        if not isinstance(getattr(task, "commands", None), torch.Tensor) or not hasattr(task, "hold_commands"):
            raise ValueError(f"task {type(task).__name__} has no velocity commands to drive")
        self.task = task
        self.target = torch.zeros_like(task.commands)
        task.hold_commands(self.target)

    def set(self, commands: Sequence[float] | torch.Tensor) -> None:
        value = torch.as_tensor(commands, dtype=self.target.dtype).to(self.target.device)
        self.target[:] = value  # (3,) broadcasts to every env, (N, 3) sets each
        self.task.hold_commands(self.target)
