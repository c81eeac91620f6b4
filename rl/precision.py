"""Training precision: bf16 autocast for the network passes of the PPO update, everything else fp32.

``runner.precision``: ``fp32``, ``bf16`` or ``auto``. With bf16 the actor's and
critic's forward passes in the update run under ``torch.autocast(dtype=bfloat16)``
and their outputs are cast back to fp32 at once, so the log-probabilities,
ratios, losses and the backward pass into the fp32 weights see fp32 numbers.
Weights, Adam's state, the observation normalisers, advantages and returns are
always fp32, and so are checkpoints and exports. bf16 keeps fp32's exponent
range, so no loss scaling is needed.

``auto`` picks bf16 where the hardware multiplies bf16 natively: a CPU with
AMX-BF16 or AVX512-BF16 (read from /proc/cpuinfo's flags on Linux), or a CUDA
device that supports bf16; otherwise fp32, because emulated bf16 is slower
than fp32 (16x slower for the update on an AVX2-only AMD EPYC, measured with
benchmarks/train_throughput.py --variant). Rollout inference runs under
the same autocast, so that the rollout's action statistics and the update's
recomputed ones share their numerics (else bf16 rounding alone would move PPO's
ratio and KL); it is 3-4% of an iteration.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, ContextManager

import torch

from config.validate import PRECISIONS
from utils.devices import cpuinfo_field

CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def cpu_bf16_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The CPU's native bf16 instruction sets among `CPU_BF16_FLAGS` ([] where /proc/cpuinfo is missing)."""
    flags = (cpuinfo_field("flags", cpuinfo) or "").split()
    return [f for f in CPU_BF16_FLAGS if f in flags]


def resolve_precision(requested: str, device: str | torch.device) -> tuple[str, str]:
    """(``"fp32"`` or ``"bf16"``, why): `requested`, with ``auto`` decided by the hardware of `device`."""
    if requested not in PRECISIONS:
        raise ValueError(f"runner.precision must be one of {', '.join(PRECISIONS)}, got {requested!r}")
    if requested != "auto":
        return requested, "as configured"
    device = torch.device(device)
    if device.type == "cuda":
        ok = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        return ("bf16", "auto: the CUDA device supports bf16") if ok else ("fp32", "auto: no bf16 on this CUDA device")
    if device.type == "cpu":
        flags = cpu_bf16_flags()
        if flags:
            return "bf16", f"auto: this CPU has {' and '.join(f.upper().replace('_', '-') for f in flags)}"
        return "fp32", "auto: no AMX-BF16 or AVX512-BF16 on this CPU"
    return "fp32", f"auto: bf16 is not used on {device.type}"


def emulated_bf16_note(choice: str, device: str | torch.device) -> str | None:
    """A note when bf16 was chosen (e.g. recorded by a run resumed here) but this hardware only emulates it."""
    if choice != "bf16" or resolve_precision("auto", device)[0] == "bf16":
        return None
    return ("note: runner.precision is bf16, which this machine only emulates (much slower than fp32 here); "
            "--set runner.precision=auto picks for the machine")


class Precision:
    """The autocast context of the update's network passes; a no-op for fp32."""

    def __init__(self, choice: str = "fp32", device: str | torch.device = "cpu") -> None:
        if choice not in ("fp32", "bf16"):
            raise ValueError(f"Precision takes 'fp32' or 'bf16' (resolve 'auto' first), got {choice!r}")
        self.choice = choice
        self.device_type = torch.device(device).type

    @property
    def bf16(self) -> bool:
        return self.choice == "bf16"

    def autocast(self) -> ContextManager:
        """bf16 autocast for the network forwards (outputs must be cast back with ``.float()``)."""
        if not self.bf16:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=torch.bfloat16)


def runner_precision(cfg: Any, device: str | torch.device, cfg_dict: dict[str, Any] | None,
                     note: Callable[[str], None]) -> tuple[Precision, str]:
    """The runner's `Precision` for ``cfg.runner.precision`` and why; the choice goes into `cfg_dict` (what
    checkpoints record: "auto" resolved), and bf16 on hardware that only emulates it gets a `note`."""
    choice, reason = resolve_precision(getattr(cfg.runner, "precision", "fp32"), device)
    if (line := emulated_bf16_note(choice, device)) is not None:
        note(line)
    if isinstance((cfg_dict or {}).get("runner"), dict):
        cfg_dict["runner"]["precision"] = choice
    return Precision(choice, device), reason
