"""Where an evaluation's error is made: play.py --eval's episodes grouped by the command they held, or the tile.

    python benchmarks/eval_split.py benchmarks/results/qmini_rough/eval.json
    python benchmarks/eval_split.py A/eval.json B/eval.json --by vx --edges 0.3
    python benchmarks/eval_split.py benchmarks/results/qmini_rough/eval.json --by yaw --edges 0.01 0.35 0.7
    python benchmarks/eval_split.py benchmarks/results/qmini_rough/eval.json --by level --edges 4 7 --terrain obstacles

Each episode of an ``eval.json`` held one command (vx, vy, yaw rate). This prints, for every
policy in the file and every command band, the episodes, the falls and the mean of the
episodes' linear and yaw-rate RMSEs (play.py's summary is the same mean over all episodes),
and each band's yaw RMSE as a fraction of the zero-action policy's in the same band where the
file has one. Where the file has each episode's yaw offset (play.py's yaw_rate_offset, the size of its
mean yaw-rate error), the yaw RMSE is also split in two, exactly (RMSE^2 = offset^2 + sd^2): `off`, the
steady part (turning too slowly or drifting), and `sd`, the error's standard deviation about that mean
(the base yawing back and forth with each step, pushes, the tumble before a fall). A biped's ratio to the
zero-action policy can be held by its gait's yaw swing alone (docs/rough_terrain_trials.md "Stop 71").
Bands are half-open [edge, next edge) on the command's absolute value for
``--by yaw`` and on its signed value for ``--by vx``. On rough terrain each episode also has its tile
(play.py writes per_env.terrain_type and terrain_level): ``--by level`` groups by the tile's level,
``--terrain TYPE`` keeps the episodes of one tile type. Reads only; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from utils.cli import main_with_one_line_errors  # noqa: E402

COMPONENT = {"vx": 0, "vy": 1, "yaw": 2}
BY = [*COMPONENT, "level"]
UNIT = {"vx": "m/s", "vy": "m/s", "yaw": "rad/s", "level": "level"}
NO_TILES = "this eval.json has no per-episode tiles (per_env.{}): re-run play.py --eval on a rough-terrain config"


def bands(values: list[float], edges: list[float]) -> list[int]:
    """The band of each value: 0 below edges[0], i in [edges[i-1], edges[i]), len(edges) from the last edge up."""
    return [sum(v >= e for e in edges) for v in values]


def band_names(edges: list[float], unit: str, lowest: str) -> list[str]:
    bounds = [lowest] + [f"{e:g}" for e in edges] + ["inf"]
    return [f"[{lo}, {hi}) {unit}" for lo, hi in zip(bounds[:-1], bounds[1:])]


def episode_values(per_env: dict[str, list], by: str) -> list[float]:
    """What each episode is grouped by: a command component (|yaw|) or its tile's level."""
    if by == "level":
        if "terrain_level" not in per_env:
            raise ValueError(NO_TILES.format("terrain_level"))
        return per_env["terrain_level"]
    k = COMPONENT[by]
    return [abs(c[k]) if by == "yaw" else c[k] for c in per_env["command"]]


