"""Where MuJoCo writes its warning log.

MuJoCo appends every warning (an unstable simulation, a contact buffer that
overflowed) to ``MUJOCO_LOG.TXT`` in the current directory unless told
otherwise. A run must not write outside its experiment, so train.py sends the
log into the experiment's ``log/`` folder; the warnings still go to the console.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

LOG_NAME = "mujoco_warnings.txt"


def send_mujoco_log_to(folder: Path | None) -> Path | None:
    """Write MuJoCo's warning log to ``folder/mujoco_warnings.txt``; None keeps it off disk (console only).

    Returns the log file's path, or None when no file is written.
    """
    config = mujoco.MjLogConfig.get()
    if folder is None:
        config.logto_file = False
        config.set()
        return None
    path = Path(folder) / LOG_NAME
    config.logfile = str(path)
    config.logto_file = True
    config.set()
    return path
