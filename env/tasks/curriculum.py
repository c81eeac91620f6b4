"""Command-range curriculum: train on narrow velocity ranges first, widen them as tracking improves.

The level scales every command range towards zero (level 1 = the config's full
ranges). After episodes end, if their mean per-step linear tracking kernel
(exp(-err^2/sigma), 1 = perfect) exceeds the threshold, the level goes up by
one step. A robot that cannot yet walk is not asked to run.
"""

from __future__ import annotations

import torch

from utils.yaml import Cfg


class CommandCurriculum:
    def __init__(self, commands: Cfg, num_envs: int, device: torch.device):
        self.enabled = bool(commands.curriculum)
        self.level = float(commands.curriculum_initial_level) if self.enabled else 1.0
        self.step = float(commands.curriculum_step)
        self.threshold = float(commands.curriculum_threshold)
        self.tracking_sum = torch.zeros(num_envs, device=device)
        self.steps = torch.zeros(num_envs, device=device)  # own count: an episode clock may start mid-episode

    def scaled(self, bounds: list[float]) -> tuple[float, float]:
        return bounds[0] * self.level, bounds[1] * self.level

    def accumulate(self, tracking_kernel: torch.Tensor) -> None:
        self.tracking_sum += tracking_kernel
        self.steps += 1

    def finish_episodes(self, env_ids: torch.Tensor) -> None:
        """Promote on the finished episodes' mean tracking; clear their sums."""
        if self.enabled and len(env_ids):
            per_step = self.tracking_sum[env_ids] / self.steps[env_ids].clamp(min=1)
            if float(per_step.mean()) > self.threshold:
                self.level = min(1.0, self.level + self.step)
        self.tracking_sum[env_ids] = 0.0
        self.steps[env_ids] = 0.0
