"""benchmarks/ground_contacts.py: contacts per geom, depth and normal tilt of replayed poses; one line on bad input."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

from benchmarks.ground_contacts import contact_stats, main

ROOT = Path(__file__).resolve().parents[2]
FLAT_POLICY = ROOT / "benchmarks" / "results" / "go2" / "policy"
SCENE = """<mujoco><asset><hfield name="h" nrow="161" ncol="161" size="2 2 0.001 1"/></asset><worldbody>
  <geom name="floor" type="{floor}" {size}/>
  <body><freejoint/><geom name="FL_foot" type="sphere" size="0.022"/></body></worldbody></mujoco>"""


def sphere_on(floor: str) -> mujoco.MjModel:
    size = 'hfield="h"' if floor == "hfield" else 'size="0 0 0.05"'
    return mujoco.MjModel.from_xml_string(SCENE.format(floor=floor, size=size))


def poses(sink: float, count: int = 50) -> list[np.ndarray]:
    """A sphere of radius 0.022 sunk ``sink`` m into flat ground at the top's height 0, at random xy."""
    rng = np.random.default_rng(0)
    return [np.array([*rng.uniform(-1, 1, 2), 0.022 - sink, 1, 0, 0, 0]) for _ in range(count)]


def test_a_sphere_on_a_plane_has_one_upright_contact_and_on_fine_height_field_several_tilted():
    plane = contact_stats(sphere_on("plane"), poses(0.005))["foot"]
    assert plane["per_geom_p50"] == 1 and plane["tilted"] == 0.0
    assert plane["depth_mm_p50"] == pytest.approx(5.0, abs=0.01)
    field = contact_stats(sphere_on("hfield"), poses(0.005))["foot"]  # 2.5 cm cells
    assert field["per_geom_p50"] > 2 and field["tilted"] > 0.3


def test_main_reports_every_kind_and_the_falls(capsys):
    assert main(["--name", str(FLAT_POLICY), "--num_envs", "2", "--steps", "10", "--every", "5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\s+foot\s+\d+\s+1 /\s+1\s", out, re.M)  # on the plane: one contact per foot
    assert re.search(r"falls: \d of 2", out)


def test_bad_input_is_one_line_and_exit_2(capsys):
    assert main(["--name", str(FLAT_POLICY), "--level", "0"]) == 2  # a flat-ground policy has no tiles
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "rough-terrain config" in errors[0]  # (old cfg.yaml fields: a note line as well)
