import numpy as np
import pytest
import torch

from env.sim import load_backend
from env.sim.scene import actuated_joint_names, load_mj_model
from env.sim.mujoco_backend import MujocoBackend


def make(cfg, n=4):
    model = load_mj_model(cfg)
    return model, load_backend("mujoco", model, n, 2)


def test_state_views_are_live_and_copy_free(qmini_cfg):
    model, sim = make(qmini_cfg)
    assert isinstance(sim, MujocoBackend)
    # writing the torch tensor writes the batch's own state
    sim.qpos[2, 0] = 1.25
    assert sim.batch.bind("qpos")[2, 0] == 1.25
    sim.step(2)
    before = sim.sensordata.clone()
    sim.step(20)
    assert not torch.equal(before, sim.sensordata), "sensor view must follow the batch without re-binding"


def test_step_runs_decimation_substeps(qmini_cfg):
    model, sim = make(qmini_cfg)
    t0 = sim.batch.bind("time").copy()
    sim.step(7)
    assert np.allclose(sim.batch.bind("time") - t0, 7 * model.opt.timestep)


@pytest.mark.parametrize("steps_before", [0, 2])
def test_diverged_sims_are_detected_and_others_untouched(qmini_cfg, steps_before):
    model, sim = make(qmini_cfg)
    if steps_before:
        sim.step(steps_before)
    sim.qvel[1, 0] = float("nan")
    sim.qpos[3, 2] = float("inf")
    diverged = sim.step(3)
    assert diverged.dtype == torch.bool and diverged.nonzero().flatten().tolist() == [1, 3]
    assert sim.diverged_total == 2
    assert torch.isfinite(sim.qpos[[0, 2]]).all()
    # a proper reset makes them valid again and they step normally
    ids = torch.tensor([1, 3])
    key_qpos = torch.tensor(model.key_qpos[0]).repeat(2, 1)
    sim.reset(ids, key_qpos, torch.zeros(2, model.nv), key_qpos[:, 7:])
    assert not sim.step(3).any()
    assert torch.isfinite(sim.qpos).all()


def test_reset_sets_state_and_recomputes_sensors(qmini_cfg):
    model, sim = make(qmini_cfg)
    sim.step(3)
    ids = torch.tensor([0])
    qpos = torch.tensor(model.key_qpos[0]).unsqueeze(0).clone()
    qpos[0, 2] = 0.3  # pushed into the floor: the feet must report contact right after reset
    sim.reset(ids, qpos, torch.zeros(1, model.nv), qpos[:, 7:])
    assert sim.qpos[0, 2] == 0.3
    feet = [sim.sensor_slice(n).start for n in ["ankle_pitch_l_touch", "ankle_pitch_r_touch"]]
    assert (sim.sensordata[0, feet] > 0).all()
    assert sim.batch.bind("time")[0] < sim.batch.bind("time")[1]  # clock restarted


def test_expand_gives_per_env_model_fields(qmini_cfg):
    model, sim = make(qmini_cfg)
    friction = sim.expand("geom_friction")
    assert friction.shape == (4, model.ngeom, 3)
    friction[1, :, 0] = 0.1
    assert sim.batch.expand("geom_friction")[1, 0, 0] == 0.1
    assert sim.batch.expand("geom_friction")[0, 0, 0] != 0.1


def test_unknown_sensor_lists_sensors(qmini_cfg):
    _, sim = make(qmini_cfg)
    try:
        sim.sensor_slice("nope")
    except ValueError as err:
        assert "ankle_pitch_l_touch" in str(err)
    else:
        raise AssertionError("expected ValueError")


def test_pd_gains_from_config_reach_the_actuators(qmini_cfg):
    qmini_cfg.control.stiffness = {**qmini_cfg.control.stiffness, "knee": 12.0}
    qmini_cfg.control.damping = {**qmini_cfg.control.damping, "knee": 0.7}
    qmini_cfg.control.torque_limits = {**qmini_cfg.control.torque_limits, "knee": 7.5}
    model = load_mj_model(qmini_cfg)
    names = actuated_joint_names(model)
    knee = names.index("knee_pitch_l")
    assert model.actuator_gainprm[knee, 0] == 12.0
    assert tuple(model.actuator_biasprm[knee, 1:3]) == (-12.0, -0.7)
    assert tuple(model.actuator_forcerange[knee]) == (-7.5, 7.5)
    hip = names.index("hip_yaw_l")
    assert model.actuator_gainprm[hip, 0] == 55.0 and tuple(model.actuator_forcerange[hip]) == (-20.0, 20.0)


def test_a_joint_without_gains_is_one_clear_error(qmini_cfg):
    qmini_cfg.control.stiffness = {k: v for k, v in qmini_cfg.control.stiffness.items() if k != "ankle"}
    with pytest.raises(ValueError, match="joint 'ankle_pitch_l' has no PD gain: add a key matching it to control.stiffness"):
        load_mj_model(qmini_cfg)


def test_unknown_backend_lists_available(qmini_cfg):
    model = load_mj_model(qmini_cfg)
    try:
        load_backend("isaac", model, 2)
    except ValueError as err:
        assert "mujoco" in str(err)
    else:
        raise AssertionError("expected ValueError")


def test_ranks_of_one_machine_share_its_cores(monkeypatch):
    from env.sim.mujoco_backend import available_cores

    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    cores = available_cores()
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert available_cores() == max(1, cores // 2)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(cores * 4))
    assert available_cores() == 1
