"""Evaluation results per terrain type and level (rough terrain): ``play.py --eval`` on a height-field config.

The evaluation spreads its envs over the tiles (every type at every level, in turn; or one
type and/or level with ``--terrain``/``--level``); this groups each env's episode metrics
by its tile, prints a table (one row per type, one column per level) and draws heat maps.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rl.eval_plots import save_figure

# (key in the tile cells, per-episode source, label): the path length and the displacement both, since a robot
# stepping in place at an edge adds path but no displacement (the curriculum promotes by displacement)
METRICS = (("fall_rate", "fell", "falls"), ("lin_vel_rmse", "lin_vel_rmse", "lin vel RMSE (m/s)"),
           ("distance_m", "distance_m", "path length (m)"), ("displacement_m", "displacement_m", "displacement (m)"))
HIGHER_IS_BETTER = ("distance_m", "displacement_m")


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return sum(kept) / len(kept) if kept else None


def by_tile(per_env: dict[str, list], types: list[str], levels: list[int]) -> dict[str, dict[str, dict[str, Any]]]:
    """{type: {level: {"episodes": n, "fall_rate": .., "lin_vel_rmse": .., "distance_m": .., "displacement_m": ..}}},
    levels as strings (JSON keys), both in first-seen order."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for kind in dict.fromkeys(types):
        out[kind] = {}
        for level in sorted({lv for t, lv in zip(types, levels) if t == kind}):
            rows = [i for i, (t, lv) in enumerate(zip(types, levels)) if t == kind and lv == level]
            cell = {"episodes": len(rows)}
            for key, source, _ in METRICS:
                cell[key] = _mean([per_env[source][i] for i in rows])
            out[kind][str(level)] = cell
    return out


def format_tiles(tiles: dict[str, dict[str, dict[str, Any]]], key: str = "fall_rate") -> str:
    """One row per terrain type, one column per level: ``key`` of each tile (``-`` where no env ran)."""
    levels = sorted({int(lv) for cells in tiles.values() for lv in cells})
    label = next(name for k, _, name in METRICS if k == key)
    width = max(len(t) for t in tiles) if tiles else 4
    lines = [f"{label} per terrain type (rows) and level (columns)",
             " " * width + "".join(f"  {lv:>5d}" for lv in levels)]
    for kind, cells in tiles.items():
        row = []
        for lv in levels:
            value = cells.get(str(lv), {}).get(key)
            row.append(f"  {'-' if value is None else f'{value:5.2f}':>5}")
        lines.append(f"{kind:<{width}}" + "".join(row))
    return "\n".join(lines)


def plot_tiles(tiles: dict[str, dict[str, dict[str, Any]]], path: str | Path, title: str = "") -> Path | None:
    """Heat maps of fall rate, tracking error, path length and displacement per type and level; None without
    matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    kinds = list(tiles)
    levels = sorted({int(lv) for cells in tiles.values() for lv in cells})
    fig, axes = plt.subplots(1, len(METRICS), figsize=(5 * len(METRICS), 0.45 * len(kinds) + 1.8), squeeze=False)
    for ax, (key, _, label) in zip(axes[0], METRICS):
        grid = [[tiles[k].get(str(lv), {}).get(key) for lv in levels] for k in kinds]
        values = [[float("nan") if v is None else v for v in row] for row in grid]
        image = ax.imshow(values, aspect="auto", cmap="viridis" if key in HIGHER_IS_BETTER else "viridis_r")
        ax.set_xticks(range(len(levels)), [str(lv) for lv in levels])
        ax.set_yticks(range(len(kinds)), kinds)
        ax.set_xlabel("terrain level")
        ax.set_title(label)
        for r, row in enumerate(grid):
            for c, v in enumerate(row):
                if v is not None:
                    ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                            bbox={"facecolor": "white", "alpha": 0.6, "pad": 1, "linewidth": 0})
        fig.colorbar(image, ax=ax, fraction=0.046)
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)