def split(policy: dict, by: str, edges: list[float], terrain: str | None = None) -> list[dict[str, float | int]]:
    """Per band: episodes, fall rate, mean linear and yaw-rate RMSE of one policy's episodes (on `terrain`'s
    tiles only, when given), and the yaw RMSE's mean offset and standard deviation where the file has offsets
    (else None)."""
    per_env = policy.get("per_env")
    if not per_env or "command" not in per_env:
        raise ValueError("this eval.json has no per-episode commands (per_env.command); re-run play.py --eval")
    groups = bands(episode_values(per_env, by), edges)
    if terrain is not None:
        types = per_env.get("terrain_type")
        if types is None:
            raise ValueError(NO_TILES.format("terrain_type"))
        if terrain not in types:
            raise ValueError(f"no episode on a '{terrain}' tile; this eval has {', '.join(dict.fromkeys(types))}")
        groups = [g if t == terrain else -1 for g, t in zip(groups, types)]
    rows = []
    for band in range(len(edges) + 1):
        idx = [i for i, g in enumerate(groups) if g == band]
        mean = lambda key: sum(per_env[key][i] for i in idx) / len(idx) if idx else float("nan")  # noqa: E731
        row = {"episodes": len(idx), "fall_rate": mean("fell"), "lin_vel_rmse": mean("lin_vel_rmse"),
               "yaw_rate_rmse": mean("yaw_rate_rmse"), "yaw_rate_offset": None, "yaw_rate_sd": None}
        if "yaw_rate_offset" in per_env:  # eval.json files from before play.py wrote it lack it
            sd = [math.sqrt(max(per_env["yaw_rate_rmse"][i] ** 2 - per_env["yaw_rate_offset"][i] ** 2, 0.0))
                  for i in idx]
            row.update(yaw_rate_offset=mean("yaw_rate_offset"), yaw_rate_sd=sum(sd) / len(sd) if sd else float("nan"))
        rows.append(row)
    return rows


def report(path: Path, by: str, edges: list[float], terrain: str | None = None) -> str:
    try:
        data = json.loads(path.read_text())
    except OSError as err:  # a folder, no permission: one line, as a missing file
        raise ValueError(f"cannot read {path}: {err.strerror}") from None
    policies = data.get("policies") or {}
    if not policies:
        raise ValueError(f"{path} is not a play.py --eval result (no 'policies')")
    names = band_names(edges, UNIT[by], "0" if by in ("yaw", "level") else "-inf")
    zero = split(policies["zero"], by, edges, terrain) if "zero" in policies else None
    grouped = f"|{by}|" if by == "yaw" else by
    where = f", {terrain} tiles only" if terrain else ""
    lines = [f"{path}: {data.get('episodes')} episodes, randomize {data.get('randomize')}, "
             f"push {data.get('push')}; by {grouped}{where}"]
    band = "level band" if by == "level" else "command band"
    lines.append(f"  {'policy':8s} {band:22s} {'episodes':>8s} {'falls':>6s} {'lin':>6s} {'yaw':>6s} {'off':>6s} "
                 f"{'sd':>6s} {'yaw/zero':>8s}")
    for name, policy in policies.items():
        for i, (band, row) in enumerate(zip(names, split(policy, by, edges, terrain))):
            if not row["episodes"]:
                continue
            ratio = row["yaw_rate_rmse"] / zero[i]["yaw_rate_rmse"] if zero and zero[i]["episodes"] else None
            parts = [f"{'-':>6s}" if row[k] is None else f"{row[k]:6.3f}" for k in ("yaw_rate_offset", "yaw_rate_sd")]
            lines.append(f"  {name:8s} {band:22s} {row['episodes']:8d} {row['fall_rate']:6.1%} "
                         f"{row['lin_vel_rmse']:6.3f} {row['yaw_rate_rmse']:6.3f} {' '.join(parts)} "
                         f"{'' if ratio is None else f'{ratio:8.2f}'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("evals", nargs="+", type=Path, help="eval.json files written by play.py --eval")
    parser.add_argument("--by", choices=BY, default="vx",
                        help="command component to group by, or the level of the episode's tile")
    parser.add_argument("--terrain", metavar="TYPE", help="only the episodes on this tile type (rough terrain)")
    parser.add_argument("--edges", type=float, nargs="+", default=[0.3], help="band edges, ascending")
    args = parser.parse_args(argv)
    if sorted(args.edges) != args.edges:
        raise ValueError(f"--edges must ascend, got {' '.join(f'{e:g}' for e in args.edges)}")
    print("\n".join(report(path, args.by, args.edges, args.terrain) for path in args.evals))
    return 0

if __name__ == "__main__":
    raise SystemExit(main_with_one_line_errors(main))
