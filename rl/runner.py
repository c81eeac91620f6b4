"""On-policy training loop: collect a rollout, update PPO, log, checkpoint.

    runner = OnPolicyRunner(env, cfg, log_dir="experiments/run1/log", device="cpu",
                            model_dir="experiments/run1/model", cfg_dict=cfg.to_dict())
    runner.load("experiments/run1/model/policy.pt")     # optional: resume
    runner.learn(cfg.runner.max_iterations)

Iterations are counted globally (`current_iteration`, `total_env_steps`), so a
resumed run continues its numbering in logs and checkpoints. Ctrl-C (SIGINT) or
SIGTERM during `learn` finishes the current iteration, saves and returns; a
second Ctrl-C aborts at once with KeyboardInterrupt.

The env interface (see env/gym_env_wrapper.py): attributes ``num_envs, num_obs,
num_critic_obs, num_actions, device, max_episode_length``; ``reset() -> (obs,
critic_obs)``; ``step(actions) -> (obs, critic_obs, rew, done, info, task_rew)``
with ``info["time_outs"]``, ``info["episode"]`` and ``info["diverged"]``; and, when
``cfg.runner.random_episode_start`` is on, ``spread_episode_starts()``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable

import torch
import yaml
from torch import nn

from model import load_actor, load_critic
from rl.alg.ppo import PPO
from rl.episode_stats import EpisodeStats
from rl.inference import InferencePolicy
from rl.normalizer import EmpiricalNormalizer
from rl.seed import get_rng_state, set_rng_state
from utils.files import atomic_torch_save
from utils.progress import Progress

# TensorBoard tag of each metric returned by `learn` (Episode/<term> tags are added per term).
TB_TAGS = {
    "surrogate": "Loss/surrogate",
    "value": "Loss/value",
    "entropy": "Loss/entropy",
    "kl": "Loss/kl",
    "approx_kl": "Loss/approx_kl",
    "clip_fraction": "Loss/clip_fraction",
    "learning_rate": "Loss/learning_rate",
    "action_std": "Policy/action_std",
    "mean_reward": "Train/mean_reward",
    "mean_task_reward": "Train/mean_task_reward",
    "mean_episode_length": "Train/mean_episode_length",
    "fps": "Perf/fps",
    "collection_time": "Perf/collection_time",
    "learning_time": "Perf/learning_time",
    "total_env_steps": "Perf/total_env_steps",
    "diverged": "Sim/diverged",
    "diverged_total": "Sim/diverged_total",
}


def cfg_hash(cfg_dict: dict[str, Any] | None) -> str | None:
    """sha256 of the YAML dump of the config dict (the same dump and digest as `utils.yaml.ParamsProcess`)."""
    if cfg_dict is None:
        return None
    try:
        text = yaml.safe_dump(cfg_dict, sort_keys=False, default_flow_style=None)
    except yaml.YAMLError:
        text = json.dumps(cfg_dict, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _to_plain_dict(cfg: Any) -> dict[str, Any] | None:
    """A plain dict of a `Cfg` (its `to_dict`) or of nested namespaces; None if neither."""
    if hasattr(cfg, "to_dict"):
        return cfg.to_dict()
    if isinstance(cfg, dict):
        return {k: _to_plain_dict(v) if hasattr(v, "__dict__") or isinstance(v, dict) else v for k, v in cfg.items()}
    if hasattr(cfg, "__dict__"):
        return _to_plain_dict(vars(cfg))
    return None


class OnPolicyRunner:
    """Trains a `GaussianActor` and `Critic` with `PPO` on a vectorised env.

    Args:
        env: vectorised env (interface in the module docstring).
        cfg: run-time config; reads its ``runner``, ``algorithm`` and ``policy`` sections.
        log_dir: TensorBoard directory; None disables TensorBoard.
        device: torch device of the networks and rollout storage.
        model_dir: where ``policy.pt`` (and ``all/policy_<it>.pt``) are saved; None disables saving.
        cfg_dict: plain dict of the whole config, stored in checkpoints (default: ``cfg.to_dict()``).
        run_name: prefix of the console lines (default: name of model_dir's parent, else "run").
        save_interval: iterations between copies in all/ (default ``cfg.runner.save_interval``); policy.pt is saved every iteration.
        keep_all: also keep ``all/policy_<it>.pt`` at every save_interval.
        verbose: print one console line per ``cfg.runner.log_interval`` iterations.
    """

    def __init__(self, env: Any, cfg: Any, log_dir: str | None = None, device: str | torch.device = "cpu", *,
                 model_dir: str | os.PathLike | None = None, cfg_dict: dict[str, Any] | None = None,
                 run_name: str | None = None, save_interval: int | None = None, keep_all: bool = True,
                 verbose: bool = True) -> None:
        self.env = env
        self.cfg = cfg
        self.device = torch.device(device)
        self.log_dir = log_dir
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.cfg_dict = cfg_dict if cfg_dict is not None else _to_plain_dict(cfg)
        self.run_name = run_name or (self.model_dir.resolve().parent.name if self.model_dir else "run")
        self.num_steps_per_env: int = cfg.runner.num_steps_per_env
        self.save_interval: int = save_interval if save_interval is not None else cfg.runner.save_interval
        self.log_interval: int = max(1, getattr(cfg.runner, "log_interval", 1))
        self.random_episode_start: bool = bool(getattr(cfg.runner, "random_episode_start", False))
        self.keep_all = keep_all
        self.verbose = verbose

        self.num_obs: int = env.num_obs
        self.num_critic_obs: int = env.num_critic_obs
        self.num_actions: int = env.num_actions
        actor = load_actor(cfg.policy, self.num_obs, self.num_actions, self.device)
        critic = load_critic(cfg.policy, self.num_critic_obs, self.device)
        self.alg = PPO(actor, critic, cfg.algorithm, self.device)
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
        self.current_iteration = 0
        self.total_env_steps = 0
        self.diverged_total = 0
        self.stop_requested = False
        self.writer: Any = None
        self._last_saved_iteration: int | None = None

    # ---- convenience -------------------------------------------------------------------------

    @property
    def actor(self) -> nn.Module:
        return self.alg.actor

    @property
    def critic(self) -> nn.Module:
        return self.alg.critic

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
        """
        self.stop_requested = False
        previous_handlers = self._install_signal_handlers()
        metrics: dict[str, float] = {}
        try:
            self._open_writer()
            self.alg.train_mode()
            self.obs_normalizer.train()
            self.critic_obs_normalizer.train()
            obs, critic_obs = self._reset_env()
            start = self.current_iteration
            progress = Progress(total=start + num_iterations, initial=start)
            for it in range(start + 1, start + num_iterations + 1):
                obs, critic_obs, metrics = self._iteration(obs, critic_obs)
                self.current_iteration = it
                metrics["iteration"] = it
                metrics["total_env_steps"] = self.total_env_steps
                self._log(it, metrics, progress.update())
                if self.model_dir is not None:
                    # policy.pt after every iteration, so an interrupted run loses at most one
                    self.save()
                    if self.keep_all and self.save_interval > 0 and it % self.save_interval == 0:
                        self.save(self.model_dir / "all" / f"policy_{it}.pt")
                if on_iteration is not None and on_iteration(it, metrics):
                    break
                if self.stop_requested:
                    self._print(f"{self.run_name}: stopped after iteration {it}")
                    break
            if self.model_dir is not None and self._last_saved_iteration != self.current_iteration:
                self.save()
        finally:
            self._restore_signal_handlers(previous_handlers)
            if self.writer is not None:
                self.writer.flush()
        return metrics

    def _iteration(self, obs: torch.Tensor, critic_obs: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
        """One rollout + one PPO update. Returns the next observations and the metrics."""
        env = self.env
        t0 = time.perf_counter()
        diverged = 0
        # no_grad rather than inference_mode: the env keeps tensors made here
        # (state, buffers) and must be able to update them in place later.
        with torch.no_grad():
            for _ in range(self.num_steps_per_env):
                actions = self.alg.act(obs, critic_obs)
                obs, critic_obs, rew, done, info, task_rew = env.step(actions.to(env.device))
                obs, critic_obs = self._normalize(obs, critic_obs)
                rew, done, task_rew = rew.to(self.device), done.to(self.device), task_rew.to(self.device)
                time_outs = info.get("time_outs")
                self.alg.process_env_step(rew, done, None if time_outs is None else time_outs.to(self.device))
                self.episode_stats.step(rew, task_rew, done, info.get("episode"))
                diverged += int(info.get("diverged", 0))
            self.alg.compute_returns(critic_obs)
        t1 = time.perf_counter()
        losses = self.alg.update()
        t2 = time.perf_counter()

        steps = self.num_steps_per_env * env.num_envs
        self.total_env_steps += steps
        self.diverged_total += diverged
        metrics: dict[str, float] = dict(losses)
        metrics["action_std"] = float(self.alg.actor.action_std.detach().mean())
        metrics.update(self.episode_stats.means())
        metrics.update({f"Episode/{k}": v for k, v in self.episode_stats.pop_terms().items()})
        metrics.update(fps=steps / max(t2 - t0, 1e-9), collection_time=t1 - t0, learning_time=t2 - t1,
                       iteration_time=t2 - t0, diverged=diverged, diverged_total=self.diverged_total)
        return obs, critic_obs, metrics

    def _reset_env(self) -> tuple[torch.Tensor, torch.Tensor]:
        obs, critic_obs = self.env.reset()
        if self.random_episode_start:
            self.env.spread_episode_starts()
        self.episode_stats.reset_envs()
        with torch.no_grad():
            return self._normalize(obs, critic_obs)

    def _normalize(self, obs: torch.Tensor, critic_obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Move to the runner device, update the normalisers (training only) and normalise."""
        obs, critic_obs = obs.to(self.device), critic_obs.to(self.device)
        if self.normalize_observations:
            self.obs_normalizer.update(obs)
            self.critic_obs_normalizer.update(critic_obs)
        return self.obs_normalizer(obs), self.critic_obs_normalizer(critic_obs)

    # ---- logging -----------------------------------------------------------------------------

    def _open_writer(self) -> None:
        if self.log_dir is None or self.writer is not None:
            return
        from torch.utils.tensorboard import SummaryWriter

        # On a resume, drop events a previous process logged after the checkpoint it resumes from.
        purge_step = self.current_iteration + 1 if self.current_iteration > 0 else None
        self.writer = SummaryWriter(self.log_dir, purge_step=purge_step)

    def _log(self, it: int, metrics: dict[str, float], progress: str) -> None:
        if self.writer is not None:
            for key, value in metrics.items():
                tag = TB_TAGS.get(key, key if key.startswith("Episode/") else None)
                if tag is not None:
                    self.writer.add_scalar(tag, value, global_step=it)
        if it % self.log_interval == 0:
            self._print(self.format_line(it, metrics) + "  " + progress)

    def format_line(self, it: int, m: dict[str, float]) -> str:
        """``run1#12  3.4s  fps 12345  surr -0.0123 value 0.456 ent 12.3  rew 1.23  task 0.98  len 345.0``"""
        line = (f"{self.run_name}#{it}  {m['iteration_time']:.1f}s  fps {m['fps']:.0f}  "
                f"surr {m['surrogate']:.4f} value {m['value']:.3f} ent {m['entropy']:.1f}")
        if "mean_reward" in m:
            line += (f"  rew {m['mean_reward']:.2f}  task {m['mean_task_reward']:.2f}"
                     f"  len {m['mean_episode_length']:.1f}")
        if m.get("diverged"):
            line += f"  diverged {int(m['diverged'])}"
        return line

    def _print(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # ---- graceful stop -----------------------------------------------------------------------

    def _handle_stop_signal(self, signum: int, frame: Any) -> None:
        if self.stop_requested and signum == signal.SIGINT:
            raise KeyboardInterrupt  # second Ctrl-C: abort now
        self.stop_requested = True
        self._print(f"\n{signal.Signals(signum).name} received: finishing iteration "
                    f"{self.current_iteration + 1}, saving, then stopping (Ctrl-C again to abort)")

    def _install_signal_handlers(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}  # signal handlers can only be set from the main thread
        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, self._handle_stop_signal)
        return previous

    @staticmethod
    def _restore_signal_handlers(previous: dict[int, Any]) -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    # ---- checkpoints -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike | None = None) -> Path:
        """Write a checkpoint atomically (default ``<model_dir>/policy.pt``)."""
        if path is None:
            if self.model_dir is None:
                raise ValueError("save() needs a path when the runner has no model_dir")
            path = self.model_dir / "policy.pt"
        ckpt = {
            **self.alg.state_dict(),  # actor, critic, optimizer, learning_rate
            "obs_normalizer": self._normalizer_state(self.obs_normalizer),
            "critic_obs_normalizer": self._normalizer_state(self.critic_obs_normalizer),
            "normalizer_args": self.obs_normalizer.init_args if self.normalize_observations else {},
            "iteration": self.current_iteration,
            "total_env_steps": self.total_env_steps,
            "diverged_total": self.diverged_total,
            "num_obs": self.num_obs,
            "num_critic_obs": self.num_critic_obs,
            "num_actions": self.num_actions,
            "rng_state": get_rng_state(),
            "cfg": self.cfg_dict,
            "cfg_hash": cfg_hash(self.cfg_dict),
        }
        path = atomic_torch_save(ckpt, path)
        if self.model_dir is not None and Path(path).resolve() == (self.model_dir / "policy.pt").resolve():
            self._last_saved_iteration = self.current_iteration
        return path

    def load(self, path: str | os.PathLike, load_optimizer: bool = True) -> dict[str, Any]:
        """Restore networks, normalisers, (optimizer), counters and RNG states; returns the checkpoint."""
        ckpt = torch.load(path, map_location=self.device, weights_only=False)
        self._check_sizes(ckpt)
        self.alg.load_state_dict(ckpt, load_optimizer=load_optimizer)
        if self.normalize_observations:
            if not ckpt.get("obs_normalizer"):
                raise ValueError(f"{path} has no observation normaliser but policy.normalize_observations is on")
            self.obs_normalizer.load_state_dict(ckpt["obs_normalizer"])
            self.critic_obs_normalizer.load_state_dict(ckpt["critic_obs_normalizer"])
        elif ckpt.get("obs_normalizer"):
            raise ValueError(f"{path} was trained with observation normalisation but "
                             "policy.normalize_observations is off")
        self.current_iteration = int(ckpt["iteration"])
        self.total_env_steps = int(ckpt["total_env_steps"])
        self.diverged_total = int(ckpt.get("diverged_total", 0))
        if "rng_state" in ckpt:
            set_rng_state(ckpt["rng_state"])
        if ckpt.get("cfg_hash") and self.cfg_dict is not None and ckpt["cfg_hash"] != cfg_hash(self.cfg_dict):
            self._print(f"note: {path} was trained with a different config (hash {ckpt['cfg_hash'][:12]})")
        self._last_saved_iteration = self.current_iteration
        return ckpt

    def _check_sizes(self, ckpt: dict[str, Any]) -> None:
        keys = ["num_obs", "num_actions"]
        if ckpt.get("num_critic_obs", self.num_critic_obs) != self.num_critic_obs:
            keys.append("num_critic_obs")
        theirs = {k: ckpt.get(k) for k in keys}
        ours = {k: getattr(self, k) for k in keys}
        if theirs != ours:
            fmt = lambda d: ", ".join(f"{k}={v}" for k, v in d.items())  # noqa: E731
            raise ValueError(f"checkpoint has {fmt(theirs)} but the env has {fmt(ours)}")

    @staticmethod
    def _normalizer_state(normalizer: nn.Module) -> dict[str, torch.Tensor] | None:
        return normalizer.state_dict() if isinstance(normalizer, EmpiricalNormalizer) else None
