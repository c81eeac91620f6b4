"""Where a rough-terrain run's curriculum left its envs: the mean level, overall and per terrain type.

    python benchmarks/terrain_levels.py --name benchmarks/results/go2_rough/policy

Reads the levels saved in the checkpoint (``env_state``) and the config beside it; the
envs' terrain types follow from their columns as the env assigns them (in env order).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import load_saved_config  # noqa: E402
from env.terrain import column_types  # noqa: E402
from env.terrain.curriculum import env_columns, mean_by_type  # noqa: E402
from utils.checkpoint import read_checkpoint  # noqa: E402
from utils.experiment import open_experiment  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", required=True, help="experiment name or policy folder")
    args = parser.parse_args(argv)
    exp = open_experiment(args.name)
    cfg = load_saved_config(exp.cfg_path)
    state = read_checkpoint(exp.policy_path, "cpu", exp).get("env_state", {}).get("terrain")
    if not state:
        print(f"error: {exp.policy_path} holds no terrain levels (not a rough-terrain run)", file=sys.stderr)
        return 2
    levels = [int(v) for v in state["levels"]]
    t = cfg.terrain
    print(f"{args.name}: {len(levels)} envs, mean level {sum(levels) / len(levels):.2f} of 0..{t.num_rows - 1}")
    types = column_types(dict(t.terrain_proportions), t.num_cols)
    columns = env_columns(len(levels), types, dict(t.terrain_proportions)).tolist()
    for kind, mean in mean_by_type([types[c] for c in columns], levels).items():
        print(f"  {kind:16s} {mean:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
