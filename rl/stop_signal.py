"""Ctrl-C / SIGTERM during training: finish the iteration, save, stop.

`GracefulStop` installs handlers for SIGINT and SIGTERM while training runs. The
first signal only sets `requested`; the runner checks it after each iteration,
saves and returns. A second Ctrl-C aborts at once with KeyboardInterrupt.
"""

from __future__ import annotations

import signal
import threading
from typing import Any, Callable


class GracefulStop:
    def __init__(self, announce: Callable[[str], None], next_iteration: Callable[[], int]) -> None:
        self.requested = False
        self._announce = announce
        self._next_iteration = next_iteration
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "GracefulStop":
        self.requested = False
        if threading.current_thread() is threading.main_thread():  # handlers only from the main thread
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._previous = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt  # second Ctrl-C: abort now
        self.requested = True
        self._announce(f"\n{signal.Signals(signum).name} received: finishing iteration {self._next_iteration()}, "
                       "saving, then stopping (Ctrl-C again to abort)")
