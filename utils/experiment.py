"""The experiment folder: experiments/<name>/{model/{policy.pt, cfg.yaml, all/}, log/, export/}."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def experiments_root() -> Path:
    """``experiments/`` in the project, or $LEGGED_EXPERIMENTS_DIR when set (tests, shared storage)."""
    return Path(os.environ.get("LEGGED_EXPERIMENTS_DIR", PROJECT_ROOT / "experiments"))


class ExperimentError(ValueError):
    """A user-facing problem with an experiment folder (one line, says what to do)."""


@dataclass(frozen=True)
class Experiment:
    name: str
    root: Path = field(default_factory=experiments_root)

    @property
    def dir(self) -> Path:
        return self.root / self.name

    @property
    def model_dir(self) -> Path:
        return self.dir / "model"

    @property
    def policy_path(self) -> Path:
        return self.model_dir / "policy.pt"

    @property
    def cfg_path(self) -> Path:
        return self.model_dir / "cfg.yaml"

    @property
    def log_dir(self) -> Path:
        return self.dir / "log"

    @property
    def export_dir(self) -> Path:
        return self.dir / "export"

    def exists(self) -> bool:
        return self.dir.exists() and any(self.dir.iterdir())

    def checkpoint(self, which: str | None = None) -> Path:
        """policy.pt, or a path relative to model/ such as all/policy_50.pt; must exist."""
        path = self.policy_path if which is None else self.model_dir / which
        if not self.dir.is_dir():
            raise ExperimentError(f"no experiment '{self.name}': looked for {self.dir}")
        if not path.is_file():
            raise ExperimentError(f"no checkpoint {path.relative_to(self.dir)} in experiment '{self.name}' (looked for {path})")
        return path

    def prepare_new(self, overwrite: bool) -> None:
        """Make the folders of a new run; never wipe an existing one unless overwrite."""
        if self.exists():
            if not overwrite:
                raise ExperimentError(
                    f"experiment '{self.name}' already exists at {self.dir}; "
                    f"use --resume {self.name} to continue it or --overwrite to replace it")
            shutil.rmtree(self.dir)
        self.model_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
