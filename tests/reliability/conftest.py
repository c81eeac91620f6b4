import pytest


@pytest.fixture
def experiments(tmp_path, monkeypatch):
    """An experiments root inside tmp_path, with tmp_path standing for the rest of the disk."""
    root = tmp_path / "experiments"
    root.mkdir()
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(root))
    return root


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An experiments root in a fresh folder standing for the disk, holding bad_inputs' trained run 'good'."""
    from benchmarks.faults.bad_inputs import trained_run

    root = tmp_path_factory.mktemp("disk") / "experiments"
    trained_run(root)  # good/: policy.pt at iteration 4, all/policy_2.pt and all/policy_4.pt
    return root
