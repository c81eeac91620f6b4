"""What a training run tells its user: logged scalars, one console line per iteration, warnings.

`TrainLog` drives the logger backends (`rl.loggers`: TensorBoard, and W&B when
``runner.logger`` says so; each opened lazily, so building a runner writes nothing)
and owns the console. Warnings go to stderr whatever `verbose` says: a user must
see a lost checkpoint write or a skipped update.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from rl.faults import KINDS
from rl.loggers import Logger

# TensorBoard tag of each metric returned by `OnPolicyRunner.learn` (Episode/<term> tags are added per term).
TB_TAGS = {
    "surrogate": "Loss/surrogate",
    "value": "Loss/value",
    "entropy": "Loss/entropy",
    "kl": "Loss/kl",
    "approx_kl": "Loss/approx_kl",
    "clip_fraction": "Loss/clip_fraction",
    "mirror": "Loss/mirror",  # algorithm.symmetry's mirror loss (rl/symmetry.py)
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
    "overflow_total": "Sim/overflow_total",
    "skipped_update": "Faults/skipped_update",
    "save_failed": "Checkpoint/save_failed",
    "failed_saves_total": "Checkpoint/failed_saves_total",
    **{f"nonfinite_{kind}": f"Faults/nonfinite_{kind}" for kind in KINDS},
}


class TrainLog:
    def __init__(self, run_name: str, loggers: list[Logger], log_interval: int = 1, verbose: bool = True,
                 iteration_lines: bool = True) -> None:
        self.run_name = run_name
        self.loggers = list(loggers)  # a backend that fails is dropped from here; the others go on
        self.log_interval = max(1, int(log_interval))
        self.verbose = verbose  # print at all (rank 0 only)
        self.iteration_lines = iteration_lines  # the per-iteration line too (a caller with its own progress line: no)

    def open(self, resume_iteration: int) -> None:
        """Open every backend (each opens once); on a resume, continue from the resumed checkpoint's iteration."""
        self._each(lambda logger: logger.open(resume_iteration))

    def scalar(self, tag: str, value: float, step: int) -> None:
        self._each(lambda logger: logger.scalars(step, {tag: value}))

    def _each(self, call: Callable[[Logger], None]) -> None:
        """Run `call` on every backend; one that fails (a full disk, W&B unreachable) is warned about once and dropped.

        TensorBoard writes events from a background thread and re-raises its error on a
        later call: without this a full disk would end the run over a log file.
        """
        for logger in list(self.loggers):
            try:
                call(logger)
            except logger.errors as err:
                self.loggers.remove(logger)
                reason = getattr(err, "strerror", None) or " ".join(str(err).split()) or type(err).__name__
                self.warn(f"warning: {self.run_name}: {logger.name} logging to {logger.where} stopped ({reason}); "
                          "training continues, the console line still reports")
                try:
                    logger.close()
                except logger.errors:
                    pass

    def iteration(self, it: int, metrics: dict[str, Any], progress: str) -> None:
        """Every numeric metric to the logger backends; the console line every log_interval iterations."""
        values = {}
        for key, value in metrics.items():
            tag = TB_TAGS.get(key, key if key.startswith("Episode/") else None)
            if tag is not None and isinstance(value, (int, float)):
                values[tag] = value
        self._each(lambda logger: logger.scalars(it, values))
        if self.iteration_lines and it % self.log_interval == 0:
            self.print(self.format_line(it, metrics) + "  " + progress)

    def format_line(self, it: int, m: dict[str, Any]) -> str:
        """``run1#12  3.4s  fps 12345  surr -0.0123 value 0.456 ent 12.3  rew 1.23  task 0.98  len 345.0``"""
        line = f"{self.run_name}#{it}  {m['iteration_time']:.1f}s  fps {m['fps']:.0f}  "
        if "skipped" in m:
            line += "update skipped (non-finite values)"
        else:
            line += f"surr {m['surrogate']:.4f} value {m['value']:.3f} ent {m['entropy']:.1f}"
        if "mean_reward" in m:
            line += (f"  rew {m['mean_reward']:.2f}  task {m['mean_task_reward']:.2f}"
                     f"  len {m['mean_episode_length']:.1f}")
        if m.get("diverged"):
            line += f"  diverged {int(m['diverged'])}"
        return line

    def print(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    @staticmethod
    def warn(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def flush(self) -> None:
        self._each(lambda logger: logger.flush())

    def close(self) -> None:
        self._each(lambda logger: logger.close())
