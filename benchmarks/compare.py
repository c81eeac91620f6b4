"""Two trainings side by side over several seeds, same env and wall-clock budget.

By default our PPO against rsl-rl-lib's; with two ``--arm`` options, two settings of our PPO:

    python benchmarks/compare.py --config go2 --minutes 20 --seeds 1 2 3
    python benchmarks/compare.py --config go2 --minutes 20 --seeds 1 2 3 --out benchmarks/results/go2/defaults \
        --arm "old=sim.dt=0.005;control.decimation=4;runner.stages=[]" --arm new=
    python benchmarks/compare.py --config go2 --summarize      # table and plot of the runs already there

Each seed trains ours and rsl_rl *at the same time*, each process pinned to its
own half of the cores (torch and MuJoCo threads set to match), so that both see
the same machine, including whatever else it is doing; which half gets which
algorithm alternates with the seed. A single pair of sequential runs cannot
separate the algorithms from the machine's noise; this can.

Writes to benchmarks/results/<config>/compare/ (or --out):
    seed<k>/curve_{ours,rsl_rl}.json, seed<k>/learning_curve.png, seed<k>/<algo>.log   (ours vs rsl_rl)
    seed<k>/<arm>/curve_ours.json, seed<k>/<arm>.log                                    (--arm NAME=...)
    compare.json   per run and per arm: final task reward per step (mean over the last
                   FINAL_FRACTION of the budget), linear and yaw-rate RMSE, iterations, env steps
    compare.png    task reward per step and linear RMSE, mean over seeds with min-max band,
                   vs minutes and vs env steps
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.learn import RESULTS  # noqa: E402
from benchmarks.learning_plot import SMOOTH, moving_mean  # noqa: E402
from rl.eval_plots import save_figure  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402
from utils.progress import format_duration  # noqa: E402

FINAL_FRACTION = 0.1  # the final task reward is the mean over the last 10% of the budget's iterations


def core_halves() -> list[list[int]]:
    """The cores this process may use, split into two halves (one per algorithm)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise SystemExit("compare.py runs two trainings side by side and needs at least 2 cores")
    half = len(cores) // 2
    return [cores[:half], cores[half: 2 * half]]


@dataclass(frozen=True)
class Arm:
    """One side of the comparison: a label, the PPO that trains it, its config overrides."""

    label: str
    algo: str = "ours"
    overrides: list[str] = field(default_factory=list)
    own_folder: bool = False  # curves in seed<k>/<label>/ (two arms of one algo) rather than seed<k>/

    @staticmethod
    def parse(text: str) -> "Arm":
        """NAME=OVERRIDE;OVERRIDE... (overrides as for --set; nothing after = is the config as committed)."""
        label, sep, rest = text.partition("=")
        if not sep or not label.replace("_", "").replace("-", "").isalnum():
            raise SystemExit(f"error: --arm '{text}' must look like NAME=section.field=value;section.field=value "
                             "(NAME of letters, digits, - and _; nothing after the first = is the committed config)")
        return Arm(label, "ours", [o.strip() for o in rest.split(";") if o.strip()], own_folder=True)


DEFAULT_ARMS = [Arm("ours", "ours"), Arm("rsl_rl", "rsl_rl")]


def run_name(config: str, algo: str, seed: int) -> str:
    """The experiment folder of one run of a compare.py pair (eval_compare.py reads it back)."""
    return f"compare_{config}_{algo}_s{seed}"


def run_pair(config: str, minutes: float, seed: int, out: Path, extra: list[str],
             arms: list[Arm] = DEFAULT_ARMS) -> None:
    """Train both arms for `minutes` each, side by side on separate cores; wait for both."""
    out.mkdir(parents=True, exist_ok=True)
    halves = core_halves()
    if seed % 2 == 0:
        halves.reverse()
    procs = {}
    for arm, cores in zip(arms, halves):
        threads = str(len(cores))
        env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        sets = [a for o in arm.overrides for a in ("--set", o)]
        cmd = [sys.executable, str(ROOT / "benchmarks" / "learn.py"), "--config", config, "--minutes", str(minutes),
               "--algo", arm.algo, "--seed", str(seed), "--eval_episodes", "0",
               "--out", str(out / arm.label if arm.own_folder else out),
               "--experiment", run_name(config, arm.label, seed), *extra, *sets]
        log = open(out / f"{arm.label}.log", "w")
        procs[arm.label] = (subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                             preexec_fn=lambda c=cores: os.sched_setaffinity(0, c)), log)
    try:
        while any(p.poll() is None for p, _ in procs.values()):
            time.sleep(30)
            status = "  ".join(f"{algo}: {_last_line(out / f'{algo}.log')}" for algo in procs)
            print(f"  seed {seed}  {status}", flush=True)
    finally:
        for p, log in procs.values():
            if p.poll() is None:
                p.terminate()
            p.wait()
            log.close()
    failed = [algo for algo, (p, _) in procs.items() if p.returncode != 0]
    if failed:
        raise SystemExit(f"seed {seed}: {', '.join(failed)} failed; see {out}/<algo>.log")


