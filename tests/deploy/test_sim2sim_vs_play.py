"""deploy.sim2sim on the project's own model reproduces play.py --eval's tracking for the same policy and commands.

Both run tests/data/go2_walk on assets/go2/go2.xml with pushes, randomisation and noise
off and the same fixed command schedule. They are not bit-identical: sim2sim spawns each
episode at a random heading (floating-point differences then grow, as walking is chaotic),
computes in float64 where the env uses float32, and its policy sees a new command in the
step it starts, where play.py --eval's sees it one step later. Measured: play.py 0.123 m/s,
sim2sim 0.127-0.146 m/s over seeds 0-3 (2 episodes each), so the tolerance is
max(0.05 m/s, 25%). tests/deploy/test_sim2sim_parts.py checks the observation itself exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.deploy.conftest import GO2_MODEL, ROOT, run_sim2sim

SCHEDULE = "0.5,0,0@3;0.3,0.3,0@3"  # m/s, 6 s: forward, then diagonal
STEPS = 300  # policy steps of 0.02 s = 6 s


def test_sim2sim_tracking_matches_play_eval(experiments, tmp_path):
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(experiments))
    proc = subprocess.run([sys.executable, "play.py", "--name", "walk", "--eval", "1", "--commands", SCHEDULE,
                           "--steps", str(STEPS), "--seed", "0", "--out", str(tmp_path / "play")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    play = json.loads((tmp_path / "play" / "eval.json").read_text())["policies"]["trained"]

    out = tmp_path / "sim2sim.json"
    # --export given the experiment folder: sim2sim finds export/ inside it
    proc = run_sim2sim("--export", str(experiments / "walk"), "--model", str(GO2_MODEL), "--commands", SCHEDULE,
                       "--episodes", "2", "--duration", "6", "--seed", "0", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    ours = json.loads(out.read_text())["results"]["nominal"]["summary"]

    assert play["fall_rate"] == 0.0 and ours["falls"] == 0
    tolerance = max(0.05, 0.25 * play["lin_vel_rmse"])
    assert abs(ours["lin_vel_rmse"] - play["lin_vel_rmse"]) <= tolerance, (ours["lin_vel_rmse"], play["lin_vel_rmse"])
    assert ours["episode_length_s"] == 6.0
