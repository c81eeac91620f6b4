"""benchmarks/physics_cost.py: runs on a few robots, and its figures are what they claim to be."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from benchmarks.physics_changes import build_model, candidates
from benchmarks.physics_cost import main
from config import load_saved_config

GO2_POLICY = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "go2" / "policy"


@pytest.fixture(scope="module")
def go2_cfg():
    return load_saved_config(GO2_POLICY / "model" / "cfg.yaml")


def test_runs_and_ratios_are_ratios_of_timings(tmp_path, capsys):
    out = tmp_path / "cost.json"
    assert main(["--config", "go2", "--num_envs", "2", "--seconds", "0.12", "--nthread", "1",
                 "--changes", "dt_0.01x2,contact_pairs", "--combine", "dt_0.01x2,contact_pairs",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    rows = {r["name"]: r for r in report["changes"]}
    both = "dt_0.01x2+contact_pairs"
    assert list(rows) == ["baseline", "dt_0.01x2", "contact_pairs", both, "batch_persistent"]
    assert (rows["baseline"]["substeps"], rows["dt_0.01x2"]["substeps"], rows[both]["substeps"]) == (4, 2, 2)
    assert rows["dt_0.01x2"]["sim_dt"] == rows[both]["sim_dt"] == 0.01
    assert rows["contact_pairs"]["contact_pairs"] == rows[both]["contact_pairs"] == 15
    assert rows["baseline"]["contact_pairs"] == 0
    base = rows["baseline"]["elapsed_s"]
    for row in rows.values():
        assert row["elapsed_s"] > 0 and row["timed_policy_steps"] == report["policy_steps"] - 2  # 2 warm-up steps
        assert row["cost_ratio"] == pytest.approx(row["elapsed_s"] / base) and row["cost_ratio"] > 0
        assert row["falls"] == 0  # the pretrained policy stands on every model in 0.12 s
    assert rows["baseline"]["cost_ratio"] == 1.0
    stages = {s["timer"]: s for s in report["profile"]["stages"]}
    assert stages["step"]["share"] == pytest.approx(1.0)
    assert 0 < stages["forward"]["share"] < 1
    parts = stages["col_broadphase"]["share"] + stages["col_narrowphase"]["share"]
    assert stages["pos_collision"]["share"] >= parts - 1e-9
    assert report["profile"]["solver_iterations"] >= 1
    assert "broad phase" in printed and "contact_pairs" in printed and f"wrote {out}" in printed


@pytest.mark.parametrize("argv, expect", [
    (["--changes", "bogus"], "unknown change 'bogus' in --changes"),
    (["--combine", "contact_pairs,nope"], "unknown change 'nope' in --combine"),
    (["--num_envs", "0"], "--num_envs must be >= 1"),
    (["--policy", "nowhere"], "has no model/cfg.yaml"),
])
def test_bad_input_is_one_line(tmp_path, capsys, argv, expect):
    out = tmp_path / "cost.json"
    assert main([*argv, "--seconds", "0.1", "--out", str(out)]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and err.count("\n") == 1 and err.startswith("error: ") and expect in err
    assert not out.exists()
    assert main(["--out", str(tmp_path / "no" / "cost.json")]) == 2


def test_substep_changes_keep_the_control_period(go2_cfg):
    changes = [c for c in candidates(go2_cfg) if c.name.startswith("dt_")]
    assert {c.name for c in changes} >= {"dt_0.01x2", "dt_0.002x10"}
    for change in changes:
        model, cfg = build_model(go2_cfg, change)
        assert model.opt.timestep * cfg.control.decimation == pytest.approx(0.02)


def test_iteration_changes_bracket_the_configs_cap(go2_cfg):
    """Fewer iterations (cheaper, if the solver converges in them) and more (nearer convergence where it does not)."""
    cap = int(go2_cfg.sim.iterations)
    names = {c.name for c in candidates(go2_cfg) if c.name.startswith("iterations_")}
    assert names == {f"iterations_{n}" for n in (1, 2, 10, 20) if n != cap}
    for change in candidates(go2_cfg):
        if change.name.startswith("iterations_"):
            model, _ = build_model(go2_cfg, change)
            assert model.opt.iterations == int(change.name.split("_")[1]) != cap


def _settled(model: mujoco.MjModel, qpos: np.ndarray) -> mujoco.MjData:
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    data.ctrl[:] = model.key_ctrl[0]
    mujoco.mj_forward(model, data)
    return data


def test_contact_pairs_make_the_contacts_the_broad_phase_made(go2_cfg):
    """Same contacts with the same mixed parameters, hence the same accelerations, for a standing robot."""
    changes = {c.name: c for c in candidates(go2_cfg)}
    base, _ = build_model(go2_cfg, changes["baseline"])
    pairs, _ = build_model(go2_cfg, changes["contact_pairs"])
    data = mujoco.MjData(base)
    mujoco.mj_resetDataKeyframe(base, data, 0)
    for _ in range(100):
        mujoco.mj_step(base, data)
    a, b = _settled(base, data.qpos), _settled(pairs, data.qpos)
    assert pairs.npair == 4 + 3 + 8  # feet, base (termination), thighs (penalised)
    assert (pairs.geom_contype | pairs.geom_conaffinity).sum() == 0  # nothing left for the broad phase
    assert a.ncon == b.ncon == 4

    def contacts(d):
        return np.array(sorted((*sorted(map(int, c.geom)), c.dim, *c.friction, *c.solref, *c.solimp)
                               for c in d.contact))
    np.testing.assert_allclose(contacts(b), contacts(a), rtol=1e-12)
    np.testing.assert_allclose(b.qacc, a.qacc, atol=1e-9)


def test_frictionloss_as_damping(go2_cfg):
    changes = {c.name: c for c in candidates(go2_cfg)}
    base, _ = build_model(go2_cfg, changes["baseline"])
    damped, _ = build_model(go2_cfg, changes["frictionloss_as_damping"])
    legs = base.dof_frictionloss > 0
    assert legs.sum() == 12 and damped.dof_frictionloss.sum() == 0
    np.testing.assert_allclose(damped.dof_damping[legs], base.dof_damping[legs] + base.dof_frictionloss[legs] / 2.0)


def test_forward_passes_outside_mj_step_are_not_counted_in_the_profile():
    from benchmarks.physics_cost import STAGES, profile_rows

    timers = {name: (1.0, 10) for _, name, _ in STAGES}
    timers["step"] = (2.0, 10)
    timers["forward"] = (2.09, 11)  # one restart's mj_forward besides the 10 inside mj_step: raw share 1.045
    rows = {r["timer"]: r for r in profile_rows(timers)}
    assert rows["forward"]["share"] == pytest.approx(2.09 * 10 / 11 / 2.0) and rows["forward"]["share"] < 1
    assert rows["advance"]["share"] == pytest.approx(0.5)  # mj_step only: not scaled
    assert rows["step"]["share"] == 1.0 and rows["step"]["us_per_step"] == pytest.approx(2e5)


def test_sensor_changes_drop_exactly_the_rough_terrain_sensors():
    from config import load_config

    cfg = load_config("go2_rough")
    changes = {c.name: c for c in candidates(cfg)}
    base, _ = build_model(cfg, changes["baseline"])
    names = {base.sensor(i).name for i in range(base.nsensor)}
    no_force, _ = build_model(cfg, changes["no_foot_force_pos"])
    no_touch, _ = build_model(cfg, changes["no_penalized_touch"])
    assert names - {no_force.sensor(i).name for i in range(no_force.nsensor)} == \
        {f"{f}_{kind}" for f in cfg.asset.foot_bodies for kind in ("pos", "force")}
    assert names - {no_touch.sensor(i).name for i in range(no_touch.nsensor)} == \
        {f"{b}_touch" for b in cfg.asset.penalized_bodies}
    unpenalised = load_config("go2", ["asset.penalized_bodies=[]"])
    assert "no_penalized_touch" not in {c.name for c in candidates(unpenalised)}
