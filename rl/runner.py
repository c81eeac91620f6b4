"""On-policy training loop: collect a rollout, update PPO, log, checkpoint.

    runner = OnPolicyRunner(env, cfg, log_dir="experiments/run1/log", device="cpu",
                            model_dir="experiments/run1/model", cfg_dict=cfg.to_dict())
    runner.load("experiments/run1/model/policy.pt")     # optional: resume
    runner.learn(cfg.runner.max_iterations)

Iterations are counted globally (`current_iteration`, `total_env_steps`), so a
resumed run continues its numbering in logs and checkpoints. Ctrl-C or SIGTERM
during `learn` finishes the iteration, saves and returns; a second Ctrl-C raises
KeyboardInterrupt at once, or after the checkpoint write in progress (`rl.stop_signal`).

Faults never cost the run: a checkpoint write that fails (disk full, permissions)
is reported on stderr and in TensorBoard, the previous file stays intact and
training goes on (`last_save_failed` tells the caller at the end). A rollout or
update with a NaN/inf is not learned from (`rl.faults`, `PPO.update`); after
``runner.max_skipped_updates`` such iterations in a row, `learn` raises
`TrainingHalted`.

The env interface (see env/gym_env_wrapper.py): attributes ``num_envs, num_obs,
num_critic_obs, num_actions, device, max_episode_length``; ``reset() -> (obs,
critic_obs)``; ``step(actions) -> (obs, critic_obs, rew, done, info, task_rew)``
with ``info["time_outs"]``, ``info["episode"]`` and ``info["diverged"]``; when
``cfg.runner.random_episode_start`` is on, ``spread_episode_starts()``; with symmetry, ``mirror_maps()``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from model import load_actor, load_critic
from rl.alg.ppo import PPO
from rl.distributed import Sync
from rl.episode_stats import EpisodeStats
from rl.faults import KINDS, RolloutFaults, describe
from rl.inference import InferencePolicy
from rl.loggers import make_loggers
from rl.normalizer import EmpiricalNormalizer
from rl.precision import runner_precision
from rl.runner_checkpoints import RunnerCheckpoints
from rl.stages import TrainingStages
from rl.stop_signal import GracefulStop
from rl.symmetry import make_symmetry
from rl.train_log import TrainLog
from utils.progress import Progress


class TrainingHalted(RuntimeError):
    """Training cannot go on (too many updates in a row skipped); one line saying why and what is kept."""


def _to_plain_dict(cfg: Any) -> dict[str, Any] | None:
    """A plain dict of a `Cfg` (its `to_dict`) or of nested namespaces; None if neither."""
    if hasattr(cfg, "to_dict"):
        return cfg.to_dict()
    if isinstance(cfg, dict):
        return {k: _to_plain_dict(v) if hasattr(v, "__dict__") or isinstance(v, dict) else v for k, v in cfg.items()}
    if hasattr(cfg, "__dict__"):
        return _to_plain_dict(vars(cfg))
    return None


class OnPolicyRunner(RunnerCheckpoints):
    """Trains a `GaussianActor` and `Critic` with `PPO` on a vectorised env.

    Args:
        env: vectorised env (interface in the module docstring).
        cfg: run-time config; reads its ``runner``, ``algorithm`` and ``policy`` sections.
        log_dir: folder of the logs (TensorBoard events; W&B files with runner.logger "wandb"); None: no logs.
        device: torch device of the networks and rollout storage.
        model_dir: where ``policy.pt`` (and ``all/policy_<it>.pt``) are saved; None disables saving.
        cfg_dict: plain dict of the whole config, stored in checkpoints (default: ``cfg.to_dict()``).
        run_name: prefix of the console lines (default: name of model_dir's parent, else "run").
        save_interval: iterations between copies in all/ (default ``cfg.runner.save_interval``); policy.pt is saved every iteration.
        keep_all: also keep ``all/policy_<it>.pt`` at every save_interval.
        verbose: print at all: notes (resume, stages, stops) and, with ``iteration_lines``, one console line per
            ``cfg.runner.log_interval`` iterations.
    """

    def __init__(self, env: Any, cfg: Any, log_dir: str | None = None, device: str | torch.device = "cpu", *,
                 model_dir: str | os.PathLike | None = None, cfg_dict: dict[str, Any] | None = None,
                 run_name: str | None = None, save_interval: int | None = None, keep_all: bool = True,
                 verbose: bool = True, iteration_lines: bool = True, sync: Sync | None = None) -> None:
        self.env = env
        self.sync = sync or Sync()  # data-parallel ranks (rl.distributed); only rank 0 should get dirs
        self.cfg = cfg
        self.device = torch.device(device)
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.cfg_dict = cfg_dict if cfg_dict is not None else _to_plain_dict(cfg)
        self.run_name = run_name or (self.model_dir.resolve().parent.name if self.model_dir else "run")
        self.num_steps_per_env: int = cfg.runner.num_steps_per_env
        self.save_interval: int = save_interval if save_interval is not None else cfg.runner.save_interval
        self.random_episode_start: bool = bool(getattr(cfg.runner, "random_episode_start", False))
        self.max_skipped_updates: int = int(getattr(cfg.runner, "max_skipped_updates", 3))
        self.keep_all = keep_all
        loggers = make_loggers(cfg.runner, log_dir, self.run_name, self.cfg_dict)  # TensorBoard (+ W&B)
        self.log = TrainLog(self.run_name, loggers, getattr(cfg.runner, "log_interval", 1), verbose, iteration_lines)

        self.num_obs: int = env.num_obs
        self.num_critic_obs: int = env.num_critic_obs
        self.num_actions: int = env.num_actions
        actor = load_actor(cfg.policy, self.num_obs, self.num_actions, self.device)
        critic = load_critic(cfg.policy, self.num_critic_obs, self.device)
        self.precision, self.precision_reason = runner_precision(cfg, self.device, self.cfg_dict, self.log.print)
        self.symmetry = make_symmetry(cfg.algorithm, env, self.device)  # None unless algorithm.symmetry is on
        self.alg = PPO(actor, critic, cfg.algorithm, self.device, self.sync, self.precision, self.symmetry)
        self.alg.init_storage(env.num_envs, self.num_steps_per_env, self.num_obs, self.num_critic_obs,
                              self.num_actions)

        self.normalize_observations = bool(getattr(cfg.policy, "normalize_observations", False))
        self.obs_normalizer: nn.Module = nn.Identity()
        self.critic_obs_normalizer: nn.Module = nn.Identity()
        if self.normalize_observations:
            clip = getattr(cfg.policy, "normalizer_clip", 5.0)
            self.obs_normalizer = EmpiricalNormalizer(self.num_obs, clip=clip).to(self.device)
            self.critic_obs_normalizer = EmpiricalNormalizer(self.num_critic_obs, clip=clip).to(self.device)

        self.episode_stats = EpisodeStats(env.num_envs, self.device)
        self.stages = TrainingStages(env, getattr(cfg.runner, "stages", []), self.log.print, self.alg)  # config/stages.py
        self.current_iteration = 0
        self.total_env_steps = 0
        self.diverged_total = 0
        self._stop = GracefulStop(self.log.print, lambda: self.current_iteration + 1)
        self._last_saved_iteration: int | None = None
        self.last_save_failed = False  # the latest write of policy.pt failed
        self.failed_saves_total = 0
        self.skipped_in_a_row = 0
        self._last_learned_iteration = 0  # iteration of the last update that changed the weights

    # ---- convenience -------------------------------------------------------------------------

    @property
    def actor(self) -> nn.Module:
        return self.alg.actor

    @property
    def critic(self) -> nn.Module:
        return self.alg.critic

    @property
    def stop_requested(self) -> bool:
        return self._stop.requested

    @property
    def verbose(self) -> bool:
        return self.log.verbose

    @verbose.setter
    def verbose(self, value: bool) -> None:
        self.log.verbose = value

    def get_inference_policy(self, device: str | torch.device | None = None) -> InferencePolicy:
        """A detached copy of normaliser + actor mean, in eval mode, for play/export."""
        normalizer = self.obs_normalizer if self.normalize_observations else None
        return InferencePolicy(self.alg.actor, normalizer).to(device or self.device)

    # ---- training ----------------------------------------------------------------------------

    def learn(self, num_iterations: int,
              on_iteration: Callable[[int, dict[str, float]], bool | None] | None = None) -> dict[str, float]:
        """Run `num_iterations` more PPO iterations; returns the metrics of the last one.

        ``on_iteration(iteration, metrics)`` is called after each iteration is logged
        and saved; returning True stops training there (e.g. a wall-clock budget).
        Raises `TrainingHalted` after ``runner.max_skipped_updates`` skipped updates in a row.
        """
        metrics: dict[str, Any] = {}
        with self._stop:
            try:
                self.log.open(self.current_iteration)
                self.alg.train_mode()
                self.obs_normalizer.train()
                self.critic_obs_normalizer.train()
                self._symmetrize_loaded_normalizers()
                obs, critic_obs = self._reset_env()
                self._broadcast_state()
                start = self.current_iteration
                progress = Progress(total=start + num_iterations, initial=start)
                warmup = int(getattr(self.cfg.algorithm, "critic_warmup_iterations", 0))
                for it in range(start + 1, start + num_iterations + 1):
                    self.stages.advance(it)
                    self._warm_up_critic(it <= warmup)
                    obs, critic_obs, metrics = self._iteration(obs, critic_obs)
                    self.current_iteration = it
                    metrics["iteration"] = it
                    metrics["total_env_steps"] = self.total_env_steps
                    self.log.iteration(it, metrics, progress.update())
                    if self.model_dir is not None:
                        self._save_iteration(it)
                    self._check_skipped(it, metrics)
                    if on_iteration is not None and on_iteration(it, metrics):
                        break
                    if self.sync.any(self._stop.requested):  # a stop on any rank stops every rank here
                        self.log.print(f"{self.run_name}: stopped after iteration {it}")
                        break
                if self.model_dir is not None and self._last_saved_iteration != self.current_iteration:
                    with self._stop.protect():  # the retry of a failed last save is not cut short either
                        self._save_or_warn()
            finally:
                self.log.flush()
        return metrics

    def _warm_up_critic(self, on: bool) -> None:
        """During the critic warm-up the actor and its observation normaliser stay as they are."""
        if on != self.alg.actor_frozen:
            self.log.print(f"{self.run_name}: critic warm-up {'on: the actor is frozen' if on else 'over'} "
                           f"from iteration {self.current_iteration + 1}")
        self.alg.actor_frozen = on
        self.obs_normalizer.train(not on)  # learn() puts it in training mode at every call

    def _iteration(self, obs: torch.Tensor, critic_obs: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, dict[str, Any]]:
        """One rollout + one PPO update (skipped if anything was non-finite). Returns the next observations and the metrics."""
        env = self.env
        t0 = time.perf_counter()
        diverged = 0
        faults = RolloutFaults(self.device)
        # no_grad rather than inference_mode: the env keeps tensors made here
        # (state, buffers) and must be able to update them in place later.
        with torch.no_grad():
            for _ in range(self.num_steps_per_env):
                actions, _ = faults.clean("actions", self.alg.act(obs, critic_obs))
                obs, critic_obs, rew, done, info, task_rew = env.step(actions.to(env.device))
                obs, critic_obs = self._normalize(obs, critic_obs, faults)
                rew, _ = faults.clean("rewards", rew.to(self.device))
                task_rew, _ = faults.clean("task_rewards", task_rew.to(self.device))
                done = done.to(self.device)
                time_outs = info.get("time_outs")
                self.alg.process_env_step(rew, done, None if time_outs is None else time_outs.to(self.device))
                self.episode_stats.step(rew, task_rew, done, info.get("episode"))
                diverged = diverged + info.get("diverged", 0)  # a device tensor from our env: no sync per step
            diverged = int(diverged)
            found = faults.summary()
            skip = self.sync.any(bool(found))  # every rank updates, or none
            if not skip:
                self.alg.compute_returns(critic_obs)
        t1 = time.perf_counter()
        if skip:
            self.alg.storage.clear()
            what = describe(found) if found else "non-finite values on another rank"
            losses: dict[str, Any] = {"skipped": what + " during the rollout", "learning_rate": self.alg.learning_rate}
        else:
            losses = self.alg.update()
        t2 = time.perf_counter()

        steps = self.num_steps_per_env * env.num_envs * self.sync.world_size  # over every rank
        self.total_env_steps += steps
        self.diverged_total += diverged
        metrics: dict[str, Any] = dict(losses)
        metrics["skipped_update"] = int("skipped" in losses)
        metrics.update({f"nonfinite_{kind}": found.get(kind, 0) for kind in KINDS})
        metrics["action_std"] = float(self.alg.actor.action_std.detach().mean())
        stats, sync = self.episode_stats, self.sync
        reduce, names = (sync.sum_, sync.union(stats.term_names())) if sync.distributed else (None, None)
        metrics.update(stats.means(reduce))
        metrics.update({f"Episode/{k}": v for k, v in stats.pop_terms(reduce, names).items()})
        metrics.update(fps=steps / max(t2 - t0, 1e-9), collection_time=t1 - t0, learning_time=t2 - t1,
                       iteration_time=t2 - t0, diverged=diverged, diverged_total=self.diverged_total)
        if hasattr(env, "overflow_total"):  # read once per iteration: a new overflow is logged as a warning here
            metrics["overflow_total"] = env.overflow_total
        return obs, critic_obs, metrics

    def _check_skipped(self, it: int, metrics: dict[str, Any]) -> None:
        """Count skipped updates in a row; warn on each, halt after max_skipped_updates."""
        if not metrics["skipped_update"]:
            self.skipped_in_a_row = 0
            self._last_learned_iteration = it
            return
        self.skipped_in_a_row += 1
        self.log.warn(f"warning: {self.run_name}#{it}: update skipped, weights unchanged: {metrics['skipped']} "
                      f"({self.skipped_in_a_row} in a row, training stops at {self.max_skipped_updates})")
        if self.skipped_in_a_row >= self.max_skipped_updates:
            raise TrainingHalted(
                f"training stopped at iteration {it}: {self.skipped_in_a_row} updates in a row were skipped for "
                f"non-finite values (last: {metrics['skipped']}); policy.pt holds the weights of "
                f"{self._weights_from()}; look for a diverging simulation or reward term")

    def _weights_from(self) -> str:
        it = self._last_learned_iteration
        return f"iteration {it}, the last update that learned" if it > 0 else "the start (no update learned yet)"

    def _reset_env(self) -> tuple[torch.Tensor, torch.Tensor]:
        obs, critic_obs = self.env.reset()
        if self.random_episode_start:
            self.env.spread_episode_starts()
        self.episode_stats.reset_envs()
        with torch.no_grad():
            return self._normalize(obs, critic_obs, RolloutFaults(self.device))

    def _normalize(self, obs: torch.Tensor, critic_obs: torch.Tensor, faults: RolloutFaults
                   ) -> tuple[torch.Tensor, torch.Tensor]:
        """Move to the runner device, zero non-finite rows (counted in `faults`), update the normalisers
        with the finite rows only (training), and normalise."""
        obs, obs_ok = faults.clean("observations", obs.to(self.device))
        critic_obs, critic_ok = faults.clean("critic_observations", critic_obs.to(self.device))
        if self.normalize_observations:
            rows_ok = obs_ok if critic_ok is None else critic_ok if obs_ok is None else obs_ok & critic_ok
            reduce = self.sync.sum_ if self.sync.distributed else None  # identical statistics on every rank
            self.obs_normalizer.update(obs, rows_ok, reduce)
            self.critic_obs_normalizer.update(critic_obs, rows_ok, reduce)
            if self.symmetry is not None:  # mirroring normalised observations needs mirror-symmetric statistics
                self.symmetry.symmetrize_normalizer(self.obs_normalizer)
                self.symmetry.symmetrize_normalizer(self.critic_obs_normalizer, critic=True)
        return self.obs_normalizer(obs), self.critic_obs_normalizer(critic_obs)

    def _symmetrize_loaded_normalizers(self) -> None:
        """Before the first rollout with symmetry on: make loaded statistics (a warm start trained without
        symmetry) mirror symmetric without changing what the actor and critic compute (rl/symmetry.py);
        a no-op on statistics that already are."""
        if self.symmetry is not None and self.normalize_observations:
            self.symmetry.symmetrize_normalizer(self.obs_normalizer, keep=self.alg.actor)
            self.symmetry.symmetrize_normalizer(self.critic_obs_normalizer, critic=True, keep=self.alg.critic)

    def _broadcast_state(self) -> None:
        """Start every rank from rank 0's parameters and normaliser statistics (fresh or resumed)."""
        if self.sync.distributed:
            self.sync.broadcast_([p.data for p in self.alg.params] + list(self.obs_normalizer.buffers())
                                 + list(self.critic_obs_normalizer.buffers()))

    def close(self) -> None:
        self.log.close()