def _last_line(log: Path) -> str:
    """'it N task/step X' from learn.py's latest progress line, or '-' before the first."""
    lines = [ln for ln in log.read_text().splitlines() if ln.startswith("it ")] if log.exists() else []
    if not lines:
        return "-"
    words = lines[-1].split()
    return f"it {words[1]} {words[2]} task {words[words.index('task/step') + 1]}"


def final_metrics(rows: list[dict]) -> dict:
    """Means over the iterations in the last FINAL_FRACTION of the run's minutes."""
    end = rows[-1]["minutes"]
    tail = [r for r in rows if r["minutes"] >= end * (1 - FINAL_FRACTION)]
    return {"task_reward_per_step": statistics.fmean(r["task_reward_per_step"] for r in tail),
            "lin_vel_rmse": statistics.fmean(r["lin_vel_rmse"] for r in tail),
            "yaw_rate_rmse": statistics.fmean(r["yaw_rate_rmse"] for r in tail),
            "iterations": rows[-1]["iteration"], "env_steps": rows[-1]["env_steps"],
            "tail_iterations": len(tail)}


def load_runs(compare_dir: Path) -> dict[str, dict[int, dict]]:
    """{arm: {seed: curve}} from compare_dir/seed*/curve_<algo>.json (the arm is the algo) and
    compare_dir/seed*/<arm>/curve_ours.json (two settings of our PPO)."""
    runs: dict[str, dict[int, dict]] = {}
    for path in sorted(compare_dir.glob("seed*/curve_*.json")) + sorted(compare_dir.glob("seed*/*/curve_*.json")):
        curve = json.loads(path.read_text())
        label = curve["algo"] if path.parent.name.startswith("seed") else path.parent.name
        runs.setdefault(label, {})[int(curve["seed"])] = curve
    return runs


def summarize(runs: dict[str, dict[int, dict]]) -> dict:
    """Final metrics per run, their mean/std/range per arm, and the first arm minus the second."""
    summary: dict = {"final_fraction": FINAL_FRACTION, "runs": {}, "algos": {}}
    for algo, by_seed in runs.items():
        finals = {seed: final_metrics(c["rows"]) for seed, c in sorted(by_seed.items())}
        summary["runs"][algo] = finals
        values = [f["task_reward_per_step"] for f in finals.values()]
        if values:
            summary["algos"][algo] = {"seeds": len(values), "mean": statistics.fmean(values),
                                      "std": statistics.stdev(values) if len(values) > 1 else None,
                                      "min": min(values), "max": max(values)}
    labels = sorted(summary["algos"], key=lambda k: (k != "ours", k != "rsl_rl", k))  # ours first, else by name
    if len(labels) == 2:
        a, b = (summary["algos"][k] for k in labels)
        se = math.sqrt(sum((s["std"] or 0.0) ** 2 / s["seeds"] for s in (a, b)))
        summary[f"{labels[0]}_minus_{labels[1]}"] = {"mean": a["mean"] - b["mean"], "standard_error": se}
    return summary


def print_summary(summary: dict) -> None:
    print(f"final task reward per step (mean over the last {FINAL_FRACTION:.0%} of each run):")
    for algo, finals in summary["runs"].items():
        for seed, f in finals.items():
            print(f"  {algo:7s} seed {seed}: {f['task_reward_per_step']:.4f}  lin {f['lin_vel_rmse']:.3f}  "
                  f"yaw {f['yaw_rate_rmse']:.3f}  ({f['iterations']} iterations, {f['env_steps'] / 1e6:.1f} M steps)")
    for algo, s in summary["algos"].items():
        std = f" +- {s['std']:.4f}" if s["std"] is not None else ""
        print(f"  {algo:7s} {s['seeds']} seeds: {s['mean']:.4f}{std}  (range {s['min']:.4f} .. {s['max']:.4f})")
    for key, d in summary.items():
        if key.endswith(tuple(f"_minus_{k}" for k in summary["algos"])):
            a, b = key.split("_minus_")
            print(f"  {a} - {b}: {d['mean']:+.4f} (standard error {d['standard_error']:.4f})")


