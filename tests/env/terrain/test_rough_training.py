"""go2_rough trains end to end on both backends, logs the mean terrain level, and resumes its curriculum."""

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import train
from utils.checkpoint import read_checkpoint

SMALL = ["--num_envs", "4", "--max_iterations", "2", "--set", "runner.num_steps_per_env=8",
         "--set", "terrain.num_rows=3", "--set", "terrain.num_cols=3", "--set", "terrain.tile_size=4.0",
         "--set", "terrain.platform_size=2.0", "--set", "env.episode_length_s=0.2"]


@pytest.fixture(autouse=True)
def experiments_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    return tmp_path


def test_two_iterations_on_go2_rough_keep_the_levels_and_resume_them(experiments_dir):
    assert train.main(["--config", "go2_rough", "--name", "rough", *SMALL]) == 0
    ckpt = read_checkpoint(experiments_dir / "rough" / "model" / "policy.pt", "cpu")
    levels = ckpt["env_state"]["terrain"]["levels"]
    assert levels.shape == (4,) and levels.dtype == torch.long
    acc = EventAccumulator(str(experiments_dir / "rough" / "log"))
    acc.Reload()
    assert "Episode/terrain_level" in acc.Tags()["scalars"]  # 0.2 s episodes end within the first iteration

    from config import load_saved_config
    from env.gym_env_wrapper import make_env
    from rl.runner import OnPolicyRunner

    cfg = load_saved_config(experiments_dir / "rough" / "model" / "cfg.yaml")
    env = make_env(cfg)
    env.robot.ground.curriculum.levels.fill_(2)
    OnPolicyRunner(env, cfg, device="cpu").load(experiments_dir / "rough" / "model" / "policy.pt")
    assert torch.equal(env.robot.ground.curriculum.levels, levels)  # resume continues the curriculum

    assert train.main(["--config", "go2_rough", "--name", "rough", "--resume", "rough", *SMALL[:2],
                       "--max_iterations", "3", *SMALL[4:]]) == 0


def test_two_iterations_on_go2_rough_with_the_warp_backend(experiments_dir):
    pytest.importorskip("mujoco_warp", reason="the gpu extra is part of the test extra")
    assert train.main(["--config", "go2_rough", "--name", "rough_warp", "--backend", "warp", "--device", "cpu",
                       *SMALL]) == 0
    ckpt = read_checkpoint(experiments_dir / "rough_warp" / "model" / "policy.pt", "cpu")
    assert ckpt["iteration"] == 2 and "terrain" in ckpt["env_state"]
