import pytest

from config import load_config


@pytest.fixture
def qmini_cfg():
    """Qmini config at test size: few envs, deterministic spawn unless a test turns noise on."""
    return load_config("qmini", ["env.num_envs=8", "sim.nthread=2"])
