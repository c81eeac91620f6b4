"""Build the policy observation from the robot's state, exactly as policy.yaml describes it.

value(term) for each term name of policy.yaml's observation.terms (all in the base frame,
quaternions (w, x, y, z), base = the robot's floating base body):

    base_ang_vel       3   rad/s   angular velocity of the base in the base frame (an ideal gyro on the base;
                               in MuJoCo: qvel[3:6] of the free joint)
    projected_gravity  3   1       R^T (0, 0, -1): the unit gravity direction in the base frame, where R is
                               the base orientation; (0, 0, -1) standing upright
    commands           3   m/s, m/s, rad/s   commanded vx, vy (base frame) and yaw rate
    dof_pos            nu  rad     joint positions q (joint_names order); the offset default_joint_pos makes
                               the frame hold q - default_joint_pos
    dof_vel            nu  rad/s   joint velocities
    actions            nu  1       the previous policy output, clipped to +-clip_actions (not scaled); 0
                               before the first step
    gait_clock         3   1, 1, Hz  sin(2 pi phase), cos(2 pi phase), f: phase starts at 0 and advances by
                               f * control_dt after each observation (phase = (phase + f dt) mod 1)
    height_scan        P   m       base height above the ground at each of the term's P points (x forward,
                               y left, base yaw frame), from deploy/height_scan.py's map of the scene

then frame = concat((value - offset) * scale), with value - offset clipped to +-clip first for a
term that has a clip (height_scan). History: a new episode's history is its first
frame repeated history_length times; each step drops the oldest frame and appends the new one;
obs = clip(concat(frames, oldest first), -clip, clip). No observation noise is added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from deploy.policy_io import DeployError, PolicySpec


def quat_rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v for quaternions q (B, 4) as (w, x, y, z) and vectors v (B, 3): world frame -> base frame."""
    w, xyz = q[:, :1], q[:, 1:]
    a = v * (2.0 * w * w - 1.0)
    b = np.cross(xyz, v) * (2.0 * w)
    c = xyz * (2.0 * np.sum(xyz * v, axis=1, keepdims=True))
    return a - b + c


@dataclass
class RobotState:
    """What the observation is built from, for B robots at once (arrays (B, ...))."""

    base_quat: np.ndarray  # (B, 4) w, x, y, z
    base_ang_vel: np.ndarray  # (B, 3) rad/s, base frame
    dof_pos: np.ndarray  # (B, nu) rad
    dof_vel: np.ndarray  # (B, nu) rad/s
    commands: np.ndarray  # (B, 3) m/s, m/s, rad/s
    last_action: np.ndarray  # (B, nu) clipped previous action
    gait_clock: np.ndarray  # (B, 3) sin, cos, Hz (zeros when the policy has no gait)
    height_scan: np.ndarray | None = None  # (B, P) m, base height above the ground at the scan points

    @property
    def projected_gravity(self) -> np.ndarray:
        down = np.zeros((len(self.base_quat), 3))
        down[:, 2] = -1.0
        return quat_rotate_inverse(self.base_quat, down)


TermFn = Callable[[RobotState], np.ndarray]
TERMS: dict[str, TermFn] = {
    "base_ang_vel": lambda s: s.base_ang_vel,
    "projected_gravity": lambda s: s.projected_gravity,
    "commands": lambda s: s.commands,
    "dof_pos": lambda s: s.dof_pos,
    "dof_vel": lambda s: s.dof_vel,
    "actions": lambda s: s.last_action,
    "gait_clock": lambda s: s.gait_clock,
    "height_scan": lambda s: s.height_scan,
}


def term_sizes(num_actions: int) -> dict[str, int]:
    return {"base_ang_vel": 3, "projected_gravity": 3, "commands": 3, "dof_pos": num_actions,
            "dof_vel": num_actions, "actions": num_actions, "gait_clock": 3}


class GaitClock:
    """The stepping clock of a policy trained with commands.gait_phase (policy.yaml's gait section)."""

    def __init__(self, num: int, frequency: float | np.ndarray, dt: float):
        self.phase = np.zeros(num)
        self.frequency = np.broadcast_to(np.asarray(frequency, dtype=np.float64), (num,)).copy()  # Hz
        self.dt = float(dt)

    def reset(self, rows: np.ndarray) -> None:
        self.phase[rows] = 0.0

    def advance(self) -> None:
        self.phase = np.remainder(self.phase + self.frequency * self.dt, 1.0)

    def observation(self) -> np.ndarray:
        angle = 2.0 * math.pi * self.phase
        return np.stack([np.sin(angle), np.cos(angle), self.frequency], axis=1)


def check_terms(spec: PolicySpec) -> None:
    """Every term of policy.yaml is one this module builds, with the size it has."""
    sizes = term_sizes(spec.num_actions)
    for term in spec.terms:
        if term.name == "height_scan":
            sizes["height_scan"] = term.size if term.points is None else len(term.points)
        if term.name not in TERMS:
            raise DeployError(f"policy.yaml has observation term '{term.name}', which this program cannot build; "
                              f"known terms: {', '.join(TERMS)}")
        if term.size != sizes[term.name]:
            raise DeployError(f"policy.yaml has observation term '{term.name}' of size {term.size}, expected "
                              f"{sizes[term.name]}")
        if term.name == "gait_clock" and (spec.gait is None or not spec.gait.get("frequency_range")):
            raise DeployError("policy.yaml observes gait_clock but has no gait.frequency_range")
        if term.name == "height_scan" and term.points is None:
            raise DeployError("policy.yaml observes height_scan but its term lists no points; export it again with "
                              "play.py --export")


class ObservationBuilder:
    """Frames and history for B robots; rejects term names it does not know (one line)."""

    def __init__(self, spec: PolicySpec, num: int):
        check_terms(spec)
        self.spec = spec
        self.history = np.zeros((num, spec.history_length, spec.frame_size))

    def frame(self, state: RobotState) -> np.ndarray:
        parts = []
        for t in self.spec.terms:
            value = TERMS[t.name](state) - t.offset
            parts.append((value if t.clip is None else np.clip(value, -t.clip, t.clip)) * t.scale)
        return np.concatenate(parts, axis=1)

    def reset(self, rows: np.ndarray, state: RobotState) -> None:
        """Fill the history of `rows` with their first frame (state holds all B robots)."""
        self.history[rows] = self.frame(state)[rows][:, None, :]

    def observe(self, state: RobotState) -> np.ndarray:
        """Append the current frame and return the (B, num_obs) float32 observation."""
        self.history = np.concatenate([self.history[:, 1:], self.frame(state)[:, None, :]], axis=1)
        clip = self.spec.obs_clip
        return np.clip(self.history.reshape(len(self.history), -1), -clip, clip).astype(np.float32)
