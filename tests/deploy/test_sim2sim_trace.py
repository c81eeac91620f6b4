"""deploy.sim2sim --trace: the first episode as CSV rows that agree with the run's own report."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from deploy.courses import parse_course
from deploy.trace import euler_zyx
from tests.deploy.conftest import GO2_MODEL, run_sim2sim


def test_euler_angles_of_known_rotations():
    half = 0.15  # rad: a rotation of 0.3 rad
    assert euler_zyx(np.array([math.cos(half), 0.0, math.sin(half), 0.0])) == pytest.approx((0.0, 0.3, 0.0))
    assert euler_zyx(np.array([math.cos(half), 0.0, 0.0, math.sin(half)])) == pytest.approx((0.0, 0.0, 0.3))
    assert euler_zyx(np.array([math.cos(half), math.sin(half), 0.0, 0.0])) == pytest.approx((0.3, 0.0, 0.0))


def test_course_trace_follows_the_reported_episode(go2_export, tmp_path):
    """The trace's path from the spawn point is the distance the report gives; heights are above the course."""
    course_text = "stairs_up:0.05,steps=3"
    trace, out = tmp_path / "first.csv", tmp_path / "run.json"
    proc = run_sim2sim("--export", str(go2_export), "--model", str(GO2_MODEL), "--course", course_text,
                       "--episodes", "2", "--duration", "2", "--trace", str(trace), "--out", str(out), "--quiet",
                       timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "control steps)" in proc.stdout
    report = json.loads(out.read_text())
    first = report["courses"][course_text]["episodes"][0]
    with open(trace, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:5] == ["t_s", "x_m", "y_m", "z_m", "height_m"]
    assert [k for k in rows[0] if k.endswith("_contact")] == [f"{leg}_foot_contact" for leg in ("FL", "FR", "RL", "RR")]
    steps = round(first["episode_length_s"] / report["physics"]["control_dt"])
    assert len(rows) == steps  # one row per control step of the first episode (it did not fall)
    t = np.array([float(r["t_s"]) for r in rows])
    assert np.allclose(np.diff(t), report["physics"]["control_dt"], atol=1e-3)
    xy = np.array([[float(r["x_m"]), float(r["y_m"])] for r in rows])
    path = np.concatenate([np.array([first["spawn_xy_m"]]), xy])
    assert np.linalg.norm(np.diff(path, axis=0), axis=1).sum() == pytest.approx(first["distance_m"], abs=2e-3)
    ground = parse_course(course_text).ground_height(xy)
    z, height = (np.array([float(r[k]) for r in rows]) for k in ("z_m", "height_m"))
    assert np.allclose(z - ground, height, atol=2e-4)
    contacts = np.array([[int(r[k]) for k in r if k.endswith("_contact")] for r in rows])
    assert set(np.unique(contacts)) <= {0, 1} and contacts.sum(axis=1).mean() >= 2  # it stands on its feet
    assert not list(tmp_path.glob(".*tmp*"))
