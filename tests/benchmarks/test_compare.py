"""benchmarks/compare.py's bookkeeping, on synthetic learning curves (no training)."""

import json

import pytest

from benchmarks import compare


def _curve(algo: str, seed: int, rewards: list[float], minutes_per_it: float = 1.0) -> dict:
    rows = [{"iteration": i + 1, "minutes": (i + 1) * minutes_per_it, "env_steps": (i + 1) * 1000,
             "task_reward_per_step": r, "lin_vel_rmse": 1 - r, "yaw_rate_rmse": 0.5 * (1 - r)}
            for i, r in enumerate(rewards)]
    return {"config": "go2", "algo": algo, "seed": seed, "machine": "x86_64 x 1 cores", "rows": rows}


def _write(folder, curve):
    seed_dir = folder / f"seed{curve['seed']}"
    seed_dir.mkdir(parents=True, exist_ok=True)
    (seed_dir / f"curve_{curve['algo']}.json").write_text(json.dumps(curve))


def test_final_metrics_average_the_last_tenth_of_the_minutes():
    rewards = [0.1] * 18 + [0.8, 0.9]  # 20 minutes; the last 10% is minutes 18..20
    final = compare.final_metrics(_curve("ours", 1, rewards)["rows"])
    assert final["tail_iterations"] == 3  # minutes 18, 19, 20
    assert final["task_reward_per_step"] == pytest.approx((0.1 + 0.8 + 0.9) / 3)
    assert final["iterations"] == 20 and final["env_steps"] == 20_000


def test_summary_compares_the_seed_means(tmp_path):
    for seed, (ours, rsl) in enumerate([(0.90, 0.88), (0.92, 0.90), (0.94, 0.89)], start=1):
        _write(tmp_path, _curve("ours", seed, [0.5] * 10 + [ours] * 10))
        _write(tmp_path, _curve("rsl_rl", seed, [0.5] * 10 + [rsl] * 10))
    summary = compare.summarize(compare.load_runs(tmp_path))
    assert summary["algos"]["ours"]["seeds"] == 3
    assert summary["algos"]["ours"]["mean"] == pytest.approx(0.92)
    assert summary["algos"]["rsl_rl"]["mean"] == pytest.approx(0.89)
    assert summary["algos"]["ours"]["std"] == pytest.approx(0.02)
    assert summary["ours_minus_rsl_rl"]["mean"] == pytest.approx(0.03)
    assert 0 < summary["ours_minus_rsl_rl"]["standard_error"] < 0.03


def test_summarize_mode_writes_json_and_plot(tmp_path, capsys):
    _write(tmp_path, _curve("ours", 1, [0.2, 0.5, 0.7, 0.8]))
    _write(tmp_path, _curve("rsl_rl", 1, [0.1, 0.4, 0.6, 0.7], minutes_per_it=1.1))
    assert compare.main(["--summarize", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "compare.json").read_text())["runs"]["ours"]["1"]["iterations"] == 4
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"
    assert "ours - rsl_rl: +0.1000" in capsys.readouterr().out


def test_summarize_without_runs_says_where_it_looked(tmp_path, capsys):
    assert compare.main(["--summarize", "--out", str(tmp_path)]) == 1
    assert str(tmp_path) in capsys.readouterr().err


def test_rsl_rl_checkpoint_is_read_as_normaliser_then_mlp(tmp_path):
    import torch
    from types import SimpleNamespace

    from benchmarks.eval_compare import load_rsl_rl_actor
    from model.mlp import build_mlp

    mlp = build_mlp(5, [8, 8], 3, "elu")
    mean, std = torch.randn(1, 5), torch.rand(1, 5) + 0.5
    state = {f"mlp.{k}": v for k, v in mlp.state_dict().items()}
    state.update({"obs_normalizer._mean": mean, "obs_normalizer._std": std, "distribution.log_std_param": torch.zeros(3)})
    path = tmp_path / "model_300.pt"
    torch.save({"actor_state_dict": state, "iter": 300}, path)
    cfg = SimpleNamespace(policy=SimpleNamespace(actor_hidden_dims=[8, 8], activation="elu"))
    act = load_rsl_rl_actor(path, cfg)
    obs = torch.randn(4, 5)
    with torch.no_grad():
        assert torch.allclose(act(obs), mlp((obs - mean) / (std + 1e-2)), atol=1e-6)


def test_eval_compare_finds_both_runs_final_or_numbered_checkpoints(tmp_path, monkeypatch):
    from benchmarks.eval_compare import checkpoints

    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    ours, rsl = tmp_path / "compare_go2_ours_s2", tmp_path / "compare_go2_rsl_rl_s2"
    for path in (ours / "model/policy.pt", ours / "model/all/policy_300.pt", rsl / "log/model_300.pt"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    assert checkpoints("go2", 2, 300) == {"ours": ours / "model/all/policy_300.pt", "rsl_rl": rsl / "log/model_300.pt"}
    with pytest.raises(SystemExit, match="model_final.pt"):  # an rsl_rl run saved before the final checkpoint existed
        checkpoints("go2", 2, None)
    (rsl / "log/model_final.pt").write_bytes(b"")
    assert checkpoints("go2", 2, None) == {"ours": ours / "model/policy.pt", "rsl_rl": rsl / "log/model_final.pt"}


def test_eval_compare_iteration_is_a_number_or_final():
    import argparse

    from benchmarks.eval_compare import parse_iteration

    assert parse_iteration("300") == 300 and parse_iteration("final") is None
    with pytest.raises(argparse.ArgumentTypeError, match="'last'"):
        parse_iteration("last")


def test_two_settings_of_our_ppo_are_read_from_their_arm_folders_and_compared(tmp_path, capsys):
    for seed, (old, new) in enumerate([(0.80, 0.85), (0.82, 0.86)], start=1):
        for label, final in (("old", old), ("new", new)):
            folder = tmp_path / f"seed{seed}" / label
            folder.mkdir(parents=True)
            (folder / "curve_ours.json").write_text(json.dumps(_curve("ours", seed, [0.5] * 10 + [final] * 10)))
    runs = compare.load_runs(tmp_path)
    assert set(runs) == {"old", "new"} and set(runs["new"]) == {1, 2}
    summary = compare.summarize(runs)
    assert summary["new_minus_old"]["mean"] == pytest.approx(0.045)
    assert compare.main(["--summarize", "--out", str(tmp_path), "--arm", "old=sim.dt=0.005", "--arm", "new="]) == 0
    assert "new - old: +0.0450" in capsys.readouterr().out


def test_an_arm_is_a_name_and_semicolon_separated_overrides():
    arm = compare.Arm.parse("old=sim.dt=0.005; control.decimation=4;runner.stages=[]")
    assert arm.label == "old" and arm.algo == "ours" and arm.own_folder
    assert arm.overrides == ["sim.dt=0.005", "control.decimation=4", "runner.stages=[]"]
    assert compare.Arm.parse("new=").overrides == []
    with pytest.raises(SystemExit, match="NAME=section.field=value"):
        compare.Arm.parse("no equals sign")


def test_arms_must_come_in_a_pair_with_two_names(tmp_path, capsys):
    assert compare.main(["--summarize", "--out", str(tmp_path), "--arm", "a=x.y=1"]) == 2
    assert compare.main(["--summarize", "--out", str(tmp_path), "--arm", "a=", "--arm", "a="]) == 2
    assert "exactly twice" in capsys.readouterr().err