def plot(compare_dir: Path, runs: dict[str, dict[int, dict]]) -> Path | None:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not any(runs.values()):
        return None
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex="col")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    metrics = [("task_reward_per_step", "task reward per step (1 = perfect)"), ("lin_vel_rmse", "linear RMSE (m/s)")]
    for k, (label, by_seed) in enumerate(runs.items()):
        if not by_seed:
            continue
        for row, (metric, _) in enumerate(metrics):
            for col, key, scale in [(0, "minutes", 1.0), (1, "env_steps", 1e-6)]:
                ends = [c["rows"][-1][key] * scale for c in by_seed.values()]
                grid = np.linspace(0.0, min(ends), 200)
                ys = np.stack([np.interp(grid, [r[key] * scale for r in c["rows"]],
                                         moving_mean([r[metric] for r in c["rows"]], SMOOTH))
                               for c in by_seed.values()])
                ax = axes[row, col]
                ax.fill_between(grid, ys.min(0), ys.max(0), color=colors[k], alpha=0.2)
                ax.plot(grid, ys.mean(0), color=colors[k], lw=1.6, label=f"{label} ({len(by_seed)} seeds)")
    for row, (_, ylabel) in enumerate(metrics):
        for col, xlabel in enumerate(["wall-clock minutes", "env steps (millions)"]):
            ax = axes[row, col]
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    first = next(c for by_seed in runs.values() for c in by_seed.values())
    fig.suptitle(f"{first['config']}: {' vs '.join(k for k, v in runs.items() if v)} side by side, "
                 f"{first['machine']} each (mean of seeds, band = min..max, moving mean of {SMOOTH} iterations)",
                 fontsize=9)
    return save_figure(fig, compare_dir / "compare.png")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="go2")
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget of every run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", default=None, help="folder (default benchmarks/results/<config>/compare)")
    parser.add_argument("--summarize", action="store_true", help="only summarise the runs already in the folder")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="passed to learn.py for both arms")
    parser.add_argument("--arm", action="append", default=[], metavar="NAME=OVERRIDES",
                        help="give twice: two settings of our PPO instead of ours vs rsl_rl, e.g. "
                             "--arm 'old=sim.dt=0.005;control.decimation=4' --arm new=")
    args = parser.parse_args(argv)

    arms = [Arm.parse(a) for a in args.arm] if args.arm else DEFAULT_ARMS
    if len(arms) != 2 or arms[0].label == arms[1].label:
        print("error: give --arm exactly twice, with two different names (or not at all for ours vs rsl_rl)",
              file=sys.stderr)
        return 2
    compare_dir = Path(args.out) if args.out else RESULTS / args.config / "compare"
    if not args.summarize:
        extra = [a for s in args.set for a in ("--set", s)]
        start = time.perf_counter()
        names = " and ".join(arm.label for arm in arms)
        for i, seed in enumerate(args.seeds):
            eta = (len(args.seeds) - i) * args.minutes * 60
            print(f"seed {seed} ({i + 1}/{len(args.seeds)}): {names} side by side, "
                  f"{format_duration(args.minutes * 60)} each; ETA {format_duration(eta)}", flush=True)
            run_pair(args.config, args.minutes, seed, compare_dir / f"seed{seed}", extra, arms)
        print(f"all seeds done in {format_duration(time.perf_counter() - start)}")
    runs = load_runs(compare_dir)
    summary = summarize(runs)
    if not any(summary["runs"].values()):
        print(f"no runs in {compare_dir} (expected seed<k>/curve_<algo>.json or seed<k>/<arm>/curve_ours.json)",
              file=sys.stderr)
        return 1
    atomic_write_text(compare_dir / "compare.json", json.dumps(summary, indent=1) + "\n")
    print_summary(summary)
    print(f"wrote {compare_dir / 'compare.json'} and {plot(compare_dir, runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
