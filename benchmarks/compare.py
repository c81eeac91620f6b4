"""Our PPO against rsl-rl-lib's over several seeds, same env and wall-clock budget.

    python benchmarks/compare.py --config go2 --minutes 20 --seeds 1 2 3
    python benchmarks/compare.py --config go2 --summarize      # table and plot of the runs already there

Each seed trains ours and rsl_rl *at the same time*, each process pinned to its
own half of the cores (torch and MuJoCo threads set to match), so that both see
the same machine, including whatever else it is doing; which half gets which
algorithm alternates with the seed. A single pair of sequential runs cannot
separate the algorithms from the machine's noise; this can.

Writes to benchmarks/results/<config>/compare/:
    seed<k>/curve_{ours,rsl_rl}.json, seed<k>/learning_curve.png, seed<k>/<algo>.log
    compare.json   per run and per algorithm: final task reward per step (mean over the last
                   FINAL_FRACTION of the budget), linear and yaw-rate RMSE, iterations, env steps
    compare.png    task reward per step, mean over seeds with min-max band, vs minutes and env steps
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.learn import RESULTS, SMOOTH, moving_mean, save_figure  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402
from utils.progress import format_duration  # noqa: E402

ALGOS = ("ours", "rsl_rl")
FINAL_FRACTION = 0.1  # the final task reward is the mean over the last 10% of the budget's iterations


def core_halves() -> list[list[int]]:
    """The cores this process may use, split into two halves (one per algorithm)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise SystemExit("compare.py runs two trainings side by side and needs at least 2 cores")
    half = len(cores) // 2
    return [cores[:half], cores[half: 2 * half]]


def run_name(config: str, algo: str, seed: int) -> str:
    """The experiment folder of one run of a compare.py pair (eval_compare.py reads it back)."""
    return f"compare_{config}_{algo}_s{seed}"


def run_pair(config: str, minutes: float, seed: int, out: Path, extra: list[str]) -> None:
    """Train ours and rsl_rl for `minutes` each, side by side on separate cores; wait for both."""
    out.mkdir(parents=True, exist_ok=True)
    halves = core_halves()
    if seed % 2 == 0:
        halves.reverse()
    procs = {}
    for algo, cores in zip(ALGOS, halves):
        threads = str(len(cores))
        env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        cmd = [sys.executable, str(ROOT / "benchmarks" / "learn.py"), "--config", config, "--minutes", str(minutes),
               "--algo", algo, "--seed", str(seed), "--eval_episodes", "0", "--out", str(out),
               "--experiment", run_name(config, algo, seed), *extra]
        log = open(out / f"{algo}.log", "w")
        procs[algo] = (subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
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
    """{algo: {seed: curve}} from compare_dir/seed*/curve_<algo>.json."""
    runs: dict[str, dict[int, dict]] = {algo: {} for algo in ALGOS}
    for path in sorted(compare_dir.glob("seed*/curve_*.json")):
        curve = json.loads(path.read_text())
        runs.setdefault(curve["algo"], {})[int(curve["seed"])] = curve
    return runs


def summarize(runs: dict[str, dict[int, dict]]) -> dict:
    """Final metrics per run, their mean/std/range per algorithm, and ours minus rsl_rl."""
    summary: dict = {"final_fraction": FINAL_FRACTION, "runs": {}, "algos": {}}
    for algo, by_seed in runs.items():
        finals = {seed: final_metrics(c["rows"]) for seed, c in sorted(by_seed.items())}
        summary["runs"][algo] = finals
        values = [f["task_reward_per_step"] for f in finals.values()]
        if values:
            summary["algos"][algo] = {"seeds": len(values), "mean": statistics.fmean(values),
                                      "std": statistics.stdev(values) if len(values) > 1 else None,
                                      "min": min(values), "max": max(values)}
    a, b = summary["algos"].get("ours"), summary["algos"].get("rsl_rl")
    if a and b:
        se = math.sqrt(sum((s["std"] or 0.0) ** 2 / s["seeds"] for s in (a, b)))
        summary["ours_minus_rsl_rl"] = {"mean": a["mean"] - b["mean"], "standard_error": se}
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
    if "ours_minus_rsl_rl" in summary:
        d = summary["ours_minus_rsl_rl"]
        print(f"  ours - rsl_rl: {d['mean']:+.4f} (standard error {d['standard_error']:.4f})")


def plot(compare_dir: Path, runs: dict[str, dict[int, dict]]) -> Path | None:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not any(runs.values()):
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (algo, by_seed) in enumerate(runs.items()):
        if not by_seed:
            continue
        for col, key, scale in [(0, "minutes", 1.0), (1, "env_steps", 1e-6)]:
            ends = [c["rows"][-1][key] * scale for c in by_seed.values()]
            grid = np.linspace(0.0, min(ends), 200)
            ys = np.stack([np.interp(grid, [r[key] * scale for r in c["rows"]],
                                     moving_mean([r["task_reward_per_step"] for r in c["rows"]], SMOOTH))
                           for c in by_seed.values()])
            axes[col].fill_between(grid, ys.min(0), ys.max(0), color=colors[k], alpha=0.2)
            axes[col].plot(grid, ys.mean(0), color=colors[k], lw=1.6, label=f"{algo} ({len(by_seed)} seeds)")
    for col, label in enumerate(["wall-clock minutes", "env steps (millions)"]):
        axes[col].set_xlabel(label)
        axes[col].set_ylabel("task reward per step (1 = perfect)")
        axes[col].grid(alpha=0.3)
        axes[col].legend(fontsize=8)
    first = next(c for by_seed in runs.values() for c in by_seed.values())
    fig.suptitle(f"{first['config']}: ours vs rsl_rl side by side, {first['machine']} each "
                 f"(mean of seeds, band = min..max, moving mean of {SMOOTH} iterations)")
    return save_figure(fig, compare_dir / "compare.png")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="go2")
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget of every run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", default=None, help="folder (default benchmarks/results/<config>/compare)")
    parser.add_argument("--summarize", action="store_true", help="only summarise the runs already in the folder")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE", help="passed to learn.py")
    args = parser.parse_args(argv)

    compare_dir = Path(args.out) if args.out else RESULTS / args.config / "compare"
    if not args.summarize:
        extra = [a for s in args.set for a in ("--set", s)]
        start = time.perf_counter()
        for i, seed in enumerate(args.seeds):
            eta = (len(args.seeds) - i) * args.minutes * 60
            print(f"seed {seed} ({i + 1}/{len(args.seeds)}): ours and rsl_rl side by side, "
                  f"{format_duration(args.minutes * 60)} each; ETA {format_duration(eta)}", flush=True)
            run_pair(args.config, args.minutes, seed, compare_dir / f"seed{seed}", extra)
        print(f"all seeds done in {format_duration(time.perf_counter() - start)}")
    runs = load_runs(compare_dir)
    summary = summarize(runs)
    if not any(summary["runs"].values()):
        print(f"no runs in {compare_dir} (expected seed<k>/curve_<algo>.json)", file=sys.stderr)
        return 1
    atomic_write_text(compare_dir / "compare.json", json.dumps(summary, indent=1) + "\n")
    print_summary(summary)
    print(f"wrote {compare_dir / 'compare.json'} and {plot(compare_dir, runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
