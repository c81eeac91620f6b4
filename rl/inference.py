"""Deterministic deployment policy: observation normaliser followed by the actor's mean network.

`InferencePolicy` is a plain module of tensor ops, ready for `torch.jit.trace`,
`torch.jit.script` and ONNX export. Build it from a live runner
(`OnPolicyRunner.get_inference_policy`) or straight from a checkpoint
(`load_inference_policy`), e.g. in play.py.
"""

from __future__ import annotations

import copy
import os
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

from model import load_actor
from model.actor import GaussianActor
from rl.normalizer import EmpiricalNormalizer
from utils.checkpoint import read_checkpoint


class InferencePolicy(nn.Module):
    """``actions = actor_mean(normalizer(obs))``; the normaliser is `nn.Identity` when disabled."""

    def __init__(self, actor: GaussianActor, normalizer: nn.Module | None = None) -> None:
        super().__init__()
        self.normalizer = copy.deepcopy(normalizer) if normalizer is not None else nn.Identity()
        self.mean_net = copy.deepcopy(actor.mean_net)
        self.num_obs = actor.num_obs
        self.num_actions = actor.num_actions
        self.eval()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.mean_net(self.normalizer(obs))


def load_inference_policy(path: str | os.PathLike, policy_cfg: Any = None,
                          device: str | torch.device = "cpu") -> InferencePolicy:
    """The deployment policy of a runner checkpoint file (an unreadable one raises `CheckpointError`).

    `policy_cfg` is the ``cfg.policy`` section used to build the actor; when None,
    the ``policy`` section saved in the checkpoint's ``cfg`` is used.
    """
    return inference_policy_from_checkpoint(read_checkpoint(path, device), policy_cfg, device, str(path))


def inference_policy_from_checkpoint(ckpt: dict[str, Any], policy_cfg: Any = None,
                                     device: str | torch.device = "cpu", source: str = "checkpoint") -> InferencePolicy:
    """The deployment policy of an already loaded checkpoint dict (see `load_inference_policy`)."""
    if policy_cfg is None:
        saved = (ckpt.get("cfg") or {}).get("policy")
        if saved is None:
            raise ValueError(f"{source} holds no cfg['policy']; pass policy_cfg")
        policy_cfg = SimpleNamespace(**saved)
    actor = load_actor(policy_cfg, ckpt["num_obs"], ckpt["num_actions"], device)
    actor.load_state_dict(ckpt["actor"])
    normalizer: nn.Module | None = None
    if ckpt.get("obs_normalizer"):
        state = ckpt["obs_normalizer"]
        normalizer = EmpiricalNormalizer(ckpt["num_obs"], **ckpt.get("normalizer_args", {})).to(device)
        normalizer.load_state_dict(state)
    return InferencePolicy(actor, normalizer).to(device)
