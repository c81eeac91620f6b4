"""One check of a torch device string, shared by train.py, play.py and the benchmarks; and the machine's name
as a benchmark records it."""

from __future__ import annotations

import os
import platform
from pathlib import Path

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


def cpuinfo_field(key: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The value of the first line of /proc/cpuinfo that starts with `key` (e.g. "model name", "flags"), stripped;
    None where the file or the line is missing (not Linux, some ARM kernels)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    return next((line.split(":", 1)[1].strip() for line in text.splitlines()
                 if line.startswith(key) and ":" in line), None)


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name as /proc/cpuinfo gives it (e.g. "AMD EPYC"), else `platform.processor()`, else None."""
    return cpuinfo_field("model name", cpuinfo) or platform.processor() or None


def describe_machine(device: str | torch.device, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """What a run trained on, for its curve: the CPU model and the cores this process may use, with the GPU first
    when `device` is one. Hosted machines of one size differ in CPU (a run's time per iteration differed 2.5x
    between two 2-core machines), so a curve names it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    model = cpu_model(cpuinfo)
    machine = f"{platform.machine()} x {cores} cores" + (f" ({model})" if model else "")
    device = torch.device(device)
    if device.type == "cuda":  # the GPU does the work: name it first
        machine = f"{torch.cuda.get_device_name(device)} + {machine}"
    return machine
