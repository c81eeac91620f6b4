"""Policy and value networks, built from the config's `policy` section.

Networks keep PyTorch's default layer initialisation, as rsl_rl does.
"""

from __future__ import annotations

from typing import Any

import torch

from model.actor import GaussianActor
from model.critic import Critic
from model.mlp import ACTIVATIONS, build_mlp, get_activation

__all__ = ["ACTIVATIONS", "Critic", "GaussianActor", "build_mlp", "get_activation", "load_actor", "load_critic"]


def load_actor(policy_cfg: Any, num_obs: int, num_actions: int, device: str | torch.device) -> GaussianActor:
    """A new `GaussianActor` from ``cfg.policy`` (hidden dims, activation, std init and bounds)."""
    actor = GaussianActor(
        num_obs,
        num_actions,
        hidden_dims=list(policy_cfg.actor_hidden_dims),
        activation=policy_cfg.activation,
        init_noise_std=policy_cfg.init_noise_std,
        min_std=getattr(policy_cfg, "min_std", 0.01),
        max_std=getattr(policy_cfg, "max_std", 2.0),
    )
    return actor.to(device)


def load_critic(policy_cfg: Any, num_critic_obs: int, device: str | torch.device) -> Critic:
    """A new `Critic` from ``cfg.policy`` (hidden dims, activation)."""
    critic = Critic(num_critic_obs, hidden_dims=list(policy_cfg.critic_hidden_dims), activation=policy_cfg.activation)
    return critic.to(device)
