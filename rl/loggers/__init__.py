"""Where a training run's scalars go: one module per backend, chosen by ``runner.logger``.

TensorBoard events are always written to ``experiments/<name>/log/``: they are the
run's own record, readable without a network or an account. ``runner.logger =
"wandb"`` adds Weights & Biases beside them (as rsl_rl's W&B writer does).

A backend has ``name`` and ``where`` (for messages), ``errors`` (the exceptions
that stop it without stopping the run), ``open(resume_iteration)``,
``scalars(step, values)``, ``flush()`` and ``close()``; `rl.train_log.TrainLog`
drives them.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Protocol

from config.validate import LOGGERS
from rl.loggers import wandb_logger
from rl.loggers.tensorboard_logger import TensorBoardLogger

INSTALL = {"wandb": wandb_logger.INSTALL}  # how to install each optional backend's package

__all__ = ["INSTALL", "LOGGERS", "Logger", "LoggerUnavailable", "make_loggers", "require_logger"]


class LoggerUnavailable(ValueError):
    """The chosen logger's package is not installed; one line saying how to install it."""


class Logger(Protocol):
    name: str
    where: str
    errors: tuple[type[BaseException], ...]

    def open(self, resume_iteration: int) -> None: ...
    def scalars(self, step: int, values: dict[str, float]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def require_logger(name: str) -> None:
    """Refuse, with one line, a logger whose package is missing (call it before anything is built or written)."""
    if name not in INSTALL:
        return
    try:
        importlib.import_module(name)
    except ImportError:
        raise LoggerUnavailable(f"runner.logger = {name!r} needs the {name} package, which is not installed; "
                                f"{INSTALL[name]} (or use runner.logger=tensorboard)") from None


def make_loggers(runner_cfg: Any, log_dir: str | Path | None, run_name: str,
                 cfg_dict: dict[str, Any] | None) -> list[Logger]:
    """The backends of a run writing to `log_dir` (none when it is None, e.g. ranks other than 0)."""
    if log_dir is None:
        return []
    kind = getattr(runner_cfg, "logger", "tensorboard")
    if kind not in LOGGERS:
        raise ValueError(f"runner.logger = {kind!r}: expects one of {', '.join(LOGGERS)}")
    loggers: list[Logger] = [TensorBoardLogger(log_dir)]
    if kind == "wandb":
        require_logger(kind)
        project = getattr(runner_cfg, "wandb_project", "legged-ppo")
        entity = getattr(runner_cfg, "wandb_entity", None)
        loggers.append(wandb_logger.WandbLogger(log_dir, run_name, project, entity, cfg_dict or {}))
    return loggers
