"""Reading checkpoints without tracebacks.

A checkpoint may be truncated (disk full, a copy cut short) or corrupted; `torch.load`
then raises one of many exception types deep inside its zip reader. `read_checkpoint`
turns every such failure into one `CheckpointError` that names the file and, when the
file belongs to an experiment, the newest snapshot in ``model/all/`` that does load,
with the flag that uses it.
"""

from __future__ import annotations

import io
import os
import textwrap
from pathlib import Path
from typing import Any

import torch

from utils.experiment import Experiment

# What every checkpoint written by rl.runner.OnPolicyRunner.save holds.
REQUIRED_KEYS = ("actor", "num_obs", "num_actions", "iteration")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message is one line saying what to do instead."""


def _load(path: Path, map_location: Any, data: bytes | None = None) -> dict[str, Any]:
    """The checkpoint dict (from `data`, the file's bytes, when given), or CheckpointError with the reason."""
    try:
        ckpt = torch.load(io.BytesIO(data) if data is not None else path, map_location=map_location,
                          weights_only=False)
    except Exception as err:  # noqa: BLE001 - torch.load raises RuntimeError, EOFError, UnpicklingError, ...
        first_sentence = str(err).split(". ")[0]  # torch's zip reader appends a paragraph of advice for its developers
        reason = textwrap.shorten(first_sentence, 120, placeholder=" ...") or type(err).__name__
        raise CheckpointError(f"cannot read checkpoint {path} (truncated or corrupted: {reason})") from None
    if not isinstance(ckpt, dict) or any(k not in ckpt for k in REQUIRED_KEYS):
        raise CheckpointError(f"{path} is not a training checkpoint of this package (it lacks "
                              f"{', '.join(k for k in REQUIRED_KEYS if not isinstance(ckpt, dict) or k not in ckpt)})")
    return ckpt


def newest_loadable_snapshot(experiment: Experiment, skip: Path | None = None) -> tuple[int, Path] | None:
    """(iteration, path) of the newest model/all/policy_<it>.pt that loads, or None."""
    for iteration, path in experiment.snapshots():
        if skip is not None and path.resolve() == skip.resolve():
            continue
        try:
            _load(path, "cpu")
        except CheckpointError:
            continue
        return iteration, path
    return None


def read_checkpoint(path: str | os.PathLike, map_location: Any = "cpu", experiment: Experiment | None = None,
                    flag_prefix: str = "", data: bytes | None = None) -> dict[str, Any]:
    """Load a runner checkpoint; a bad file raises one-line `CheckpointError`.

    With `experiment`, the message names its newest loadable snapshot and the
    ``{flag_prefix}--checkpoint all/policy_<it>.pt`` that uses it. `data`: the
    file's bytes, already read (so that what is loaded is what the caller hashed).
    """
    path = Path(path)
    try:
        return _load(path, map_location, data)
    except CheckpointError as err:
        if experiment is None:
            raise
        found = newest_loadable_snapshot(experiment, skip=path)
        if found is None:
            raise CheckpointError(f"{err}; no loadable snapshot in {experiment.snapshot_dir} either") from None
        iteration, snapshot = found
        rel = snapshot.relative_to(experiment.model_dir).as_posix()
        raise CheckpointError(f"{err}; the newest loadable snapshot is model/{rel} (iteration {iteration}): "
                              f"use {flag_prefix}--checkpoint {rel}") from None


def check_sizes(ckpt: dict[str, Any], *, num_obs: int, num_actions: int, num_critic_obs: int) -> None:
    """`ValueError` naming both sides when the checkpoint's observation or action sizes differ from the env's.

    The critic's size counts only where the checkpoint records it (older ones did not).
    """
    keys = ["num_obs", "num_actions"]
    if ckpt.get("num_critic_obs", num_critic_obs) != num_critic_obs:
        keys.append("num_critic_obs")
    ours = {"num_obs": num_obs, "num_actions": num_actions, "num_critic_obs": num_critic_obs}
    theirs = {k: ckpt.get(k) for k in keys}
    if theirs != {k: ours[k] for k in keys}:
        def fmt(d: dict[str, Any]) -> str:
            return ", ".join(f"{k}={v}" for k, v in d.items())
        raise ValueError(f"checkpoint has {fmt(theirs)} but the env has {fmt({k: ours[k] for k in keys})}")
