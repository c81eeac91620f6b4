"""Signed permutations: the left-right mirror image of a vector of observations or joint values.

Mirroring a robot's state swaps twin entries (left foot <-> right foot) and flips the sign of
the ones a mirror turns round (a lateral velocity, a roll rate):
``mirrored[..., i] = sign[i] * x[..., index[i]]``. A mirror is its own inverse, so a
`SignedPermutation` that is not (a twin that is not its twin's twin, signs that disagree)
is refused when it is built, naming the entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch


class SignedPermutation:
    """``x -> sign * x[..., index]`` over the last dimension; an involution, checked on construction."""

    def __init__(self, index: Sequence[int], sign: Sequence[float], names: Sequence[str] | None = None) -> None:
        index, sign = [int(i) for i in index], [float(s) for s in sign]
        n = len(index)
        if len(sign) != n or sorted(index) != list(range(n)):
            raise ValueError(f"a mirror needs a permutation of 0..{n - 1} and one sign per entry")
        for i, (j, s) in enumerate(zip(index, sign)):
            if s not in (-1.0, 1.0) or index[j] != i or sign[j] != s:
                what = names[i] if names is not None else f"entry {i}"
                twin = names[j] if names is not None else f"entry {j}"
                raise ValueError(f"{what} mirrors to {'-' if s < 0 else ''}{twin} but {twin} does not mirror back to "
                                 f"{'-' if s < 0 else ''}{what}: a mirror image of a mirror image must be the original")
        self.index = torch.tensor(index, dtype=torch.long)
        self.sign = torch.tensor(sign, dtype=torch.float32)

    def __len__(self) -> int:
        return len(self.index)

    @classmethod
    def identity(cls, n: int) -> SignedPermutation:
        return cls(range(n), [1.0] * n)

    @classmethod
    def signs(cls, signs: Sequence[float]) -> SignedPermutation:
        """Each entry its own twin, some negated (a velocity's y component, say)."""
        return cls(range(len(signs)), signs)

    @classmethod
    def concat(cls, parts: Sequence[SignedPermutation]) -> SignedPermutation:
        """Block by block: a vector made of the parts' vectors side by side."""
        index, sign, offset = [], [], 0
        for part in parts:
            index += (part.index + offset).tolist()
            sign += part.sign.tolist()
            offset += len(part)
        return cls(index, sign)

    def repeat(self, times: int) -> SignedPermutation:
        """The mirror of `times` frames side by side (an observation history), each mirrored alike."""
        return SignedPermutation.concat([self] * times)

    def to(self, device: torch.device | str) -> SignedPermutation:
        self.index, self.sign = self.index.to(device), self.sign.to(device)
        return self

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        """The mirror image of x (..., len(self))."""
        return x.index_select(-1, self.index.to(x.device)) * self.sign.to(x.device, x.dtype)


@dataclass
class MirrorMaps:
    """What a task's left-right mirror does to its policy observation, critic observation and actions."""

    obs: SignedPermutation
    critic_obs: SignedPermutation
    actions: SignedPermutation

    def to(self, device: torch.device | str) -> MirrorMaps:
        for part in (self.obs, self.critic_obs, self.actions):
            part.to(device)
        return self
