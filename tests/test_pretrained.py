"""The committed pretrained policies (benchmarks/results/<robot>/policy/) load and walk right after install."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import play

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ["go2", "qmini", "g1"]


def sim2sim(folder: Path, out: Path, *args: str) -> dict:
    """deploy.sim2sim on a committed policy folder (read only), its report."""
    proc = subprocess.run([sys.executable, "-m", "deploy.sim2sim", "--export", str(folder), *args, "--quiet",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.mark.parametrize("robot", ROBOTS)
def test_export_matches_the_checkpoint(robot, capsys):
    folder = ROOT / "benchmarks" / "results" / robot / "policy"
    assert play.main(["--name", str(folder), "--check-export"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("robot", ROBOTS)
def test_it_walks_in_sim2sim_from_the_folder(robot, tmp_path):
    folder = ROOT / "benchmarks" / "results" / robot / "policy"
    report = sim2sim(folder, tmp_path / "run.json", "--model", f"assets/{robot}/{robot}.xml", "--commands",
                     "0.5,0,0@4", "--episodes", "2", "--duration", "4")
    (result,) = report["results"].values()
    summary = result["summary"]
    assert summary["falls"] == 0 and summary["lin_vel_rmse_steady"] < 0.2, summary


def test_resuming_a_pretrained_policy_names_each_field_once(tmp_path, monkeypatch, capsys):
    """The older cfg.yaml's new fields are named once (short), not again as 'changed' on resume."""
    import train

    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    folder = ROOT / "benchmarks" / "results" / "go2" / "policy"
    assert train.main(["--name", "mine", "--resume", str(folder), "--max_iterations", "1", "--num_envs", "4",
                       "--set", "runner.num_steps_per_env=2"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in (captured.out + captured.err).splitlines() if line.startswith("note:")]
    assert notes and all(len(line) < 300 for line in notes), notes
    changed = [line for line in notes if "changed config" in line]
    assert len(changed) == 1 and "(absent)" not in changed[0], changed
    assert "env.num_envs: 1024 -> 4" in changed[0] and "runner.num_steps_per_env" in changed[0]


def test_the_committed_perceptive_go2_climbs_from_its_exported_files(tmp_path, capsys):
    """benchmarks/results/go2_perceptive: its export is its checkpoint's policy, and deploy's ray-cast scan walks it
    up the 10 cm course stairs (32 of 32 in the README)."""
    folder = ROOT / "benchmarks" / "results" / "go2_perceptive" / "policy"
    assert play.main(["--name", str(folder), "--check-export"]) == 0, capsys.readouterr().err
    report = sim2sim(folder, tmp_path / "course.json", "--variants", "nominal", "--course", "stairs_up:0.10",
                     "--episodes", "2")
    summary = report["courses"]["stairs_up:0.1"]["summary"]
    assert summary["successes"] == 2 and summary["falls"] == 0, summary
