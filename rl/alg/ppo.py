"""Proximal Policy Optimization (clipped surrogate), as in rsl_rl's standard PPO.

Per iteration: the runner calls `act` and `process_env_step` once per env step,
then `compute_returns` and `update`. One Adam optimiser covers actor and critic.

Quantities that match rsl_rl's PPO (non-recurrent):

- GAE(gamma, lambda) over the rollout; advantages normalised once over the whole rollout.
- Timeouts are bootstrapped: ``r += gamma * V(s_t)`` on steps where the episode hit
  the time limit. The env has already reset, so the true next state is gone; the value
  of the current state stands in for it. Without this, a timeout looks like a
  terminal state and the critic learns that the end of time is a cliff.
- Clipped surrogate, value loss clipped around the old values (``use_clipped_value_loss``),
  entropy bonus, ``loss = surr + value_loss_coef * value_loss - entropy_coef * entropy``.
- Gradient norms clipped to ``max_grad_norm``, the actor's and the critic's separately
  (as rsl_rl 5.x; 1.x/2.x clipped them jointly, so a large value-loss gradient also
  shrank the policy's step).
- Adaptive learning rate: before each minibatch step the exact KL between the
  rollout's Gaussians and the current ones is averaged over the minibatch; the first
  minibatch of an update, whose policy is the rollout's, leaves the rate alone (in fp32
  its KL is exactly 0; under bf16 it is rounding noise, which must not raise the rate);
  ``lr /= 1.5`` if KL > 2 * desired_kl, ``lr *= 1.5`` if 0 < KL < desired_kl / 2.
- Optional left-right symmetry (``algorithm.symmetry``, rl/symmetry.py): mirrored samples added to
  each minibatch and/or a mirror loss on the action mean, as rsl_rl's symmetry extension.

Differences from rsl_rl (none changes the learning rule in the usual settings):

- The adaptive learning rate is clamped to ``[min_lr, max_lr]`` from the config
  (rsl_rl hard-codes 1e-5 and 1e-2, the base.py defaults).
- A fresh minibatch permutation is drawn each epoch (rsl_rl draws one for all epochs).
- Extra metrics are returned: approximate KL (CleanRL estimator), clip fraction.
- Observation normalisation lives in the runner (`rl.runner`), so this class only sees
  already normalised observations, as in rsl_rl 2.x.
- A non-finite loss or gradient norm in any minibatch undoes the whole update
  (networks, optimizer state and learning rate go back to where the update started)
  and `update` reports it under ``"skipped"``: a NaN never reaches the weights.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

import torch
from torch import nn

from model.actor import GaussianActor
from rl.distributed import Sync
from rl.precision import Precision
from rl.storage import RolloutStorage
from rl.symmetry import Symmetry


class PPO:
    """PPO over a `GaussianActor` and a critic (any module mapping critic obs to (N, 1) values)."""

    def __init__(self, actor: GaussianActor, critic: nn.Module, cfg_algorithm: Any,
                 device: str | torch.device = "cpu", sync: Sync | None = None,
                 precision: Precision | None = None, symmetry: Symmetry | None = None) -> None:
        cfg = cfg_algorithm
        self.device = torch.device(device)
        self.sync = sync or Sync()  # data-parallel ranks: gradients and KL averaged over them
        self.precision = precision or Precision("fp32", self.device)  # bf16 autocast of the update's forwards
        self.symmetry = symmetry  # left-right mirror augmentation / mirror loss (rl/symmetry.py); None: off
        self.actor = actor.to(self.device)
        self.critic = critic.to(self.device)

        self.clip_param: float = cfg.clip_param
        self.num_learning_epochs: int = cfg.num_learning_epochs
        self.num_mini_batches: int = cfg.num_mini_batches
        self.value_loss_coef: float = cfg.value_loss_coef
        self.entropy_coef: float = cfg.entropy_coef
        self.gamma: float = cfg.gamma
        self.lam: float = cfg.lam
        self.max_grad_norm: float = cfg.max_grad_norm
        self.use_clipped_value_loss: bool = cfg.use_clipped_value_loss
        self.schedule: str = cfg.schedule
        if self.schedule not in ("adaptive", "fixed"):
            raise ValueError(f"algorithm.schedule must be 'adaptive' or 'fixed', got '{self.schedule}'")
        self.desired_kl: float | None = cfg.desired_kl
        self.min_lr: float = getattr(cfg, "min_lr", 1e-5)
        self.max_lr: float = getattr(cfg, "max_lr", 1e-2)
        self.learning_rate: float = cfg.learning_rate

        self.params = list(self.actor.parameters()) + list(self.critic.parameters())
        self.optimizer = torch.optim.Adam(self.params, lr=self.learning_rate)
        self.storage: RolloutStorage | None = None
        self._transition: dict[str, torch.Tensor] = {}
        # Critic warm-up (algorithm.critic_warmup_iterations, set by the runner): updates train the critic
        # only and the learning rate does not adapt (the actor's KL would be 0 and push it to max_lr).
        self.actor_frozen = False

    def init_storage(self, num_envs: int, num_steps: int, obs_dim: int, critic_obs_dim: int, action_dim: int) -> None:
        self.storage = RolloutStorage(num_envs, num_steps, obs_dim, critic_obs_dim, action_dim, self.device)

    def train_mode(self) -> None:
        self.actor.train()
        self.critic.train()

    def eval_mode(self) -> None:
        self.actor.eval()
        self.critic.eval()

    # ---- rollout -----------------------------------------------------------------------------

    def act(self, obs: torch.Tensor, critic_obs: torch.Tensor) -> torch.Tensor:
        """Sample actions and remember what the storage needs for this step.

        The networks run under the update's precision, so that the rollout's action statistics and the
        update's recomputed ones share their numerics (bf16 rounding would otherwise move PPO's ratio).
        """
        with self.precision.autocast():
            dist = self.actor.distribution(obs)
            values = self.critic(critic_obs).float().reshape(-1)
        actions = dist.sample()
        self._transition = {
            "obs": obs,
            "critic_obs": critic_obs,
            "actions": actions,
            "values": values,
            "log_probs": dist.log_prob(actions).sum(dim=-1),
            "mu": dist.mean,
            "sigma": dist.stddev,
        }
        return actions

    def process_env_step(self, rewards: torch.Tensor, dones: torch.Tensor,
                         time_outs: torch.Tensor | None = None) -> None:
        """Store the transition started by `act`, bootstrapping time-limit endings."""
        assert self.storage is not None, "call init_storage first"
        tr = self._transition
        rewards = rewards.to(self.device, torch.float32).reshape(-1).clone()
        if time_outs is not None:
            rewards += self.gamma * tr["values"] * time_outs.to(self.device, torch.float32).reshape(-1)
        self.storage.add(tr["obs"], tr["critic_obs"], tr["actions"], rewards,
                         dones.to(self.device, torch.float32), tr["values"], tr["log_probs"], tr["mu"], tr["sigma"])
        self._transition = {}

    def compute_returns(self, last_critic_obs: torch.Tensor) -> None:
        """GAE returns of the stored rollout, then advantages normalised over the whole rollout."""
        assert self.storage is not None, "call init_storage first"
        last_values = self.critic(last_critic_obs).reshape(-1)
        self.storage.compute_returns(last_values, self.gamma, self.lam)
        adv = self.storage.advantages
        adv.copy_((adv - adv.mean()) / (adv.std() + 1e-8))

    # ---- learning ----------------------------------------------------------------------------

    def update(self) -> dict[str, Any]:
        """Epochs x minibatches of PPO steps on the stored rollout; returns mean metrics and clears it.

        If a loss or gradient turns non-finite, everything the update changed is
        restored and the metrics are ``{"skipped": reason, "learning_rate": lr}``.
        """
        assert self.storage is not None, "call init_storage first"
        start = self._snapshot()
        sums: dict[str, torch.Tensor] = defaultdict(lambda: torch.zeros((), device=self.device))
        num_updates = 0
        per_epoch = self.num_mini_batches
        for batch in self.storage.mini_batch_generator(self.num_mini_batches, self.num_learning_epochs):
            if self.symmetry is not None:
                batch = self.symmetry.augment(batch)  # mirror images appended, when augmenting
            n = len(batch.mu)  # the rollout's own samples: the KL is measured on them
            with self.precision.autocast():  # network passes only; their outputs come back as fp32
                dist = self.actor.distribution(batch.obs)
                values = self.critic(batch.critic_obs).float().reshape(-1)
                mirror_loss = self.symmetry.mirror_loss(self.actor, batch, dist.mean) if self.symmetry else None
            log_probs = dist.log_prob(batch.actions).sum(dim=-1)
            entropy = dist.entropy().sum(dim=-1).mean()

            with torch.no_grad():
                kl = _gaussian_kl(batch.mu, batch.sigma, dist.mean[:n], dist.stddev[:n]).mean()
            if self.schedule == "adaptive" and self.desired_kl is not None and num_updates > 0 and not self.actor_frozen:
                self._adapt_learning_rate(kl)  # not before the first step: the policy is the rollout's

            log_ratio = log_probs - batch.log_probs
            ratio = log_ratio.exp()
            surr = -batch.advantages * ratio
            surr_clipped = -batch.advantages * ratio.clamp(1.0 - self.clip_param, 1.0 + self.clip_param)
            surrogate_loss = torch.max(surr, surr_clipped).mean()

            if self.use_clipped_value_loss:
                values_clipped = batch.values + (values - batch.values).clamp(-self.clip_param, self.clip_param)
                value_loss = torch.max((values - batch.returns).square(),
                                       (values_clipped - batch.returns).square()).mean()
            else:
                value_loss = (values - batch.returns).square().mean()

            loss = surrogate_loss + self.value_loss_coef * value_loss - self.entropy_coef * entropy
            if mirror_loss is not None and self.symmetry.train_mirror_loss:  # logged always, trained on if asked
                loss = loss + self.symmetry.mirror_loss_coef * mirror_loss
            if self.actor_frozen:
                loss = self.value_loss_coef * value_loss
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.sync.average_gradients(self.params)  # every rank takes the same step
            actor_norm, critic_norm = self._clip_gradients()
            if not bool(torch.isfinite(loss) & torch.isfinite(actor_norm) & torch.isfinite(critic_norm)):
                what = "loss" if not bool(torch.isfinite(loss)) else "gradient"
                self._restore(start)
                self.storage.clear()
                return {"skipped": f"non-finite {what} in minibatch {num_updates % per_epoch + 1} of epoch "
                                   f"{num_updates // per_epoch + 1}; the update was undone",
                        "learning_rate": self.learning_rate}
            self.optimizer.step()

            with torch.no_grad():
                sums["surrogate"] += surrogate_loss.detach()
                sums["value"] += value_loss.detach()
                sums["entropy"] += entropy.detach()
                sums["kl"] += kl
                sums["approx_kl"] += ((ratio[:n] - 1.0) - log_ratio[:n]).mean()  # the rollout's own samples
                sums["clip_fraction"] += ((ratio[:n] - 1.0).abs() > self.clip_param).float().mean()
                if mirror_loss is not None:
                    sums["mirror"] += mirror_loss.detach()
            num_updates += 1

        self.storage.clear()
        metrics = {k: float(v) / max(num_updates, 1) for k, v in sums.items()}  # one sync per metric
        metrics["learning_rate"] = self.learning_rate
        return metrics

    def _clip_gradients(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Clip the actor's and the critic's gradient norms each to max_grad_norm; return the norms before.

        Separately, so that the critic's gradient, which is often the larger, cannot
        shrink the policy's step.
        """
        return (nn.utils.clip_grad_norm_(self.actor.parameters(), self.max_grad_norm),
                nn.utils.clip_grad_norm_(self.critic.parameters(), self.max_grad_norm))

    def _snapshot(self) -> dict[str, Any]:
        """What an update changes: parameters, optimizer state, learning rate."""
        return {"params": [p.detach().clone() for p in self.params],
                "optimizer": copy.deepcopy(self.optimizer.state_dict()),
                "learning_rate": self.learning_rate}

    def _restore(self, snapshot: dict[str, Any]) -> None:
        with torch.no_grad():
            for p, saved in zip(self.params, snapshot["params"]):
                p.copy_(saved)
        self.optimizer.load_state_dict(snapshot["optimizer"])
        self.learning_rate = snapshot["learning_rate"]
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate
        self.optimizer.zero_grad(set_to_none=True)

    def _adapt_learning_rate(self, kl: torch.Tensor) -> None:
        kl_mean = float(self.sync.mean_(kl.detach().clone()))  # over ranks; rsl_rl syncs here too
        if kl_mean > 2.0 * self.desired_kl:
            self.learning_rate = max(self.min_lr, self.learning_rate / 1.5)
        elif 0.0 < kl_mean < self.desired_kl / 2.0:
            self.learning_rate = min(self.max_lr, self.learning_rate * 1.5)
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate

    # ---- checkpoint helpers ------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return {
            "actor": self.actor.state_dict(),
            "critic": self.critic.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "learning_rate": self.learning_rate,
        }

    def load_state_dict(self, state: dict[str, Any], load_optimizer: bool = True) -> None:
        self.actor.load_state_dict(state["actor"])
        self.critic.load_state_dict(state["critic"])
        if load_optimizer:
            self.optimizer.load_state_dict(state["optimizer"])
            self.learning_rate = self._resumed_learning_rate(state)
            for group in self.optimizer.param_groups:
                group["lr"] = self.learning_rate

    def _resumed_learning_rate(self, state: dict[str, Any]) -> float:
        """The step size a resumed run goes on with (`self.learning_rate` is the config's here).

        The adaptive schedule's last value is part of its state and carries on. A fixed schedule's step size
        is the config's, and so is a start value the config changed since the checkpoint's run (``--set
        algorithm.learning_rate`` on resume): otherwise cfg.yaml would name one step size and the run take another.
        """
        trained = (state.get("cfg") or {}).get("algorithm", {}).get("learning_rate")
        if self.schedule == "fixed" or (trained is not None and float(trained) != self.learning_rate):
            return self.learning_rate
        return float(state.get("learning_rate", self.optimizer.param_groups[0]["lr"]))


def _gaussian_kl(mu0: torch.Tensor, sigma0: torch.Tensor, mu1: torch.Tensor, sigma1: torch.Tensor) -> torch.Tensor:
    """Exact KL(N(mu0, sigma0) || N(mu1, sigma1)) summed over action dims, as rsl_rl 5.x.

    rsl_rl 1.x/2.x wrote ``log(sigma1 / sigma0 + 1e-5)``: that makes the KL of a policy
    with itself 1e-5 per action dim instead of 0, so the first minibatch of every update
    saw 0 < KL < desired_kl / 2 and raised the learning rate by 1.5 unconditionally.
    """
    return torch.sum(
        torch.log(sigma1 / sigma0) + (sigma0.square() + (mu0 - mu1).square()) / (2.0 * sigma1.square()) - 0.5,
        dim=-1,
    )
