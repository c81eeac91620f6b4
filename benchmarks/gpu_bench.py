"""GPU figures of the warp backend: collection rate per env count and one PPO iteration's time.

    python benchmarks/gpu_bench.py --device cuda:0 --out benchmarks/results/gpu
    python benchmarks/gpu_bench.py --device cpu --configs go2 --num_envs 4 --iterations 1   # a smoke run

For each config and env count: PPO iterations on the warp backend with the policy
in the loop (after one warm-up iteration that compiles kernels and captures the
CUDA graphs); collection env steps/s = env steps / (iteration time - update
time), next to the backend's raw physics rate on the same device measured in
the same run. Then the end-to-end iteration time at --iteration_envs. Writes
gpu_bench.json and gpu_bench.txt (the printed table) into --out.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from benchmarks.env_throughput import synchronize, time_raw_backend  # noqa: E402
from config import ConfigError, load_config  # noqa: E402
from env.gym_env_wrapper import make_env  # noqa: E402
from rl.runner import OnPolicyRunner  # noqa: E402
from rl.seed import set_seed  # noqa: E402
from utils.devices import DeviceError, check_device, cpu_model  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402


# The GPU issue's targets on an H100/H200-class GPU (physics with the policy in the loop; one PPO iteration).
COLLECTION_TARGET = 400_000  # env steps/s, go2 at 8192 envs
ITERATION_TARGET_S = 0.5  # s, at 4096 envs x 24 steps


def target(row: dict, key: str, envs: int, op: str, limit: float) -> str:
    """`` (target >= 400,000: PASS)`` for the row the target is set at, else nothing."""
    if row["num_envs"] != envs:
        return ""
    ok = row[key] >= limit if op == ">=" else row[key] < limit
    return f" (target {op} {limit:,}: {'PASS' if ok else 'FAIL'})"


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{cpu_model() or platform.machine()} CPU (Warp's CPU device)"


def bench_config(config: str, num_envs: int, steps_per_env: int, device: torch.device, overrides: list[str] = ()):
    """The config of one benchmark point: warp backend on `device`, no checkpoints; ConfigError if it is bad."""
    return load_config(config, [f"env.num_envs={num_envs}", "sim.backend=warp", f"runner.device={device}",
                                f"runner.num_steps_per_env={steps_per_env}", "runner.save_interval=0", *overrides])


def check_inputs(device: str, configs: list[str], num_envs: list[int], steps_per_env: int,
                 overrides: list[str] = ()) -> torch.device:
    """The device, after checking it and every benchmark point's config before anything runs or is written."""
    checked = torch.device(check_device(device, "--device"))
    for config in configs:
        for n in num_envs:
            bench_config(config, n, steps_per_env, checked, overrides)
    return checked


def warm_runner(config: str, num_envs: int, steps_per_env: int, device: torch.device, overrides: list[str] = ()):
    """(env, cfg, runner, warm-up seconds) after one PPO iteration that compiles kernels and captures graphs."""
    set_seed(0)
    cfg = bench_config(config, num_envs, steps_per_env, device, overrides)
    env = make_env(cfg, device)
    runner = OnPolicyRunner(env, cfg, log_dir=None, device=str(device), verbose=False)
    start = time.perf_counter()
    runner.learn(1)  # warm-up: kernels compile (cached afterwards), graphs are captured
    synchronize(device)
    return env, cfg, runner, time.perf_counter() - start


def measure(config: str, num_envs: int, iterations: int, steps_per_env: int, device: torch.device) -> dict:
    """Timed PPO iterations of one config at one env count on the warp backend."""
    env, cfg, runner, warmup = warm_runner(config, num_envs, steps_per_env, device)
    update_s = 0.0
    update = runner.alg.update

    def timed_update(*args, **kwargs):
        nonlocal update_s
        synchronize(device)
        t = time.perf_counter()
        try:
            return update(*args, **kwargs)
        finally:
            synchronize(device)
            update_s += time.perf_counter() - t

    runner.alg.update = timed_update  # an instance attribute shadows the method; nothing in the package changes
    start = time.perf_counter()
    runner.learn(iterations)
    synchronize(device)
    total = time.perf_counter() - start
    steps = iterations * steps_per_env * num_envs
    raw = time_raw_backend(cfg, num_envs, 20, 0.3, device)
    dec = cfg.control.decimation
    return {"config": config, "num_envs": num_envs, "steps_per_env": steps_per_env, "iterations": iterations,
            "warmup_s": round(warmup, 2), "iteration_s": round(total / iterations, 4),
            "collection_env_steps_per_s": round(steps / (total - update_s)),
            "raw_physics_steps_per_s": round(raw), "collection_over_raw": round(steps * dec / (total - update_s) / raw, 3),
            "overflows": env.robot.sim.overflow_total, "diverged": env.robot.sim.diverged_total}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--configs", nargs="+", default=["go2", "qmini"])
    parser.add_argument("--num_envs", type=int, nargs="+", default=[1024, 4096, 8192, 16384])
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per point")
    parser.add_argument("--iteration_envs", type=int, default=4096, help="env count of the end-to-end iteration figure")
    parser.add_argument("--steps_per_env", type=int, default=24)
    parser.add_argument("--out", default="benchmarks/results/gpu")
    args = parser.parse_args(argv)
    try:
        device = check_inputs(args.device, args.configs, args.num_envs, args.steps_per_env)
    except (ConfigError, DeviceError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"warp backend on {device_name(device)}, torch {torch.__version__}"]
    print(lines[0], flush=True)
    rows = []
    for config in args.configs:
        for n in args.num_envs:
            row = measure(config, n, args.iterations, args.steps_per_env, device)
            rows.append(row)
            line = (f"{config:6s} {n:6d} envs: collection {row['collection_env_steps_per_s']:>12,} env steps/s "
                    f"({row['collection_over_raw']:.2f} of raw {row['raw_physics_steps_per_s']:,} physics steps/s), "
                    f"iteration {row['iteration_s']:.3f} s, warm-up {row['warmup_s']:.0f} s, "
                    f"overflows {row['overflows']}")
            lines.append(line)
            print(line, flush=True)
    for row in rows:
        if row["num_envs"] == args.iteration_envs:
            lines.append(f"end-to-end PPO iteration, {row['config']} at {row['num_envs']} envs x {row['steps_per_env']} "
                         f"steps: {row['iteration_s']:.3f} s" + target(row, "iteration_s", 4096, "<", ITERATION_TARGET_S))
        if row["config"] == "go2" and row["num_envs"] == 8192:
            lines.append(f"go2 collection at 8192 envs: {row['collection_env_steps_per_s']:,} env steps/s"
                         + target(row, "collection_env_steps_per_s", 8192, ">=", COLLECTION_TARGET))
    result = {"device": device_name(device), "torch": torch.__version__, "rows": rows,
              "targets": {"go2_collection_8192_env_steps_per_s": COLLECTION_TARGET, "iteration_4096_s": ITERATION_TARGET_S}}
    atomic_write_text(out / "gpu_bench.json", json.dumps(result, indent=1) + "\n")
    atomic_write_text(out / "gpu_bench.txt", "\n".join(lines) + "\n")
    print("\n".join(lines[len(rows) + 1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
