"""How a walking robot's geoms meet the ground: contacts per geom, depth, and how far their normals tilt.

    python benchmarks/ground_contacts.py --name benchmarks/results/go2/policy
    python benchmarks/ground_contacts.py --name benchmarks/results/trials/go2_high_step/policy --terrain stairs_up \
        --level 0 --set terrain.mesh_type=heightfield --set terrain.horizontal_scale=0.025 \
        --set 'terrain.box_tiles=["stairs_up"]'

A trained policy walks --num_envs robots on the eval's command grid (no randomisation, pushes or noise, unless
asked), on a plane or, with --terrain/--level, pinned to rough-terrain tiles. Every --every policy steps the
pose of each robot still standing is replayed in a plain `MjData` of the same model and its ground contacts
are counted. Printed per kind of geom (the name after its leg prefix: foot, calf_lower, ...): contacts, the
median and 90th percentile of contacts per touching geom and of penetration depth, and the fraction whose
normal tilts more than 10 degrees from vertical; then the falls. On flat ground a sphere foot should have one
contact with a vertical normal; MuJoCo's height field gives it one per prism it touches (README "Height field
contacts").
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

import mujoco
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from play import Session  # noqa: E402
from config import ConfigError  # noqa: E402
from env.utils.command_schedule import CommandDriver  # noqa: E402
from env.utils.play_args import get_play_args  # noqa: E402
from rl.evaluation import eval_commands  # noqa: E402
from rl.play_setup import PlayError, build_env, play_cfg  # noqa: E402
from utils.checkpoint import CheckpointError  # noqa: E402
from utils.experiment import ExperimentError  # noqa: E402

TILT = 10.0  # degrees


def geom_kind(model: mujoco.MjModel, geom: int) -> str:
    """A geom's name without its leg prefix (FL_foot -> foot), or 'geom<k>'."""
    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or f"geom{geom}"
    return name.split("_", 1)[1] if name[:3] in ("FL_", "FR_", "RL_", "RR_") else name


def contact_stats(model: mujoco.MjModel, poses: list[np.ndarray]) -> dict[str, dict[str, float]]:
    """Per geom kind: contacts, contacts per touching geom (p50, p90), depth in mm (p50, p90), tilted fraction."""
    data = mujoco.MjData(model)
    per_kind: dict[str, list[tuple[float, float]]] = defaultdict(list)
    per_geom: dict[str, list[int]] = defaultdict(list)
    for qpos in poses:
        data.qpos[:] = qpos
        mujoco.mj_forward(model, data)
        touching: Counter = Counter()
        for c in data.contact[:data.ncon]:
            geom = c.geom2 if model.geom_bodyid[c.geom1] == 0 else c.geom1
            tilt = math.degrees(math.acos(min(1.0, abs(float(c.frame[2])))))
            per_kind[geom_kind(model, geom)].append((-float(c.dist), tilt))
            touching[geom] += 1
        for geom, count in touching.items():
            per_geom[geom_kind(model, geom)].append(count)
    out = {}
    for kind, rows in sorted(per_kind.items(), key=lambda kv: -len(kv[1])):
        a, per = np.array(rows), np.array(per_geom[kind])
        out[kind] = {"contacts": len(a), "per_geom_p50": float(np.median(per)), "per_geom_p90": float(np.percentile(per, 90)),
                     "depth_mm_p50": 1000 * float(np.median(a[:, 0])), "depth_mm_p90": 1000 * float(np.percentile(a[:, 0], 90)),
                     "tilted": float(np.mean(a[:, 1] > TILT))}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True, help="experiment name or policy folder")
    p.add_argument("--num_envs", type=int, default=40)
    p.add_argument("--steps", type=int, default=500, help="policy steps")
    p.add_argument("--every", type=int, default=5, help="policy steps between replayed poses")
    p.add_argument("--terrain", default=None, help="rough terrain: every robot on this tile type")
    p.add_argument("--level", type=int, default=None, help="rough terrain: every robot on this level")
    p.add_argument("--randomize", action="store_true")
    p.add_argument("--push", action="store_true")
    p.add_argument("--noise", action="store_true")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    args = p.parse_args(argv)
    if min(args.num_envs, args.steps, args.every) < 1:
        print("error: --num_envs, --steps and --every must be at least 1", file=sys.stderr)
        return 2
    play_argv = ["--name", args.name, "--eval", str(args.num_envs), "--policy", "trained", "--device", "cpu",
                 "--out", "unused"] + [f for on, f in ((args.randomize, "--randomize"), (args.push, "--push"),
                                                      (args.noise, "--noise")) if on]
    play_argv += (["--terrain", args.terrain] if args.terrain else []) + \
        (["--level", str(args.level)] if args.level is not None else []) + [a for s in args.set for a in ("--set", s)]
    try:
        flags = get_play_args(play_argv)  # play.py's own parsing and checks (nothing is written)
        session = Session(flags)
        cfg = play_cfg(session.cfg, flags, args.num_envs, "cpu")
        env = build_env(cfg, session.seed, flags, spread=True)
        policy = session.policy("trained", env)
    except (ConfigError, ExperimentError, CheckpointError, PlayError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    driver = CommandDriver(env.task)
    driver.set(eval_commands(cfg.commands, args.num_envs, torch.Generator().manual_seed(session.seed))[0])
    obs, _ = env.reset()
    sim = env.robot.sim
    standing = torch.ones(args.num_envs, dtype=torch.bool)
    fell = torch.zeros(args.num_envs, dtype=torch.bool)
    poses: list[np.ndarray] = []
    with torch.inference_mode():
        for step in range(args.steps):
            if step % args.every == 0:
                poses += [row.copy() for row in sim.qpos.numpy()[standing.numpy()]]
            obs, _, _, done, info, _ = env.step(policy(obs))
            fell |= standing & done & ~info["time_outs"]
            standing &= ~done
    where = f" on {args.terrain or 'every type'} level {args.level}" if (args.terrain or args.level is not None) else ""
    print(f"{args.name}: {args.num_envs} robots{where}, {len(poses)} poses replayed")
    print(f"{'geom':>14} {'contacts':>9} {'per geom p50/p90':>17} {'depth mm p50/p90':>17} {'tilted >10 deg':>15}")
    for kind, s in contact_stats(sim.model, poses).items():
        print(f"{kind:>14} {s['contacts']:9d} {s['per_geom_p50']:8.0f} /{s['per_geom_p90']:4.0f}    "
              f"{s['depth_mm_p50']:7.1f} /{s['depth_mm_p90']:5.1f}    {s['tilted']:12.2f}")
    print(f"falls: {int(fell.sum())} of {args.num_envs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
