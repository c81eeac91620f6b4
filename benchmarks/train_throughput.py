"""Where a PPO iteration's time goes, for one config at one env count.

    python benchmarks/train_throughput.py --config qmini --num_envs 1024

Runs a few PPO iterations (after one warm-up iteration) and prints collection
steps/s, update samples/s, and the fraction of iteration time spent in
physics (Batch.step), env-side Python (state, rewards, terminations, resets,
observations), policy inference (actor and critic forward while collecting),
the PPO update, and the rest (storage, normalisers, bookkeeping). It also
prints the raw Batch.step limit of the same model measured in the same run, so
the collection rate can be read as a fraction of it.
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

TIMES: dict[str, float] = defaultdict(float)


def timed(name: str, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMES[name] += time.perf_counter() - start
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="qmini")
    parser.add_argument("--num_envs", type=int, default=1024)
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations after one warm-up")
    args = parser.parse_args()

    set_seed(0)
    cfg = load_config(args.config, [f"env.num_envs={args.num_envs}"])
    env = make_env(cfg)
    runner = OnPolicyRunner(env, cfg, log_dir=None, device="cpu", verbose=False)
    runner.learn(1)  # warm-up

    # Instrument the stages (instance attributes shadow the methods; nothing in the package changes).
    env.robot.sim.step = timed("physics", env.robot.sim.step)
    env.step = timed("env_step", env.step)
    runner.alg.act = timed("inference", runner.alg.act)
    runner.alg.update = timed("update", runner.alg.update)
    TIMES.clear()
    start = time.perf_counter()
    runner.learn(args.iterations)
    total = time.perf_counter() - start

    steps = args.iterations * cfg.runner.num_steps_per_env * env.num_envs
    collection = total - TIMES["update"]
    raw = time_raw(cfg, args.num_envs, cfg.sim.nthread or available_cores(), 50, 0.3)
    parts = {
        "physics": TIMES["physics"],
        "env python (state, rewards, obs, resets)": TIMES["env_step"] - TIMES["physics"],
        "policy inference": TIMES["inference"],
        "ppo update": TIMES["update"],
        "other (storage, normalisers, logging)": total - TIMES["env_step"] - TIMES["inference"] - TIMES["update"],
    }
    dec = cfg.control.decimation
    print(f"config {args.config}  envs {env.num_envs}  steps/iteration {cfg.runner.num_steps_per_env}  "
          f"threads {torch.get_num_threads()} torch / {env.robot.sim.nthread} mujoco  iterations {args.iterations}")
    print(f"collection:   {steps / collection:10,.0f} env steps/s  "
          f"({steps * dec / collection / raw:.2f} of the raw Batch.step limit, {raw:,.0f} physics steps/s)")
    print(f"update:       {steps * cfg.algorithm.num_learning_epochs / TIMES['update']:10,.0f} samples/s "
          f"({cfg.algorithm.num_learning_epochs} epochs x {cfg.algorithm.num_mini_batches} minibatches)")
    print(f"iteration:    {total / args.iterations:10.2f} s   overall {steps / total:,.0f} env steps/s")
    for name, seconds in parts.items():
        print(f"  {name:42s} {seconds / total:6.1%}")


if __name__ == "__main__":
    main()
