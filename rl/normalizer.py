"""Empirical observation normaliser (running mean and variance).

Statistics are merged batch by batch with Chan et al.'s parallel form of
Welford's algorithm, so a rollout step of N envs is one update of a few tensor
ops. The variance is the population (biased) variance, as in rsl_rl.

`forward` is pure tensor arithmetic on buffers, so the module scripts, traces
and exports to ONNX as is; updating is a separate method called by the runner
during rollouts (and a no-op in eval mode).
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn


class EmpiricalNormalizer(nn.Module):
    """``clamp((x - mean) / (std + eps), -clip, clip)`` with running statistics.

    Args:
        shape: feature shape of one sample (e.g. ``num_obs``).
        eps: added to the std (not the variance), as in rsl_rl, so a constant
            feature (std 0) is scaled by 1/eps instead of blowing up.
        clip: bound of the normalised values; ``None`` for no clipping.
        until: stop updating once this many samples have been seen (None: never stop).
    """

    __jit_unused_properties__ = ["init_args", "std"]  # keep torch.jit.script to forward's tensor ops

    def __init__(self, shape: int | Sequence[int], eps: float = 1e-2, clip: float | None = 5.0,
                 until: int | None = None) -> None:
        super().__init__()
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.eps = float(eps)
        self.clip = float("inf") if clip is None else float(clip)
        self.until = until
        self.register_buffer("mean", torch.zeros(shape))
        self.register_buffer("var", torch.ones(shape))
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    @property
    def init_args(self) -> dict:
        """Constructor arguments besides the shape, for rebuilding from a checkpoint."""
        return {"eps": self.eps, "clip": None if self.clip == float("inf") else self.clip, "until": self.until}

    @property
    def std(self) -> torch.Tensor:
        return self.var.sqrt()

    @property
    def scale(self) -> torch.Tensor:
        """What forward() divides by: the standard deviation plus eps."""
        return self.var.sqrt() + self.eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = (x - self.mean) / self.scale
        return torch.clamp(y, -self.clip, self.clip)

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y * self.scale + self.mean

    @torch.no_grad()
    def update(self, x: torch.Tensor, mask: torch.Tensor | None = None,
               reduce: Callable[[torch.Tensor], torch.Tensor] | None = None) -> None:
        """Merge a batch (..., *shape) into the statistics; ignored in eval mode.

        `mask` (one bool per sample) keeps samples out, e.g. rows that held a NaN;
        it is applied with tensor arithmetic, so no host synchronisation is needed.
        `reduce` (an in-place sum over processes, e.g. `rl.distributed.Sync.sum_`)
        pools the batch with the other processes' batches first, so that every
        process merges the same statistics and the normalisers stay identical.
        """
        if not self.training:
            return
        if self.until is not None and int(self.count) >= self.until:
            return
        x = x.reshape(-1, *self.mean.shape).to(self.mean.dtype)
        if x.shape[0] == 0:
            return
        if mask is None:
            n = torch.tensor(x.shape[0], device=x.device)
            batch_mean = x.mean(dim=0)
            batch_var = x.var(dim=0, unbiased=False)
        else:
            weight = mask.reshape(-1, *([1] * (x.dim() - 1))).to(x.dtype)
            x = torch.where(weight > 0, x, torch.zeros((), dtype=x.dtype, device=x.device))  # NaN * 0 is NaN
            n = mask.sum()
            safe_n = n.clamp(min=1).to(x.dtype)
            batch_mean = (x * weight).sum(dim=0) / safe_n
            batch_var = ((x - batch_mean).square() * weight).sum(dim=0) / safe_n
        if reduce is not None:
            n, batch_mean, batch_var = _pooled(n, batch_mean, batch_var, reduce)
        total = self.count + n
        w = n.to(self.mean.dtype) / total.clamp(min=1).to(self.mean.dtype)  # weight of the new batch (0 if none)
        delta = batch_mean - self.mean
        # Chan et al.: M2 = M2_a + M2_b + delta^2 * n_a * n_b / n, divided by n.
        new_var = self.var * (1.0 - w) + batch_var * w + delta.square() * w * (1.0 - w)
        # In-place updates keep the buffers ordinary tensors under torch.inference_mode.
        self.mean.add_(delta * w)
        self.var.copy_(new_var)
        self.count.copy_(total)


def normalizer_state(normalizer: nn.Module) -> dict[str, torch.Tensor] | None:
    """What a checkpoint keeps of an observation normaliser: its statistics, or None for no normalisation."""
    return normalizer.state_dict() if isinstance(normalizer, EmpiricalNormalizer) else None


def _pooled(n: torch.Tensor, mean: torch.Tensor, var: torch.Tensor, reduce: Callable[[torch.Tensor], torch.Tensor]
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Count, mean and population variance of the union of every process's batch (two sums)."""
    nf = n.to(mean.dtype).reshape(1)
    first = reduce(torch.cat([nf, nf * mean.reshape(-1)]))
    total = first[0]
    pooled_mean = (first[1:] / total.clamp(min=1)).reshape(mean.shape)
    # sum over processes of n_r (var_r + (mean_r - mean)^2): exact, no E[x^2] - mean^2 cancellation
    second = reduce((nf * (var + (mean - pooled_mean).square())).reshape(-1).clone())
    pooled_var = (second / total.clamp(min=1)).reshape(var.shape)
    return total.round().to(torch.long), pooled_mean, pooled_var
