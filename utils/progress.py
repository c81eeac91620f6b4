"""A one-line progress indicator with rate and ETA for long loops.

    progress = Progress(total=1500, label="train")
    for it in ...:
        ...
        print(progress.update())   # "train [  12/1500]   0.8%  2.1 it/s  ETA 11m48s"

The rate is measured over the updates of this `Progress` only (``initial``
counts work done before, e.g. by a resumed run, without counting its time).
"""

from __future__ import annotations

import time
from typing import Callable


def format_duration(seconds: float) -> str:
    """Compact duration: ``48s``, ``11m48s``, ``2h05m``, ``3d04h``."""
    if seconds != seconds or seconds == float("inf"):  # NaN or unknown
        return "?"
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    if h < 24:
        return f"{h}h{m:02d}m"
    d, h = divmod(h, 24)
    return f"{d}d{h:02d}h"


class Progress:
    """Counts units of work towards `total` and formats rate and time left.

    Args:
        total: count at which the work is done.
        label: text printed before the counter ("" for none).
        initial: count already done when this object is created.
        clock: seconds as a float; injectable for tests (default `time.monotonic`).
        unit: unit name for the rate, e.g. "it".
    """

    def __init__(self, total: int, label: str = "", initial: int = 0,
                 clock: Callable[[], float] = time.monotonic, unit: str = "it") -> None:
        self.total = int(total)
        self.label = label
        self.initial = int(initial)
        self.count = int(initial)
        self.unit = unit
        self._clock = clock
        self._start = clock()

    @property
    def elapsed(self) -> float:
        return self._clock() - self._start

    @property
    def rate(self) -> float:
        """Units per second since this object was created (0 before any time has passed)."""
        elapsed = self.elapsed
        return (self.count - self.initial) / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float:
        """Seconds left at the current rate (inf when the rate is not known yet)."""
        left = max(self.total - self.count, 0)
        if left == 0:
            return 0.0
        rate = self.rate
        return left / rate if rate > 0 else float("inf")

    def update(self, n: int = 1) -> str:
        """Advance by `n` and return the formatted line."""
        self.count += n
        return self.format()

    def format(self) -> str:
        width = len(str(self.total))
        frac = 100.0 * self.count / self.total if self.total > 0 else 100.0
        text = (f"[{self.count:>{width}}/{self.total}] {frac:5.1f}%  "
                f"{self.rate:.1f} {self.unit}/s  ETA {format_duration(self.eta)}")
        return f"{self.label} {text}" if self.label else text
