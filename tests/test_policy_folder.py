"""A policy folder (benchmarks/results/<config>/policy/: model/ and export/) is loaded by path, read only.

play.py plays and evaluates it, train.py --resume starts a new experiment from it, and
neither writes into it.
"""

import shutil
from pathlib import Path

import pytest
import torch

import play
import train

SMALL = ["--config", "qmini", "--num_envs", "8", "--set", "runner.num_steps_per_env=8"]


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def policy_folder(tmp_path, monkeypatch):
    """A 2-iteration run copied out of the experiments folder as a policy folder (model/ and export/)."""
    experiments = tmp_path / "experiments"
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(experiments))
    assert train.main(SMALL + ["--name", "src", "--max_iterations", "2"]) == 0
    assert play.main(["--name", "src", "--export"]) == 0
    folder = tmp_path / "results" / "qmini" / "policy"
    (folder / "model").mkdir(parents=True)
    for name in ["policy.pt", "cfg.yaml"]:
        shutil.copy(experiments / "src" / "model" / name, folder / "model" / name)
    shutil.copytree(experiments / "src" / "export", folder / "export")
    shutil.rmtree(experiments / "src")
    return folder


def test_play_evaluates_a_policy_folder_by_path_and_writes_only_to_out(policy_folder, tmp_path):
    before = tree(policy_folder)
    out = tmp_path / "eval_out"
    assert play.main(["--name", str(policy_folder), "--eval", "2", "--steps", "5", "--out", str(out)]) == 0
    assert (out / "eval.json").is_file()
    assert play.main(["--name", str(policy_folder), "--check-export"]) == 0
    assert tree(policy_folder) == before


@pytest.mark.parametrize("flags", [["--export"], ["--eval", "2"]])
def test_play_refuses_to_write_into_a_policy_folder(policy_folder, flags, capsys):
    before = tree(policy_folder)
    assert play.main(["--name", str(policy_folder)] + flags) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "read-only policy folder" in err[0]
    assert tree(policy_folder) == before


def test_train_resumes_a_policy_folder_into_a_new_experiment(policy_folder, tmp_path):
    before = tree(policy_folder)
    assert train.main(["--name", "mine", "--resume", str(policy_folder), "--max_iterations", "1"]) == 0
    ckpt = torch.load(tmp_path / "experiments" / "mine" / "model" / "policy.pt", weights_only=False)
    assert ckpt["iteration"] == 3  # counters continue from the folder's 2 iterations
    assert tree(policy_folder) == before


def test_a_path_that_is_no_policy_folder_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    assert play.main(["--name", str(tmp_path / "nothing"), "--eval", "2", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a policy folder" in err[0]
    assert not (tmp_path / "o").exists() and not (tmp_path / "experiments").exists()
