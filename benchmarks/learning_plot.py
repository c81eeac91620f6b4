"""learning_curve.png of a learning benchmark (benchmarks/learn.py) from its curve_<algo>.json files.

A run warm-started from another learn.py run's policy (``--init_from DIR/policy``) is drawn after
its source's curve, read from ``DIR/curve_ours.json``: a recipe in two stages (G1: 84 minutes on a
rigid upper body, then 36 on the robot as built) then reads as one curve from scratch, its minutes and
env steps counted from the source's start.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from rl.eval_plots import save_figure

ROOT = Path(__file__).resolve().parents[1]
SMOOTH = 15  # iterations in the moving mean drawn over the raw curve


def moving_mean(values: list[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def warm_start_source(data: dict) -> tuple[str, dict] | None:
    """(folder name, curve) of the learn.py run a curve was warm-started from, or None.

    None where the run started from scratch, or its source is an experiment name or a policy
    folder without a learn.py curve beside it (a train.py run): there is no curve to draw first.
    """
    init_from = data.get("init_from")
    if not init_from:
        return None
    policy = Path(init_from) if Path(init_from).is_absolute() else ROOT / init_from
    curve = policy.parent / "curve_ours.json"
    if not curve.is_file():
        return None
    return policy.parent.name, json.loads(curve.read_text())


def _series(rows: list[dict], minutes0: float = 0.0, steps0: float = 0.0) -> tuple[list[float], list[float]]:
    return [minutes0 + r["minutes"] for r in rows], [(steps0 + r["env_steps"]) / 1e6 for r in rows]


def plot_curves(out_dir: Path) -> Path | None:
    """learning_curve.png from every curve_<algo>.json in out_dir (a warm start's source curve first)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = {p.stem.removeprefix("curve_"): json.loads(p.read_text()) for p in sorted(out_dir.glob("curve_*.json"))}
    if not curves:
        return None
    sources = {algo: warm_start_source(data) for algo, data in curves.items()}
    drawn = list(curves.values()) + [source[1] for source in sources.values() if source is not None]
    levels = any("terrain_level" in r for data in drawn for r in data["rows"])
    fig, axes = plt.subplots(3 if levels else 2, 2, figsize=(11, 10 if levels else 7))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    series = [(0, "task_reward_per_step", "-", ""), (1, "lin_vel_rmse", "-", " linear (m/s)"),
              (1, "yaw_rate_rmse", "--", " yaw rate (rad/s)")] + ([(2, "terrain_level", "-", " mean terrain level")]
                                                                if levels else [])

    def draw(rows: list[dict], xs: tuple[list[float], list[float]], color, name: str) -> None:
        for col, x in enumerate(xs):
            for row, key, style, label in series:
                y = [r.get(key, float("nan")) for r in rows]
                # raw iterations faintly, a moving mean on top
                axes[row][col].plot(x, y, style, color=color, alpha=0.2, lw=0.8)
                axes[row][col].plot(x, moving_mean(y, SMOOTH), style, color=color, lw=1.6, label=name + label)

    def mark(xs: tuple[list[float], list[float]], indices: list[int], **line) -> None:
        for col, x in enumerate(xs):
            for i in indices:
                for row in range(len(axes)):
                    axes[row][col].axvline(x[i], **line)

    for k, (algo, data) in enumerate(curves.items()):
        rows, start = data["rows"], (0.0, 0.0)
        if sources[algo] is not None:
            name, source = sources[algo]
            start = (source["rows"][-1]["minutes"], source["rows"][-1]["env_steps"])
            source_xs = _series(source["rows"])
            draw(source["rows"], source_xs, "grey", f"warm-start source {name}")
            mark(source_xs, _at(source, "stage_iterations"), color="grey", ls="-.", lw=0.8, alpha=0.7)
            for col, x0 in enumerate([start[0], start[1] / 1e6]):
                for row in range(len(axes)):
                    axes[row][col].axvline(x0, color="black", lw=1.2)
        xs = _series(rows, *start)
        mark(xs, _at(data, "resumed_at_iterations"), color=colors[k], ls=":", lw=1)  # a resumed run continued
        mark(xs, _at(data, "stage_iterations"), color="grey", ls="-.", lw=0.8, alpha=0.7)  # runner.stages start
        draw(rows, xs, colors[k], algo)
    errors = [r.get(key, float("nan")) for data in drawn for r in data["rows"] for key in ("lin_vel_rmse", "yaw_rate_rmse")]
    top = error_axis_top(errors)
    warm = any(s is not None for s in sources.values())
    for col, label in enumerate(["wall-clock minutes", "env steps (millions)"]):
        axes[0][col].set_ylabel("task reward per step (1 = perfect)")
        axes[1][col].set_ylabel("RMS tracking error" + (" (higher iterations cut off)" if top is not None else ""))
        if top is not None:
            axes[1][col].set_ylim(0.0, top)
        if levels:
            axes[2][col].set_ylabel("mean terrain level (0 = easiest)")
        axes[-1][col].set_xlabel(label + (", from the warm-start source's start" if warm else ""))
        for row in range(len(axes)):
            axes[row][col].grid(alpha=0.3)
            axes[row][col].legend(fontsize=8)
    first = next(iter(curves.values()))
    # two lines: with a long config name and machine string one line ran off the figure's left edge
    fig.suptitle(f"{first['config']}: {first['num_envs']} envs, training on {first['machine']}\n"
                 f"faint: per iteration, bold: mean of {SMOOTH}; dotted: resumed; dash-dot: a training stage starts"
                 + ("; solid black: the warm start" if warm else ""), fontsize=10)
    return save_figure(fig, out_dir / "learning_curve.png")


def _at(data: dict, key: str) -> list[int]:
    """Row indices of the iterations listed under a curve's key (resumes, stage starts)."""
    marked = set(data.get(key, []))
    return [i for i, r in enumerate(data["rows"]) if r["iteration"] in marked]


def error_axis_top(values: list[float]) -> float | None:
    """Upper limit for the tracking-error panel, or None to let matplotlib choose.

    A robot whose simulation blows up moves at hundreds of m/s for a step or two before the env
    resets it, and that one iteration's RMSE would flatten the whole curve: above three times the
    95th percentile an iteration is cut off rather than scaling the axis.
    """
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        return None
    limit = 3.0 * finite[int(0.95 * (len(finite) - 1))]
    return 1.05 * limit if finite[-1] > limit else None
