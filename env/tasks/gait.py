"""Periodic gait schedule: a per-env phase clock that says which feet should be down.

Bipeds usually need one to learn stepping instead of shuffling: the policy sees
the clock (sin, cos of the phase and the frequency) and the `gait_contact`
reward pays for ground contacts that match it. Foot i is due on the ground
while ``(phase + offset_i) mod 1 < stance_ratio``; at a zero command all feet
are due down (stand still).
"""

from __future__ import annotations

import math

import torch

from env.utils.math import sample_uniform

# phase offset per foot: alternating for two feet, a trot (diagonal pairs) for four in FL, FR, RL, RR order
DEFAULT_OFFSETS = {2: [0.0, 0.5], 4: [0.0, 0.5, 0.5, 0.0]}


class GaitSchedule:
    obs_size = 3  # sin and cos of the phase, frequency

    def __init__(self, num_envs: int, num_feet: int, frequency_range: list[float], stance_ratio: float, dt: float,
                 device: torch.device):
        if num_feet not in DEFAULT_OFFSETS:
            raise ValueError(f"commands.gait_phase supports 2 or 4 feet, the robot has {num_feet}")
        self.frequency_range = frequency_range
        self.stance_ratio = stance_ratio
        self.dt = dt
        self.offsets = torch.tensor(DEFAULT_OFFSETS[num_feet], device=device)
        self.phase = torch.zeros(num_envs, device=device)
        self.frequency = torch.full((num_envs,), float(sum(frequency_range)) / 2, device=device)
        self.moving = torch.ones(num_envs, dtype=torch.bool, device=device)

    def resample(self, due: torch.Tensor, moving: torch.Tensor) -> None:
        """New frequency where the (N,) mask `due` is set; `moving` (N,) is False where the command is zero."""
        new = sample_uniform(*self.frequency_range, (len(due),), self.frequency.device)
        self.frequency.copy_(torch.where(due, new, self.frequency))
        self.moving.copy_(torch.where(due, moving, self.moving))

    def reset(self, env_ids: torch.Tensor) -> None:
        self.phase[env_ids] = 0.0

    def advance(self) -> None:
        self.phase = torch.remainder(self.phase + self.frequency * self.dt, 1.0)

    def desired_contact(self) -> torch.Tensor:
        """(N, num_feet) bool: feet that should be on the ground now."""
        foot_phase = torch.remainder(self.phase.unsqueeze(1) + self.offsets, 1.0)
        return (foot_phase < self.stance_ratio) | ~self.moving.unsqueeze(1)

    def observation(self) -> torch.Tensor:
        angle = 2 * math.pi * self.phase
        return torch.stack([torch.sin(angle), torch.cos(angle), self.frequency], dim=1)
