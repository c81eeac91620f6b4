"""Fault-injection report: python benchmarks/fault_report.py [--kills 20] [--seed 0] [--out FILE]

Runs every fault of benchmarks/faults/ against real (tiny) training runs in a
temporary folder and prints, per kind, how many injections the package survived:

    kill trials survived / run            SIGKILL in collection, update or checkpoint write, then resume
    write faults recovered / injected     ENOSPC / EACCES on checkpoint writes (and the exit status after them)
    NaN injections contained / injected   NaN/inf in obs, actions, rewards, losses, gradients (and the stop after K)
    bad inputs rejected cleanly / tried   one line, status 2, nothing changed on disk

and, for the kills, the phase each was aimed at (planned) next to the phase the
killed child's probes say it was in (landed). Every failed trial is printed with
what was seen. The trials are written as JSON to experiments/fault_report/faults.json
(replaced each run; --out FILE writes elsewhere, e.g. benchmarks/results/faults.json
to refresh the committed report), with the temporary experiments folders written
as ``experiments``. Exit status 1 if any trial failed.
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.faults import Trial  # noqa: E402
from benchmarks.faults.bad_inputs import bad_input_trials  # noqa: E402
from benchmarks.faults.kill_trials import count_phases, kill_trials  # noqa: E402
from benchmarks.faults.nan_faults import halting_trial, nan_trials  # noqa: E402
from benchmarks.faults.second_interrupt import interrupt_trials  # noqa: E402
from benchmarks.faults.write_faults import write_fault_trials  # noqa: E402
from env.utils.args import OneLineArgumentParser  # noqa: E402
from utils.experiment import experiments_root  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402

ROWS = [("kill trials", "survived", "run", ("kill",)),
        ("write faults", "recovered", "injected", ("write",)),
        ("  exit status after them", "right", "checked", ("write-exit",)),
        ("NaN injections", "contained", "injected", ("nan",)),
        ("  stop after K skipped updates", "right", "checked", ("nan-halt",)),
        ("second Ctrl-C", "ended cleanly", "tried", ("interrupt",)),
        ("bad inputs", "rejected cleanly", "tried", ("input",))]
INPUT_EXPERIMENTS = Path("input") / "experiments"  # the bad inputs' experiments folder, under the temporary folder
DEFAULT_KILLS = 20
COMMITTED = Path(__file__).resolve().parent / "results" / "faults.json"
REFRESH_COMMITTED = "python benchmarks/fault_report.py --out benchmarks/results/faults.json"


def default_out() -> Path:
    """Where the report goes without --out: its own folder among the experiments, never a committed file."""
    return experiments_root() / "fault_report" / "faults.json"


def _parse(argv: list[str] | None) -> tuple[int, int, Path]:
    parser = OneLineArgumentParser(prog="fault_report.py", description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=DEFAULT_KILLS, help="SIGKILL trials (0 skips them)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill instants")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON file for the trials (default experiments/fault_report/faults.json)")
    args = parser.parse_args(argv)
    out = args.out if args.out is not None else default_out()
    if args.kills < 0:
        parser.error(f"--kills {args.kills} is negative; give 0 or more SIGKILL trials")
    if out.is_dir():
        parser.error(f"--out {out} is a folder; give a JSON file, e.g. {out / 'faults.json'}")
    if any(p.exists() and not p.is_dir() for p in out.parents):
        parser.error(f"--out {out}: a parent of it is a file, not a folder; give a path in a folder")
    return args.kills, args.seed, out


def main(argv: list[str] | None = None) -> int:
    kills, seed, out = _parse(argv)
    started = time.time()
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory(prefix="fault_report_") as tmp:
        root = Path(tmp)
        steps = [("kills", [root / "kill"], lambda: kill_trials(root / "kill", kills, seed=seed)),
                 ("write faults", [root / "write"], lambda: write_fault_trials(root / "write")),
                 ("NaN injections", [root / "nan", root / "halt"],
                  lambda: nan_trials(root / "nan") + [halting_trial(root / "halt")]),
                 ("second Ctrl-C", [root / "interrupt"], lambda: interrupt_trials(root / "interrupt")),
                 ("bad inputs", [root / INPUT_EXPERIMENTS], lambda: bad_input_trials(root / INPUT_EXPERIMENTS))]
        for label, roots, run in steps:
            print(f"running {label} ...", flush=True)
            step_trials = run()
            for experiments in roots:
                step_trials = [t.portable(experiments) for t in step_trials]
            trials += step_trials
    by_kind = collections.defaultdict(list)
    for t in trials:
        by_kind[t.kind].append(t)
    print(f"\nfault report ({time.time() - started:.0f} s)")
    for label, good, total, kinds in ROWS:
        rows = [t for k in kinds for t in by_kind[k]]
        print(f"  {label + ' ' + good:<36} {sum(t.ok for t in rows):>3} / {len(rows):<3} {total}")
    if by_kind["kill"]:
        print(f"  {'kills aimed at (planned)':<36} {count_phases([t.planned for t in by_kind['kill']])}")
        print(f"  {'kills landed in (probed)':<36} {count_phases([t.landed for t in by_kind['kill']])}")
    failed = [t for t in trials if not t.ok]
    for t in failed:
        print(f"FAILED {t.kind}: {t.detail}")
    atomic_write_text(out, json.dumps([t.__dict__ for t in trials], indent=1) + "\n")
    print(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
