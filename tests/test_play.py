"""End to end: a 3-iteration smoke run, then play.py's modes and its one-line errors."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
import yaml

import play
import train
from utils.experiment import Experiment

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """A 3-iteration run in a temporary experiments folder ($LEGGED_EXPERIMENTS_DIR, also seen by subprocesses)."""
    name = f"smoke_{uuid.uuid4().hex[:6]}"
    with pytest.MonkeyPatch.context() as env:  # restored after the module's tests
        env.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path_factory.mktemp("experiments")))
        rc = train.main(["--config", "qmini", "--name", name, "--num_envs", "8", "--max_iterations", "3",
                         "--set", "runner.save_interval=2", "--set", "sim.nthread=2"])
        assert rc == 0
        yield name


def _run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    if env.get("MUJOCO_GL") not in ("egl", "osmesa"):
        env.pop("MUJOCO_GL", None)  # headless: play.py picks EGL itself
    return subprocess.run([sys.executable, "play.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _one_line_error(capsys, rc: int, *pieces: str) -> str:
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    for piece in pieces:
        assert piece in err, err
    return err


def test_record_headless_video(smoke, tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    out = tmp_path / "out.mp4"
    proc = _run("--name", smoke, "--video", str(out), "--steps", "100", "--commands", "0.5,0,0@0.75;0,0,1@1")
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and "100 frames" in proc.stdout
    reader = imageio.get_reader(str(out))
    frames = [f for f in reader]
    assert len(frames) == 100
    assert frames[0].shape == (480, 640, 3)
    assert reader.get_meta_data()["fps"] == pytest.approx(1 / 0.015, rel=1e-3)
    diffs = [np.abs(frames[0].astype(int) - f.astype(int)).mean() for f in frames[1:]]
    assert max(diffs) > 0.5  # the robot moves in front of a tracking camera: not a still image


def test_eval_with_baselines(smoke, tmp_path, capsys):
    rc = play.main(["--name", smoke, "--eval", "4", "--policy", "trained,zero,random", "--steps", "60",
                    "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    table = out[out.index("episode length"):]
    assert "trained" in out and "zero" in out and "random" in out and "fall rate" in table
    report = json.loads((tmp_path / "eval.json").read_text())
    assert set(report["policies"]) == {"trained", "zero", "random"}
    assert report["episodes"] == 4 and report["command_mode"] == "grid" and len(report["commands"]) == 4
    for metrics in report["policies"].values():
        for key in ("episode_length_s", "fall_rate", "lin_vel_rmse", "yaw_rate_rmse", "task_reward",
                    "energy_per_metre", "energy_J", "distance_m"):
            assert key in metrics
        assert 0 < metrics["episode_length_s"] <= 60 * 0.015 + 1e-9
        assert 0.0 <= metrics["fall_rate"] <= 1.0
        assert 0.0 <= metrics["gait_match"] <= 1.0  # qmini has a gait clock
        assert len(metrics["per_env"]["lin_vel_rmse"]) == 4
    assert "gait clock match" in table and "steps per foot (Hz)" in table
    assert (tmp_path / "eval_tracking.png").read_bytes()[:4] == b"\x89PNG"


def test_a_schedule_starting_with_a_minus_is_the_value_of_commands():
    args = play.get_play_args(["--name", "x", "--commands", "-0.5,0,0@5;0,0,1@5", "--eval", "2"])
    assert args.commands == "-0.5,0,0@5;0,0,1@5" and args.eval == 2
    assert play.get_play_args(["--name", "x", "--commands=-1,0,0"]).commands == "-1,0,0"


def test_eval_baselines_need_no_checkpoint_and_default_to_the_experiment_folder(smoke, capsys):
    exp = Experiment(smoke).dir
    saved = exp / "model" / "policy.pt"
    hidden = exp / "model" / "policy.pt.hidden"
    saved.rename(hidden)
    try:
        rc = play.main(["--name", smoke, "--eval", "2", "--policy", "zero", "--steps", "20"])
        assert rc == 0
        assert json.loads((exp / "eval.json").read_text())["policies"]["zero"]["episodes"] == 2
        rc = play.main(["--name", smoke, "--eval", "2", "--steps", "20"])  # the trained policy needs one
        _one_line_error(capsys, rc, "no checkpoint model/policy.pt")
    finally:
        hidden.rename(saved)


def test_export_and_check(smoke, capsys):
    pytest.importorskip("onnxruntime")
    rc = play.main(["--name", smoke, "--export"])
    assert rc == 0, capsys.readouterr().err
    export = Experiment(smoke).dir / "export"
    assert {"policy.onnx", "policy.jit.pt", "policy.yaml"} <= {p.name for p in export.iterdir()}
    meta = yaml.safe_load((export / "policy.yaml").read_text())
    assert meta["num_obs"] == 3 * 42 and len(meta["joint_names"]) == 10 and meta["iteration"] == 3
    assert "actions match" in capsys.readouterr().out
    assert play.main(["--name", smoke, "--check-export"]) == 0
    assert "matches the config" in capsys.readouterr().out
    # a config that no longer matches the export (another control period)
    _one_line_error(capsys, play.main(["--name", smoke, "--check-export", "--set", "control.decimation=4"]),
                    "control_dt")

    # an export that disagrees with the config: one line, exit 2
    meta["joint_names"] = list(reversed(meta["joint_names"]))
    (export / "policy.yaml").write_text(yaml.safe_dump(meta))
    _one_line_error(capsys, play.main(["--name", smoke, "--check-export"]), "joint_names")
    # and an older checkpoint than the exported one: actions differ
    assert play.main(["--name", smoke, "--export", "--checkpoint", "all/policy_2.pt"]) == 0
    meta = yaml.safe_load((export / "policy.yaml").read_text())
    assert meta["checkpoint"] == "model/all/policy_2.pt" and meta["iteration"] == 2
    capsys.readouterr()
    _one_line_error(capsys, play.main(["--name", smoke, "--check-export", "--checkpoint", "policy.pt"]),
                    "away from the checkpoint")


def test_bad_inputs_give_one_line_errors(smoke, capsys, tmp_path):
    _one_line_error(capsys, play.main(["--name", "_no_such_experiment_", "--eval", "2"]),
                    "no experiment '_no_such_experiment_'")
    _one_line_error(capsys, play.main(["--name", smoke, "--video", str(tmp_path / "a.mp4"),
                                       "--checkpoint", "all/policy_999.pt"]), "all/policy_999.pt")
    _one_line_error(capsys, play.main(["--name", smoke, "--video", str(tmp_path / "a.mp4"),
                                       "--commands", "0.5,0@2"]), "needs 3 values")
    _one_line_error(capsys, play.main(["--name", smoke, "--eval", "2", "--policy", "trained,best"]),
                    "unknown policy 'best'")
    assert not (tmp_path / "a.mp4").exists()


def test_watch_without_display_says_so_and_cli_errors_have_no_traceback(smoke):
    proc = _run("--name", smoke)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "no display" in proc.stderr and "--video" in proc.stderr
    proc = _run("--name", "_no_such_experiment_")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"error: no experiment '_no_such_experiment_': looked for " \
                                  f"{Experiment('_no_such_experiment_').dir}"


def test_play_cfg_turns_every_draw_off_unless_randomize():
    from argparse import Namespace

    from config import load_config

    cfg = load_config("go2")
    nominal = play.play_cfg(cfg, Namespace(randomize=False, push=False, noise=False), 1, "cpu")
    flags = [f for f in nominal.domain_rand.fields() if f.startswith("randomize_")]
    assert flags and not any(getattr(nominal.domain_rand, f) for f in flags)
    assert nominal.domain_rand.max_action_latency == 0 and not nominal.domain_rand.push_robots
    kept = play.play_cfg(cfg, Namespace(randomize=True, push=True, noise=True), 1, "cpu")
    assert kept.domain_rand.max_action_latency == cfg.domain_rand.max_action_latency == 2
    assert kept.domain_rand.randomize_joint_damping and kept.domain_rand.push_robots


def test_play_uses_the_stage_settings_the_chosen_checkpoint_trained_under(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    stages = ('runner.stages=[{"from_iteration": 2, "set": {"rewards.scales.alive": 2.0}}, '
              '{"from_iteration": 3, "set": {"domain_rand.joint_damping_range": [3.0, 4.0]}}]')
    assert train.main(["--config", "qmini", "--name", "staged", "--num_envs", "4", "--max_iterations", "3",
                       "--set", "runner.save_interval=2", "--set", stages]) == 0
    final = play.Session(play.get_play_args(["--name", "staged", "--eval", "1"]))
    assert final.iteration() == 3
    assert final.cfg.rewards.scales.alive == 2.0 and final.cfg.domain_rand.joint_damping_range == [3.0, 4.0]
    early = play.Session(play.get_play_args(["--name", "staged", "--eval", "1", "--checkpoint", "all/policy_2.pt"]))
    assert early.iteration() == 2
    assert early.cfg.rewards.scales.alive == 2.0 and early.cfg.domain_rand.joint_damping_range != [3.0, 4.0]
    mine = play.Session(play.get_play_args(["--name", "staged", "--eval", "1",
                                            "--set", "domain_rand.joint_damping_range=[1.0, 1.5]"]))
    assert mine.cfg.domain_rand.joint_damping_range == [1.0, 1.5]  # the user's --set wins
