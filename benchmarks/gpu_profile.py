"""Where one PPO iteration's time goes on the warp backend: torch.profiler over one iteration.

    python benchmarks/gpu_profile.py --configs go2 --num_envs 4096 --steps_per_env 4 --device cuda:0 --out benchmarks/results/gpu
    python benchmarks/gpu_profile.py --configs go2 --num_envs 4 --device cpu --out /tmp/prof   # a smoke run

gpu_bench.py measured an iteration that hardly grows with the env count (1024 to
16384 envs), i.e. bound by the host, not by the GPU. This profiles one iteration
after a warm-up and writes gpu_profile.txt: wall time against the GPU's busy
time, kernel launches and host-device synchronisations per env step, and the
operators with the most host time (self and total), plus gpu_profile.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from benchmarks.env_throughput import synchronize  # noqa: E402
from benchmarks.gpu_bench import check_inputs, warm_runner  # noqa: E402
from config import ConfigError  # noqa: E402
from utils.devices import DeviceError  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402

# host-side calls that mean the host waited for the device or copied from it
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
              "cudaMemcpyAsync", "cuStreamSynchronize", "cuMemcpyDtoH", "cuCtxSynchronize")
LAUNCH_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx", "cudaGraphLaunch",
                "cuGraphLaunch")


def profile_iteration(config: str, num_envs: int, steps_per_env: int, device: torch.device, overrides: list[str]) -> dict:
    """One PPO iteration under torch.profiler, after gpu_bench's warm-up iteration."""
    _, _, runner, _ = warm_runner(config, num_envs, steps_per_env, device, overrides)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        runner.learn(1)
        synchronize(device)
    wall = time.perf_counter() - start
    events = prof.key_averages()
    counts = {name: 0 for name in SYNC_CALLS + LAUNCH_CALLS}
    for e in events:
        if e.key in counts:
            counts[e.key] += e.count
    device_busy_us = sum(e.self_device_time_total for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
    top_self = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:25]
    top_total = sorted((e for e in events if not e.key.startswith("ProfilerStep")), key=lambda e: e.cpu_time_total,
                       reverse=True)[:25]
    return {"config": config, "num_envs": num_envs, "steps_per_env": steps_per_env, "wall_s": round(wall, 4),
            "device_busy_s": round(device_busy_us / 1e6, 4),
            "launches_per_env_step": round(sum(counts[n] for n in LAUNCH_CALLS) / steps_per_env, 1),
            "syncs_per_env_step": round(sum(counts[n] for n in SYNC_CALLS) / steps_per_env, 1),
            "calls": {k: v for k, v in counts.items() if v},
            "top_self_cpu": [(e.key, e.count, round(e.self_cpu_time_total / 1e3, 2)) for e in top_self],
            "top_total_cpu": [(e.key, e.count, round(e.cpu_time_total / 1e3, 2)) for e in top_total]}


def report(row: dict) -> list[str]:
    lines = [f"{row['config']} at {row['num_envs']} envs x {row['steps_per_env']} steps: one iteration {row['wall_s']:.3f} s "
             f"wall, GPU busy {row['device_busy_s']:.3f} s; per env step {row['launches_per_env_step']} launches, "
             f"{row['syncs_per_env_step']} host waits/copies ({row['calls']})",
             "  most host time, self (op, calls, ms):"]
    lines += [f"    {k[:70]:70s} {n:7d} {ms:9.2f}" for k, n, ms in row["top_self_cpu"]]
    lines.append("  most host time, total incl. children (op, calls, ms):")
    lines += [f"    {k[:70]:70s} {n:7d} {ms:9.2f}" for k, n, ms in row["top_total_cpu"]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--configs", nargs="+", default=["go2"])
    parser.add_argument("--num_envs", type=int, default=4096)
    parser.add_argument("--steps_per_env", type=int, default=24)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    parser.add_argument("--out", default="benchmarks/results/gpu")
    args = parser.parse_args(argv)
    try:
        device = check_inputs(args.device, args.configs, [args.num_envs], args.steps_per_env, args.set)
    except (ConfigError, DeviceError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, lines = [], []
    for config in args.configs:
        row = profile_iteration(config, args.num_envs, args.steps_per_env, device, args.set)
        rows.append(row)
        row_lines = report(row)
        lines += row_lines
        print("\n".join(row_lines), flush=True)
    atomic_write_text(out / "gpu_profile.json", json.dumps({"torch": torch.__version__, "rows": rows}, indent=1) + "\n")
    atomic_write_text(out / "gpu_profile.txt", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
