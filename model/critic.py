"""State-value network."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from model.mlp import build_mlp


class Critic(nn.Module):
    """MLP from (privileged) critic observations to a value, shape (N, 1)."""

    def __init__(self, num_critic_obs: int, hidden_dims: Sequence[int] = (512, 256, 128),
                 activation: str = "elu") -> None:
        super().__init__()
        self.num_critic_obs = num_critic_obs
        self.value_net = build_mlp(num_critic_obs, hidden_dims, 1, activation)

    def forward(self, critic_obs: torch.Tensor) -> torch.Tensor:
        return self.value_net(critic_obs)
