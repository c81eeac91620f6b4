"""benchmarks/learn.py: keeps the final policy folder, and --resume continues the run and its curve."""

import json

import pytest
import torch

from benchmarks import learn


@pytest.fixture(autouse=True)
def experiments_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    return tmp_path / "experiments"


def run(out, *extra):
    return learn.main(["--config", "qmini", "--minutes", "0.01", "--num_envs", "8", "--eval_episodes", "0",
                       "--set", "runner.num_steps_per_env=4", "--out", str(out), "--experiment", "l", *extra])


def resume(out, *extra):
    """--resume for one more iteration: a resume must be given budgets beyond what the run has spent."""
    last = json.loads((out / "curve_ours.json").read_text())["rows"][-1]["iteration"]
    return run(out, "--resume", "--minutes", "30", "--iterations", str(last + 1), *extra)


def test_a_run_keeps_its_policy_folder_and_a_resume_continues_the_curve(tmp_path, experiments_dir):
    out = tmp_path / "results"
    assert run(out) == 0
    first = json.loads((out / "curve_ours.json").read_text())
    n = len(first["rows"])
    policy = out / "policy"
    assert {p.name for p in (policy / "model").iterdir()} == {"policy.pt", "cfg.yaml"}
    assert {p.name for p in (policy / "export").iterdir()} == {"policy.onnx", "policy.jit.pt", "policy.yaml", "scene.xml"}
    assert torch.load(policy / "model" / "policy.pt", weights_only=False)["iteration"] == n

    assert learn.main(["--config", "qmini", "--minutes", "30", "--iterations", str(n + 1), "--eval_episodes", "0",
                       "--out", str(out), "--experiment", "l", "--resume"]) == 0
    curve = json.loads((out / "curve_ours.json").read_text())
    rows = curve["rows"]
    assert rows[:n] == first["rows"] and len(rows) > n
    assert [r["iteration"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(b["minutes"] >= a["minutes"] and b["env_steps"] > a["env_steps"] for a, b in zip(rows, rows[1:]))
    assert rows[n]["env_steps"] - rows[n - 1]["env_steps"] == 8 * 4  # the saved 8 envs x 4 steps hold
    assert curve["resumed_at_iterations"] == [n]
    assert curve["overrides"] == first["overrides"]  # what the run started with, though the resume gave no --set
    assert "runner.num_steps_per_env=4" in curve["overrides"] and "env.num_envs=8" in curve["overrides"]
    assert torch.load(policy / "model" / "policy.pt", weights_only=False)["iteration"] == len(rows)


def test_a_resume_in_a_fresh_clone_restores_the_experiment_from_the_kept_policy(tmp_path, experiments_dir):
    import shutil

    out = tmp_path / "results"
    assert run(out) == 0
    kept = torch.load(out / "policy" / "model" / "policy.pt", weights_only=False)
    shutil.rmtree(experiments_dir / "l")  # what a fresh clone lacks: experiments/ is not in git
    assert resume(out) == 0
    assert (experiments_dir / "l" / "model" / "cfg.yaml").is_file()
    resumed = torch.load(out / "policy" / "model" / "policy.pt", weights_only=False)
    assert resumed["iteration"] > kept["iteration"]
    assert json.loads((out / "curve_ours.json").read_text())["resumed_at_iterations"] == [kept["iteration"]]


def cut_off_before_keeping_the_policy(monkeypatch, out, *extra):
    """A run whose session ends after training, before its policy folder is written."""
    def cut_off(*_):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(learn, "keep_policy", cut_off)
        run(out, *extra)


def test_a_run_cut_off_before_it_kept_its_policy_resumes_in_a_fresh_clone_from_its_checkpoint_copy(
        tmp_path, experiments_dir, monkeypatch):
    import shutil

    out = tmp_path / "results"
    cut_off_before_keeping_the_policy(monkeypatch, out, "--keep_every", "1e-6")
    copy = torch.load(out / "checkpoint" / "policy.pt", weights_only=False)
    rows = json.loads((out / "curve_ours.json").read_text())["rows"]
    assert not (out / "policy").exists() and copy["iteration"] == rows[-1]["iteration"] > 0
    shutil.rmtree(experiments_dir / "l")  # a fresh clone holds what was committed: out/, not experiments/

    assert resume(out) == 0
    curve = json.loads((out / "curve_ours.json").read_text())
    assert curve["resumed_at_iterations"] == [copy["iteration"]] and curve["rows"][:len(rows)] == rows
    assert torch.load(out / "policy" / "model" / "policy.pt", weights_only=False)["iteration"] > copy["iteration"]
    assert not (out / "checkpoint").exists()  # the finished run's policy/ supersedes the copy


@pytest.mark.parametrize("keep_every", ["0", "60"])
def test_keep_every_off_or_longer_than_the_run_copies_nothing_and_a_new_run_drops_a_stale_copy(
        tmp_path, monkeypatch, keep_every):
    out = tmp_path / "results"
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / "policy.pt").write_bytes(b"an earlier run's")
    cut_off_before_keeping_the_policy(monkeypatch, out, "--keep_every", keep_every)
    assert (out / "curve_ours.json").is_file() and not (out / "checkpoint").exists()


def test_a_negative_keep_every_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="--keep_every is minutes"):
        run(tmp_path / "results", "--keep_every", "-1")
    assert not (tmp_path / "results").exists()


