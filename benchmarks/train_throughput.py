"""Where a PPO iteration's time goes, for one config at one env count; settings side by side.

    python benchmarks/train_throughput.py --config qmini --num_envs 1024
    python benchmarks/train_throughput.py --config go2 --variant fp32=runner.precision=fp32 \\
        --variant bf16=runner.precision=bf16 --rounds 2

Runs a few PPO iterations (after one warm-up iteration) and prints collection
steps/s, update samples/s, and the fraction of iteration time spent in
physics (Batch.step), env-side Python (state, rewards, terminations, resets,
observations), policy inference (actor and critic forward while collecting),
the PPO update, and the rest (storage, normalisers, bookkeeping). It also
prints the raw Batch.step limit of the same model measured in the same run, so
the collection rate can be read as a fraction of it.

``--variant NAME=OVERRIDE[;OVERRIDE...]`` (repeatable) measures several settings
of the same config in one run: their timed iterations alternate in rounds
(A, B, A, B, ...) so that a busy machine slows them alike, and each variant's
overall env steps/s is printed as a ratio to the first variant's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from benchmarks.env_throughput import time_raw  # noqa: E402
from config import load_config  # noqa: E402
from env.gym_env_wrapper import make_env  # noqa: E402
from env.sim.mujoco_backend import available_cores  # noqa: E402
from rl.runner import OnPolicyRunner  # noqa: E402
from rl.seed import set_seed  # noqa: E402


def timed(times: dict[str, float], name: str, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            times[name] += time.perf_counter() - start
    return wrapper


class Variant:
    """One setting: its env and runner, with the stages instrumented (instance attributes shadow the methods)."""

    def __init__(self, name: str, config: str, overrides: list[str]) -> None:
        set_seed(0)
        self.name = name
        self.cfg = load_config(config, overrides)
        self.env = make_env(self.cfg)
        self.runner = OnPolicyRunner(self.env, self.cfg, log_dir=None, device="cpu", verbose=False)
        self.runner.learn(1)  # warm-up
        self.times: dict[str, float] = defaultdict(float)
        self.env.robot.sim.step = timed(self.times, "physics", self.env.robot.sim.step)
        self.env.step = timed(self.times, "env_step", self.env.step)
        self.runner.alg.act = timed(self.times, "inference", self.runner.alg.act)
        self.runner.alg.update = timed(self.times, "update", self.runner.alg.update)
        self.iterations = 0

    def run(self, iterations: int) -> None:
        start = time.perf_counter()
        self.runner.learn(iterations)
        self.times["total"] += time.perf_counter() - start
        self.iterations += iterations

    def overall(self) -> float:
        """Env steps per second over whole iterations (collection and update)."""
        return self.iterations * self.cfg.runner.num_steps_per_env * self.env.num_envs / self.times["total"]

    def report(self, raw: float) -> None:
        cfg, t, total = self.cfg, self.times, self.times["total"]
        steps = self.iterations * cfg.runner.num_steps_per_env * self.env.num_envs
        collection = total - t["update"]
        parts = {
            "physics": t["physics"],
            "env python (state, rewards, obs, resets)": t["env_step"] - t["physics"],
            "policy inference": t["inference"],
            "ppo update": t["update"],
            "other (storage, normalisers, logging)": total - t["env_step"] - t["inference"] - t["update"],
        }
        dec = cfg.control.decimation
        print(f"[{self.name}] envs {self.env.num_envs}  steps/iteration {cfg.runner.num_steps_per_env}  threads "
              f"{torch.get_num_threads()} torch / {self.env.robot.sim.nthread} mujoco  iterations {self.iterations}  "
              f"precision {self.runner.precision.choice}")
        print(f"collection:   {steps / collection:10,.0f} env steps/s  "
              f"({steps * dec / collection / raw:.2f} of the raw Batch.step limit, {raw:,.0f} physics steps/s)")
        print(f"update:       {steps * cfg.algorithm.num_learning_epochs / t['update']:10,.0f} samples/s "
              f"({cfg.algorithm.num_learning_epochs} epochs x {cfg.algorithm.num_mini_batches} minibatches)")
        print(f"iteration:    {total / self.iterations:10.2f} s   overall {self.overall():,.0f} env steps/s")
        for name, seconds in parts.items():
            print(f"  {name:42s} {seconds / total:6.1%}")


def parse_variant(text: str) -> tuple[str, list[str]]:
    name, sep, overrides = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"error: --variant {text!r} must look like NAME=section.field=value[;section.field=value]")
    return name, [o for o in overrides.split(";") if o]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="qmini")
    parser.add_argument("--num_envs", type=int, default=1024)
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per variant and round")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of alternating variants")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=OVERRIDES",
                        help="a setting to measure, e.g. bf16=runner.precision=bf16 (repeatable; none: the config)")
    args = parser.parse_args(argv)

    specs = [parse_variant(v) for v in args.variant] or [("config", [])]
    variants = [Variant(name, args.config, [f"env.num_envs={args.num_envs}", *overrides]) for name, overrides in specs]
    for _ in range(args.rounds):
        for variant in variants:
            variant.run(args.iterations)
    first = variants[0]
    print(f"config {args.config}")
    for variant in variants:
        cfg = variant.cfg
        variant.report(time_raw(cfg, args.num_envs, cfg.sim.nthread or available_cores(), 50, 0.3))
        if len(variants) > 1:
            print(f"  overall env steps/s vs [{first.name}]: {variant.overall() / first.overall():.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
