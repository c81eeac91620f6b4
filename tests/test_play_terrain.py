"""play.py on rough terrain: evaluation per terrain type and level, --terrain/--level, a perceptive policy's
export, a video of the terrain, and the one-line errors."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import mujoco
import numpy as np
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
    assert set(tiles["stairs_up"]["2"]) == {"episodes", "fall_rate", "lin_vel_rmse", "distance_m", "displacement_m"}
    # the displacement is a chord of the base's path: never longer than it
    assert all(c["displacement_m"] <= c["distance_m"] + 1e-6 for cells in tiles.values() for c in cells.values())
    assert "per_terrain" in report["policies"]["zero"]
    per_env = report["policies"]["trained"]["per_env"]  # each episode's tile, which the cells group
    episodes = list(zip(per_env["terrain_type"], per_env["terrain_level"]))
    assert len(episodes) == 21 and sorted(episodes) == sorted((t, lv) for t in types for lv in range(3))
    assert all(tiles[t][str(lv)]["fall_rate"] == per_env["fell"][i] for i, (t, lv) in enumerate(episodes))
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
    assert term["clip"] == 1.0 and term["offset"][0] == 0.25 and term["noise"] >= 0.0
    # deploy builds the scan from its own map of the scene and runs the policy
    run = subprocess.run([sys.executable, "-m", "deploy.sim2sim", "--export", str(exp / "export"), "--episodes", "1",
                          "--duration", "0.5"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # without the points it describes, a height_scan term is refused in one line instead of guessed
    del term["points"]
    (exp / "export" / "policy.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    run = subprocess.run([sys.executable, "-m", "deploy.sim2sim", "--export", str(exp / "export"), "--episodes", "1",
                          "--duration", "0.5"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "height_scan but its term lists no points" in run.stderr.strip().splitlines()[-1]


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


def ground_under(model, data, xy) -> float:
    """MuJoCo's ground height under world point xy in the model drawn (a ray straight down)."""
    hit, top = np.zeros(1, np.int32), np.array([xy[0], xy[1], 10.0])
    return 10.0 - mujoco.mj_ray(model, data, top, np.array([0.0, 0.0, -1.0]), None, 1, -1, hit)


def test_video_camera_rises_over_the_stairs_to_keep_the_robot_in_sight(rough, tmp_path, monkeypatch, headless_gl):
    """Set low and close on the top stairs_up level, looking at the robot from the steps (the tile's rows run
    along x, so the camera 1.9 m towards -x stands on them), the configured camera would sit inside them;
    the recording's camera looks down over them and sees the robot."""
    pytest.importorskip("imageio.v2")
    from utils import video

    shots, render = [], video.FrameRenderer.render
    distance, elevation = 1.9, np.radians(2.0)

    def spy(self, qpos, qvel=None):
        image = render(self, qpos, qvel)
        lookat = np.array(self.data.subtree_com[self.camera.trackbodyid])
        configured = lookat + distance * np.array([-np.cos(elevation), 0.0, np.sin(elevation)])  # azimuth 0: at -x
        cams = self.renderer.scene.camera
        eye = (np.array(cams[0].pos) + np.array(cams[1].pos)) / 2
        hit = np.zeros(1, np.int32)
        mujoco.mj_ray(self.model, self.data, eye, lookat - eye, None, 1, -1, hit)
        first_body = self.model.geom_bodyid[hit[0]] if hit[0] >= 0 else -1
        shots.append((configured[2] - ground_under(self.model, self.data, configured),
                      eye[2] - ground_under(self.model, self.data, eye), first_body))
        return image

    monkeypatch.setattr(video.FrameRenderer, "render", spy)
    assert play.main(["--name", rough, "--video", str(tmp_path / "low.mp4"), "--steps", "3", "--terrain", "stairs_up",
                      "--level", "2", "--set", "viewer.azimuth=0", "--set", "viewer.elevation=-2",
                      "--set", f"viewer.distance={distance}"]) == 0
    assert len(shots) == 3
    for configured, clear, first_hit in shots:
        assert configured < 0  # the configured camera: under the ground
        assert clear > 0.02  # the recording's: above it (it aims for MIN_CLEARANCE from where the base was)
        assert first_hit > 0  # and the first thing on its line of sight to the robot is the robot (body 0: the ground)