def test_an_iteration_budget_stops_the_run_and_its_resume_at_that_iteration_and_a_resume_keeps_the_budgets(
        tmp_path):
    out = tmp_path / "results"
    assert run(out, "--minutes", "30", "--iterations", "2") == 0  # the later --minutes wins over run()'s
    curve = json.loads((out / "curve_ours.json").read_text())
    assert [r["iteration"] for r in curve["rows"]] == [1, 2] and curve["iterations"] == 2
    assert learn.main(["--config", "qmini", "--eval_episodes", "0", "--out", str(out), "--experiment", "l",
                       "--iterations", "4", "--resume"]) == 0  # and the 30 minutes the run was given
    assert [r["iteration"] for r in json.loads((out / "curve_ours.json").read_text())["rows"]] == [1, 2, 3, 4]
    before = (out / "curve_ours.json").read_bytes()
    assert json.loads(before)["minutes"] == 30 and json.loads(before)["iterations"] == 4
    with pytest.raises(ValueError, match="already at iteration 4"):  # a resume keeps the run's budgets
        learn.main(["--config", "qmini", "--eval_episodes", "0", "--out", str(out), "--experiment", "l", "--resume"])
    assert (out / "curve_ours.json").read_bytes() == before
    trained = json.loads(before)["rows"][-1]["minutes"]
    with pytest.raises(ValueError, match=r"--minutes 0\.0001: the run has already trained"):  # not one more iteration
        learn.main(["--config", "qmini", "--eval_episodes", "0", "--out", str(out), "--experiment", "l", "--resume",
                    "--minutes", "0.0001", "--iterations", "9"])
    assert (out / "curve_ours.json").read_bytes() == before and trained > 0.0001
    with pytest.raises(ValueError, match="--iterations is the run's last iteration, 1 or more"):
        run(tmp_path / "other", "--iterations", "0")
    assert not (tmp_path / "other").exists()


