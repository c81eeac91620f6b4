"""Every mistake in the issue's "Found" list (and its family) gives one line, status 2, and no change on disk."""

import pytest

from benchmarks.faults.bad_inputs import CASES, check_case, trained_run


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("disk") / "experiments"
    trained_run(root)
    return root


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_line_and_status_2(case, root):
    trial = check_case(case, root)
    assert trial.ok, trial.detail


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
