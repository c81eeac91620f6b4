"""Weights & Biases beside TensorBoard: the same scalars, the full config, and play.py's evaluation.

One W&B run per experiment. Its id is kept in ``log/wandb_run_id``, written before
the run starts, so a run killed at any point and then resumed (``train.py --resume``)
continues the same W&B run. W&B's own files stay in the experiment: the run
folders in ``log/wandb/`` (``dir=log/``) and the logs of wandb-core, which it would
otherwise keep in ~/.cache/wandb (unless $WANDB_CACHE_DIR says where).

Scalars are logged at ``step = iteration``, as the TensorBoard events are: steps
keep increasing across resumes, also offline, where each process writes its own
folder and ``wandb sync`` uploads a resumed run's folders in the order they
started. An evaluation goes to the run's summary, not its history: a history row
would take a step that the next ``--resume`` needs (W&B drops rows logged at a
step it has passed).
"""

from __future__ import annotations

import math
import os
import re
import secrets
import string
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from utils.files import atomic_write_text

INSTALL = 'pip install -e ".[wandb]"'
RUN_ID_FILE = "wandb_run_id"  # in the experiment's log/ folder
_ID_CHARS = string.ascii_lowercase + string.digits  # W&B's own id alphabet and length (8)


def read_run_id(log_dir: str | Path) -> str | None:
    """The experiment's W&B run id, or None when it has none (or the file is not one we wrote)."""
    try:
        text = (Path(log_dir) / RUN_ID_FILE).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", text) else None


@contextmanager
def _wandb_cache_in(log_dir: Path) -> Iterator[None]:
    """wandb-core, started by a process's first wandb.init, puts its logs under $WANDB_CACHE_DIR: keep them in log/."""
    if "WANDB_CACHE_DIR" in os.environ:  # the user's choice
        yield
        return
    os.environ["WANDB_CACHE_DIR"] = str(log_dir)  # wandb-core writes <it>/wandb/logs/
    try:
        yield
    finally:
        os.environ.pop("WANDB_CACHE_DIR", None)


def start_run(log_dir: str | Path, name: str, project: str, entity: str | None) -> Any:
    """Start the experiment's W&B run, or continue it when log/ already holds its id."""
    import wandb

    log_dir = Path(log_dir)
    run_id = read_run_id(log_dir)
    if run_id is None:
        run_id = "".join(secrets.choice(_ID_CHARS) for _ in range(8))
        atomic_write_text(log_dir / RUN_ID_FILE, run_id + "\n")
    with _wandb_cache_in(log_dir):
        return wandb.init(project=project, entity=entity, name=name, id=run_id, resume="allow", dir=str(log_dir))


class WandbLogger:
    name = "W&B"

    def __init__(self, log_dir: str | Path, run_name: str, project: str, entity: str | None,
                 config: dict[str, Any]) -> None:
        import wandb

        self.errors: tuple[type[BaseException], ...] = (OSError, wandb.errors.Error)
        self.log_dir, self.run_name, self.project, self.entity = Path(log_dir), run_name, project, entity
        self.config = config
        self.where = f"project {project}"
        self.run: Any = None

    def open(self, resume_iteration: int) -> None:
        """Start or continue the run (once) and record the full config in it."""
        if self.run is not None:
            return
        self.run = start_run(self.log_dir, self.run_name, self.project, self.entity)
        self.where = f"run {self.run.id} of project {self.project}"
        self.run.config.update(self.config, allow_val_change=True)  # a resume may change e.g. max_iterations
        next_step = int(getattr(self.run, "step", 0) or 0)  # online, after a resume: the last logged step + 1
        if next_step > resume_iteration + 1:  # e.g. resumed from an older snapshot, or killed after logging
            print(f"note: W&B run {self.run.id} already holds iterations up to {next_step - 1}: W&B keeps those "
                  f"rows and drops this run's iterations {resume_iteration + 1}..{next_step - 1} (its steps only "
                  "increase; TensorBoard replaces them)", file=sys.stderr, flush=True)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self.run is not None:
            self.run.log(values, step=step)  # calls at one step fill one row

    def flush(self) -> None:
        """Nothing to do: wandb-core writes (and uploads) as the run goes."""

    def close(self) -> None:
        run, self.run = self.run, None
        if run is not None:
            run.finish()


def add_evaluation(log_dir: str | Path, runner_cfg: Any, name: str, iteration: int | None,
                   summaries: dict[str, dict[str, Any]], images: list[Path]) -> str | None:
    """Put play.py --eval's numbers and plots in the summary of the experiment's W&B run.

    Only for an experiment trained with ``runner.logger = "wandb"`` (log/ holds its run
    id); returns the line to print, or None when the experiment has no W&B run.
    """
    if getattr(runner_cfg, "logger", "tensorboard") != "wandb" or read_run_id(log_dir) is None:
        return None
    try:
        import wandb
    except ImportError:
        return f"note: {name}: the evaluation was not added to its W&B run: wandb is not installed ({INSTALL})"
    values: dict[str, Any] = {f"eval/{policy}/{key}": value for policy, summary in summaries.items()
                              for key, value in summary.items()
                              if isinstance(value, (int, float)) and math.isfinite(value)}
    values.update({f"eval/{Path(path).stem}": wandb.Image(str(path)) for path in images})
    values["eval/iteration"] = iteration
    project = getattr(runner_cfg, "wandb_project", "legged-ppo")
    try:
        run = start_run(log_dir, name, project, getattr(runner_cfg, "wandb_entity", None))
        try:
            run.summary.update(values)
        finally:
            run.finish()
    except (OSError, wandb.errors.Error) as err:
        return f"warning: {name}: the evaluation was not added to its W&B run: {' '.join(str(err).split())}"
    return f"{name}: added the evaluation to the summary of W&B run {run.id} (project {project})"
