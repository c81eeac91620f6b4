"""Where an evaluation's error is made: play.py --eval's episodes grouped by the command they held.

    python benchmarks/eval_split.py benchmarks/results/qmini_rough/eval.json
    python benchmarks/eval_split.py A/eval.json B/eval.json --by vx --edges 0.3
    python benchmarks/eval_split.py benchmarks/results/qmini_rough/eval.json --by yaw --edges 0.01 0.35 0.7

Each episode of an ``eval.json`` held one command (vx, vy, yaw rate). This prints, for every
policy in the file and every command band, the episodes, the falls and the mean of the
episodes' linear and yaw-rate RMSEs (play.py's summary is the same mean over all episodes),
and each band's yaw RMSE as a fraction of the zero-action policy's in the same band where the
file has one. Bands are half-open [edge, next edge) on the command's absolute value for
``--by yaw`` and on its signed value for ``--by vx``. Reads only; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from utils.cli import main_with_one_line_errors  # noqa: E402

COMPONENT = {"vx": 0, "vy": 1, "yaw": 2}


def bands(values: list[float], edges: list[float]) -> list[int]:
    """The band of each value: 0 below edges[0], i in [edges[i-1], edges[i]), len(edges) from the last edge up."""
    return [sum(v >= e for e in edges) for v in values]


def band_names(edges: list[float], unit: str, lowest: str) -> list[str]:
    bounds = [lowest] + [f"{e:g}" for e in edges] + ["inf"]
    return [f"[{lo}, {hi}) {unit}" for lo, hi in zip(bounds[:-1], bounds[1:])]


def split(policy: dict, by: str, edges: list[float]) -> list[dict[str, float | int]]:
    """Per band: episodes, fall rate, mean linear and yaw-rate RMSE of one policy's episodes."""
    per_env = policy.get("per_env")
    if not per_env or "command" not in per_env:
        raise ValueError("this eval.json has no per-episode commands (per_env.command); re-run play.py --eval")
    k = COMPONENT[by]
    values = [abs(c[k]) if by == "yaw" else c[k] for c in per_env["command"]]
    groups = bands(values, edges)
    rows = []
    for band in range(len(edges) + 1):
        idx = [i for i, g in enumerate(groups) if g == band]
        mean = lambda key: sum(per_env[key][i] for i in idx) / len(idx) if idx else float("nan")  # noqa: E731
        rows.append({"episodes": len(idx), "fall_rate": mean("fell"), "lin_vel_rmse": mean("lin_vel_rmse"),
                     "yaw_rate_rmse": mean("yaw_rate_rmse")})
    return rows


def report(path: Path, by: str, edges: list[float]) -> str:
    try:
        data = json.loads(path.read_text())
    except OSError as err:  # a folder, no permission: one line, as a missing file
        raise ValueError(f"cannot read {path}: {err.strerror}") from None
    policies = data.get("policies") or {}
    if not policies:
        raise ValueError(f"{path} is not a play.py --eval result (no 'policies')")
    names = band_names(edges, "rad/s" if by == "yaw" else "m/s", "0" if by == "yaw" else "-inf")
    zero = split(policies["zero"], by, edges) if "zero" in policies else None
    grouped = f"|{by}|" if by == "yaw" else by
    lines = [f"{path}: {data.get('episodes')} episodes, randomize {data.get('randomize')}, "
             f"push {data.get('push')}; by {grouped}"]
    lines.append(f"  {'policy':8s} {'command band':22s} {'episodes':>8s} {'falls':>6s} {'lin':>6s} {'yaw':>6s} "
                 f"{'yaw/zero':>8s}")
    for name, policy in policies.items():
        for i, (band, row) in enumerate(zip(names, split(policy, by, edges))):
            if not row["episodes"]:
                continue
            ratio = row["yaw_rate_rmse"] / zero[i]["yaw_rate_rmse"] if zero and zero[i]["episodes"] else None
            lines.append(f"  {name:8s} {band:22s} {row['episodes']:8d} {row['fall_rate']:6.1%} "
                         f"{row['lin_vel_rmse']:6.3f} {row['yaw_rate_rmse']:6.3f} "
                         f"{'' if ratio is None else f'{ratio:8.2f}'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("evals", nargs="+", type=Path, help="eval.json files written by play.py --eval")
    parser.add_argument("--by", choices=list(COMPONENT), default="vx", help="command component to group by")
    parser.add_argument("--edges", type=float, nargs="+", default=[0.3], help="band edges, ascending")
    args = parser.parse_args(argv)
    if sorted(args.edges) != args.edges:
        raise ValueError(f"--edges must ascend, got {' '.join(f'{e:g}' for e in args.edges)}")
    print("\n".join(report(path, args.by, args.edges) for path in args.evals))
    return 0

if __name__ == "__main__":
    raise SystemExit(main_with_one_line_errors(main))
