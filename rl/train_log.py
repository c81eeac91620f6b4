"""What a training run tells its user: TensorBoard scalars, one console line per iteration, warnings.

`TrainLog` owns the SummaryWriter (opened lazily, so building a runner writes
nothing) and the console. Warnings go to stderr whatever `verbose` says: a user
must see a lost checkpoint write or a skipped update.
"""

from __future__ import annotations

import sys
from typing import Any

from rl.faults import KINDS

# TensorBoard tag of each metric returned by `OnPolicyRunner.learn` (Episode/<term> tags are added per term).
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
    "overflow_total": "Sim/overflow_total",
    "skipped_update": "Faults/skipped_update",
    "save_failed": "Checkpoint/save_failed",
    "failed_saves_total": "Checkpoint/failed_saves_total",
    **{f"nonfinite_{kind}": f"Faults/nonfinite_{kind}" for kind in KINDS},
}


class TrainLog:
    def __init__(self, run_name: str, log_dir: str | None, log_interval: int = 1, verbose: bool = True) -> None:
        self.run_name = run_name
        self.log_dir = log_dir
        self.log_interval = max(1, int(log_interval))
        self.verbose = verbose
        self.writer: Any = None

    def open(self, resume_iteration: int) -> None:
        """Open the TensorBoard writer (once); on a resume, drop events logged after the resumed checkpoint."""
        if self.log_dir is None or self.writer is not None:
            return
        from torch.utils.tensorboard import SummaryWriter

        purge_step = resume_iteration + 1 if resume_iteration > 0 else None
        self.writer = SummaryWriter(self.log_dir, purge_step=purge_step)

    def scalar(self, tag: str, value: float, step: int) -> None:
        if self.writer is not None:
            self._guard(lambda: self.writer.add_scalar(tag, value, global_step=step))

    def _guard(self, write) -> None:
        """Run a TensorBoard write; if the disk refuses it, warn once and log to the console only.

        TensorBoard writes events from a background thread and re-raises its error on a
        later call: without this a full disk would end the run over a log file.
        """
        try:
            write()
        except OSError as err:
            self.warn(f"warning: {self.run_name}: TensorBoard logging to {self.log_dir} stopped "
                      f"({err.strerror or err}); training continues, the console line still reports")
            writer, self.writer = self.writer, None
            try:
                writer.close()
            except OSError:
                pass

    def iteration(self, it: int, metrics: dict[str, Any], progress: str) -> None:
        """Every numeric metric to TensorBoard; the console line every log_interval iterations."""
        for key, value in metrics.items():
            tag = TB_TAGS.get(key, key if key.startswith("Episode/") else None)
            if tag is not None and isinstance(value, (int, float)):
                self.scalar(tag, value, it)
        if it % self.log_interval == 0:
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
        if self.writer is not None:
            self._guard(self.writer.flush)

    def close(self) -> None:
        if self.writer is not None:
            self._guard(self.writer.close)
            self.writer = None
