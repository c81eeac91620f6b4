"""Checkpoints of the on-policy runner: write policy.pt every iteration without ever losing the last good one,
and restore a run from a checkpoint (networks, normalisers, optimiser, counters, RNG and env state).

`RunnerCheckpoints` is a mixin of `rl.runner.OnPolicyRunner`; it reads the runner's ``alg``, ``env``,
normalisers, counters, ``model_dir``, ``save_interval``, ``keep_all``, ``cfg_dict``, ``log`` and ``_stop``, all set
in the runner's ``__init__``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from config.identity import cfg_hash, changed_fields
from rl.normalizer import normalizer_state
from rl.seed import get_rng_state, set_rng_state
from rl.train_log import TB_TAGS
from utils.checkpoint import check_sizes, read_checkpoint
from utils.files import atomic_torch_save


class RunnerCheckpoints:
    """save / load of `OnPolicyRunner`; a failed write is a warning, never a lost run."""

    def _save_iteration(self, it: int) -> None:
        """policy.pt after every iteration (an interrupted run loses at most one), all/ every save_interval."""
        with self._stop.protect():  # a second Ctrl-C waits for policy.pt and its snapshot to be written
            ok = self._save_or_warn()
            if self.keep_all and self.save_interval > 0 and it % self.save_interval == 0:
                ok = self._save_or_warn(self.model_dir / "all" / f"policy_{it}.pt") and ok
        self.log.scalar(TB_TAGS["save_failed"], float(not ok), it)
        self.log.scalar(TB_TAGS["failed_saves_total"], float(self.failed_saves_total), it)

    def _save_or_warn(self, path: Path | None = None) -> bool:
        """`save`, turning a failed write (disk full, permissions) into a warning; True if written."""
        latest = path is None
        try:
            self.save(path)
        except OSError as err:
            self.failed_saves_total += 1
            self.last_save_failed = self.last_save_failed or latest
            target = path if path is not None else self.model_dir / "policy.pt"
            kept = (f"policy.pt still holds iteration {self._last_saved_iteration}" if self._last_saved_iteration
                    else "no earlier checkpoint exists") if latest else "policy.pt is unaffected"
            self.log.warn(f"warning: {self.run_name}#{self.current_iteration}: could not write {target} "
                          f"({err.strerror or err}); {kept}; training continues")
            return False
        if latest:
            self.last_save_failed = False
        return True

    def save(self, path: str | os.PathLike | None = None) -> Path:
        """Write a checkpoint atomically (default ``<model_dir>/policy.pt``)."""
        if path is None:
            if self.model_dir is None:
                raise ValueError("save() needs a path when the runner has no model_dir")
            path = self.model_dir / "policy.pt"
        ckpt = {
            **self.alg.state_dict(),  # actor, critic, optimizer, learning_rate
            "obs_normalizer": normalizer_state(self.obs_normalizer),
            "critic_obs_normalizer": normalizer_state(self.critic_obs_normalizer),
            "normalizer_args": self.obs_normalizer.init_args if self.normalize_observations else {},
            "iteration": self.current_iteration,
            "total_env_steps": self.total_env_steps,
            "diverged_total": self.diverged_total,
            "num_obs": self.num_obs,
            "num_critic_obs": self.num_critic_obs,
            "num_actions": self.num_actions,
            "rng_state": get_rng_state(),
            "env_state": self.env.state_dict() if hasattr(self.env, "state_dict") else {},  # e.g. terrain levels
            "cfg": self.cfg_dict,
            "cfg_hash": cfg_hash(self.cfg_dict),
        }
        path = atomic_torch_save(ckpt, path)
        if self.model_dir is not None and Path(path).resolve() == (self.model_dir / "policy.pt").resolve():
            self._last_saved_iteration = self.current_iteration
        return path

    def load(self, path: str | os.PathLike, load_optimizer: bool = True) -> dict[str, Any]:
        """Restore from a checkpoint file (see `load_state`); an unreadable file raises `CheckpointError`."""
        return self.load_state(read_checkpoint(path, self.device), path, load_optimizer)

    def load_state(self, ckpt: dict[str, Any], source: str | os.PathLike = "checkpoint",
                   load_optimizer: bool = True) -> dict[str, Any]:
        """Restore networks, normalisers, (optimizer), counters and RNG states from a loaded checkpoint."""
        check_sizes(ckpt, num_obs=self.num_obs, num_actions=self.num_actions, num_critic_obs=self.num_critic_obs)
        self.alg.load_state_dict(ckpt, load_optimizer=load_optimizer)
        saved_lr = ckpt.get("learning_rate")
        if load_optimizer and saved_lr is not None and self.alg.learning_rate != float(saved_lr):
            self.log.print(f"note: learning rate {self.alg.learning_rate:.3g} as the config sets it "
                           f"({self.alg.schedule} schedule), not the checkpoint's {float(saved_lr):.3g}")
        if self.normalize_observations:
            if not ckpt.get("obs_normalizer"):
                raise ValueError(f"{source} has no observation normaliser but policy.normalize_observations is on")
            self.obs_normalizer.load_state_dict(ckpt["obs_normalizer"])
            self.critic_obs_normalizer.load_state_dict(ckpt["critic_obs_normalizer"])
        elif ckpt.get("obs_normalizer"):
            raise ValueError(f"{source} was trained with observation normalisation but "
                             "policy.normalize_observations is off")
        self.current_iteration = int(ckpt["iteration"])
        self._last_learned_iteration = self.current_iteration
        self.total_env_steps = int(ckpt["total_env_steps"])
        self.diverged_total = int(ckpt.get("diverged_total", 0))
        if "rng_state" in ckpt:
            set_rng_state(ckpt["rng_state"])
        if hasattr(self.env, "load_state_dict"):
            self.env.load_state_dict(ckpt.get("env_state", {}))
        if isinstance(ckpt.get("cfg"), dict) and self.cfg_dict is not None:
            changes = changed_fields(ckpt["cfg"], self.cfg_dict, include_absent=False)
            if changes:
                more = f" and {len(changes) - 4} more" if len(changes) > 4 else ""
                self.log.print(f"note: resuming {source} with a changed config: {'; '.join(changes[:4])}{more}")
        self._last_saved_iteration = self.current_iteration
        return ckpt


