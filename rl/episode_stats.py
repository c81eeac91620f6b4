"""Per-env episode bookkeeping for training logs (returns, task returns, lengths, reward terms)."""

from __future__ import annotations

from collections import deque
from typing import Mapping

import torch


class EpisodeStats:
    """Running per-env sums and a rolling window of the last `window` finished episodes.

    All per-env work is batched; the only host transfer per step is the list of
    finished envs' values (as in rsl_rl). Per-term ``info["episode"]`` means are
    accumulated on the device and read once per iteration by `pop_terms`.
    """

    def __init__(self, num_envs: int, device: str | torch.device, window: int = 100) -> None:
        self.device = torch.device(device)
        self.ret = torch.zeros(num_envs, device=self.device)
        self.task_ret = torch.zeros(num_envs, device=self.device)
        self.length = torch.zeros(num_envs, device=self.device)
        self.returns: deque[float] = deque(maxlen=window)
        self.task_returns: deque[float] = deque(maxlen=window)
        self.lengths: deque[float] = deque(maxlen=window)
        self._term_sums: dict[str, torch.Tensor] = {}
        self._term_counts: dict[str, torch.Tensor] = {}

    def reset_envs(self) -> None:
        """Forget the running episodes (after an env reset); the finished-episode window is kept."""
        self.ret.zero_()
        self.task_ret.zero_()
        self.length.zero_()

    def step(self, rewards: torch.Tensor, task_rewards: torch.Tensor, dones: torch.Tensor,
             episode_info: Mapping[str, torch.Tensor] | None = None) -> None:
        self.ret += rewards
        self.task_ret += task_rewards
        self.length += 1.0
        finished = dones.nonzero().flatten()
        if finished.numel() > 0:
            values = torch.stack([self.ret[finished], self.task_ret[finished], self.length[finished]]).cpu()
            self.returns.extend(values[0].tolist())
            self.task_returns.extend(values[1].tolist())
            self.lengths.extend(values[2].tolist())
            self.ret[finished] = 0.0
            self.task_ret[finished] = 0.0
            self.length[finished] = 0.0
        for name, value in (episode_info or {}).items():
            value = torch.as_tensor(value, device=self.device, dtype=torch.float32).reshape(())
            valid = ~torch.isnan(value)  # a term averaged over zero finished envs is skipped, without a sync
            if name not in self._term_sums:
                self._term_sums[name] = torch.zeros((), device=self.device)
                self._term_counts[name] = torch.zeros((), device=self.device)
            self._term_sums[name] += torch.where(valid, value, torch.zeros_like(value))
            self._term_counts[name] += valid.float()

    def means(self) -> dict[str, float]:
        """Mean return, task return and length over the window (empty before the first finished episode)."""
        if not self.returns:
            return {}
        n = len(self.returns)
        return {
            "mean_reward": sum(self.returns) / n,
            "mean_task_reward": sum(self.task_returns) / n,
            "mean_episode_length": sum(self.lengths) / n,
        }

    def pop_terms(self) -> dict[str, float]:
        """Mean of each ``info["episode"]`` term since the last call, then reset the accumulators."""
        out = {}
        for name, total in self._term_sums.items():
            count = float(self._term_counts[name])
            if count > 0:
                out[name] = float(total) / count
        self._term_sums.clear()
        self._term_counts.clear()
        return out
