"""An experiment without a checkpoint (stopped before its first save) is no dead end: every refusal is one line
naming the way out, status 2, nothing changed on disk; `--resume` starts it from iteration 0 with its cfg.yaml."""

import shutil

import pytest
import torch

import train
from benchmarks.faults import TINY, experiments_at, run_quietly
from benchmarks.faults.bad_inputs import TRAINED, Case, check_case


def _copy_without(name: str, *paths: str):
    """A setup: the trained run copied to `name`, less `paths` (relative to its model/)."""
    def setup(root):
        if not (root / name).exists():
            shutil.copytree(root / TRAINED, root / name)
            for path in paths:
                target = root / name / "model" / path
                shutil.rmtree(target) if target.is_dir() else target.unlink()
    return setup


def _bare(root):
    """What a Ctrl-C between making the folder and writing cfg.yaml leaves: empty model/ and log/."""
    for sub in ("model", "log"):
        (root / "bare" / sub).mkdir(parents=True, exist_ok=True)


UNSTARTED = _copy_without("unstarted", "policy.pt", "all")
CASES = [
    Case("--name of an experiment stopped before its first save", "train", TINY + ["--name", "unstarted"],
         ["already exists", "--resume unstarted", "--overwrite"], UNSTARTED),
    Case("play an experiment stopped before its first save", "play", ["--name", "unstarted", "--eval", "2"],
         ["no checkpoint model/policy.pt", "--name unstarted --resume unstarted"], UNSTARTED),
    Case("resume a folder with neither a checkpoint nor cfg.yaml", "train", ["--name", "bare", "--resume", "bare"],
         ["neither a checkpoint nor model/cfg.yaml", "--name bare --overwrite"], _bare),
    Case("resume an experiment whose policy.pt is gone", "train", ["--name", "nopolicy", "--resume", "nopolicy"],
         ["no checkpoint model/policy.pt", "--checkpoint all/policy_4.pt"], _copy_without("nopolicy", "policy.pt")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_refusal_names_the_way_out(case, trained):
    trial = check_case(case, trained)
    assert trial.ok, trial.detail


def test_resume_starts_it_from_iteration_0_with_its_cfg(trained):
    _copy_without("fresh", "policy.pt", "all")(trained)
    with experiments_at(trained):
        code, out, err = run_quietly(train.main, ["--name", "fresh", "--resume", "fresh", "--max_iterations", "2"])
    assert code == 0, err
    assert err.strip().splitlines() == ["note: experiment 'fresh' has no checkpoint yet (it stopped before its first "
                                        "save): starting from iteration 0 with its model/cfg.yaml"]
    assert "iterations 1..2" in out
    ckpt = torch.load(trained / "fresh" / "model" / "policy.pt", weights_only=False)
    assert ckpt["iteration"] == 2 and ckpt["cfg"]["runner"]["num_steps_per_env"] == 4  # the saved TINY config
