import pytest


@pytest.fixture
def experiments(tmp_path, monkeypatch):
    """An experiments root inside tmp_path, with tmp_path standing for the rest of the disk."""
    root = tmp_path / "experiments"
    root.mkdir()
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(root))
    return root
