"""go2_rough trains end to end on both backends, logs the mean terrain level, and resumes its curriculum."""

import numpy as np
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


def test_two_iterations_on_go2_rough_keep_the_levels_and_resume_them(experiments_dir, capsys):
    assert train.main(["--config", "go2_rough", "--name", "rough", *SMALL]) == 0
    ckpt = read_checkpoint(experiments_dir / "rough" / "model" / "policy.pt", "cpu")
    levels = ckpt["env_state"]["terrain"]["levels"]
    assert levels.shape == (4,) and levels.dtype == torch.long
    acc = EventAccumulator(str(experiments_dir / "rough" / "log"))
    acc.Reload()
    assert "Episode/terrain_level" in acc.Tags()["scalars"]  # 0.2 s episodes end within the first iteration

    from benchmarks import terrain_levels

    capsys.readouterr()
    assert terrain_levels.main(["--name", "rough"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"rough: 4 envs, mean level {levels.float().mean():.2f} of 0..2"
    assert len(lines) == 1 + 3  # three columns, three types (one env per column, the fourth on the last)

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


def test_height_field_contacts_have_their_budget_and_an_overflow_is_reported(caplog):
    pytest.importorskip("mujoco_warp", reason="the gpu extra is part of the test extra")
    import logging

    from config import load_config
    from env.sim import load_backend
    from env.sim.scene import load_mj_model
    from env.sim.warp_setup import HFIELD_CONTACTS, buffer_sizes
    from env.terrain import terrain_grid

    flat_cfg = load_config("go2")
    cfg = load_config("go2_rough", ["terrain.num_rows=2", "terrain.num_cols=2", "terrain.tile_size=4.0",
                                    "terrain.platform_size=2.0", "terrain.box_tiles=[]"])
    flat, rough = load_mj_model(flat_cfg), load_mj_model(cfg, terrain_grid(cfg.terrain))
    robot_geoms = sum(1 for g in range(rough.ngeom) if rough.geom_bodyid[g] and rough.geom_conaffinity[g])
    assert buffer_sizes(rough, 0, 0)[0] == HFIELD_CONTACTS * robot_geoms > buffer_sizes(flat, 0, 0)[0]
    warp = load_backend("warp", rough, 2, 1, "cpu", nconmax=1, njmax=8)  # four feet on the ground need more
    home = torch.tensor(rough.key_qpos[0], dtype=torch.float64).repeat(2, 1)
    home[:, :2] = torch.tensor(cfg.terrain.tile_size / 2)  # on the first tile's platform
    warp.reset(torch.arange(2), home, torch.zeros(2, rough.nv, dtype=torch.float64), home[:, 7:])
    assert warp.step(40).all()
    with caplog.at_level(logging.WARNING):
        assert warp.overflow_total > 0
    assert "sim.nconmax" in caplog.text


def test_qmini_rough_spawns_on_bumps_and_walks_blind_with_a_scanning_critic():
    from config import load_config
    from env.gym_env_wrapper import make_env

    cfg = load_config("qmini_rough", ["env.num_envs=8"])
    env = make_env(cfg)
    flat = make_env(load_config("qmini", ["env.num_envs=8"]))
    assert env.num_obs == flat.num_obs  # blind: the flat Qmini's observation
    assert env.num_critic_obs == flat.num_critic_obs + 11 * 7
    types = env.robot.ground.grid.column_types
    assert sorted(types) == sorted(["flat", "random_rough", "obstacles", "slope_up", "slope_down"])  # one column each
    grid = env.robot.ground.grid
    blocks = grid.heights[grid.tile_slices(9, types.index("obstacles"))]
    assert np.isclose(np.abs(blocks).max(), 0.01 + 0.045 * 0.9, atol=0.003)  # 5 cm blocks and holes at the top
    top = grid.heights[grid.tile_slices(9, types.index("random_rough"))]
    assert sorted(set(np.round(top.ravel() * 100).astype(int))) == [-2, -1, 0, 1, 2]  # cm: the reference's 0-4 cm
    assert np.ptp(grid.heights[grid.tile_slices(0, types.index("random_rough"))]) == 0  # level 0 is flat
    env.reset()
    for _ in range(5):
        env.step(torch.zeros(env.num_envs, env.num_actions))
    assert torch.all(env.robot.base_height > 0.3)  # standing on the bumps, not in them
