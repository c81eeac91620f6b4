"""deploy.sim2sim end to end: the JSON report, the suite in worker processes, the video."""

from __future__ import annotations

import json

import pytest

from tests.deploy.conftest import GO2_MODEL, run_sim2sim


def test_run_report(go2_export, tmp_path):
    out = tmp_path / "run.json"
    proc = run_sim2sim("--export", str(go2_export), "--model", str(GO2_MODEL), "--episodes", "2", "--duration", "1",
                       "--push", "--push-interval", "0.5", "--latency", "1", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["mode"] == "run" and report["config"] == "go2"
    assert report["options"]["latency"] == 1 and report["options"]["push_vel"] == 1.0  # go2's default kick
    run = report["results"]["nominal"]
    assert len(run["episodes"]) == 2 and len(run["episodes"][0]["pushes_m_s"]) == 2
    for key in ("falls", "fall_rate", "lin_vel_rmse", "lin_vel_rmse_steady", "yaw_rate_rmse", "yaw_rate_rmse_steady",
                "energy_per_metre", "distance_m"):
        assert key in run["summary"]
    assert "all" in proc.stdout and "wall time" in proc.stdout


def test_suite_in_worker_processes(go2_export, tmp_path):
    out = tmp_path / "suite.json"
    proc = run_sim2sim("--export", str(go2_export), "--model", str(GO2_MODEL), "--variants", "weak_motors,latency_2",
                       "--episodes", "1", "--duration", "0.5", "--jobs", "2", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert list(report["results"]) == ["weak_motors", "latency_2"]
    assert report["results"]["latency_2"]["latency_steps"] == 2 and report["options"]["push"] is True
    table = proc.stdout[proc.stdout.index("variant"):]
    assert "weak_motors" in table and ("PASS" in table or "FAIL" in table)


def test_video(go2_export, tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    video = tmp_path / "first.mp4"
    proc = run_sim2sim("--export", str(go2_export), "--model", str(GO2_MODEL), "--episodes", "1", "--duration", "0.2",
                       "--video", str(video), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and "(10 frames, 50 fps)" in proc.stdout
    assert video.stat().st_size > 1000
    assert not list(tmp_path.glob(".*tmp*"))
