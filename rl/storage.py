"""Rollout storage for on-policy PPO: preallocated (num_steps, num_envs, ...) tensors."""

from __future__ import annotations

from typing import Iterator, NamedTuple

import torch


class MiniBatch(NamedTuple):
    """One flattened minibatch of transitions (B = num_envs * num_steps / num_mini_batches)."""

    obs: torch.Tensor  # (B, obs_dim)
    critic_obs: torch.Tensor  # (B, critic_obs_dim)
    actions: torch.Tensor  # (B, action_dim)
    values: torch.Tensor  # (B,) critic values at collection time
    advantages: torch.Tensor  # (B,)
    returns: torch.Tensor  # (B,)
    log_probs: torch.Tensor  # (B,) log-probs of the actions at collection time
    mu: torch.Tensor  # (B, action_dim) action mean at collection time
    sigma: torch.Tensor  # (B, action_dim) action std at collection time


class RolloutStorage:
    """Holds one rollout of `num_steps` transitions of `num_envs` envs.

    Per-step scalars (rewards, dones, values, log-probs, returns, advantages) are
    stored as (num_steps, num_envs); vectors as (num_steps, num_envs, dim).
    """

    def __init__(self, num_envs: int, num_steps: int, obs_dim: int, critic_obs_dim: int, action_dim: int,
                 device: str | torch.device = "cpu") -> None:
        self.num_envs = num_envs
        self.num_steps = num_steps
        self.device = torch.device(device)

        def zeros(*dims: int) -> torch.Tensor:
            return torch.zeros(num_steps, num_envs, *dims, device=self.device)

        self.obs = zeros(obs_dim)
        self.critic_obs = zeros(critic_obs_dim)
        self.actions = zeros(action_dim)
        self.mu = zeros(action_dim)
        self.sigma = zeros(action_dim)
        self.rewards = zeros()
        self.dones = zeros()
        self.values = zeros()
        self.log_probs = zeros()
        self.returns = zeros()
        self.advantages = zeros()
        self.step = 0

    def add(self, obs: torch.Tensor, critic_obs: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor,
            dones: torch.Tensor, values: torch.Tensor, log_probs: torch.Tensor, mu: torch.Tensor,
            sigma: torch.Tensor) -> None:
        """Store one transition for all envs; scalars may be (num_envs,) or (num_envs, 1)."""
        if self.step >= self.num_steps:
            raise RuntimeError(f"rollout storage is full ({self.num_steps} steps); call clear() first")
        t = self.step
        self.obs[t].copy_(obs)
        self.critic_obs[t].copy_(critic_obs)
        self.actions[t].copy_(actions)
        self.mu[t].copy_(mu)
        self.sigma[t].copy_(sigma)
        self.rewards[t].copy_(rewards.reshape(self.num_envs))
        self.dones[t].copy_(dones.reshape(self.num_envs))
        self.values[t].copy_(values.reshape(self.num_envs))
        self.log_probs[t].copy_(log_probs.reshape(self.num_envs))
        self.step += 1

    def clear(self) -> None:
        self.step = 0

    def compute_returns(self, last_values: torch.Tensor, gamma: float, lam: float) -> None:
        """Generalised advantage estimation over the stored rollout.

        ``delta_t = r_t + gamma * V_{t+1} * (1 - d_t) - V_t`` and
        ``A_t = delta_t + gamma * lam * (1 - d_t) * A_{t+1}``; returns are ``A_t + V_t``.
        `last_values` (num_envs,) or (num_envs, 1) are the values of the observations after the last step.
        The loop runs over time steps only; envs are batched.
        """
        last_values = last_values.reshape(self.num_envs)
        advantage = torch.zeros_like(last_values)
        for t in reversed(range(self.num_steps)):
            next_values = last_values if t == self.num_steps - 1 else self.values[t + 1]
            not_done = 1.0 - self.dones[t]
            delta = self.rewards[t] + gamma * next_values * not_done - self.values[t]
            advantage = delta + gamma * lam * not_done * advantage
            self.returns[t] = advantage + self.values[t]
        # In-place, so the buffers stay ordinary tensors when this runs under torch.inference_mode.
        self.advantages.copy_(self.returns - self.values)

    def mini_batch_generator(self, num_mini_batches: int, num_epochs: int = 1) -> Iterator[MiniBatch]:
        """Shuffled minibatches over the flattened rollout, a fresh permutation each epoch.

        When the batch does not divide evenly the last ``batch % num_mini_batches`` samples
        of each permutation are skipped (a different random subset every epoch).
        """
        batch_size = self.num_envs * self.num_steps
        mini_batch_size = batch_size // num_mini_batches
        if mini_batch_size == 0:
            raise ValueError(f"num_mini_batches={num_mini_batches} exceeds the batch of {batch_size} transitions")
        flat = MiniBatch(
            obs=self.obs.flatten(0, 1),
            critic_obs=self.critic_obs.flatten(0, 1),
            actions=self.actions.flatten(0, 1),
            values=self.values.flatten(),
            advantages=self.advantages.flatten(),
            returns=self.returns.flatten(),
            log_probs=self.log_probs.flatten(),
            mu=self.mu.flatten(0, 1),
            sigma=self.sigma.flatten(0, 1),
        )
        for _ in range(num_epochs):
            indices = torch.randperm(batch_size, device=self.device)
            for i in range(num_mini_batches):
                idx = indices[i * mini_batch_size:(i + 1) * mini_batch_size]
                yield MiniBatch(*(tensor[idx] for tensor in flat))
