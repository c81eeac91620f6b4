"""Left-right mirror augmentation and mirror loss for PPO (``algorithm.symmetry``), as rsl_rl's symmetry extension.

A legged robot's task is symmetric: the mirror image of a state, acted on with the mirror image of an
action, is as good a sample as the original. The env says what the mirror does to its observations and
actions (``env.mirror_maps()``, env/tasks/observation_mirror.py); this module uses it two ways:

- data augmentation (``use_data_augmentation``): each minibatch gets its mirror images appended. The
  mirrored sample keeps its original's value target: values, advantages and returns are repeated. Its
  old log-probability is repeated too, as rsl_rl does. That is an approximation: the mirror is a signed
  permutation (volume-preserving), so the repeated value is the behaviour probability of the mirrored
  action only where the rollout policy was itself mirror-equivariant (equal std on twin joints
  included), which the mirror loss pushes it towards; elsewhere the mirrored half's ratio starts away
  from 1 and its clipping bounds the step. The KL of the adaptive learning rate, the approximate KL and
  the clip fraction are measured on the original half only, the rollout's own samples;
- mirror loss (``use_mirror_loss``): ``mirror_loss_coef * MSE(actor(mirror(obs)), mirror(actor(obs)))``
  on the action means, the second term detached as the target (rsl_rl's ``mirror_loss_coeff``). It is
  logged as ``mirror`` whenever symmetry is on, also when it is not trained on.

PPO sees normalised observations. Mirroring commutes with normalisation only if the normaliser's statistics
are mirror symmetric, so the runner makes them so after each update (`symmetrize_normalizer`): the
statistics of the data and its mirror image, which is what an augmented run sees. A run that starts from
a checkpoint trained without symmetry (a warm start) has lopsided statistics: symmetrising them once would
change what the loaded networks compute (a frozen Qmini actor's yaw error went from 0.49 to 0.83 rad/s in
its first rollout), so at the start the runner passes the networks (`keep`) and their first layers absorb
the change. Nothing here depends on the number of processes: every minibatch is augmented where it is,
under torchrun too.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from rl.normalizer import EmpiricalNormalizer
from rl.storage import MiniBatch


class Symmetry:
    """Mirror augmentation of PPO minibatches and the mirror loss, from an env's `MirrorMaps`."""

    def __init__(self, maps: Any, cfg: Any, device: str | torch.device = "cpu") -> None:
        self.maps = maps.to(device)
        self.augment_data = bool(cfg.use_data_augmentation)
        self.train_mirror_loss = bool(cfg.use_mirror_loss)
        self.mirror_loss_coef = float(cfg.mirror_loss_coef) if self.train_mirror_loss else 0.0

    def augment(self, batch: MiniBatch) -> MiniBatch:
        """The batch with its mirror images appended (B -> 2B samples); mu and sigma stay the originals' (B)."""
        if not self.augment_data:
            return batch
        m = self.maps
        return batch._replace(
            obs=torch.cat([batch.obs, m.obs.apply(batch.obs)]),
            critic_obs=torch.cat([batch.critic_obs, m.critic_obs.apply(batch.critic_obs)]),
            actions=torch.cat([batch.actions, m.actions.apply(batch.actions)]),
            **{name: getattr(batch, name).repeat(2) for name in ("values", "advantages", "returns", "log_probs")})

    def mirror_loss(self, actor: nn.Module, batch: MiniBatch, mean: torch.Tensor) -> torch.Tensor:
        """MSE between the actor's mean at the mirrored observations and the mirrored mean at the originals.

        `mean` is the actor's mean over `batch` (from `augment`: its second half is already the mirrored
        observations' mean, so no second forward pass is needed).
        """
        n = len(batch.mu)
        with torch.enable_grad() if self.train_mirror_loss else torch.no_grad():  # logged only: no graph
            original = mean[:n]
            mirrored = mean[n:] if len(mean) > n else actor.act_inference(self.maps.obs.apply(batch.obs))
            return (mirrored.float() - self.maps.actions.apply(original.float()).detach()).square().mean()

    @torch.no_grad()
    def symmetrize_normalizer(self, normalizer: nn.Module, critic: bool = False, keep: nn.Module | None = None
                              ) -> None:
        """Make a normaliser's statistics those of its data and their mirror image, in place (idempotent).

        Mixing x with mirror(x) = sign * x[index]: mean (m + sign * m[index]) / 2, variance the mean of the two
        variances plus the spread of the two means. With `keep`, the network that reads the normalised
        values: its first linear layer is rescaled so that it computes what it did for every input the
        normaliser's clip leaves alone.
        """
        if not isinstance(normalizer, EmpiricalNormalizer) or not normalizer.training:
            return
        mirror = self.maps.critic_obs if critic else self.maps.obs
        mean, var = normalizer.mean, normalizer.var
        old_mean, old_scale = mean.clone(), normalizer.scale
        mirrored_mean = mirror.apply(mean)
        new_var = 0.5 * (var + var.index_select(-1, mirror.index.to(var.device))) \
            + 0.25 * (mean - mirrored_mean).square()
        mean.copy_(0.5 * (mean + mirrored_mean))
        var.copy_(new_var)
        if keep is not None:
            _absorb_normalizer_change(keep, old_mean, old_scale, mean, normalizer.scale)


def _absorb_normalizer_change(network: nn.Module, old_mean: torch.Tensor, old_scale: torch.Tensor,
                              new_mean: torch.Tensor, new_scale: torch.Tensor) -> None:
    """Rescale `network`'s first linear layer so that W (x - old_mean) / old_scale + b stays what it was when its
    input becomes (x - new_mean) / new_scale: W' = W * new_scale / old_scale, b' = b + W (new_mean - old_mean) /
    old_scale."""
    first = next((m for m in network.modules() if isinstance(m, nn.Linear)), None)
    if first is None or first.in_features != old_mean.numel():
        raise ValueError(f"{type(network).__name__} has no first linear layer reading all {old_mean.numel()} "
                         "normalised inputs to absorb the normaliser's change")
    weight = first.weight
    shift = ((new_mean - old_mean) / old_scale).to(weight.dtype)
    if first.bias is not None:
        first.bias.add_(weight @ shift)
    elif bool(shift.any()):
        raise ValueError(f"{type(network).__name__}'s first layer has no bias to absorb the normaliser's change")
    weight.mul_((new_scale / old_scale).to(weight.dtype))


def make_symmetry(cfg_algorithm: Any, env: Any, device: str | torch.device = "cpu") -> Symmetry | None:
    """The `Symmetry` that ``algorithm.symmetry`` asks for, None when it is off (or absent from an older config).

    An env that cannot be mirrored (a term or joint without a mirror rule) raises ValueError, one line.
    """
    cfg = getattr(cfg_algorithm, "symmetry", None)
    if cfg is None or not (cfg.use_data_augmentation or cfg.use_mirror_loss):
        return None
    if not hasattr(env, "mirror_maps"):
        raise ValueError("algorithm.symmetry is on but the env has no mirror_maps() (its task cannot be mirrored); "
                         "set algorithm.symmetry.use_data_augmentation=false and use_mirror_loss=false")
    return Symmetry(env.mirror_maps(), cfg, device)
