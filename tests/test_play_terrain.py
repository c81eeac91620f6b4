"""play.py on rough terrain: evaluation per terrain type and level, --terrain/--level, a perceptive policy's
export, a video of the terrain, and the one-line errors."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

import play
import train

ROOT = Path(__file__).resolve().parents[1]
TERRAIN = ["--set", "terrain.num_rows=3", "--set", "terrain.num_cols=7", "--set", "terrain.tile_size=4.0",
           "--set", "terrain.platform_size=2.0", "--set", "terrain.border_size=1.0"]


@pytest.fixture(scope="module")
def rough(tmp_path_factory):
    """A 1-iteration perceptive go2_rough run (the height scan in the policy observation)."""
    name = f"rough_{uuid.uuid4().hex[:6]}"
    with pytest.MonkeyPatch.context() as env:  # restored after the module's tests
        env.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path_factory.mktemp("experiments")))
        assert train.main(["--config", "go2_rough", "--name", name, "--num_envs", "4", "--max_iterations", "1",
                           "--set", "runner.num_steps_per_env=8", "--set", "terrain.policy_height_scan=true",
                           *TERRAIN]) == 0
        yield name


def test_eval_reports_every_terrain_type_and_level(rough, tmp_path, capsys):
    assert play.main(["--name", rough, "--eval", "21", "--policy", "trained,zero", "--out", str(tmp_path),
                      "--set", "env.episode_length_s=0.5"]) == 0
    report = json.loads((tmp_path / "eval.json").read_text())
    tiles = report["policies"]["trained"]["per_terrain"]
    types = ["random_rough", "slope_up", "slope_down", "rough_slope", "stairs_up", "stairs_down", "obstacles"]
    assert list(tiles) == types
    assert all(sorted(tiles[t]) == ["0", "1", "2"] and tiles[t]["0"]["episodes"] == 1 for t in types)
    assert set(tiles["stairs_up"]["2"]) == {"episodes", "fall_rate", "lin_vel_rmse", "distance_m"}
    assert "per_terrain" in report["policies"]["zero"]
    assert (tmp_path / "eval_terrain.png").stat().st_size > 1000
    assert "falls per terrain type" in capsys.readouterr().out


def test_terrain_and_level_pin_the_evaluation_to_one_tile(rough, tmp_path):
    assert play.main(["--name", rough, "--eval", "4", "--terrain", "stairs_up", "--level", "2", "--out", str(tmp_path),
                      "--set", "env.episode_length_s=0.3"]) == 0
    tiles = json.loads((tmp_path / "eval.json").read_text())["policies"]["trained"]["per_terrain"]
    assert tiles == {"stairs_up": {"2": tiles["stairs_up"]["2"]}} and tiles["stairs_up"]["2"]["episodes"] == 4


@pytest.mark.parametrize("args, message", [
    (["--terrain", "lava", "--eval", "2"], "terrain type 'lava' is not in this terrain"),
    (["--level", "3", "--eval", "2"], "levels 0..2"),
    (["--level", "-1", "--eval", "2"], "levels 0..2"),
    (["--terrain", "stepping_stones", "--eval", "2"], "terrain type 'stepping_stones' is not in this terrain"),
    (["--terrain", "lava", "--video", "x.mp4"], "terrain type 'lava' is not in this terrain"),
])
def test_bad_terrain_or_level_is_one_line(rough, tmp_path, capsys, args, message):
    """Refused before anything is built or announced: no 'evaluating ...' line first, nothing written."""
    rc = play.main(["--name", rough, *args, "--out", str(tmp_path)])
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and message in err, err
    assert captured.out == "", captured.out
    assert list(tmp_path.iterdir()) == []


def test_terrain_flags_on_a_flat_config_are_one_line(tmp_path, capsys):
    rc = play.main(["--name", str(ROOT / "benchmarks" / "results" / "go2" / "policy"), "--terrain", "stairs_up",
                    "--eval", "2", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if not line.startswith("note: ")]
    assert rc == 2 and len(errors) == 1 and "rough-terrain config" in errors[0], errors
    assert "evaluating" not in captured.out


def test_export_describes_the_height_scan(rough):
    assert play.main(["--name", rough, "--export"]) == 0
    exp = Path(os.environ["LEGGED_EXPERIMENTS_DIR"]) / rough
    meta = yaml.safe_load((exp / "export" / "policy.yaml").read_text())
    term = next(t for t in meta["observation"]["terms"] if t["name"] == "height_scan")
    assert term["size"] == 187 and len(term["points"]) == 187 and term["unit"] == "m"
    assert term["points"][0] == [-0.8, -0.5] and term["points"][-1] == [0.8, 0.5]
    assert term["start"] + term["size"] == meta["observation"]["frame_size"]
    # a robot program needs a height map to build it: deploy says so in one line instead of guessing
    run = subprocess.run([sys.executable, "-m", "deploy.sim2sim", "--export", str(exp / "export"), "--episodes", "1",
                          "--duration", "0.5"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "'height_scan', which this program cannot build" in run.stderr.strip().splitlines()[-1]


def test_video_shows_the_terrain(rough, tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    out = tmp_path / "stairs.mp4"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "play.py", "--name", rough, "--video", str(out), "--steps", "5",
                           "--terrain", "stairs_up", "--level", "2"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    frame = imageio.get_reader(str(out)).get_data(0)
    assert frame.std() > 10  # a rendered scene, not a blank frame
