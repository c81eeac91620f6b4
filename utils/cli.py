"""One-line errors for the command-line scripts (the benchmarks; train.py and play.py have their own lists)."""

from __future__ import annotations

import sys
from typing import Callable


def main_with_one_line_errors(main: Callable[[], int | None]) -> int:
    """Run `main`; a user-facing error (every ValueError of ours: config, experiment, checkpoint, device;
    a missing file) becomes ``error: ...`` on stderr and exit status 2 instead of a traceback."""
    try:
        return int(main() or 0)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
