"""train.py end to end: experiment folder, resume, refusal to overwrite, errors, signals, seeds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import train
from utils.yaml import ParamsProcess

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--config", "qmini", "--num_envs", "8", "--set", "runner.num_steps_per_env=8"]


@pytest.fixture(autouse=True)
def experiments_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    return tmp_path


def scalars(log_dir: Path, tag: str) -> list[tuple[int, float]]:
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_smoke_run_writes_the_experiment_folder(experiments_dir, capsys):
    assert train.main(SMALL + ["--name", "smoke", "--max_iterations", "3"]) == 0
    out = capsys.readouterr().out
    exp = experiments_dir / "smoke"
    assert (exp / "model" / "policy.pt").is_file()
    assert (exp / "model" / "cfg.yaml").is_file()
    assert list((exp / "log").glob("events.out.tfevents.*"))
    assert [line.split()[0] for line in out.splitlines() if line.startswith("smoke#")] == ["smoke#1", "smoke#2", "smoke#3"]
    assert "ETA" in out
    ckpt = torch.load(exp / "model" / "policy.pt", weights_only=False)
    assert ckpt["iteration"] == 3 and ckpt["total_env_steps"] == 3 * 8 * 8
    for key in ["actor", "critic", "optimizer", "obs_normalizer", "rng_state", "cfg"]:
        assert ckpt[key] is not None
    # cfg.yaml alone rebuilds the same config
    saved = ParamsProcess.load(exp / "model" / "cfg.yaml")
    assert saved.env.num_envs == 8 and saved.name == "qmini"


def test_resume_continues_counters_and_the_tensorboard_curve(experiments_dir, capsys):
    assert train.main(SMALL + ["--name", "smoke", "--max_iterations", "3"]) == 0
    first = torch.load(experiments_dir / "smoke" / "model" / "policy.pt", weights_only=False)
    assert train.main(["--config", "qmini", "--name", "smoke", "--resume", "smoke", "--max_iterations", "2"]) == 0
    out = capsys.readouterr().out
    assert "smoke#4" in out and "smoke#5" in out and "smoke#6" not in out
    ckpt = torch.load(experiments_dir / "smoke" / "model" / "policy.pt", weights_only=False)
    assert ckpt["iteration"] == 5
    assert ckpt["total_env_steps"] == first["total_env_steps"] + 2 * 8 * 8  # the saved num_envs=8 holds
    steps = [s for s, _ in scalars(experiments_dir / "smoke" / "log", "Loss/surrogate")]
    assert steps == [1, 2, 3, 4, 5]
    # the normaliser continued from the checkpoint instead of restarting
    assert ckpt["obs_normalizer"]["count"] > first["obs_normalizer"]["count"]


def test_existing_experiment_is_never_wiped_without_overwrite(experiments_dir, capsys):
    assert train.main(SMALL + ["--name", "keep", "--max_iterations", "1"]) == 0
    policy = experiments_dir / "keep" / "model" / "policy.pt"
    before = policy.read_bytes()
    assert train.main(SMALL + ["--name", "keep", "--max_iterations", "1"]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--resume keep" in err and "--overwrite" in err
    assert policy.read_bytes() == before
    assert train.main(SMALL + ["--name", "keep", "--max_iterations", "1", "--overwrite", "--seed", "5"]) == 0
    assert policy.read_bytes() != before


@pytest.mark.parametrize("argv, message", [
    (["--config", "qmnii", "--name", "x"], "unknown config 'qmnii'; available configs: "),
    (["--name", "x", "--resume", "ghost"], "no experiment 'ghost': looked for"),
    (["--config", "qmini", "--name", "x", "--set", "runner.iters=3"], "unknown field 'iters' in section 'runner'"),
    (["--name", "x"], "--config is required"),
])
def test_bad_input_gives_one_line(argv, message, capsys):
    assert train.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_resume_with_different_sizes_names_both(experiments_dir, capsys):
    assert train.main(SMALL + ["--name", "a", "--max_iterations", "1"]) == 0
    code = train.main(SMALL + ["--name", "b", "--resume", "a", "--set", "env.history_length=1", "--max_iterations", "1"])
    assert code == 2
    err = capsys.readouterr().err
    frame = 42  # Qmini's policy frame: 9 + 3 x 10 joints + 3 gait clock
    assert f"num_obs={3 * frame}" in err and f"num_obs={frame}" in err


def test_same_seed_gives_the_same_first_iteration(experiments_dir):
    for name in ["s1", "s2"]:
        assert train.main(SMALL + ["--name", name, "--max_iterations", "1", "--seed", "7"]) == 0
    assert train.main(SMALL + ["--name", "s3", "--max_iterations", "1", "--seed", "8"]) == 0
    losses = {n: scalars(experiments_dir / n / "log", "Loss/value") for n in ["s1", "s2", "s3"]}
    assert losses["s1"] == losses["s2"]
    assert losses["s1"] != losses["s3"]


def test_sigterm_finishes_the_iteration_saves_and_exits_0(experiments_dir):
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(experiments_dir), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "train.py", *SMALL, "--name", "sig", "--max_iterations", "100000"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    policy = experiments_dir / "sig" / "model" / "policy.pt"
    deadline = time.time() + 120
    while not policy.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert policy.exists(), proc.communicate()[0] if proc.poll() is not None else "no checkpoint within 120 s"
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert "stopped after iteration" in out
    ckpt = torch.load(policy, weights_only=False)
    assert 1 <= ckpt["iteration"] < 100000
    assert f"sig#{ckpt['iteration']}" in out  # the last finished iteration is the one saved
