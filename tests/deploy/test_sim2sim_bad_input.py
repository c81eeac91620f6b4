"""Bad input: one line `error: ...` on stderr, exit status 2, nothing written."""

from __future__ import annotations

import shutil

import pytest
import yaml

from deploy.sim2sim import main
from tests.deploy.conftest import GO2_MODEL, run_sim2sim


def _fails(capsys, argv: list[str], expect: str) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expect in lines[0], lines[0]
    assert out == ""


@pytest.fixture()
def broken_export(go2_export, tmp_path):
    """A copy of the export to break."""
    return shutil.copytree(go2_export, tmp_path / "export")


def test_missing_files(capsys, tmp_path, broken_export):
    out = tmp_path / "out.json"
    common = ["--model", str(GO2_MODEL), "--out", str(out)]
    _fails(capsys, ["--export", str(tmp_path / "nowhere"), *common], "no such folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    _fails(capsys, ["--export", str(empty), *common], "no policy.yaml")
    (broken_export / "policy.onnx").unlink()
    _fails(capsys, ["--export", str(broken_export), *common], "no policy.onnx")
    _fails(capsys, ["--export", str(tmp_path), *common], "no policy.onnx")  # tmp_path holds export/
    _fails(capsys, ["--export", str(empty), "--model", str(tmp_path / "robot.xml")], "no policy.yaml")
    assert not out.exists()


def test_bad_model(capsys, go2_export, tmp_path):
    out = tmp_path / "out.json"
    _fails(capsys, ["--export", str(go2_export), "--model", str(tmp_path / "robot.xml"), "--out", str(out)],
           "no such file")
    text = GO2_MODEL.read_text()
    renamed = text.replace('<joint name="FL_hip_joint"', '<joint name="FL_hip"').replace(
        '<joint name="RR_calf_joint"', '<joint name="RR_knee"')
    bad = tmp_path / "renamed.xml"
    bad.write_text(renamed)
    _fails(capsys, ["--export", str(go2_export), "--model", str(bad), "--out", str(out)],
           "lacks joint(s) FL_hip_joint, RR_calf_joint")
    garbage = tmp_path / "garbage.xml"
    garbage.write_text("<mujoco><worldbody><body></mujoco>")
    _fails(capsys, ["--export", str(go2_export), "--model", str(garbage), "--out", str(out)], "cannot load")
    assert not out.exists()


def test_bad_policy_yaml(capsys, broken_export, tmp_path):
    meta = yaml.safe_load((broken_export / "policy.yaml").read_text())
    meta["observation"]["terms"][1]["name"] = "base_lin_vel"
    (broken_export / "policy.yaml").write_text(yaml.safe_dump(meta))
    _fails(capsys, ["--export", str(broken_export), "--model", str(GO2_MODEL)], "observation term 'base_lin_vel'")
    meta["observation"]["terms"][1]["name"] = "projected_gravity"
    meta["kp"] = [None] * len(meta["kp"])
    (broken_export / "policy.yaml").write_text(yaml.safe_dump(meta))
    _fails(capsys, ["--export", str(broken_export), "--model", str(GO2_MODEL)], "kp must hold numbers")
    meta["observation"]["history_length"] = "three"
    (broken_export / "policy.yaml").write_text(yaml.safe_dump(meta))
    _fails(capsys, ["--export", str(broken_export), "--model", str(GO2_MODEL)], "malformed")
    meta["format"] = "something/2"
    (broken_export / "policy.yaml").write_text(yaml.safe_dump(meta))
    _fails(capsys, ["--export", str(broken_export), "--model", str(GO2_MODEL)], "format")
    (broken_export / "policy.yaml").write_text("joint_names: [a\n")
    _fails(capsys, ["--export", str(broken_export), "--model", str(GO2_MODEL)], "cannot read")


def test_bad_flags(capsys, go2_export, tmp_path):
    out = tmp_path / "out.json"
    base = ["--export", str(go2_export), "--model", str(GO2_MODEL), "--out", str(out)]
    _fails(capsys, [*base, "--variants", "nominal,stiff_legs"], "unknown variant 'stiff_legs'")
    _fails(capsys, [*base, "--commands", "0.5,0@5"], "needs 3 values")
    _fails(capsys, [*base, "--episodes", "0"], "--episodes")
    _fails(capsys, [*base, "--duration", "-1"], "--duration")
    _fails(capsys, [*base, "--bogus"], "unrecognized arguments")
    old_export = tmp_path / "old_export"  # exported before scene.xml existed: --model is needed
    shutil.copytree(go2_export, old_export, ignore=shutil.ignore_patterns("scene.xml", "meshes"))
    _fails(capsys, ["--export", str(old_export)], "has no scene.xml (exported by an older version): pass --model MJCF")
    _fails(capsys, [*base[:4], "--out", str(tmp_path / "no" / "out.json")], "does not exist")
    _fails(capsys, [*base[:4], "--out", str(tmp_path)], "is a folder")
    _fails(capsys, [*base, "--trace", str(tmp_path / "no" / "trace.csv")], "--trace: folder")
    _fails(capsys, [*base, "--resample-jitter", "5"], "--resample-jitter 5 must be under --resample 5")
    _fails(capsys, [*base, "--resample-jitter", "-1"], "--resample-jitter")
    assert not out.exists()


def test_command_line_exit_status(go2_export, tmp_path):
    proc = run_sim2sim("--export", str(go2_export), "--model", str(GO2_MODEL), "--suite", "--variants", "bogus",
                       "--out", str(tmp_path / "out.json"))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()] and proc.stderr.startswith("error: unknown variant")
    assert not (tmp_path / "out.json").exists()


def test_bad_course_and_scan_flags(capsys, go2_export, tmp_path):
    out = tmp_path / "out.json"
    common = ["--export", str(go2_export), "--model", str(GO2_MODEL), "--out", str(out)]
    _fails(capsys, [*common, "--course", "stairs:0.1"], "expected KIND:VALUE")
    _fails(capsys, [*common, "--course", "boxes:0.08,cell=-1"], "cell (m) must be a positive number")
    _fails(capsys, [*common, "--course", "slope_up:0.2", "--course-speed", "0"], "--course-speed")
    _fails(capsys, [*common, "--scan-noise", "-1"], "--scan-noise")
    assert not out.exists()
