"""Every mistake in the issue's "Found" list (and its family) gives one line, status 2, and no change on disk."""

import json
import re

import pytest

from benchmarks.fault_report import COMMITTED, REFRESH_COMMITTED
from benchmarks.faults.bad_inputs import CASES, check_case, trained_run


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("disk") / "experiments"
    trained_run(root)
    return root


@pytest.fixture(scope="module")
def seen():
    """case name -> its trial, so the committed-report check below reuses the runs of the first test."""
    return {}


def _trial(case, root, seen):
    if case.name not in seen:
        seen[case.name] = check_case(case, root)
    return seen[case.name]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_line_and_status_2(case, root, seen):
    trial = _trial(case, root, seen)
    assert trial.ok, trial.detail


def _wording(detail: str) -> str:
    """The words of a trial's line; numbers (a YAML line and column, a sample count) follow the config's layout."""
    return re.sub(r"\d+", "N", detail)


@pytest.mark.parametrize("case", [c for c in CASES if not c.machine_specific],
                         ids=[c.name for c in CASES if not c.machine_specific])
def test_the_committed_fault_report_shows_the_error_line_the_code_gives_now(case, root, seen):
    trial = _trial(case, root, seen).portable(root)
    assert trial.ok, trial.detail
    committed = [t["detail"] for t in json.loads(COMMITTED.read_text())
                 if t["kind"] == "input" and t["detail"].startswith(f"{case.name}: status")]
    assert [_wording(d) for d in committed] == [_wording(trial.detail)], (
        f"{COMMITTED} is stale for {case.name!r}; refresh it with: {REFRESH_COMMITTED}")


def test_resuming_with_another_run_length_is_not_called_a_different_config(root, capsys):
    import shutil

    import train
    from benchmarks.faults import experiments_at

    shutil.copytree(root / "good", root / "again")  # the cases above rely on "good" as trained
    with experiments_at(root):
        assert train.main(["--name", "again", "--resume", "again", "--max_iterations", "1"]) == 0
        out = capsys.readouterr().out
        assert "changed config" not in out and "different config" not in out
        assert train.main(["--name", "again", "--resume", "again", "--max_iterations", "1",
                           "--set", "algorithm.entropy_coef=0.01"]) == 0
        out = capsys.readouterr().out
        assert "note: resuming" in out and "algorithm.entropy_coef: 0.001 -> 0.01" in out


def test_a_refused_config_leaves_no_folder_behind(root):
    """The folder is made only after env and policy are built: a bad value does not block the name."""
    import train
    from benchmarks.faults import experiments_at

    with experiments_at(root):
        assert train.main(["--config", "qmini", "--name", "fresh", "--num_envs", "0"]) == 2
        assert not (root / "fresh").exists()
        assert train.main(["--config", "qmini", "--name", "fresh", "--num_envs", "2", "--max_iterations", "1",
                           "--set", "runner.num_steps_per_env=2", "--set", "algorithm.num_mini_batches=1"]) == 0
