"""One check of a torch device string, shared by train.py, play.py and the benchmarks."""

from __future__ import annotations

import torch


class DeviceError(ValueError):
    """A device that cannot be used here; one line naming it and what would work."""


def check_device(text: str, flag: str = "--device") -> str:
    """`text` if torch can run on that device on this machine, else `DeviceError`."""
    try:
        device = torch.device(str(text))
    except (RuntimeError, TypeError):
        raise DeviceError(f"{flag} '{text}' is not a torch device; use cpu, cuda or cuda:N") from None
    if device.type == "cpu":
        return str(text)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is a CPU build" if torch.version.cuda is None else "no CUDA GPU is visible"
            raise DeviceError(f"{flag} {text}: CUDA is not available on this machine ({why}); use {flag} cpu")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise DeviceError(f"{flag} {text}: this machine has {count} CUDA device(s), "
                              f"cuda:0..cuda:{count - 1}")
        return str(text)
    if device.type == "mps" and getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return str(text)
    raise DeviceError(f"{flag} {text}: '{device.type}' devices are not available here; use cpu or cuda")
