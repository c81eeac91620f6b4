"""Atomic file writes.

A checkpoint or config is first written to a temporary file in the destination
directory, flushed and fsynced, then moved over the destination with
`os.replace` (atomic on POSIX and Windows for paths on one filesystem). A crash
or Ctrl-C at any moment leaves either the old file or the new one, never a
truncated file; the temporary file is removed when the write fails.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable

import torch

_DEFAULT_MODE = 0o644  # permissions of a new file (mkstemp would give 0o600)


def _atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else _DEFAULT_MODE
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)
    return path


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself (best effort: not every OS can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_torch_save(obj: Any, path: str | os.PathLike) -> Path:
    """`torch.save(obj, path)`, atomically. Creates missing parent directories."""
    return _atomic_write(path, lambda f: torch.save(obj, f))


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write `text` to `path`, atomically. Creates missing parent directories."""
    data = text.encode(encoding)
    return _atomic_write(path, lambda f: f.write(data))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path`, atomically. Creates missing parent directories."""
    return _atomic_write(path, lambda f: f.write(data))
