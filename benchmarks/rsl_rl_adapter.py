"""Train our env with rsl-rl-lib's PPO, for benchmarks only (``benchmarks/learn.py --algo rsl_rl``).

    pip install rsl-rl-lib==5.5.1 --no-deps          # benchmark only; --no-deps keeps the installed torch
    pip install tensordict GitPython onnxscript      # its other dependencies (onnx, numpy, tensorboard are ours)

    runner = make_rsl_rl_runner(env, cfg, log_dir="experiments/x/log", device="cpu", verbose=False)
    while budget_left():
        metrics = run_iterations(runner, 1)          # one PPO iteration, continuing the last one
    runner.env.last_task_rew, runner.env.last_info   # of the latest env step

Nothing in the package imports this module; importing it without rsl_rl installed
works, and the first call that needs rsl_rl raises ImportError saying what to install.

Config mapping (`rsl_rl_train_cfg`)
-----------------------------------
runner.num_steps_per_env -> num_steps_per_env; runner.save_interval -> save_interval;
algorithm.{clip_param, entropy_coef, num_learning_epochs, num_mini_batches, learning_rate,
schedule, gamma, lam, desired_kl, max_grad_norm, value_loss_coef, use_clipped_value_loss}
-> algorithm.<same name> (class PPO, optimizer "adam", advantages normalised over the whole
rollout as ours); policy.actor_hidden_dims / critic_hidden_dims -> actor/critic.hidden_dims
(class MLPModel); policy.activation -> activation (leaky_relu -> "lrelu", silu -> "swish");
policy.normalize_observations -> actor/critic.obs_normalization (empirical normaliser of the
actor obs and of the critic obs); policy.init_noise_std -> actor GaussianDistribution
init_std; policy.min_std/max_std -> its std_range; std_type "log" (a learnable log-std
clamped to the range, as our `GaussianActor`; pass ``std_type="scalar"`` for rsl_rl's
default learnable std). Observation groups: "policy" (actor obs) and "critic" (privileged
critic obs), obs_groups {"actor": ["policy"], "critic": ["critic"]}. extras["time_outs"]
is the task's info["time_outs"], which env.send_timeouts already governs for both runners.

No counterpart (rsl_rl uses instead):
- algorithm.min_lr / max_lr: hard-coded 1e-5 / 1e-2 (our defaults; a warning if they differ).
- policy.normalizer_clip (ours 5.0): rsl_rl's normaliser does not clip.
- runner.max_iterations / log_interval / seed / device: passed to `learn`, logged every
  iteration, seeded by the caller, `device` argument.

Known differences in the learning rule (both follow rsl_rl's PPO otherwise):
- Minibatches: rsl_rl uses one permutation for all epochs, ours draws one per epoch.
- Normaliser: rsl_rl updates it once per iteration, after the update, from the rollout's
  observations (the first rollout runs un-normalised); ours updates before every step.
- rsl_rl checks obs/rewards/dones for NaN every step (``check_for_nan``, on by default).
- rsl_rl turns off torch.distributions argument validation process-wide; ours keeps it on.
- Episode-length randomisation at start: rsl_rl's ``init_at_random_ep_len`` is not used
  (it would re-randomise on every learn(1)); the env's clocks are spread once, here, when
  ``runner.random_episode_start`` is on, exactly as our runner does.

Stepping one iteration at a time: stock ``OnPolicyRunner.learn(1)`` does not reset the env
(it reads `get_observations`, the cached last step) nor the algorithm, storage, normalisers
or logger buffers, but it leaves ``current_learning_iteration`` at the index of the
iteration just done, so a second learn(1) would reuse that index. `run_iterations` calls
learn(1) and advances the counter; the runner built here also opens its log writer only
once and, inside `run_iterations`, saves ``model_<it>.pt`` only every save_interval
iterations (stock learn saves after every call).

The env is stepped outside rsl_rl's ``torch.inference_mode`` (under no_grad, as our runner
does), so the env's state tensors stay ordinary tensors that later code may update in place.
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import warnings
from typing import Any

import torch

from rl.episode_stats import EpisodeStats

INSTALL_HINT = "pip install rsl-rl-lib==5.5.1 (benchmark only)"

try:
    from rsl_rl.env import VecEnv as _VecEnv
    from tensordict import TensorDict

    _IMPORT_ERROR: ImportError | None = None
except ImportError as exc:  # rsl_rl (or one of its dependencies) is missing
    _VecEnv = object  # type: ignore[assignment,misc]
    TensorDict = None  # type: ignore[assignment,misc]
    _IMPORT_ERROR = exc

# our policy.activation -> rsl_rl's resolve_nn_activation name
ACTIVATIONS = {"elu": "elu", "relu": "relu", "tanh": "tanh", "leaky_relu": "lrelu", "selu": "selu",
               "gelu": "gelu", "silu": "swish"}


def _require_rsl_rl() -> None:
    if _IMPORT_ERROR is not None:
        raise ImportError(f"rsl_rl is not available ({_IMPORT_ERROR}); {INSTALL_HINT}") from _IMPORT_ERROR


class RslRlVecEnv(_VecEnv):
    """rsl_rl's `VecEnv` over a `GymEnvWrapper`.

    Observations are a TensorDict with groups "policy" (actor obs) and "critic" (critic obs).
    `step` returns ``(obs, rewards, dones, extras)`` with ``extras["time_outs"]`` and
    ``extras["log"]`` = {"Episode/rew_<term>": mean} on steps where episodes ended (logged
    by rsl_rl under the same tags as our runner). ``last_task_rew`` and ``last_info`` are the
    task reward and info of the latest step; ``episode_stats`` (our `EpisodeStats`) keeps the
    returns, task returns and lengths of finished episodes, counted as our runner counts them.
    """

    def __init__(self, env: Any) -> None:
        _require_rsl_rl()
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.num_obs = env.num_obs
        self.num_critic_obs = env.num_critic_obs
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = env.cfg
        self.episode_stats = EpisodeStats(self.num_envs, self.device)
        self.last_task_rew = torch.zeros(self.num_envs, device=self.device)
        self.last_info: dict[str, Any] = {}
        self.reset()

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.robot.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # in place: the robot and the task keep references to this tensor
        with torch.inference_mode(False), torch.no_grad():
            self.env.robot.episode_length_buf.copy_(value)

    def _pack(self, obs: torch.Tensor, critic_obs: torch.Tensor) -> TensorDict:
        return TensorDict({"policy": obs, "critic": critic_obs}, batch_size=[self.num_envs], device=self.device)

    def reset(self) -> TensorDict:
        """Reset every env (done once at construction; rsl_rl's learn never calls it)."""
        with torch.inference_mode(False), torch.no_grad():
            obs, critic_obs = self.env.reset()
            self.episode_stats.reset_envs()
        self._obs = self._pack(obs, critic_obs)
        return self._obs

    def get_observations(self) -> TensorDict:
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        # rsl_rl collects under torch.inference_mode; tensors the env made there could not be
        # updated in place afterwards outside it, so the env runs under no_grad like in our runner.
        with torch.inference_mode(False), torch.no_grad():
            actions = actions.to(self.device).clone()
            obs, critic_obs, rew, done, info, task_rew = self.env.step(actions)
            self.episode_stats.step(rew, task_rew, done, info.get("episode"))
        self.last_task_rew = task_rew
        self.last_info = info
        extras: dict[str, Any] = {}
        if "time_outs" in info:
            extras["time_outs"] = info["time_outs"]
        if info.get("episode"):
            # a new dict: rsl_rl's logger reshapes the values it is given in place
            extras["log"] = {f"Episode/{name}": value for name, value in info["episode"].items()}
        self._obs = self._pack(obs, critic_obs)
        return self._obs, rew, done, extras


def rsl_rl_train_cfg(cfg: Any, *, std_type: str = "log") -> dict[str, Any]:
    """rsl_rl 5.x train_cfg from our config (mapping in the module docstring); a new dict each call."""
    alg, pol, run = cfg.algorithm, cfg.policy, cfg.runner
    if getattr(alg, "min_lr", 1e-5) != 1e-5 or getattr(alg, "max_lr", 1e-2) != 1e-2:
        warnings.warn(f"rsl_rl bounds the adaptive learning rate to [1e-5, 1e-2]; algorithm.min_lr/max_lr "
                      f"({alg.min_lr}, {alg.max_lr}) are not used", stacklevel=2)
    activation = ACTIVATIONS.get(str(pol.activation).lower())
    if activation is None:
        raise ValueError(f"policy.activation '{pol.activation}' has no rsl_rl counterpart; valid: {', '.join(ACTIVATIONS)}")
    normalize = bool(getattr(pol, "normalize_observations", False))
    return {
        "num_steps_per_env": int(run.num_steps_per_env),
        "save_interval": int(run.save_interval),
        "obs_groups": {"actor": ["policy"], "critic": ["critic"]},
        "logger": "tensorboard",
        "check_for_nan": True,
        "algorithm": {
            "class_name": "PPO",
            "clip_param": float(alg.clip_param),
            "entropy_coef": float(alg.entropy_coef),
            "num_learning_epochs": int(alg.num_learning_epochs),
            "num_mini_batches": int(alg.num_mini_batches),
            "learning_rate": float(alg.learning_rate),
            "schedule": str(alg.schedule),
            "gamma": float(alg.gamma),
            "lam": float(alg.lam),
            "desired_kl": None if alg.desired_kl is None else float(alg.desired_kl),
            "max_grad_norm": float(alg.max_grad_norm),
            "value_loss_coef": float(alg.value_loss_coef),
            "use_clipped_value_loss": bool(alg.use_clipped_value_loss),
            "optimizer": "adam",
            "normalize_advantage_per_mini_batch": False,
            "rnd_cfg": None,
            "symmetry_cfg": None,
        },
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": [int(h) for h in pol.actor_hidden_dims],
            "activation": activation,
            "obs_normalization": normalize,
            "distribution_cfg": {
                "class_name": "GaussianDistribution",
                "init_std": float(pol.init_noise_std),
                "std_range": [float(getattr(pol, "min_std", 1e-6)), float(getattr(pol, "max_std", 1e6))],
                "std_type": std_type,
            },
        },
        "critic": {
            "class_name": "MLPModel",
            "hidden_dims": [int(h) for h in pol.critic_hidden_dims],
            "activation": activation,
            "obs_normalization": normalize,
        },
    }


