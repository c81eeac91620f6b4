"""Non-finite values in a rollout: detected, replaced and counted, so they never reach the weights.

A NaN or inf from the env (observations, rewards) or from the policy (actions) is
replaced by 0 before it is used or stored, the rows it came from are kept out of
the observation normalisers, and the runner skips the PPO update of any rollout
that held one. Counting stays on the device; `summary` is one host transfer per
iteration.
"""

from __future__ import annotations

import torch

KINDS = ("observations", "critic_observations", "actions", "rewards", "task_rewards")


class RolloutFaults:
    """Per-kind counts of env steps (rows) that held a non-finite value during one rollout."""

    def __init__(self, device: str | torch.device) -> None:
        self.device = torch.device(device)
        self.counts = torch.zeros(len(KINDS), dtype=torch.long, device=self.device)

    def clean(self, kind: str, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(values with non-finite entries zeroed, bool mask of the rows that were finite).

        The mask is None when every row is finite. On the CPU a clean tensor costs one
        reduction (a NaN or inf anywhere makes the sum non-finite; a finite sum proves
        them all finite) and no copy; on an accelerator, where branching on that sum
        would stall the device every step, the full check runs without a host sync.
        """
        if values.device.type == "cpu" and bool(torch.isfinite(values.sum())):
            return values, None
        return self.clean_rows(kind, values)

    def clean_rows(self, kind: str, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """`clean` without the shortcut: always a mask, no host synchronisation."""
        finite = torch.isfinite(values)
        rows_ok = finite.reshape(values.shape[0], -1).all(dim=1)
        self.counts[KINDS.index(kind)] += (~rows_ok).sum()
        return torch.where(finite, values, torch.zeros((), dtype=values.dtype, device=values.device)), rows_ok

    def summary(self) -> dict[str, int]:
        """Counts by kind (one host transfer); empty when the rollout was clean."""
        counts = self.counts.tolist()
        return {kind: n for kind, n in zip(KINDS, counts) if n}


def describe(summary: dict[str, int]) -> str:
    """``non-finite values in observations (3 env steps), rewards (1 env step)``."""
    parts = [f"{kind.replace('_', ' ')} ({n} env step{'s' if n != 1 else ''})" for kind, n in summary.items()]
    return "non-finite values in " + ", ".join(parts)
