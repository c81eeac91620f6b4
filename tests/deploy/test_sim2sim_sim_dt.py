"""--sim-dt: the check's physics step, independent of the one the policy trained with."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from deploy.commands import parse_schedule
from deploy.episodes import RunOptions, plan_episodes, run_episodes
from deploy.perturb import STIFF_TIMECONST, VARIANTS, variant_model
from deploy.policy_io import DeployError, load_policy, read_policy_yaml
from deploy.robot_model import build_robot, physics_step
from deploy.sim2sim import main
from tests.deploy.conftest import GO2_MODEL, ROOT, run_sim2sim

PRETRAINED = ROOT / "benchmarks" / "results" / "go2" / "policy" / "export"  # trained at 0.005 s x 4, 50 Hz


def test_physics_step_divides_the_control_period():
    spec = read_policy_yaml(PRETRAINED)
    assert (spec.sim_dt, spec.decimation, spec.control_dt) == (0.005, 4, 0.02)
    assert physics_step(spec) == (0.005, 4)
    assert physics_step(spec, 0.002) == (0.002, 10)
    assert physics_step(spec, 0.01) == (0.01, 2)
    assert physics_step(spec, 0.02 / 3) == (pytest.approx(0.02 / 3), 3)
    for bad in (0.003, 0.03, 0.5, 0.0, -0.002, float("nan")):
        with pytest.raises(DeployError):
            physics_step(spec, bad)


def _walk(sim_dt: float | None) -> tuple[dict, list[float], int]:
    spec, policy = load_policy(PRETRAINED)
    robot = build_robot(PRETRAINED / "scene.xml", spec, sim_dt)
    opts = RunOptions(episodes=3, duration=2.5, seed=0, spawn_height=robot.spawn_height, fall_tilt=1.0,
                      fall_height=0.12, schedule=parse_schedule("0.6,0,0@1.5;0,0,0.8"), sim_dt=sim_dt)
    clock: list[float] = []
    metrics = run_episodes(robot, robot.model, spec, policy, opts, plan_episodes(opts, spec),
                           frame_sink=lambda d: clock.append(d.time))
    return metrics.summary(), clock, robot.substeps


def test_finer_physics_step_gives_a_close_result():
    """The pretrained Go2 policy at 0.002 s x 10 walks as at its training 0.005 s x 4."""
    trained, clock_trained, n_trained = _walk(None)
    fine, clock_fine, n_fine = _walk(0.002)
    assert (n_trained, n_fine) == (4, 10)
    # the policy still acts every 0.02 s: the MuJoCo clock after each control step
    np.testing.assert_allclose(clock_fine, clock_trained, atol=1e-9)
    np.testing.assert_allclose(clock_fine[:3], [0.02, 0.04, 0.06], atol=1e-9)
    assert trained["falls"] == fine["falls"] == 0
    assert trained["distance_m"] > 0.5  # it walked
    assert fine["distance_m"] == pytest.approx(trained["distance_m"], rel=0.05)
    assert abs(fine["lin_vel_rmse_steady"] - trained["lin_vel_rmse_steady"]) < 0.03
    assert abs(fine["yaw_rate_rmse_steady"] - trained["yaw_rate_rmse_steady"]) < 0.05
    assert fine["energy_J"] == pytest.approx(trained["energy_J"], rel=0.1)  # energy integrates with the step


def test_stiff_feet_is_the_same_contact_at_any_finer_step():
    spec = read_policy_yaml(PRETRAINED)
    for sim_dt, expect in ((None, STIFF_TIMECONST), (0.002, STIFF_TIMECONST), (0.01, 0.02)):
        robot = build_robot(GO2_MODEL, spec, sim_dt)
        model = variant_model(robot, VARIANTS["stiff_feet"])
        assert model.opt.timestep == robot.sim_dt
        np.testing.assert_allclose(model.geom_solref[robot.foot_geoms + robot.floor_geoms, 0], expect)
    refsafe_off = int(mujoco.mjtDisableBit.mjDSBL_REFSAFE)  # no floor: the time constant as asked, at any step
    robot.model.opt.disableflags |= refsafe_off
    robot.spec.option.disableflags |= refsafe_off
    model = variant_model(robot, VARIANTS["stiff_feet"])
    assert model.opt.disableflags & refsafe_off and model.opt.timestep == 0.01
    np.testing.assert_allclose(model.geom_solref[robot.foot_geoms + robot.floor_geoms, 0], STIFF_TIMECONST)


@pytest.mark.parametrize("value, expect", [
    ("0.003", "--sim-dt 0.003 does not divide the policy's control period 0.02 s"),
    ("0.03", "does not divide"),
    ("0", "--sim-dt: must be a positive number, got 0"),
    ("-0.002", "must be a positive number"),
    ("fast", "--sim-dt"),
])
def test_bad_sim_dt_is_one_line(capsys, tmp_path, value, expect):
    out = tmp_path / "out.json"
    assert main(["--export", str(PRETRAINED), "--suite", f"--sim-dt={value}", "--out", str(out)]) == 2
    stdout, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], err
    assert stdout == "" and not out.exists()


def test_suite_at_sim_dt_in_workers_is_recorded(tmp_path):
    """Every variant runs at the requested step (worker processes too); the JSON says which step."""
    common = ["--export", str(PRETRAINED), "--variants", "nominal,stiff_feet", "--episodes", "1", "--duration",
              "0.5", "--quiet"]
    reports = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"suite{jobs}.json"
        proc = run_sim2sim(*common, "--sim-dt", "0.0025", "--jobs", jobs, "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        assert "physics 0.0025 s x 8 per 0.02 s control step (trained at 0.005 s x 4)" in proc.stdout
        reports[jobs] = json.loads(out.read_text())
    report = reports["2"]
    assert report["physics"] == {"sim_dt": 0.0025, "substeps": 8, "control_dt": 0.02, "training_sim_dt": 0.005,
                                 "training_decimation": 4}
    assert report["options"]["sim_dt"] == 0.0025
    for name in ("nominal", "stiff_feet"):  # the workers ran what the main process runs
        assert reports["1"]["results"][name]["summary"] == report["results"][name]["summary"]
