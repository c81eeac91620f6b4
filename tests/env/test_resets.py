"""Resets are batched end to end: one call per stage for all the envs being reset, with the result of resetting
them one at a time, and of MuJoCo's own keyframe reset."""

from collections import Counter

import mujoco
import numpy as np
import pytest
import torch

from env.gym_env_wrapper import make_env
from env.sim import load_backend
from env.sim.scene import load_mj_model

# Model fields the randomiser writes, and what mj_setConst derives from masses and armature.
RANDOMISED = ["geom_friction", "geom_solref", "geom_solimp", "body_mass", "body_inertia", "body_ipos",
              "actuator_gainprm", "actuator_biasprm", "actuator_forcerange", "dof_frictionloss", "dof_damping",
              "dof_armature"]
DERIVED = ["body_subtreemass", "body_invweight0", "dof_invweight0"]


def stepped_backend(cfg, n: int = 4):
    """A backend whose sims have run off the home pose: clocks, warm-starts and actuator state are not fresh."""
    model = load_mj_model(cfg)
    sim = load_backend("mujoco", model, n, 2)
    sim.ctrl.add_(0.2)
    sim.step(9)
    return model, sim


def start_states(model, n: int):
    rng = np.random.default_rng(0)
    qpos = np.repeat(model.key_qpos[0][None], n, axis=0)
    qpos[:, 7:] += rng.uniform(-0.1, 0.1, (n, model.nq - 7))
    qvel = rng.uniform(-0.3, 0.3, (n, model.nv))
    return torch.tensor(qpos), torch.tensor(qvel), torch.tensor(qpos[:, 7:])


def assert_same_sims(a, b):
    assert np.array_equal(a.batch.state, b.batch.state)
    assert torch.equal(a.sensordata, b.sensordata) and torch.equal(a.actuator_force, b.actuator_force)
    a.step(6)
    b.step(6)
    assert torch.equal(a.qpos, b.qpos) and torch.equal(a.sensordata, b.sensordata)


def test_a_reset_leaves_the_sims_as_mujocos_keyframe_reset_would(qmini_cfg):
    model, ours = stepped_backend(qmini_cfg)
    _, theirs = stepped_backend(qmini_cfg)
    ids = torch.tensor([1, 2])
    qpos, qvel, ctrl = start_states(model, 2)
    ours.reset(ids, qpos, qvel, ctrl)
    # Batch.reset to the home keyframe, then the same state, clock and forward pass
    rows = ids.numpy()
    theirs.batch.reset(rows, keyframe=model.key("home").id, stage=mujoco.mjtStage.mjSTAGE_NONE)
    theirs.qpos[ids], theirs.qvel[ids], theirs.ctrl[ids] = qpos, qvel, ctrl
    theirs.batch.bind("time")[rows] = ours.batch.bind("time")[rows]
    theirs.batch.forward(rows)
    assert ours.batch.bind("time")[1] < ours.batch.bind("time")[0]  # the clocks of the reset sims restarted
    assert_same_sims(ours, theirs)


def test_resetting_sims_together_equals_resetting_them_one_at_a_time(qmini_cfg):
    model, together = stepped_backend(qmini_cfg)
    _, apart = stepped_backend(qmini_cfg)
    qpos, qvel, ctrl = start_states(model, 2)
    together.reset(torch.tensor([0, 3]), qpos, qvel, ctrl)
    apart.reset(torch.tensor([0]), qpos[:1], qvel[:1], ctrl[:1])
    apart.reset(torch.tensor([3]), qpos[1:], qvel[1:], ctrl[1:])
    assert_same_sims(together, apart)


def per_env_fields(env) -> dict[str, np.ndarray]:
    batch = env.robot.sim.batch
    return {name: np.array(batch.expanded(name)) for name in RANDOMISED + DERIVED}


