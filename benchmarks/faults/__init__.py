"""Fault injection for train.py and play.py, shared by tests/reliability/ and benchmarks/fault_report.py.

Each module injects one kind of fault into real training runs (tiny ones) and
reports, per trial, whether the package's guarantee held:

- `kill_trials`: SIGKILL at random instants of collection, update and checkpoint
  write; the run must resume with counters continuing and no temp file left.
- `write_faults`: checkpoint writes that fail (ENOSPC, EACCES); training must go
  on, warn, log to TensorBoard and keep the previous checkpoint loadable.
- `nan_faults`: NaN/inf in observations, actions, rewards and losses; the weights
  must not change, the skip must be logged, and training must stop after K in a row.
- `bad_inputs`: every mistake must give one line ``error: ...`` and exit status 2,
  with nothing created or deleted.
"""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The smallest training run that still exercises everything: 4 envs x 4 steps, 1 epoch, 2 minibatches.
TINY = ["--config", "qmini", "--num_envs", "4", "--set", "runner.num_steps_per_env=4",
        "--set", "algorithm.num_learning_epochs=1", "--set", "algorithm.num_mini_batches=2",
        "--set", "sim.nthread=1"]
TINY_STEPS_PER_ITERATION = 4 * 4


@dataclass
class Trial:
    """One injected fault and whether the guarantee held; `detail` says what was seen."""

    kind: str
    ok: bool
    detail: str

    def portable(self, experiments: Path) -> "Trial":
        """This trial with the temporary experiments folder written as ``experiments`` (a report that diffs cleanly)."""
        return replace(self, detail=self.detail.replace(str(experiments), "experiments"))


def temp_files(folder: Path) -> list[Path]:
    """Temp files of utils.files' atomic writes under `folder` (none may survive a resume)."""
    return [p for p in folder.rglob(".*.tmp")] if folder.is_dir() else []


def experiments_env(root: Path) -> dict[str, str]:
    """The environment for a child process writing experiments under `root`."""
    return dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(root), PYTHONUNBUFFERED="1")


@contextlib.contextmanager
def experiments_at(root: Path) -> Iterator[None]:
    """In this process, train.py and play.py write experiments under `root` while inside the block."""
    previous = os.environ.get("LEGGED_EXPERIMENTS_DIR")
    os.environ["LEGGED_EXPERIMENTS_DIR"] = str(root)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("LEGGED_EXPERIMENTS_DIR", None)
        else:
            os.environ["LEGGED_EXPERIMENTS_DIR"] = previous


def run_quietly(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of an in-process ``main(argv)``; argparse's SystemExit becomes the status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return int(code), out.getvalue(), err.getvalue()
