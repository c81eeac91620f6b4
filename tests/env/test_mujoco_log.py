"""MuJoCo's warning log goes into the run's experiment, never MUJOCO_LOG.TXT in the current directory."""

import mujoco
import pytest

import train
from env.sim.mujoco_log import LOG_NAME, send_mujoco_log_to

UNSTABLE = "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>"


def provoke_a_warning() -> None:
    model = mujoco.MjModel.from_xml_string(UNSTABLE)
    data = mujoco.MjData(model)
    data.qpos[0] = float("nan")
    mujoco.mj_step(model, data)  # "Nan, Inf or huge value in QPOS": a MuJoCo warning


@pytest.fixture(autouse=True)
def restore_log(tmp_path_factory):
    yield
    send_mujoco_log_to(tmp_path_factory.mktemp("mujoco_log"))


def test_a_training_run_sends_the_log_into_its_experiment(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert train.main(["--config", "qmini", "--name", "run", "--num_envs", "4", "--max_iterations", "1",
                       "--set", "runner.num_steps_per_env=2"]) == 0
    provoke_a_warning()
    log = tmp_path / "experiments" / "run" / "log" / LOG_NAME
    assert "QPOS" in log.read_text()
    assert list(cwd.iterdir()) == []


def test_without_a_folder_no_log_file_is_written(tmp_path, monkeypatch):
    """Ranks other than 0 write nothing: MuJoCo prints the warning but keeps no file."""
    monkeypatch.chdir(tmp_path)
    assert send_mujoco_log_to(None) is None
    provoke_a_warning()
    assert list(tmp_path.iterdir()) == []
