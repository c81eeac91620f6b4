"""Per-env episode bookkeeping for training logs (returns, task returns, lengths, reward terms)."""

from __future__ import annotations

from collections import deque
from typing import Callable, Mapping

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

    def means(self, reduce: Callable[[torch.Tensor], torch.Tensor] | None = None) -> dict[str, float]:
        """Mean return, task return and length over the window (empty before the first finished episode).

        `reduce` (an in-place sum over processes) pools the windows of every process.
        """
        totals = torch.tensor([sum(self.returns), sum(self.task_returns), sum(self.lengths), len(self.returns)],
                              dtype=torch.float64)
        if reduce is not None:
            totals = reduce(totals)
        n = float(totals[3])
        if n == 0:
            return {}
        return {"mean_reward": float(totals[0]) / n, "mean_task_reward": float(totals[1]) / n,
                "mean_episode_length": float(totals[2]) / n}

    def pop_terms(self, reduce: Callable[[torch.Tensor], torch.Tensor] | None = None,
                  names: list[str] | None = None) -> dict[str, float]:
        """Mean of each ``info["episode"]`` term since the last call, then reset the accumulators.

        With `reduce` (an in-place sum over processes), `names` must be the same on every
        process (`Sync.union` of the terms each has seen): a term one has not seen counts 0 times.
        """
        names = sorted(self._term_sums) if names is None else names
        out = {}
        if names:
            zero = torch.zeros((), device=self.device)
            totals = torch.stack([torch.stack([self._term_sums.get(k, zero) for k in names]),
                                  torch.stack([self._term_counts.get(k, zero) for k in names])]).double().cpu()
            if reduce is not None:
                totals = reduce(totals)
            out = {k: float(totals[0, i] / totals[1, i]) for i, k in enumerate(names) if totals[1, i] > 0}
        self._term_sums.clear()
        self._term_counts.clear()
        return out

    def term_names(self) -> list[str]:
        return sorted(self._term_sums)
