"""Env throughput against the raw physics limit, measured in the same run.

    python benchmarks/env_throughput.py --config qmini --num_envs 1024
    python benchmarks/env_throughput.py --config go2 --backend warp --device cpu --num_envs 8 --steps 20

Prints policy steps/s of the full GymEnvWrapper step (random actions, resets,
rewards, observations included), the raw physics steps/s of the same model on
the same backend (`mujoco.batch.Batch.step`, or the warp backend's own step with
the targets written on the device), env count and thread count, and the ratio
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
from env.sim import load_backend  # noqa: E402
from env.sim.scene import load_mj_model  # noqa: E402
from env.terrain import terrain_grid  # noqa: E402
from env.sim.mujoco_backend import available_cores  # noqa: E402
from utils.devices import check_device  # noqa: E402


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so that a timer measures it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_raw(cfg, num_envs: int, nthread: int, steps: int, action_std: float, device: str = "cpu") -> float:
    """Physics steps/s of the config's backend alone stepping `decimation` substeps with random targets."""
    if cfg.sim.backend != "mujoco":
        return time_raw_backend(cfg, num_envs, steps, action_std, torch.device(device))
    model = load_mj_model(cfg, terrain_grid(cfg.terrain))  # the same ground as the env's
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


def time_raw_backend(cfg, num_envs: int, steps: int, action_std: float, device: torch.device) -> float:
    """The same for a torch-native backend (warp): targets written through its ctrl view on its device."""
    model = load_mj_model(cfg, terrain_grid(cfg.terrain))  # the same ground as the env's
    sim = load_backend(cfg.sim.backend, model, num_envs, 0, device, nconmax=cfg.sim.nconmax, njmax=cfg.sim.njmax)
    home = torch.tensor(model.key_qpos[0], device=device).repeat(num_envs, 1)
    sim.reset(torch.arange(num_envs, device=device), home, torch.zeros(num_envs, model.nv, device=device), home[:, 7:])
    dec = cfg.control.decimation
    noise = cfg.control.action_scale * action_std * torch.randn(steps, num_envs, model.nu, device=device)
    targets = (home[:, 7:].unsqueeze(0) + noise).to(sim.ctrl.dtype)
    sim.step(dec)  # warm-up: kernel compilation, graph capture
    synchronize(device)
    start = time.perf_counter()
    for i in range(steps):
        sim.ctrl.copy_(targets[i])
        sim.step(dec)
    synchronize(device)
    return num_envs * dec * steps / (time.perf_counter() - start)


def time_wrapper(cfg, steps: int, action_std: float, device: str = "cpu") -> tuple[float, int]:
    env = make_env(cfg, device)
    env.reset()
    actions = action_std * torch.randn(steps, env.num_envs, env.num_actions, device=device)
    env.step(actions[0])  # warm-up
    resets = torch.zeros((), dtype=torch.long, device=device)
    synchronize(torch.device(device))
    start = time.perf_counter()
    for i in range(steps):
        _, _, _, done, _, _ = env.step(actions[i])
        resets += done.sum()
    synchronize(torch.device(device))
    return env.num_envs * steps / (time.perf_counter() - start), int(resets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="qmini")
    parser.add_argument("--num_envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100, help="policy steps timed per loop")
    parser.add_argument("--action_std", type=float, default=0.3, help="std of the random actions")
    parser.add_argument("--repeats", type=int, default=3, help="alternating repeats; the best of each is kept")
    parser.add_argument("--backend", default="mujoco", help="physics backend (mujoco, warp)")
    parser.add_argument("--device", default="cpu", help="torch device of the env (warp: cpu or cuda:N)")
    args = parser.parse_args()

    torch.manual_seed(0)
    cfg = load_config(args.config, [f"env.num_envs={args.num_envs}", f"sim.backend={args.backend}"])
    check_device(args.device, "--device")
    nthread = cfg.sim.nthread or available_cores()
    raw, wrapped = 0.0, 0.0
    for _ in range(args.repeats):  # alternate so that machine noise hits both alike
        raw = max(raw, time_raw(cfg, args.num_envs, nthread, args.steps, args.action_std, args.device))
        w, resets = time_wrapper(cfg, args.steps, args.action_std, args.device)
        wrapped = max(wrapped, w)
    dec = cfg.control.decimation
    where = f"threads {nthread}" if args.backend == "mujoco" else f"device {args.device}"
    print(f"config {args.config}  backend {args.backend}  envs {args.num_envs}  {where}  dt {cfg.sim.dt}  decimation {dec}")
    raw_name = "raw Batch.step:" if args.backend == "mujoco" else f"raw {args.backend} step:"
    print(f"{raw_name:19s} {raw:12,.0f} physics steps/s")
    print(f"wrapper step:       {wrapped:12,.0f} policy steps/s  ({wrapped * dec:,.0f} physics steps/s, {resets} resets in last run)")
    print(f"ratio (wrapper x decimation / raw): {wrapped * dec / raw:.2f}")


if __name__ == "__main__":
    main()
