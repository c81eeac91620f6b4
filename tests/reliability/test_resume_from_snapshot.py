"""Resuming in place from an older snapshot loses nothing: the newer policy.pt and snapshots are moved to
model/superseded_<it>/ with one note line, after every check (a refused resume moves nothing)."""

import shutil

import pytest
import torch

import train
from benchmarks.faults import experiments_at, run_quietly
from benchmarks.faults.bad_inputs import TRAINED, tree_digest


@pytest.fixture(scope="module")
def root(trained):
    return trained


def _train(root, argv):
    with experiments_at(root):
        return run_quietly(train.main, argv)


def _iteration(path):
    return torch.load(path, weights_only=False)["iteration"]


def _files(model):
    return sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file())


def test_resuming_an_older_snapshot_moves_the_newer_checkpoints_aside(root):
    shutil.copytree(root / TRAINED, root / "snap")
    model = root / "snap" / "model"
    old = {f: (model / f).read_bytes() for f in ("policy.pt", "all/policy_2.pt", "all/policy_4.pt")}
    code, _, err = _train(root, ["--name", "snap", "--resume", "snap", "--checkpoint", "all/policy_2.pt",
                                 "--max_iterations", "2"])
    assert code == 0, err
    notes = err.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith("note: resuming snap from model/all/policy_2.pt (iteration 2)")
    assert all(w in notes[0] for w in ("policy.pt (iteration 4)", "all/policy_4.pt", "model/superseded_4/")), notes
    # the old line is kept byte for byte; the new one reached iteration 4 again, written beside it
    assert (model / "superseded_4" / "policy.pt").read_bytes() == old["policy.pt"]
    assert (model / "superseded_4" / "all" / "policy_4.pt").read_bytes() == old["all/policy_4.pt"]
    assert (model / "all" / "policy_2.pt").read_bytes() == old["all/policy_2.pt"]
    assert _iteration(model / "policy.pt") == 4
    assert (model / "all" / "policy_4.pt").read_bytes() != old["all/policy_4.pt"]
    assert _files(model) == ["all/policy_2.pt", "all/policy_4.pt", "cfg.yaml", "policy.pt",
                             "superseded_4/all/policy_4.pt", "superseded_4/policy.pt"]

    # a second time from the same snapshot: the first superseded line stays, the second goes beside it
    kept = tree_digest(model / "superseded_4")
    code, _, err = _train(root, ["--name", "snap", "--resume", "snap", "--checkpoint", "all/policy_2.pt",
                                 "--max_iterations", "1"])
    assert code == 0 and "model/superseded_4-2/" in err, err
    assert tree_digest(model / "superseded_4") == kept
    assert _iteration(model / "superseded_4-2" / "policy.pt") == 4 and _iteration(model / "policy.pt") == 3
    # and the superseded line is still reachable
    code, _, err = _train(root, ["--name", "from_old", "--resume", "snap", "--checkpoint", "superseded_4/policy.pt",
                                 "--max_iterations", "1"])
    assert code == 0 and _iteration(root / "from_old" / "model" / "policy.pt") == 5, err


def test_a_refused_resume_from_a_snapshot_moves_nothing(root):
    shutil.copytree(root / TRAINED, root / "refused")
    before = tree_digest(root.parent)
    code, _, err = _train(root, ["--name", "refused", "--resume", "refused", "--checkpoint", "all/policy_2.pt",
                                 "--set", "algorithm.gamma=1.5"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    assert tree_digest(root.parent) == before


@pytest.mark.parametrize("checkpoint", [[], ["--checkpoint", "all/policy_4.pt"]], ids=["policy.pt", "same iteration"])
def test_resuming_the_latest_checkpoint_moves_nothing_and_says_nothing(root, checkpoint):
    name = f"latest{len(checkpoint)}"
    shutil.copytree(root / TRAINED, root / name)
    code, _, err = _train(root, ["--name", name, "--resume", name, "--max_iterations", "1"] + checkpoint)
    assert code == 0 and err == "", err
    assert not list((root / name / "model").glob("superseded_*"))
