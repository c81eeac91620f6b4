"""A second Ctrl-C ends train.py with one line and status 130, never with a traceback or a half-written checkpoint;
a run stopped before its first checkpoint is resumed from iteration 0 instead of being refused both ways."""

import shutil

import pytest

import train
from benchmarks.faults import TINY, experiments_at, run_quietly, second_interrupt
from rl.runner import OnPolicyRunner


def _raise_keyboard_interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("trial", ["during_an_iteration", "during_a_write", "before_the_first_checkpoint"])
def test_second_ctrl_c_ends_in_one_line_keeping_a_loadable_checkpoint(trial, experiments):
    result = getattr(second_interrupt, trial)(experiments)
    assert result.ok, result.detail


def test_ctrl_c_while_the_env_is_built_is_one_line_and_writes_nothing(experiments, monkeypatch):
    monkeypatch.setattr(train, "make_env", _raise_keyboard_interrupt)
    code, out, err = run_quietly(train.main, TINY + ["--name", "early", "--max_iterations", "1"])
    assert (code, out, err) == (130, "", "early: interrupted (Ctrl-C) before training started\n")
    assert list(experiments.iterdir()) == []


@pytest.mark.parametrize("resume, expect", [
    ("copy", "copy: aborted by a second Ctrl-C; {root}/copy/model/policy.pt holds iteration 4; "
             "train.py --name copy --resume copy continues from there"),
    ("good", "copy: aborted by a second Ctrl-C before the first checkpoint; the same command with --overwrite "
             "starts it again"),
])
def test_the_abort_line_says_what_is_kept_and_how_to_go_on(resume, expect, trained, tmp_path, monkeypatch):
    """In place, policy.pt holds the last iteration; resumed from another run, the new one has no checkpoint yet."""
    root = tmp_path / "experiments"
    shutil.copytree(trained / "good", root / "good")
    if resume == "copy":
        shutil.copytree(trained / "good", root / "copy")
    monkeypatch.setattr(OnPolicyRunner, "learn", _raise_keyboard_interrupt)
    with experiments_at(root):
        code, _, err = run_quietly(train.main, ["--name", "copy", "--resume", resume, "--max_iterations", "1"])
    assert (code, err) == (130, expect.format(root=root) + "\n")
