"""Gaussian policy: an MLP mean and a learnable, state-independent std."""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn
from torch.distributions import Normal

from model.mlp import build_mlp


class GaussianActor(nn.Module):
    """Diagonal Gaussian policy ``N(mlp(obs), std)`` with ``std = exp(log_std)``.

    The std is bounded to ``[min_std, max_std]`` by a clamp in the forward pass,
    not by reparametrising `log_std`: inside the bounds the gradient is the plain
    one; at a bound the gradient pushing further out is zero, so exploration can
    neither collapse below `min_std` (which would make log-probs blow up) nor
    grow past `max_std` under a strong entropy bonus. `log_std` itself is left
    untouched, so a std that sits at a bound moves away as soon as the loss
    pulls it back inside.

    `forward` is `act_inference` (the deterministic mean), so the module can be
    traced / exported as is for deployment.
    """

    def __init__(self, num_obs: int, num_actions: int, hidden_dims: Sequence[int] = (512, 256, 128),
                 activation: str = "elu", init_noise_std: float = 1.0,
                 min_std: float = 0.01, max_std: float = 2.0) -> None:
        super().__init__()
        if not 0.0 < min_std <= max_std:
            raise ValueError(f"need 0 < min_std <= max_std, got min_std={min_std}, max_std={max_std}")
        if not min_std <= init_noise_std <= max_std:
            raise ValueError(f"init_noise_std={init_noise_std} is outside [min_std, max_std]=[{min_std}, {max_std}]")
        self.num_obs = num_obs
        self.num_actions = num_actions
        self.min_std = float(min_std)
        self.max_std = float(max_std)
        self.mean_net = build_mlp(num_obs, hidden_dims, num_actions, activation)
        self.log_std = nn.Parameter(torch.full((num_actions,), math.log(init_noise_std)))

    @property
    def action_std(self) -> torch.Tensor:
        """The bounded std, shape (num_actions,)."""
        return self.log_std.exp().clamp(self.min_std, self.max_std)

    def distribution(self, obs: torch.Tensor) -> Normal:
        mean = self.mean_net(obs).float()  # fp32 even under bf16 autocast (rl.precision): log-probs need it
        return Normal(mean, self.action_std.expand_as(mean))

    def act(self, obs: torch.Tensor) -> torch.Tensor:
        """Sampled actions, (N, num_actions)."""
        return self.distribution(obs).sample()

    def act_inference(self, obs: torch.Tensor) -> torch.Tensor:
        """Deterministic actions (the mean), for evaluation, deployment and export."""
        return self.mean_net(obs)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.act_inference(obs)

    def log_prob(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Log-density of `actions`, summed over action dimensions: (N,)."""
        return self.distribution(obs).log_prob(actions).sum(dim=-1)

    def entropy(self, obs: torch.Tensor) -> torch.Tensor:
        """Entropy summed over action dimensions: (N,)."""
        return self.distribution(obs).entropy().sum(dim=-1)