def make_rsl_rl_runner(env: Any, cfg: Any, log_dir: str | None, device: str = "cpu", *,
                       verbose: bool = True, std_type: str = "log"):
    """An rsl_rl `OnPolicyRunner` training `env` (a GymEnvWrapper) with `rsl_rl_train_cfg(cfg)`.

    The env is reset once here. log_dir: TensorBoard events and ``model_<it>.pt`` checkpoints
    (None: no writer, no checkpoints; rsl_rl then keeps no reward buffers, but
    ``runner.env.episode_stats`` still does). No git-diff notes are written (stock rsl_rl
    diffs the repository holding rsl_rl; ``runner.add_git_repo_to_log(path)`` adds one).
    verbose=False silences rsl_rl's model printout and its per-iteration console block.
    """
    _require_rsl_rl()
    from rsl_rl.runners import OnPolicyRunner

    vec_env = RslRlVecEnv(env)
    if getattr(cfg.runner, "random_episode_start", False):
        env.spread_episode_starts()
    quiet = contextlib.nullcontext() if verbose else contextlib.redirect_stdout(io.StringIO())
    with quiet:
        runner = OnPolicyRunner(vec_env, rsl_rl_train_cfg(cfg, std_type=std_type), log_dir=log_dir, device=device)
    # a pip-installed rsl_rl has no repository of its own (or sits in a foreign one)
    runner.logger.git_status_repos = []
    _make_steppable(runner, verbose)
    return runner


