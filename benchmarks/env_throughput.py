"""Env throughput against the raw physics limit, measured in the same run.

    python benchmarks/env_throughput.py --config qmini --num_envs 1024

Prints policy steps/s of the full GymEnvWrapper step (random actions, resets,
rewards, observations included), raw `mujoco.batch.Batch.step` physics steps/s
of the same model, env count and thread count, and the ratio
(wrapper steps/s x decimation / raw physics steps/s): 1.0 means the Python side
costs nothing. Both loops apply random joint targets of the same size.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mujoco.batch  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from config import load_config  # noqa: E402
from env.gym_env_wrapper import make_env  # noqa: E402
from env.sim.scene import load_mj_model  # noqa: E402
from env.sim.mujoco_backend import available_cores  # noqa: E402


def time_raw(cfg, num_envs: int, nthread: int, steps: int, action_std: float) -> float:
    """Physics steps/s of Batch.step(nstep=decimation) on the same model, ctrl set from numpy."""
    model = load_mj_model(cfg)
    batch = mujoco.batch.Batch(model, num_envs, nthread)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
    batch.reset(keyframe=key)
    ctrl = batch.bind("ctrl")
    default = ctrl[0].copy()
    dec = cfg.control.decimation
    rng = np.random.default_rng(0)
    targets = default + cfg.control.action_scale * action_std * rng.standard_normal((steps, num_envs, model.nu))
    batch.step(nstep=dec)  # warm-up
    start = time.perf_counter()
    for i in range(steps):
        ctrl[:] = targets[i]
        batch.step(nstep=dec)
    return num_envs * dec * steps / (time.perf_counter() - start)


def time_wrapper(cfg, steps: int, action_std: float) -> tuple[float, int]:
    env = make_env(cfg)
    env.reset()
    actions = action_std * torch.randn(steps, env.num_envs, env.num_actions)
    env.step(actions[0])  # warm-up
    resets = 0
    start = time.perf_counter()
    for i in range(steps):
        _, _, _, done, _, _ = env.step(actions[i])
        resets += int(done.sum())
    return env.num_envs * steps / (time.perf_counter() - start), resets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="qmini")
    parser.add_argument("--num_envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100, help="policy steps timed per loop")
    parser.add_argument("--action_std", type=float, default=0.3, help="std of the random actions")
    parser.add_argument("--repeats", type=int, default=3, help="alternating repeats; the best of each is kept")
    args = parser.parse_args()

    torch.manual_seed(0)
    cfg = load_config(args.config, [f"env.num_envs={args.num_envs}"])
    nthread = cfg.sim.nthread or available_cores()
    raw, wrapped = 0.0, 0.0
    for _ in range(args.repeats):  # alternate so that machine noise hits both alike
        raw = max(raw, time_raw(cfg, args.num_envs, nthread, args.steps, args.action_std))
        w, resets = time_wrapper(cfg, args.steps, args.action_std)
        wrapped = max(wrapped, w)
    dec = cfg.control.decimation
    print(f"config {args.config}  envs {args.num_envs}  threads {nthread}  dt {cfg.sim.dt}  decimation {dec}")
    print(f"raw Batch.step:     {raw:12,.0f} physics steps/s")
    print(f"wrapper step:       {wrapped:12,.0f} policy steps/s  ({wrapped * dec:,.0f} physics steps/s, {resets} resets in last run)")
    print(f"ratio (wrapper x decimation / raw): {wrapped * dec / raw:.2f}")


if __name__ == "__main__":
    main()