def test_the_progress_line_gives_the_time_to_whichever_budget_comes_first_at_the_recent_pace():
    rows = [{"iteration": i, "minutes": 0.1 * i} for i in range(1, 31)]  # 6 s per iteration, 3 minutes done
    assert learn.Budget(seconds=600).seconds_left(rows) == pytest.approx(420)  # time only: 10 - 3 minutes
    assert learn.Budget(seconds=600, iterations=40).seconds_left(rows) == pytest.approx(60)  # 10 its x 6 s
    assert learn.Budget(seconds=200, iterations=400).seconds_left(rows) == pytest.approx(20)  # time first
    slower = rows + [{"iteration": 30 + i, "minutes": 3.0 + 0.2 * i} for i in range(1, 21)]  # now 12 s each
    assert learn.Budget(seconds=6000, iterations=60).seconds_left(slower) == pytest.approx(120)
    line = learn.Budget(600, 40).progress(rows)
    assert "it    30/40" in line and "ETA 1m00s" in line
    assert learn.Budget(600, 30).seconds_left(rows) == 0
    assert learn.Budget(600, 5).seconds_left(rows[:1]) == pytest.approx(594)  # no pace yet: the time left


def test_a_resume_with_set_records_the_new_setting_in_the_kept_cfg_yaml(tmp_path, experiments_dir):
    out = tmp_path / "results"
    assert run(out) == 0
    assert "entropy_coef: 0.0007" not in (out / "policy" / "model" / "cfg.yaml").read_text()
    assert resume(out, "--set", "algorithm.entropy_coef=0.0007") == 0
    for cfg_yaml in (experiments_dir / "l" / "model" / "cfg.yaml", out / "policy" / "model" / "cfg.yaml"):
        assert "entropy_coef: 0.0007" in cfg_yaml.read_text()  # play.py and the export read what trained
    overrides = json.loads((out / "curve_ours.json").read_text())["overrides"]
    assert overrides[:2] == ["runner.num_steps_per_env=4", "env.num_envs=8"] and overrides.count("runner.device=cpu") == 1
    assert overrides[-1] == "algorithm.entropy_coef=0.0007"


def test_a_resume_at_a_new_learning_rate_trains_at_it_and_says_so(tmp_path, experiments_dir, capsys):
    """The runner's notes reach learn.py's output (its own progress line replaces the runner's iteration lines)."""
    out = tmp_path / "results"
    assert run(out) == 0
    capsys.readouterr()
    assert resume(out, "--set", "algorithm.schedule=fixed", "--set", "algorithm.learning_rate=5e-5") == 0
    printed = capsys.readouterr().out
    assert torch.load(out / "policy" / "model" / "policy.pt", weights_only=False)["learning_rate"] == 5e-5
    assert "note: learning rate 5e-05 as the config sets it (fixed schedule), not the checkpoint's" in printed
    assert "l#" not in printed  # no runner iteration line ("l#12  3.4s  fps ...")


def test_resume_without_an_earlier_run_is_refused(tmp_path):
    with pytest.raises(ValueError, match="--resume needs"):
        run(tmp_path / "results", "--resume")


def test_init_from_starts_from_the_source_actor_and_the_curve_records_it(tmp_path, experiments_dir):
    source = "benchmarks/results/qmini/policy"
    out = tmp_path / "results"
    before = torch.load(f"{source}/model/policy.pt", weights_only=False)["actor"]
    assert run(out, "--init_from", source) == 0
    curve = json.loads((out / "curve_ours.json").read_text())
    assert curve["init_from"] == source and curve["rows"][0]["iteration"] == 1
    record = (experiments_dir / "l" / "model" / "init_from.yaml").read_text()
    assert source in record
    saved = torch.load(out / "policy" / "model" / "policy.pt", weights_only=False)
    assert saved["iteration"] == len(curve["rows"])  # counted from 0, not from the source's iteration
    # a few PPO steps move the weights a little; a fresh actor would be nowhere near the source's. The first
    # layer is left out: qmini's symmetry rescales it once, as the source's normaliser is made symmetric
    hidden = [k for k, v in before.items() if v.dim() == 2][1:]
    assert hidden and all((saved["actor"][k] - before[k]).abs().max() < 0.05 * before[k].abs().max() for k in hidden)


def test_init_from_is_refused_with_resume(tmp_path):
    with pytest.raises(ValueError, match="--init_from starts a new run"):
        run(tmp_path / "results", "--init_from", "benchmarks/results/qmini/policy", "--resume")
