"""How a policy steps, measured by ``play.py --eval``: its stepping frequency and whether its feet follow the
task's gait clock.

    step_frequency_hz  touchdowns per foot per second of walking (a command other than zero); a touchdown
                       ends at least MIN_AIR_S in the air, so contact flicker at lift-off is not a step
    gait_match         fraction of (foot, policy step) samples of walking whose ground contact is the one the
                       gait clock asks for (commands.gait_phase; null without a clock). A gait unrelated to
                       the clock scores about 0.5: a foot down 60% of the time against a 0.55 stance ratio
                       matches 0.6 * 0.55 + 0.4 * 0.45 = 0.51 of the samples by chance.

A policy paid by the `gait_contact` reward can still step at its own pace: the G1 of README "G1" steps at
2.6 Hz per foot against its 1.25 Hz clock, which these two numbers show and the tracking errors do not.
"""

from __future__ import annotations

import math

import torch

MIN_AIR_S = 0.04  # s, the shortest time off the ground that counts the foot's next contact as a step


class GaitMetrics:
    """Accumulates each env's first episode, one policy step at a time (tensors (N,) or (N, feet))."""

    def __init__(self, num_envs: int, num_feet: int, dt: float, device: torch.device | str = "cpu"):
        zeros = lambda: torch.zeros(num_envs, device=device)  # noqa: E731
        self.num_feet = int(num_feet)
        self.dt = float(dt)
        self.touchdowns = zeros()  # feet that came down, summed over the walking steps
        self.walk_time = zeros()  # s of walking over which touchdowns were counted
        self.matches = zeros()  # per walking step, the fraction of feet matching the clock, summed
        self.clock_samples = zeros()  # walking steps at which the clock was compared
        self.min_air_steps = max(1, math.ceil(MIN_AIR_S / self.dt - 1e-9))
        self.air_steps = torch.zeros(num_envs, self.num_feet, device=device)  # policy steps since each foot left
        self.prev_sampled = torch.zeros(num_envs, dtype=torch.bool, device=device)

    def step(self, contact: torch.Tensor, desired: torch.Tensor | None, commands: torch.Tensor,
             sampled: torch.Tensor) -> None:
        """Record one policy step: `contact` (N, feet) bool now, `desired` (N, feet) bool the clock's contact (or
        None), `commands` (N, 3) held during the step, `sampled` (N,) the envs whose state was sampled."""
        contact = contact.bool()
        walking = (torch.norm(commands.float(), dim=1) > 0) & sampled.bool()
        counted = (walking & self.prev_sampled).float()  # both ends of the step are in the episode
        came_down = (contact & (self.air_steps >= self.min_air_steps)).sum(dim=1).float()
        self.touchdowns += came_down * counted
        self.walk_time += counted * self.dt
        if desired is not None:
            self.matches += (contact == desired.bool()).float().mean(dim=1) * walking.float()
            self.clock_samples += walking.float()
        self.air_steps = torch.where(contact, torch.zeros_like(self.air_steps), self.air_steps + 1)
        self.prev_sampled = sampled.bool().clone()

    def summary(self) -> dict[str, float | None]:
        walk_time = float(self.walk_time.sum())
        samples = float(self.clock_samples.sum())
        return {
            "step_frequency_hz": float(self.touchdowns.sum()) / (self.num_feet * walk_time) if walk_time else None,
            "gait_match": float(self.matches.sum()) / samples if samples else None,
        }
