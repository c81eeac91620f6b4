"""Env throughput against the raw physics limit, measured in the same run.

    python benchmarks/env_throughput.py --config qmini --num_envs 1024
    python benchmarks/env_throughput.py --config go2_rough --num_envs 256 --set terrain.horizontal_scale=0.1
    python benchmarks/env_throughput.py --config go2 --backend warp --device cpu --num_envs 8 --steps 20

Prints policy steps/s of the full GymEnvWrapper step (random actions, resets,
rewards, observations included), the raw physics steps/s of the same model on
the same backend (`mujoco.batch.Batch.step`, or the warp backend's own step with
the targets written on the device), env count and thread count, and the ratio
(wrapper steps/s x decimation / raw physics steps/s): 1.0 means the Python side
costs nothing. Both loops apply random joint targets of the same size.

Resets are measured on their own too: the share of the wrapper run spent in
them (robot and task `reset_idx`, as `Task.step` calls them), and what one
reset of k envs (k: the mean of the run's reset calls, or `--reset_envs`)
costs in step-equivalents, one raw physics policy step of all envs being the unit.
On a CPU device the backend's step inside the wrapper is timed as well, against
the raw one: not all of the gap is Python, the two loops do not simulate the same
states (the env keeps resetting robots onto their feet, with more contacts than
the raw loop's robots once they have fallen).
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


def probe(obj, name: str, totals: dict[str, float], key: str, device: torch.device) -> None:
    """Time every call of method `name` of `obj` (patched on this instance only) into totals[key]; count calls."""
    inner = getattr(obj, name)

    def timed(*args, **kwargs):
        synchronize(device)
        start = time.perf_counter()
        out = inner(*args, **kwargs)
        synchronize(device)
        totals[key] += time.perf_counter() - start
        totals[f"{key}_calls"] += 1
        return out

    setattr(obj, name, timed)


def time_wrapper(cfg, steps: int, action_std: float, device: str = "cpu", reset_envs: int = 0) -> dict:
    """Policy steps/s of the wrapper with random actions, where its time goes, and what one reset costs.

    Returns steps_per_s, resets (envs reset in the timed run) and reset_calls, the shares of the run's
    time spent in resets (robot and task `reset_idx`) and, on a CPU device, in the backend's step
    (physics_s: its seconds per policy step; None where timing it would add GPU synchronisations),
    reset_envs (k) and reset_s (seconds of one reset of k random envs, the mean of 20 calls).
    """
    dev = torch.device(device)
    env = make_env(cfg, device)
    env.reset()
    totals = {"reset": 0.0, "reset_calls": 0, "physics": 0.0, "physics_calls": 0}
    probe(env.robot, "reset_idx", totals, "reset", dev)  # Task.step resets the robot, then the task
    probe(env.task, "reset_idx", totals, "reset", dev)
    if dev.type == "cpu":
        probe(env.robot.sim, "step", totals, "physics", dev)
    actions = action_std * torch.randn(steps, env.num_envs, env.num_actions, device=device)
    env.step(actions[0])  # warm-up
    totals.update({key: 0 for key in totals})
    resets = torch.zeros((), dtype=torch.long, device=device)
    synchronize(dev)
    start = time.perf_counter()
    for i in range(steps):
        _, _, _, done, _, _ = env.step(actions[i])
        resets += done.sum()
    synchronize(dev)
    seconds = time.perf_counter() - start
    calls = totals["reset_calls"] // 2
    k = reset_envs or max(1, round(int(resets) / max(1, calls)))
    return {"steps_per_s": env.num_envs * steps / seconds, "resets": int(resets), "reset_calls": calls,
            "reset_share": totals["reset"] / seconds, "physics_share": totals["physics"] / seconds,
            "physics_s": totals["physics"] / steps if dev.type == "cpu" else None,
            "reset_envs": k, "reset_s": time_reset(env, k, dev)}


def time_reset(env, k: int, device: torch.device, calls: int = 20) -> float:
    """Seconds of one reset of k random envs (robot and task), the mean of `calls` resets."""
    generator = torch.Generator().manual_seed(0)
    ids = [torch.randperm(env.num_envs, generator=generator)[:k].sort().values.to(device) for _ in range(calls + 1)]
    env.robot.reset_idx(ids[0])  # warm-up
    env.task.reset_idx(ids[0])
    synchronize(device)
    start = time.perf_counter()
    for env_ids in ids[1:]:
        env.robot.reset_idx(env_ids)
        env.task.reset_idx(env_ids)
    synchronize(device)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="qmini")
    parser.add_argument("--num_envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100, help="policy steps timed per loop")
    parser.add_argument("--action_std", type=float, default=0.3, help="std of the random actions")
    parser.add_argument("--repeats", type=int, default=3, help="alternating repeats; the best of each is kept")
    parser.add_argument("--backend", default="mujoco", help="physics backend (mujoco, warp)")
    parser.add_argument("--device", default="cpu", help="torch device of the env (warp: cpu or cuda:N)")
    parser.add_argument("--reset_envs", type=int, default=0,
                        help="envs per timed reset (0: the mean of the run's reset calls)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="override a config field (repeatable), e.g. --set terrain.horizontal_scale=0.1")
    args = parser.parse_args()
    if not 0 <= args.reset_envs <= args.num_envs:
        print(f"error: --reset_envs must be between 0 (the run's mean) and --num_envs ({args.num_envs}), "
              f"got {args.reset_envs}", file=sys.stderr)
        sys.exit(2)

    torch.manual_seed(0)
    try:
        cfg = load_config(args.config, [f"env.num_envs={args.num_envs}", f"sim.backend={args.backend}", *args.set])
    except ValueError as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        sys.exit(2)
    check_device(args.device, "--device")
    nthread = cfg.sim.nthread or available_cores()
    raw, best = 0.0, None
    for _ in range(args.repeats):  # alternate so that machine noise hits both alike
        raw = max(raw, time_raw(cfg, args.num_envs, nthread, args.steps, args.action_std, args.device))
        run = time_wrapper(cfg, args.steps, args.action_std, args.device, args.reset_envs)
        best = run if best is None or run["steps_per_s"] > best["steps_per_s"] else best
    wrapped, dec = best["steps_per_s"], cfg.control.decimation
    where = f"threads {nthread}" if args.backend == "mujoco" else f"device {args.device}"
    print(f"config {args.config}  backend {args.backend}  envs {args.num_envs}  {where}  dt {cfg.sim.dt}  decimation {dec}")
    raw_name = "raw Batch.step:" if args.backend == "mujoco" else f"raw {args.backend} step:"
    print(f"{raw_name:19s} {raw:12,.0f} physics steps/s")
    print(f"wrapper step:       {wrapped:12,.0f} policy steps/s  ({wrapped * dec:,.0f} physics steps/s, "
          f"{best['resets']} resets in {best['reset_calls']} calls in its run)")
    print(f"ratio (wrapper x decimation / raw): {wrapped * dec / raw:.2f}")
    # unit: one policy step of all envs at the raw physics rate
    step_s = args.num_envs * dec / raw
    k, cost = best["reset_envs"], best["reset_s"] / step_s
    print(f"resets: {best['reset_share']:.1%} of the wrapper run; one reset of {k} env{'s' if k > 1 else ''} = "
          f"{cost:.3f} step-equivalents (a raw policy step of all {args.num_envs} envs), "
          f"{cost * args.num_envs / k:.2f} single-env steps per env reset")
    if best["physics_s"] is not None:
        rest = 1 - best["physics_share"] - best["reset_share"]
        inflation = best["physics_s"] / step_s
        print(f"wrapper run: physics {best['physics_share']:.1%} (its step costs {inflation:.2f}x the raw one), "
              f"resets {best['reset_share']:.1%}, the rest {rest:.1%}")

if __name__ == "__main__":
    main()
