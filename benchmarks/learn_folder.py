"""The results folder of a `benchmarks/learn.py` run, as far as the policy goes: the final policy kept in
<out>/policy/, the running checkpoint copied into <out>/checkpoint/, and the experiment rebuilt from either
in a clone that lacks experiments/ (it is not in git).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from utils.experiment import Experiment
from utils.files import atomic_write_bytes

RUNNING_CHECKPOINT = "checkpoint"  # <out>/checkpoint/: the running run's latest checkpoint and cfg.yaml


class CheckpointCopier:
    """Copies the experiment's policy.pt and cfg.yaml into <out>/checkpoint/ at most every `every_s` seconds.

    experiments/ is not in git: with this copy next to the curve, a run cut off part-way (a session that
    ends, a machine taken back) can be committed as it stands and continued with --resume in another clone.
    """

    def __init__(self, experiment: Experiment, out_dir: Path, every_s: float):
        self.experiment, self.dest, self.every_s = experiment, out_dir / RUNNING_CHECKPOINT, every_s
        self._last = time.monotonic()

    def __call__(self) -> None:
        due = self.every_s > 0 and time.monotonic() - self._last >= self.every_s
        if due and self.experiment.policy_path.is_file():
            self.dest.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.dest / "cfg.yaml", self.experiment.cfg_path.read_bytes())
            atomic_write_bytes(self.dest / "policy.pt", self.experiment.policy_path.read_bytes())
            self._last = time.monotonic()

    def remove(self) -> None:
        shutil.rmtree(self.dest, ignore_errors=True)


def restore_experiment(experiment: Experiment, kept: Path) -> None:
    """Recreate a run's experiment folder from the checkpoint it kept (policy.pt and cfg.yaml in <out>/policy/model/,
    or <out>/checkpoint/ where the run was cut off).

    The kept checkpoint is the run's last one (or its last copy), optimizer and terrain levels included, so a run
    committed with its results folder continues in another clone exactly as in its own.
    """
    experiment.prepare_new(overwrite=False)
    for name in ("policy.pt", "cfg.yaml"):
        shutil.copy2(kept / name, experiment.model_dir / name)
    print(f"restored {experiment.dir} from {kept}", flush=True)


def keep_policy(experiment: Experiment, dest: Path) -> Path:
    """Copy the run's final checkpoint, cfg.yaml and a fresh export into dest (replaced whole, atomically)."""
    import play  # the scripts' layer: imported where it is used, as learn.py's evaluation does

    if play.main(["--name", experiment.name, "--export"]) != 0:
        raise RuntimeError(f"exporting {experiment.name} failed")
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
    tmp.chmod(0o755)
    try:
        (tmp / "model").mkdir()
        shutil.copy2(experiment.policy_path, tmp / "model" / "policy.pt")
        shutil.copy2(experiment.cfg_path, tmp / "model" / "cfg.yaml")
        shutil.copytree(experiment.export_dir, tmp / "export")
        old = dest.with_name(f".{dest.name}.old")
        if dest.exists():
            dest.rename(old)
        tmp.rename(dest)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
