"""runner.logger = "wandb": the TensorBoard scalars and the config in a W&B run, continued by --resume, joined by
play.py --eval; every W&B file inside the experiment. W&B runs in its offline mode: nothing touches the network."""

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import play
import train
from config import load_config, load_saved_config
from rl.loggers import make_loggers
from rl.train_log import TrainLog
from utils.yaml import ParamsProcess
from wandb_records import read_run

SMALL = ["--config", "qmini", "--num_envs", "8", "--set", "runner.num_steps_per_env=8"]
WANDB = ["--set", "runner.logger=wandb"]


@pytest.fixture(scope="module", autouse=True)
def _stop_wandb_service():
    """The first wandb.init of a process starts wandb-core; stop it after this module."""
    yield
    if sys.modules.get("wandb") is not None:
        sys.modules["wandb"].teardown()


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """Experiments in tmp_path/experiments, W&B offline and quiet, HOME an empty tmp_path/home (to see W&B stay out)."""
    for key in [k for k in os.environ if k.startswith("WANDB_")] + ["XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                                                                    "XDG_DATA_HOME"]:
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    return tmp_path / "experiments"


def _offline_runs(log_dir: Path, run_id: str) -> list[dict]:
    """Every offline segment of the run (one per process that logged to it), in the order they started."""
    files = (log_dir / "wandb").glob(f"offline-run-*/run-{run_id}.wandb")
    runs = [dict(read_run(path), folder=path.parent) for path in files]
    return sorted(runs, key=lambda run: run["run"].start_time.ToNanoseconds())


def _rows(run: dict) -> dict[int, dict]:
    """History rows by step, without W&B's own keys (_step, _runtime, _timestamp)."""
    return {row["_step"]: {k: v for k, v in row.items() if not k.startswith("_")} for row in run["history"]}


def _tensorboard(log_dir: Path) -> dict[int, dict[str, float]]:
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    rows: dict[int, dict[str, float]] = {}
    for tag in acc.Tags()["scalars"]:
        for event in acc.Scalars(tag):
            rows.setdefault(event.step, {})[tag] = event.value
    return rows


def test_wandb_run_holds_the_tensorboard_scalars_and_config_and_resume_and_eval_continue_it(offline, capsys):
    pytest.importorskip("wandb")
    assert train.main(SMALL + WANDB + ["--name", "wb", "--max_iterations", "2"]) == 0
    exp = offline / "wb"
    log = exp / "log"
    run_id = (log / "wandb_run_id").read_text().strip()
    (first,) = _offline_runs(log, run_id)
    assert first["exit"] and first["run"].run_id == run_id and first["run"].display_name == "wb"
    assert first["run"].project == "legged-ppo"
    saved = ParamsProcess.load(exp / "model" / "cfg.yaml").to_dict()
    assert {key: first["config"][key] for key in saved} == saved  # the full config
    rows, events = _rows(first), _tensorboard(log)
    assert sorted(rows) == sorted(events) == [1, 2]
    for step, row in rows.items():  # the same scalars, with the same values, as TensorBoard
        assert set(row) == set(events[step]) and {"Loss/surrogate", "Perf/fps", "Checkpoint/save_failed"} <= set(row)
        assert row == pytest.approx(events[step], rel=1e-6, abs=1e-7)

    assert train.main(["--name", "wb", "--resume", "wb", "--max_iterations", "1"]) == 0
    assert (log / "wandb_run_id").read_text().strip() == run_id
    segments = _offline_runs(log, run_id)
    assert [sorted(_rows(s)) for s in segments] == [[1, 2], [3]]  # the same W&B run, steps continuing
    assert segments[1]["config"]["runner"]["max_iterations"] == 1

    assert play.main(["--name", "wb", "--eval", "2", "--steps", "20"]) == 0
    assert f"added the evaluation to the summary of W&B run {run_id}" in capsys.readouterr().out
    evaluation = _offline_runs(log, run_id)[2]
    summary = evaluation["summary"]
    report = json.loads((exp / "eval.json").read_text())
    assert summary["eval/iteration"] == 3
    assert summary["eval/trained/lin_vel_rmse"] == pytest.approx(report["policies"]["trained"]["lin_vel_rmse"],
                                                                 rel=1e-3)
    image = summary["eval/eval_tracking"]
    assert (evaluation["folder"] / "files" / image["path"]).read_bytes()[:4] == b"\x89PNG"
    assert evaluation["history"] == []  # the summary only: the next --resume continues the charts at step 4

    assert sorted(p.name for p in offline.parent.iterdir()) == ["experiments", "home"]
    home = offline.parent / "home"  # W&B wrote nothing outside the experiment (matplotlib keeps its font cache)
    assert [p for p in home.rglob("*") if "wandb" in str(p.relative_to(home)).lower()] == []
    assert sorted(p.name for p in offline.iterdir()) == ["wb"]


def test_choosing_wandb_without_the_package_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` raises ImportError, as without the package
    assert train.main(SMALL + WANDB + ["--name", "nowb", "--max_iterations", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: runner.logger = 'wandb' needs the wandb package, which is not installed; "
                   'pip install -e ".[wandb]" (or use runner.logger=tensorboard)')
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_logger_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    assert train.main(SMALL + ["--name", "x", "--set", "runner.logger=mlflow"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: runner.logger = 'mlflow' in the overrides (--set and flags): "
                   "expects one of tensorboard, wandb")
    assert list(tmp_path.iterdir()) == []


def test_a_wandb_run_that_cannot_start_leaves_the_run_and_tensorboard_going(offline, monkeypatch, capsys):
    wandb = pytest.importorskip("wandb")

    def refuse(**kwargs):
        raise wandb.errors.UsageError("api_key not configured (no-tty). call wandb.login(key=[your_api_key])")

    monkeypatch.setattr(wandb, "init", refuse)
    log_dir = offline / "run" / "log"
    log_dir.mkdir(parents=True)
    cfg = load_config("qmini", ["runner.logger=wandb"])
    log = TrainLog("run", make_loggers(cfg.runner, log_dir, "run", cfg.to_dict()), verbose=False)
    log.open(0)
    log.scalar("Loss/surrogate", 0.5, 1)
    log.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: run: W&B logging to project legged-ppo stopped (api_key")
    assert [type(logger).__name__ for logger in log.loggers] == ["TensorBoardLogger"]
    assert _tensorboard(log_dir) == {1: {"Loss/surrogate": 0.5}}


def test_a_config_saved_before_the_logger_fields_loads_with_tensorboard(tmp_path, capsys):
    cfg = load_config("go2").to_dict()
    for field in ("logger", "wandb_project", "wandb_entity"):
        del cfg["runner"][field]
    path = tmp_path / "cfg.yaml"
    path.write_text(ParamsProcess.dumps(ParamsProcess.from_dict(cfg)))
    loaded = load_saved_config(path)
    assert (loaded.runner.logger, loaded.runner.wandb_project, loaded.runner.wandb_entity) == \
        ("tensorboard", "legged-ppo", None)
    assert "runner.logger" in capsys.readouterr().err


def test_a_resume_behind_the_wandb_runs_last_step_continues_its_id_and_says_which_rows_wandb_drops(
        offline, monkeypatch, capsys):
    """Online, a resumed W&B run knows its last step; iterations at or below it are dropped by W&B, so say so."""
    wandb = pytest.importorskip("wandb")

    class OnlineRun:  # what wandb.init returns for a run whose history reaches step 45
        id, step = "abc12345", 46

        def __init__(self):
            self.config = SimpleNamespace(update=lambda values, allow_val_change: None)
            self.steps, self.finished = [], False

        def log(self, values, step):
            self.steps.append(step)

        def finish(self):
            self.finished = True

    run, calls = OnlineRun(), []
    monkeypatch.setattr(wandb, "init", lambda **kwargs: calls.append(kwargs) or run)
    log_dir = offline / "run" / "log"
    log_dir.mkdir(parents=True)
    (log_dir / "wandb_run_id").write_text("abc12345\n")
    cfg = load_config("qmini", ["runner.logger=wandb", "runner.wandb_entity=team"])
    log = TrainLog("run", make_loggers(cfg.runner, log_dir, "run", cfg.to_dict()), verbose=False)
    log.open(20)  # resumed from the snapshot of iteration 20
    log.scalar("Loss/surrogate", 0.5, 21)
    log.close()
    assert calls == [dict(project="legged-ppo", entity="team", name="run", id="abc12345", resume="allow",
                          dir=str(log_dir))]
    assert run.steps == [21] and run.finished
    err = capsys.readouterr().err
    assert "W&B run abc12345 already holds iterations up to 45" in err and "iterations 21..45" in err


def test_eval_of_a_wandb_experiment_without_the_package_says_so_in_one_note(tmp_path, monkeypatch):
    from rl.loggers.wandb_logger import add_evaluation

    monkeypatch.setitem(sys.modules, "wandb", None)
    (tmp_path / "wandb_run_id").write_text("abc12345\n")
    runner = SimpleNamespace(logger="wandb", wandb_project="legged-ppo", wandb_entity=None)
    line = add_evaluation(tmp_path, runner, "run1", 3, {"trained": {"lin_vel_rmse": 0.2}}, [])
    assert line == ('note: run1: the evaluation was not added to its W&B run: wandb is not installed '
                    '(pip install -e ".[wandb]")')
    assert add_evaluation(tmp_path, SimpleNamespace(logger="tensorboard"), "run1", 3, {}, []) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wandb_run_id"]