def _make_steppable(runner: Any, verbose: bool) -> None:
    """Instance patches so that repeated learn(1) calls behave like one long learn (see module doc)."""
    logger = runner.logger
    state: dict[str, Any] = {"writer_opened": False, "last_saved_it": None, "times": (0.0, 0.0)}
    runner._adapter_state = state
    runner._adapter_stepping = False
    init_writer, stop_writer, log, save = (logger.init_logging_writer, logger.stop_logging_writer,
                                           logger.log, runner.save)

    def init_logging_writer_once() -> None:
        if not state["writer_opened"]:
            state["writer_opened"] = True
            init_writer()

    def stop_logging_writer() -> None:
        if not runner._adapter_stepping:  # a W&B/Neptune writer must survive between iterations
            stop_writer()

    def log_and_keep_times(*args: Any, **kwargs: Any) -> None:
        state["times"] = (kwargs.get("collect_time", 0.0), kwargs.get("learn_time", 0.0))
        with contextlib.nullcontext() if verbose else contextlib.redirect_stdout(io.StringIO()):
            log(*args, **kwargs)

    def gated_save(path: str, infos: dict | None = None) -> None:
        it = runner.current_learning_iteration
        if runner._adapter_stepping:
            interval = max(1, int(runner.cfg["save_interval"]))
            if it % interval != 0 or state["last_saved_it"] == it:
                return  # learn's unconditional end-of-call save, or the same checkpoint again
        save(path, infos)
        state["last_saved_it"] = it

    logger.init_logging_writer = init_logging_writer_once
    logger.stop_logging_writer = stop_logging_writer
    logger.log = log_and_keep_times
    runner.save = gated_save


