"""Fault-injection report: python benchmarks/fault_report.py [--kills 20] [--out benchmarks/results/faults.json]

Runs every fault of benchmarks/faults/ against real (tiny) training runs in a
temporary folder and prints, per kind, how many injections the package survived:

    kill trials survived / run            SIGKILL in collection, update or checkpoint write, then resume
    write faults recovered / injected     ENOSPC / EACCES on checkpoint writes (and the exit status after them)
    NaN injections contained / injected   NaN/inf in obs, actions, rewards, losses, gradients (and the stop after K)
    bad inputs rejected cleanly / tried   one line, status 2, nothing changed on disk

Every failed trial is printed with what was seen. Exit status 1 if any trial failed.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.faults import Trial  # noqa: E402
from benchmarks.faults.bad_inputs import bad_input_trials  # noqa: E402
from benchmarks.faults.kill_trials import kill_trials  # noqa: E402
from benchmarks.faults.nan_faults import halting_trial, nan_trials  # noqa: E402
from benchmarks.faults.write_faults import write_fault_trials  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402

ROWS = [("kill trials", "survived", "run", ("kill",)),
        ("write faults", "recovered", "injected", ("write",)),
        ("  exit status after them", "right", "checked", ("write-exit",)),
        ("NaN injections", "contained", "injected", ("nan",)),
        ("  stop after K skipped updates", "right", "checked", ("nan-halt",)),
        ("bad inputs", "rejected cleanly", "tried", ("input",))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=20, help="SIGKILL trials")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill instants")
    parser.add_argument("--out", default=None, help="also write the trials as JSON here")
    args = parser.parse_args(argv)

    started = time.time()
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory(prefix="fault_report_") as tmp:
        root = Path(tmp)
        steps = [("kills", lambda: kill_trials(root / "kill", args.kills, seed=args.seed)),
                 ("write faults", lambda: write_fault_trials(root / "write")),
                 ("NaN injections", lambda: nan_trials(root / "nan") + [halting_trial(root / "halt")]),
                 ("bad inputs", lambda: bad_input_trials(root / "input" / "experiments"))]
        for label, run in steps:
            print(f"running {label} ...", flush=True)
            trials += run()
    by_kind = collections.defaultdict(list)
    for t in trials:
        by_kind[t.kind].append(t)
    print(f"\nfault report ({time.time() - started:.0f} s)")
    for label, good, total, kinds in ROWS:
        rows = [t for k in kinds for t in by_kind[k]]
        print(f"  {label + ' ' + good:<36} {sum(t.ok for t in rows):>3} / {len(rows):<3} {total}")
    kill_phases = collections.Counter(t.detail.split()[2] for t in by_kind["kill"])
    print(f"  kills landed in: {', '.join(f'{p} {n}' for p, n in sorted(kill_phases.items()))}")
    failed = [t for t in trials if not t.ok]
    for t in failed:
        print(f"FAILED {t.kind}: {t.detail}")
    if args.out:
        atomic_write_text(args.out, json.dumps([t.__dict__ for t in trials], indent=1) + "\n")
        print(f"wrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
