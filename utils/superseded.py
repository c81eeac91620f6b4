"""Resuming an experiment in place from an older checkpoint: what training would overwrite is moved aside.

``train.py --name run1 --resume run1 --checkpoint all/policy_20.pt`` with policy.pt at
iteration 45 would replace policy.pt at the first save, and all/policy_30.pt and
all/policy_40.pt as training passes those iterations. Nothing is lost instead: before
training starts, policy.pt (unless it is the resumed checkpoint byte for byte) and every
snapshot newer than the resumed iteration move, in the same layout, to
``model/superseded_<newest iteration>/`` (``-2``, ``-3``... if taken), where
``--checkpoint superseded_45/policy.pt`` still reaches them; policy.pt then holds the
resumed checkpoint, so the folder reads as if the run had stopped there.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path

from utils.checkpoint import CheckpointError, read_checkpoint
from utils.experiment import Experiment
from utils.files import atomic_write_bytes

PREFIX = "superseded_"


def would_overwrite(experiment: Experiment, resumed: Path, iteration: int) -> list[tuple[Path, int | None]]:
    """(path, iteration or None if unreadable) of what training from `resumed` at `iteration` would overwrite."""
    found: list[tuple[Path, int | None]] = []
    policy = experiment.policy_path
    if policy.is_file() and not filecmp.cmp(policy, resumed, shallow=False):
        try:
            found.append((policy, int(read_checkpoint(policy)["iteration"])))
        except CheckpointError:
            found.append((policy, None))
    return found + [(path, it) for it, path in sorted(experiment.snapshots()) if it > iteration]


def set_aside_newer(experiment: Experiment, resumed: Path, iteration: int) -> str | None:
    """Move what training from `resumed` would overwrite to model/superseded_<it>/; the one-line note, or None."""
    files = would_overwrite(experiment, resumed, iteration)
    if not files:
        return None
    rel = resumed.resolve().relative_to(experiment.model_dir.resolve()).as_posix()  # before the disk changes
    known = [it for _, it in files if it is not None]
    folder = _free_folder(experiment.model_dir, f"{PREFIX}{max(known) if known else 'unreadable'}")
    moved_policy = files[0][0] == experiment.policy_path
    if moved_policy:  # a copy first, then the resumed bytes replace policy.pt atomically: it never goes missing
        folder.mkdir(parents=True)
        shutil.copy2(experiment.policy_path, folder / "policy.pt")
        atomic_write_bytes(experiment.policy_path, resumed.read_bytes())
    for path, _ in files[1:] if moved_policy else files:
        target = folder / path.relative_to(experiment.model_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    now = f"; policy.pt now holds iteration {iteration}" if moved_policy else ""
    return (f"note: resuming {experiment.name} from model/{rel} (iteration {iteration}): "
            f"{_describe(files, experiment.model_dir)} moved to model/{folder.name}/ so that training does not "
            f"overwrite them{now}")


def _free_folder(model_dir: Path, name: str) -> Path:
    """model_dir/name, or name-2, name-3, ... if taken."""
    folder, n = model_dir / name, 1
    while folder.exists():
        n += 1
        folder = model_dir / f"{name}-{n}"
    return folder


def _describe(files: list[tuple[Path, int | None]], model_dir: Path) -> str:
    """'policy.pt (iteration 45) and 3 snapshots all/policy_25.pt..all/policy_45.pt', short whatever the count."""
    names = [path.relative_to(model_dir).as_posix() for path, _ in files]
    parts = [f"policy.pt ({'unreadable' if it is None else f'iteration {it}'})"
             for name, (_, it) in zip(names, files) if name == "policy.pt"]
    snapshots = [name for name in names if name != "policy.pt"]
    parts += [f"{len(snapshots)} snapshots {snapshots[0]}..{snapshots[-1]}"] if len(snapshots) > 2 else snapshots
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
