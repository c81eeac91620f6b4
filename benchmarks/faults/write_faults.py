"""Checkpoint writes that fail: the disk is full (ENOSPC) or the folder refuses writes (EACCES).

A short run is trained in this process with the atomic writer patched to raise on
chosen writes of policy.pt. For each failed write the guarantee is: the run goes
on to its last iteration, a warning names the file and the reason on stderr, the
TensorBoard scalar ``Checkpoint/save_failed`` is 1 at that iteration, policy.pt
still loads and holds the previous iteration, and no temp file is left. The exit
status is 0 when the last save succeeded and 1 when it failed.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import torch

from benchmarks.faults import TINY, Trial, experiments_at, run_quietly, temp_files

ERRORS = {"ENOSPC": errno.ENOSPC, "EACCES": errno.EACCES}


def _scalars(log_dir: Path, tag: str) -> dict[int, float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return {e.step: e.value for e in acc.Scalars(tag)} if tag in acc.Tags()["scalars"] else {}


def failing_writes(root: Path, name: str, fail_at: set[int], iterations: int, error: str = "ENOSPC"
                   ) -> list[Trial]:
    """Train `iterations` iterations; the k-th write of policy.pt fails with `error` for k in `fail_at`.

    Write k is iteration k's save; write ``iterations + 1`` is the runner's retry at the
    end of the run, made only when the last iteration's save failed. Returns one trial
    per injected failure within the run, plus one for the exit status.
    """
    import train
    import utils.files as files

    policy = root / name / "model" / "policy.pt"
    state = {"writes": 0}
    seen_at_failure: dict[int, int | None] = {}
    original = files._atomic_write

    def flaky(path, write):
        if Path(path).name == "policy.pt":
            state["writes"] += 1
            if state["writes"] in fail_at:
                try:
                    return original(path, _raising(error))
                finally:  # what a reader finds right after the failed write
                    seen_at_failure[state["writes"]] = _iteration_in(policy)
        return original(path, write)

    files._atomic_write = flaky
    try:
        with experiments_at(root):
            code, _, err = run_quietly(train.main, TINY + ["--name", name, "--max_iterations", str(iterations)])
    finally:
        files._atomic_write = original
    failed = _scalars(root / name / "log", "Checkpoint/save_failed")
    last_good = lambda k: max((i for i in range(1, min(k, iterations + 1)) if i not in fail_at), default=None)  # noqa: E731
    trials = []
    for it in sorted(w for w in fail_at if w <= iterations):
        warned = f"#{it}: could not write" in err and os.strerror(ERRORS[error]) in err
        kept = seen_at_failure.get(it, "not written") == last_good(it)
        logged = failed.get(it) == 1.0
        trials.append(Trial("write", warned and kept and logged and not temp_files(root / name),
                            f"{error} at iteration {it}: warned {warned}, previous checkpoint kept {kept}, "
                            f"TensorBoard {logged}"))
    final_failed = iterations in fail_at and iterations + 1 in fail_at
    expected_code = 1 if final_failed else 0
    expected_it = last_good(iterations + 1) if final_failed else iterations
    last = _iteration_in(policy)
    trials.append(Trial("write-exit", code == expected_code and last == expected_it,
                        f"exit status {code} (expected {expected_code}); policy.pt at iteration {last} "
                        f"(expected {expected_it})"))
    return trials


def _raising(error: str):
    """A writer that writes part of the file, then fails like a full or read-only disk."""
    def broken(f):
        f.write(b"partial checkpoint")
        raise OSError(ERRORS[error], os.strerror(ERRORS[error]))
    return broken


def _iteration_in(policy: Path) -> int | None:
    try:
        return int(torch.load(policy, map_location="cpu", weights_only=False)["iteration"])
    except Exception:  # noqa: BLE001 - missing or unreadable: the caller judges
        return None


def write_fault_trials(root: Path) -> list[Trial]:
    """Failures in the middle of a run (both errors), then runs whose last save fails once and for good."""
    trials = failing_writes(root, "full_disk", {2, 3}, 5, "ENOSPC")
    trials += failing_writes(root, "read_only", {3}, 4, "EACCES")
    trials += failing_writes(root, "retried", {4}, 4, "ENOSPC")  # the end-of-run retry succeeds: exit 0
    trials += failing_writes(root, "last_fails", {4, 5}, 4, "ENOSPC")  # it fails too: exit 1
    return trials
