"""benchmarks/learning_plot.py: the learning-curve figure, a warm start drawn after its source."""

import json

import pytest

from benchmarks import learning_plot


def curve(minutes_per_row: float, steps_per_row: int, n: int, **extra) -> dict:
    rows = [{"iteration": i + 1, "minutes": minutes_per_row * (i + 1), "env_steps": steps_per_row * (i + 1),
             "task_reward_per_step": 0.5, "lin_vel_rmse": 0.3, "yaw_rate_rmse": 0.4, "episode_length_s": 10.0,
             "fall_fraction": 0.1} for i in range(n)]
    return {"config": "g1", "algo": "ours", "num_envs": 8, "machine": "test", "rows": rows, **extra}


@pytest.fixture
def figures(monkeypatch):
    """The x data of every line of each figure plot_curves saves, by panel (row, column)."""
    seen = []

    def keep(fig, path):
        seen.append({(i // 2, i % 2): [list(line.get_xdata()) for line in ax.get_lines()]
                     for i, ax in enumerate(fig.axes)})
        return path

    monkeypatch.setattr(learning_plot, "save_figure", keep)
    return seen


def test_a_warm_start_is_drawn_after_its_source_with_minutes_and_steps_counted_from_its_start(tmp_path, figures):
    source, run = tmp_path / "stage1", tmp_path / "stage2"
    source.mkdir(), run.mkdir()
    (source / "curve_ours.json").write_text(json.dumps(curve(2.0, 100, 5)))  # ends at 10 min, 500 steps
    (run / "curve_ours.json").write_text(json.dumps(curve(1.0, 50, 3, init_from=str(source / "policy"))))
    assert learning_plot.plot_curves(run) == run / "learning_curve.png"
    minutes, steps = figures[0][(0, 0)], figures[0][(0, 1)]
    xs = sorted({x for line in minutes for x in line})
    assert xs[:5] == [2.0, 4.0, 6.0, 8.0, 10.0]  # the source as it ran
    assert xs[-3:] == [11.0, 12.0, 13.0]  # this run after it
    assert max(x for line in steps for x in line) == pytest.approx((500 + 150) / 1e6)
    assert [10.0, 10.0] in minutes  # the vertical line where the warm start begins


def test_a_run_from_scratch_or_from_a_source_without_a_curve_is_drawn_alone(tmp_path, figures):
    (tmp_path / "curve_ours.json").write_text(json.dumps(curve(1.0, 50, 3, init_from=str(tmp_path / "none" / "policy"))))
    assert learning_plot.warm_start_source(json.loads((tmp_path / "curve_ours.json").read_text())) is None
    learning_plot.plot_curves(tmp_path)
    assert sorted({x for line in figures[0][(0, 0)] for x in line}) == [1.0, 2.0, 3.0]


def test_the_error_axis_cuts_off_a_diverged_iteration_but_not_an_ordinary_curve():
    ordinary = [1.0 - 0.005 * i for i in range(100)]
    assert learning_plot.error_axis_top(ordinary) is None  # matplotlib's own limits
    top = learning_plot.error_axis_top(ordinary[:50] + [349.3] + ordinary[50:])  # one iteration with a blown-up robot
    assert 1.0 < top < 5.0
    assert learning_plot.error_axis_top([float("nan")]) is None
