"""control.held_joints_rigid: held joints fixed at their default angles in the training scene (env/sim/rigid_joints.py)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

from config import load_config
from env.gym_env_wrapper import make_env
from env.sim.rigid_joints import make_joints_rigid
from env.sim.scene import actuated_joint_names, load_mj_model

HELD = ["hip_yaw_l", "hip_yaw_r"]  # a mirror-closed pair of Qmini's joints


def home_data(model: mujoco.MjModel) -> mujoco.MjData:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    return data


@pytest.mark.parametrize("config, extra", [("g1", []), ("qmini", [f"control.held_joints={HELD}"])])
def test_rigid_held_joints_leave_no_joint_and_keep_every_link_where_the_pd_holds_it(config, extra):
    cfg = load_config(config, [*extra, "control.held_joints_rigid=true"])
    rigid, built = load_mj_model(cfg), load_mj_model(cfg, rigid_held=False)
    held = list(cfg.control.held_joints)
    assert rigid.nv == built.nv - len(held) and rigid.nu == built.nu - len(held)
    assert actuated_joint_names(rigid) == actuated_joint_names(built)[:rigid.nu]  # the policy's joints, same order
    assert not {rigid.joint(j).name for j in range(rigid.njnt)} & set(held)
    a, b = home_data(rigid), home_data(built)
    assert rigid.nbody == built.nbody and np.allclose(rigid.body_mass, built.body_mass)
    for body in range(built.nbody):  # the euler frames of the G1's arms included
        other = rigid.body(built.body(body).name).id
        assert np.allclose(a.xpos[other], b.xpos[body], atol=1e-9), built.body(body).name
        assert np.allclose(a.xmat[other], b.xmat[body], atol=1e-9), built.body(body).name
    assert np.allclose(a.subtree_com[1], b.subtree_com[1], atol=1e-9)


def test_the_env_drives_the_policy_joints_and_nothing_holds_the_rigid_ones():
    cfg = load_config("qmini", ["env.num_envs=4", "sim.nthread=1", f"control.held_joints={HELD}",
                                "control.held_joints_rigid=true"])
    env = make_env(cfg, "cpu")
    robot = env.robot
    assert env.num_actions == 8 and robot.held_joint_names == [] and robot.model.nu == 8
    assert not set(HELD) & set(robot.dof_names) and dict(env.task.obs_layout)["dof_pos"] == 8
    env.reset()
    for _ in range(5):
        obs, *_ = env.step(torch.randn(4, 8))
    assert torch.isfinite(obs).all()


def test_a_joint_that_cannot_be_made_rigid_is_one_line():
    spec = mujoco.MjSpec.from_string("""<mujoco><worldbody><body name="b"><freejoint/>
        <body name="c"><joint name="h1" axis="1 0 0"/><joint name="h2" axis="0 1 0"/><geom size="0.1"/></body>
        <body name="d" pos="1 0 0"><joint name="s" type="slide"/><geom size="0.1"/></body>
        <geom size="0.1"/></body></worldbody></mujoco>""")
    compiled = spec.compile()
    with pytest.raises(ValueError, match="cannot make h1 rigid: its body c has 2 joints"):
        make_joints_rigid(spec, compiled, {"h1": 0.0})
    with pytest.raises(ValueError, match="cannot make s rigid: only hinge joints can be"):
        make_joints_rigid(spec, compiled, {"s": 0.0})


def test_a_rigid_joint_turns_its_body_about_the_joint_anchor():
    xml = """<mujoco><worldbody><body name="b" pos="0 0 1"><freejoint/><geom size="0.1"/>
        <body name="c" pos="0.2 0 0" euler="0 0 0.3"><joint name="h" axis="0 1 0" pos="0.1 0 0"/>
        <geom size="0.05" pos="0.3 0 0"/></body></body></worldbody></mujoco>"""
    jointed = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(jointed)
    data.qpos[7] = 0.7
    mujoco.mj_forward(jointed, data)
    spec = mujoco.MjSpec.from_string(xml)
    make_joints_rigid(spec, spec.compile(), {"h": 0.7})
    rigid = spec.compile()
    fixed = mujoco.MjData(rigid)
    mujoco.mj_forward(rigid, fixed)
    assert rigid.njnt == 1
    assert np.allclose(fixed.xpos[2], data.xpos[2]) and np.allclose(fixed.xmat[2], data.xmat[2])
    assert np.allclose(fixed.geom_xpos[1], data.geom_xpos[1])
