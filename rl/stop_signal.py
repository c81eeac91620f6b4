"""Ctrl-C / SIGTERM during training: finish the iteration, save, stop.

`GracefulStop` installs handlers for SIGINT and SIGTERM while training runs. The
first signal only sets `requested`; the runner checks it after each iteration,
saves and returns. A second Ctrl-C stops at once with KeyboardInterrupt, keeping
the last completed checkpoint; inside `protect()` (a checkpoint write) it waits
for the block to end, so a write is never cut short and the files on disk stay a
consistent pair (policy.pt and its snapshot). train.py turns the abort into one line.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator


class GracefulStop:
    def __init__(self, announce: Callable[[str], None], next_iteration: Callable[[], int]) -> None:
        self.requested = False
        self._announce = announce
        self._next_iteration = next_iteration
        self._previous: dict[int, Any] = {}
        self._protected = 0  # depth of nested protect() blocks
        self._abort_pending = False  # a second Ctrl-C came inside protect()

    def __enter__(self) -> "GracefulStop":
        self.requested = False
        self._abort_pending = False
        if threading.current_thread() is threading.main_thread():  # handlers only from the main thread
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._previous = {}

    @contextlib.contextmanager
    def protect(self) -> Iterator[None]:
        """A block a second Ctrl-C must not cut short: the abort is raised when it ends."""
        self._protected += 1
        try:
            yield
        finally:
            self._protected -= 1
        if self._protected == 0 and self._abort_pending:
            self._abort_pending = False
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:  # second Ctrl-C: abort now, or when the write ends
            if self._protected:
                self._abort_pending = True
                return
            raise KeyboardInterrupt
        self.requested = True
        n = self._next_iteration()  # inside protect() iteration n - 1 is done and being saved
        doing = f"saving iteration {n - 1}" if self._protected else f"finishing iteration {n}, saving"
        self._announce(f"\n{signal.Signals(signum).name} received: {doing}, then stopping "
                       "(Ctrl-C again: stop now, keeping the last completed checkpoint)")