def test_parameters_applied_together_equal_parameters_applied_one_env_at_a_time(qmini_cfg):
    """The walking config randomises everything, masses and armature included (so set_const runs per reset)."""
    together, apart = make_env(qmini_cfg), make_env(qmini_cfg)
    dr_together, dr_apart = together.robot.domain_rand, apart.robot.domain_rand
    dr_apart.table.copy_(dr_together.table)
    dr_apart.apply(torch.arange(8))
    assert all(np.array_equal(a, b) for a, b in zip(per_env_fields(together).values(), per_env_fields(apart).values()))
    before = per_env_fields(together)
    ids = torch.tensor([1, 2, 5])
    dr_together.randomize(ids)
    dr_apart.table.copy_(dr_together.table)
    for i in ids:
        dr_apart.apply(i.view(1))
    after, one_by_one = per_env_fields(together), per_env_fields(apart)
    others = [0, 3, 4, 6, 7]
    for name in RANDOMISED + DERIVED:
        assert np.array_equal(after[name], one_by_one[name]), name
        assert np.array_equal(after[name][others], before[name][others]), name  # the other envs keep theirs
    for name in ["body_mass", "dof_damping"] + DERIVED:  # and the reset envs' change, down to what set_const derives
        assert all(not np.array_equal(after[name][i], before[name][i]) for i in ids.tolist()), name


def count_batch_calls(monkeypatch, batch) -> Counter:
    """Calls into the batch's C++ thread pool, by method name."""
    calls = Counter()

    def counted(name: str, inner):
        def call(*args, **kwargs):
            calls[name] += 1
            return inner(*args, **kwargs)
        return call

    for name in ("reset", "forward", "set_const", "step"):
        monkeypatch.setattr(batch, name, counted(name, getattr(batch, name)))
    return calls


@pytest.mark.parametrize("masses", [True, False])
def test_a_reset_is_one_forward_pass_and_one_commit_whatever_the_number_of_envs(qmini_cfg, monkeypatch, masses):
    if not masses:  # nothing set_const derives from is randomised: no set_const at all
        for switch in ["randomize_link_mass", "randomize_base_mass", "randomize_com", "randomize_armature"]:
            setattr(qmini_cfg.domain_rand, switch, False)
    env = make_env(qmini_cfg)
    calls = count_batch_calls(monkeypatch, env.robot.sim.batch)
    for ids in ([3], [0, 2, 5, 7], list(range(8))):
        calls.clear()
        env.robot.reset_idx(torch.tensor(ids))
        assert calls == (Counter(forward=1, set_const=1) if masses else Counter(forward=1)), ids


def test_initial_states_are_drawn_per_env_within_the_configured_noise(qmini_cfg):
    qmini_cfg.env.num_envs = 64
    init = qmini_cfg.init_state
    robot = make_env(qmini_cfg).robot  # built with every env reset
    qpos, qvel = robot.sim.qpos.float(), robot.sim.qvel.float()
    assert torch.allclose(qpos[:, :3], torch.tensor(init.pos).expand(64, 3))  # a plane: the nominal spawn
    offsets = qpos[:, robot.qpos_idx] - robot.default_dof_pos
    assert offsets.abs().max() <= init.joint_pos_noise + 1e-6 and offsets.std() > init.joint_pos_noise / 4
    assert torch.allclose(qpos[:, 3:7].norm(dim=1), torch.ones(64))
    yaw = 2 * torch.atan2(qpos[:, 6], qpos[:, 3])  # init.rot is upright: a turn about z only
    assert torch.allclose(qpos[:, 4:6], torch.zeros(64, 2))
    assert yaw.abs().max() <= init.yaw_noise + 1e-5 and yaw.std() > 1
    base = qvel[:, :6] - torch.tensor(init.lin_vel + init.ang_vel)
    assert base.abs().max() <= init.base_vel_noise + 1e-6 and base.std() > init.base_vel_noise / 4
    assert torch.equal(qvel[:, robot.qvel_idx], torch.zeros(64, robot.num_dof))  # qmini: no joint velocity noise
    # the env's state is the new episodes' (refreshed after the reset), targets and clocks start there too
    assert torch.equal(robot.dof_pos, qpos[:, robot.qpos_idx]) and (robot.episode_length_buf == 0).all()
    assert torch.equal(robot.target_history[:, 0], robot.dof_pos)
