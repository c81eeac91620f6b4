"""Physics cost of a terrain change: the rough-terrain scene of a config against the same with --set changes.

    python benchmarks/terrain_cost.py --config go2_rough --set 'terrain.box_tiles=["stairs_up", "stairs_down"]'
    python benchmarks/terrain_cost.py --config go2_rough --set terrain.num_cols=7 --set terrain.horizontal_scale=0.05 \
        --set 'terrain.box_tiles=["stairs_up", "stairs_down", "obstacles"]'

Both scenes are compiled from the config (the second with the --set overrides), each on its own
`mujoco.batch.Batch` with the same env and thread counts; the robots stand at the home pose on the tile
platforms, spread over every tile, under the home pose's joint targets, and the two batches step in
alternation so that the machine's noise hits both alike. Printed: geoms and height-field vertices of each
scene, its physics steps/s (best of --repeats) and the ratio. MuJoCo places every geom at every step, so
terrain boxes (`terrain.box_tiles`) cost in proportion to their number; a coarser height field saves.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import mujoco
import mujoco.batch
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from config import ConfigError, load_config  # noqa: E402
from env.sim.mujoco_backend import available_cores  # noqa: E402
from env.sim.scene import load_mj_model  # noqa: E402
from env.terrain.grid import generate_terrain  # noqa: E402


def standing_batch(model: mujoco.MjModel, origins: np.ndarray, num_envs: int, nthread: int) -> mujoco.batch.Batch:
    """A batch of robots at the home keyframe (its joint targets too), robot k moved onto ``origins[k % len(origins)]``."""
    batch = mujoco.batch.Batch(model, num_envs, nthread)
    batch.reset(keyframe=mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home"))
    batch.bind("qpos")[:, :3] += origins[np.arange(num_envs) % len(origins)]
    return batch


def steps_per_second(batch: mujoco.batch.Batch, num_envs: int, steps: int) -> float:
    start = time.perf_counter()
    batch.step(nstep=steps)
    return num_envs * steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="go2_rough")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE", help="the change (second scene)")
    p.add_argument("--num_envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=100, help="physics steps per timed call")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    if not args.set or min(args.num_envs, args.steps, args.repeats) < 1:
        print("error: give at least one --set change, and --num_envs, --steps, --repeats >= 1", file=sys.stderr)
        return 2
    scenes = {}
    try:
        for label, sets in (("config", []), ("changed", args.set)):
            cfg = load_config(args.config, sets)
            if cfg.terrain.mesh_type != "heightfield":
                raise ConfigError(f"'{args.config}' walks on a {cfg.terrain.mesh_type}: give a rough-terrain config")
            grid = generate_terrain(cfg.terrain)
            model = load_mj_model(cfg, grid)
            batch = standing_batch(model, grid.tile_origins.reshape(-1, 3), args.num_envs, available_cores())
            scenes[label] = (model, grid.heights.size, batch)
    except (ConfigError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    best = {label: 0.0 for label in scenes}
    for _ in range(args.repeats):
        for label, (_, _, batch) in scenes.items():
            best[label] = max(best[label], steps_per_second(batch, args.num_envs, args.steps))
    for label, (model, vertices, _) in scenes.items():
        print(f"{label:>8}: {model.ngeom:6d} geoms, {vertices / 1e6:5.1f} M height-field vertices, "
              f"{best[label]:8.0f} physics steps/s", flush=True)
    print(f"changed / config: {best['changed'] / best['config']:.2f} ({' '.join(args.set)}; {args.num_envs} envs, "
          f"{available_cores()} threads)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
