"""Figures of an evaluation: commanded against achieved velocities (eval_tracking.png), and the PNG writer
every evaluation and benchmark figure goes through."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rl.evaluation import EvalResult


def plot_tracking(results: dict[str, EvalResult], path: str | Path) -> Path | None:
    """Commanded vs achieved vx, vy, yaw rate over time for the traced envs, one line per policy.

    Returns the path, or None when matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    first = next(iter(results.values()))
    if first.trace_cmd is None:
        return None
    k = first.trace_cmd.shape[1]
    fig, axes = plt.subplots(k, 3, figsize=(12, 2.4 * k + 0.6), sharex=True, squeeze=False)
    labels = ["vx (m/s)", "vy (m/s)", "yaw rate (rad/s)"]
    for row in range(k):
        for col in range(3):
            ax = axes[row][col]
            ax.plot(first.trace_t, first.trace_cmd[:, row, col].numpy(), "k--", lw=1.2, label="command")
            for name, res in results.items():
                if res.trace_meas is not None and res.trace_meas.shape[1] > row:
                    ax.plot(res.trace_t, res.trace_meas[:, row, col].numpy(), lw=1.0, label=name)
            if row == 0:
                ax.set_title(labels[col])
            if col == 0:
                ax.set_ylabel(f"env {row}")
            if row == k - 1:
                ax.set_xlabel("time (s)")
            ax.grid(alpha=0.3)
    axes[0][0].legend(loc="best", fontsize=8)
    return save_figure(fig, path)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Lay out, write as an 80-dpi PNG (its folder created) and close a matplotlib figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
