"""One process or N torchrun ranks on this machine, at the same total env count, side by side.

    python benchmarks/scaling.py --config go2 --num_envs 1024 --iterations 8

Trains the same config twice in one run, each for `--iterations` PPO iterations
after `--warmup` (excluded from the figures):

- 1 process: all `--num_envs` envs, MuJoCo's thread pool and torch over every core;
- N ranks (`torchrun --nproc_per_node N`, default the core count): num_envs / N envs
  each, with train.py's defaults under torchrun: the machine's cores split between its
  ranks for MuJoCo's thread pool, one torch thread per rank (torchrun's OMP_NUM_THREADS=1);
  with N = cores, rank r is pinned to core r.

and prints, from rank 0's TensorBoard log, env steps/s while collecting (over
every rank) and samples/s over whole iterations (collection + PPO update), with
the ratio N ranks / 1 process. The runs go to experiments/scaling_<n>rank/
(replaced each time). Results: benchmarks/results/scaling_<config>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from env.sim.mujoco_backend import available_cores  # noqa: E402
from utils.cli import main_with_one_line_errors  # noqa: E402
from utils.experiment import Experiment  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402


def run(config: str, num_envs: int, ranks: int, iterations: int) -> Path:
    """Train `iterations` iterations with `ranks` processes; return the experiment's log folder."""
    name = f"scaling_{ranks}rank"
    train = [str(ROOT / "train.py"), "--config", config, "--name", name, "--overwrite",
             "--num_envs", str(num_envs // ranks), "--max_iterations", str(iterations),
             "--set", "runner.save_interval=0"]  # sim.nthread 0: the default, every core this rank may use
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if ranks == 1:
        cmd = [sys.executable] + train
    else:
        env["OMP_NUM_THREADS"] = "1"  # one torch thread per rank, pinned below
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(ranks),
               str(ROOT / "benchmarks" / "pinned_rank.py")] + train
    print(f"{name}: {' '.join(cmd[1:3])} ... ({ranks} x {num_envs // ranks} envs)", flush=True)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return Experiment(name).log_dir


def rates(log_dir: Path, warmup: int, steps_per_iteration: int) -> dict[str, float]:
    """env steps/s while collecting and samples/s over whole iterations, after the warm-up iterations."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    collect = [e.value for e in acc.Scalars("Perf/collection_time")][warmup:]
    learn = [e.value for e in acc.Scalars("Perf/learning_time")][warmup:]
    if not collect:
        raise ValueError(f"no timed iterations in {log_dir}: raise --iterations above --warmup")
    n = len(collect)
    return {"iterations": n, "env_steps_per_s": n * steps_per_iteration / sum(collect),
            "samples_per_s": n * steps_per_iteration / (sum(collect) + sum(learn))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="go2")
    parser.add_argument("--num_envs", type=int, default=1024, help="total env count, split over the ranks")
    parser.add_argument("--iterations", type=int, default=8, help="PPO iterations per run, warm-up included")
    parser.add_argument("--warmup", type=int, default=2, help="first iterations left out of the figures")
    parser.add_argument("--ranks", type=int, default=available_cores(), help="ranks of the distributed run")
    args = parser.parse_args(argv)
    if args.ranks < 2 or args.num_envs % args.ranks:
        raise ValueError(f"--ranks {args.ranks} must be >= 2 and divide --num_envs {args.num_envs}")

    from config import load_config

    steps = int(load_config(args.config).runner.num_steps_per_env) * args.num_envs
    results = {n: rates(run(args.config, args.num_envs, n, args.iterations), args.warmup, steps)
               for n in (1, args.ranks)}
    one, many = results[1], results[args.ranks]
    print(f"\n{args.config}, {args.num_envs} envs in total, {available_cores()} cores "
          f"(means over {one['iterations']} iterations after {args.warmup} warm-up)")
    print(f"{'':28s}{'1 process':>14s}{f'{args.ranks} ranks':>14s}{'ratio':>9s}")
    for key, label in [("env_steps_per_s", "env steps/s (collecting)"), ("samples_per_s", "samples/s (iteration)")]:
        print(f"{label:28s}{one[key]:14,.0f}{many[key]:14,.0f}{many[key] / one[key]:9.2f}")
    report = {"config": args.config, "num_envs": args.num_envs, "cores": available_cores(), "ranks": args.ranks,
              "warmup": args.warmup, "one_process": one, "ranks_run": many,
              "ratio": {k: many[k] / one[k] for k in ("env_steps_per_s", "samples_per_s")}}
    out = ROOT / "benchmarks" / "results" / f"scaling_{args.config}.json"
    atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main_with_one_line_errors(main))
