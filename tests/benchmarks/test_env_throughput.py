"""benchmarks/env_throughput.py: where a wrapper run's time goes, and what one reset costs."""

import sys

import pytest

from benchmarks import env_throughput
from config import load_config


def test_the_run_is_split_into_physics_resets_and_the_rest():
    # 0.15 s episodes: every env times out twice in 20 steps, so the run holds resets whatever the actions do
    cfg = load_config("qmini", ["env.num_envs=8", "sim.nthread=1", "env.episode_length_s=0.15"])
    run = env_throughput.time_wrapper(cfg, steps=20, action_std=0.3, reset_envs=3)
    assert run["resets"] >= 16 and 2 <= run["reset_calls"] <= run["resets"]
    assert 0 < run["reset_share"] and 0 < run["physics_share"] and run["reset_share"] + run["physics_share"] < 1
    assert run["reset_envs"] == 3 and run["reset_s"] > 0 and run["physics_s"] > 0
    run = env_throughput.time_wrapper(cfg, steps=20, action_std=0.3)
    assert run["reset_envs"] == round(run["resets"] / run["reset_calls"])  # by default: the run's mean reset


def test_a_reset_of_more_envs_than_there_are_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["env_throughput.py", "--num_envs", "8", "--reset_envs", "9"])
    with pytest.raises(SystemExit) as exit_:
        env_throughput.main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --reset_envs must be between 0") and "(8)" in err[0]


def test_set_overrides_the_config_and_a_bad_one_is_one_line(monkeypatch, capsys):
    seen = {}

    def fake_raw(cfg, *args, **kw):
        seen["scale"] = cfg.terrain.horizontal_scale
        raise SystemExit(0)  # stop before the timed runs

    monkeypatch.setattr(env_throughput, "time_raw", fake_raw)
    monkeypatch.setattr(sys, "argv", ["env_throughput.py", "--config", "go2_rough", "--num_envs", "4",
                                      "--set", "terrain.horizontal_scale=0.05"])
    with pytest.raises(SystemExit):
        env_throughput.main()
    assert seen["scale"] == 0.05
    monkeypatch.setattr(sys, "argv", ["env_throughput.py", "--num_envs", "4", "--set", "terrain.horizontal_scale=-1"])
    with pytest.raises(SystemExit) as exit_:
        env_throughput.main()
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(err) == 1 and "terrain.horizontal_scale" in err[0]