def run_iterations(runner: Any, n: int = 1) -> dict[str, float]:
    """Run `n` more PPO iterations, one ``learn(1)`` at a time, continuing where the last call stopped.

    Returns metrics of the last iteration: iteration (completed so far), collection_time,
    learning_time, iteration_time (s, rsl_rl's timers), learning_rate, action_std,
    mean_reward / mean_task_reward / mean_episode_length over the last 100 finished episodes
    (our `EpisodeStats`, absent before the first one ends) and rsl_mean_reward /
    rsl_mean_episode_length (rsl_rl's own buffers, only with a log_dir).
    """
    if not hasattr(runner, "_adapter_state"):
        raise TypeError("run_iterations needs a runner from make_rsl_rl_runner")
    runner._adapter_stepping = True
    try:
        for _ in range(n):
            runner.learn(num_learning_iterations=1)  # stock learn: no env reset, no random episode lengths
            runner.current_learning_iteration += 1  # learn leaves it at the index just done
    finally:
        runner._adapter_stepping = False
    collect, learn = runner._adapter_state["times"]
    metrics: dict[str, float] = {
        "iteration": runner.current_learning_iteration,
        "collection_time": collect,
        "learning_time": learn,
        "iteration_time": collect + learn,
        "learning_rate": float(runner.alg.learning_rate),
        "action_std": float(runner.alg.get_policy().output_std.detach().mean()),
    }
    metrics.update(runner.env.episode_stats.means())
    if runner.logger.rewbuffer:
        metrics["rsl_mean_reward"] = statistics.mean(runner.logger.rewbuffer)
        metrics["rsl_mean_episode_length"] = statistics.mean(runner.logger.lenbuffer)
    return metrics


def save_checkpoint(runner: Any, path: str | None = None) -> str:
    """Save now (default ``<log_dir>/model_<last iteration>.pt``), whatever the save interval."""
    if path is None:
        if runner.logger.log_dir is None:
            raise ValueError("save_checkpoint needs a path when the runner has no log_dir")
        path = os.path.join(runner.logger.log_dir, f"model_{max(0, runner.current_learning_iteration - 1)}.pt")
    runner.save(path)
    return path


__all__ = ["ACTIVATIONS", "INSTALL_HINT", "RslRlVecEnv", "make_rsl_rl_runner", "rsl_rl_train_cfg",
           "run_iterations", "save_checkpoint"]
