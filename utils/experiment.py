"""The experiment folder: experiments/<name>/{model/{policy.pt, cfg.yaml, all/}, log/, export/}.

Every script (train.py, play.py, the benchmarks) reaches an experiment through
`Experiment`, which is where the safety rules live:

- a name is a plain folder name (`validate_name`): never empty, never a path,
  never `.`/`..`, so nothing resolves outside the experiments root;
- an existing experiment is replaced only when asked (``overwrite``) and only
  when it *is* an experiment folder (it holds ``model/`` or ``log/``); a real
  folder is never followed through a symlink;
- checkpoint paths given by the user stay inside the experiment's ``model/``.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
MAX_NAME_LENGTH = 100
NAME_RULE = "ASCII letters, digits, '-', '_' and '.', starting with a letter, digit or '_', at most 100 characters"
TEMP_SUFFIX = ".tmp"  # utils.files writes ".<name>.<random>.tmp" next to the destination


def experiments_root() -> Path:
    """``experiments/`` in the project, or $LEGGED_EXPERIMENTS_DIR when set (tests, shared storage)."""
    return Path(os.environ.get("LEGGED_EXPERIMENTS_DIR", PROJECT_ROOT / "experiments"))


class ExperimentError(ValueError):
    """A user-facing problem with an experiment folder (one line, says what to do)."""


def validate_name(name: str) -> str:
    """`name` if it is a plain experiment name, else `ExperimentError` saying what is accepted."""
    if not isinstance(name, str) or not name:
        raise ExperimentError(f"experiment name is empty; use {NAME_RULE}, e.g. run1")
    if len(name) > MAX_NAME_LENGTH or not NAME_PATTERN.fullmatch(name):
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise ExperimentError(f"experiment name {shown!r} is not a plain folder name; use {NAME_RULE}, e.g. run1")
    return name


@dataclass(frozen=True)
class Experiment:
    name: str
    root: Path = field(default_factory=experiments_root)
    read_only: bool = False  # a policy folder outside experiments/ (open_policy_folder): never written

    def __post_init__(self) -> None:
        validate_name(self.name)
        object.__setattr__(self, "root", Path(self.root))

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
    def snapshot_dir(self) -> Path:
        return self.model_dir / "all"

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
        """Something non-empty (or a file, or a link) stands where the experiment folder would be."""
        if self.dir.is_symlink() or (self.dir.exists() and not self.dir.is_dir()):
            return True
        return self.dir.is_dir() and any(self.dir.iterdir())

    def is_experiment_folder(self) -> bool:
        """A real folder (not a symlink) holding model/ or log/: what train.py makes."""
        return (self.dir.is_dir() and not self.dir.is_symlink()
                and ((self.dir / "model").is_dir() or (self.dir / "log").is_dir()))

    def checkpoint(self, which: str | None = None) -> Path:
        """policy.pt, or a path relative to model/ such as all/policy_50.pt; must exist inside model/."""
        if not self.dir.is_dir():
            raise ExperimentError(f"no experiment '{self.name}': looked for {self.dir}")
        path = self.policy_path if which is None else self.model_dir / which
        if which is not None:
            try:
                path.resolve().relative_to(self.model_dir.resolve())
            except ValueError:
                raise ExperimentError(f"checkpoint '{which}' is outside experiment '{self.name}'; give a path "
                                      f"relative to {self.model_dir}, e.g. all/policy_50.pt") from None
        if not path.is_file():
            hint = ""
            if which is None and self.snapshots():
                rel = self.snapshots()[0][1].relative_to(self.model_dir).as_posix()
                hint = f"; the newest snapshot is model/{rel}: use --checkpoint {rel}"
            elif which is None and self.cfg_path.is_file():
                hint = (f"; it stopped before its first save: train.py --name {self.name} --resume {self.name} "
                        "trains it from iteration 0")
            raise ExperimentError(f"no checkpoint model/{Path(which or 'policy.pt').as_posix()} in experiment "
                                  f"'{self.name}' (looked for {path}){hint}")
        return path

    def unstarted(self) -> bool:
        """An experiment folder without any checkpoint (it stopped before its first save): a resume starts it
        from iteration 0 with its cfg.yaml. Without cfg.yaml either, `ExperimentError` names the way out."""
        if not self.is_experiment_folder() or self.policy_path.exists() or self.snapshots():
            return False
        if not self.cfg_path.is_file():
            raise ExperimentError(f"experiment '{self.name}' holds neither a checkpoint nor model/cfg.yaml (it "
                                  f"stopped while being set up); start it again with --config CONFIG --name {self.name} "
                                  "--overwrite")
        return True

    def snapshots(self) -> list[tuple[int, Path]]:
        """(iteration, path) of every model/all/policy_<it>.pt, newest first."""
        found = []
        for path in self.snapshot_dir.glob("policy_*.pt") if self.snapshot_dir.is_dir() else []:
            stem = path.stem.removeprefix("policy_")
            if stem.isdigit():
                found.append((int(stem), path))
        return sorted(found, reverse=True)

    def check_new(self, overwrite: bool) -> None:
        """Refuse (before anything is built or written) a new run whose folder may not be used."""
        if not self.exists():
            return
        if not overwrite:
            raise ExperimentError(
                f"experiment '{self.name}' already exists at {self.dir}; "
                f"use --resume {self.name} to continue it or --overwrite to replace it")
        if not self.is_experiment_folder():
            what = "a symlink" if self.dir.is_symlink() else "a file" if not self.dir.is_dir() else \
                "a folder without model/ or log/"
            raise ExperimentError(f"{self.dir} is not an experiment folder ({what}); --overwrite only replaces "
                                  "experiments; move it away or pick another --name")

    def prepare_new(self, overwrite: bool) -> None:
        """Make the folders of a new run; replace an existing experiment only if overwrite."""
        self.check_new(overwrite)
        if self.exists():
            shutil.rmtree(self.dir)
        self.model_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)

    def remove_stale_temp_files(self) -> list[Path]:
        """Delete the temp files a killed write left in model/ (never anything else); returns them."""
        removed = []
        for folder in (self.model_dir, self.snapshot_dir):
            if not folder.is_dir():
                continue
            for path in folder.glob(f".*{TEMP_SUFFIX}"):
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed.append(path)
        return removed


def is_folder_path(text: str) -> bool:
    """A --name/--resume value that is a path (it holds a '/'), not an experiment name."""
    return "/" in text or os.sep in text


def open_policy_folder(text: str) -> Experiment:
    """A read-only policy folder anywhere, e.g. benchmarks/results/go2/policy: model/cfg.yaml and model/policy.pt."""
    path = Path(text).expanduser().resolve()
    if not (path / "model" / "cfg.yaml").is_file():
        raise ExperimentError(f"{text} is not a policy folder: it has no model/cfg.yaml (a policy folder holds "
                              "model/policy.pt and model/cfg.yaml, e.g. benchmarks/results/go2/policy)")
    return Experiment(path.name, root=path.parent, read_only=True)


def open_experiment(text: str) -> Experiment:
    """An experiment by name (experiments/<name>/), or a read-only policy folder by path."""
    return open_policy_folder(text) if is_folder_path(text) else Experiment(text)
