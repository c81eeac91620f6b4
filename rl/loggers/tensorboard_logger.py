"""TensorBoard events in the experiment's log/ folder (opened lazily: building a runner writes nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TensorBoardLogger:
    name = "TensorBoard"
    # TensorBoard writes from a background thread and re-raises a refused write (disk full) on a later call
    errors: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, log_dir: str | Path) -> None:
        self.where = str(log_dir)
        self.writer: Any = None

    def open(self, resume_iteration: int) -> None:
        """Open the writer (once); on a resume, drop events logged after the resumed checkpoint."""
        if self.writer is not None:
            return
        from torch.utils.tensorboard import SummaryWriter

        purge_step = resume_iteration + 1 if resume_iteration > 0 else None
        self.writer = SummaryWriter(self.where, purge_step=purge_step)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self.writer is not None:
            for tag, value in values.items():
                self.writer.add_scalar(tag, value, global_step=step)

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()
