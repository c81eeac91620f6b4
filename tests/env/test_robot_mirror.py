"""A robot's left-right mirror (env/robot_mirror.py): twins and signs derived from the robot, declared where not."""

import pytest
import torch

from config import load_config
from env.robot_mirror import robot_mirror
from env.sim.scene import load_mj_model
from test_robot_symmetry import QUAD_FL, edited

QUAD_SIGNS = {"hip": -1.0, "thigh": 1.0, "calf": 1.0}  # abduction mirrors with opposite angles, pitch joints alike


def mirror_of(config: str, overrides: list[str] = ()):
    cfg = load_config(config, list(overrides))
    return robot_mirror(load_mj_model(cfg), cfg)


def twins(mirror) -> dict[str, tuple[str, float]]:
    names = mirror.joint_names
    return {n: (names[int(i)], float(s)) for n, i, s in zip(names, mirror.joints.index, mirror.joints.sign)}


@pytest.mark.parametrize("config", ["go2", "example_quad"])
def test_quadruped_legs_mirror_left_right_with_the_abduction_negated(config):
    mirror = mirror_of(config)
    for name, (twin, sign) in twins(mirror).items():
        side, joint = name.split("_", 1)
        assert twin == {"FL": "FR", "FR": "FL", "RL": "RR", "RR": "RL"}[side] + "_" + joint
        assert sign == QUAD_SIGNS[joint.split("_")[0]], name
    assert mirror.feet == [1, 0, 3, 2]  # FL FR RL RR


def test_every_qmini_joint_mirrors_with_the_opposite_angle():
    mirror = mirror_of("qmini")
    assert twins(mirror) == {n: (n[:-1] + {"l": "r", "r": "l"}[n[-1]], -1.0) for n in mirror.joint_names}
    assert mirror.feet == [1, 0]


@pytest.mark.parametrize("config", ["go2", "qmini", "example_quad"])
def test_mirroring_joints_twice_is_the_identity(config):
    joints = mirror_of(config).joints
    x = torch.randn(5, len(joints))
    assert not torch.equal(joints.apply(x), x)
    assert torch.equal(joints.apply(joints.apply(x)), x)


def test_links_twin_through_their_joints_and_massive_feet_through_their_place():
    cfg = load_config("example_quad")  # its feet are massive links without joints
    model = load_mj_model(cfg)
    bodies = robot_mirror(model, cfg).bodies
    twin = {model.body(b).name: model.body(t).name for b, t in enumerate(bodies)}
    assert twin["trunk"] == "trunk" and twin["FL_thigh"] == "FR_thigh" and twin["RR_foot"] == "RL_foot"


def test_a_declared_pair_overrides_the_derived_sign():
    mirror = mirror_of("go2", ['asset.mirror_joints={"FL_hip_joint": "FR_hip_joint"}'])
    assert twins(mirror)["FL_hip_joint"] == ("FR_hip_joint", 1.0)
    assert twins(mirror)["FR_hip_joint"] == ("FL_hip_joint", 1.0)  # the twin's entry follows
    assert twins(mirror)["RL_hip_joint"] == ("RR_hip_joint", -1.0)


def test_a_declared_sign_that_contradicts_the_default_pose_is_refused():
    with pytest.raises(ValueError, match=r"^robot mirror: init_state.default_joint_angles is not mirror symmetric: "
                                         r"FL_calf_joint = -1.8 but its twin FR_calf_joint = -1.8 \(the mirror image "
                                         r"is 1.8\)"):
        mirror_of("go2", ['asset.mirror_joints={"FL_calf_joint": "-FR_calf_joint"}'])


@pytest.mark.parametrize("declared, message", [
    ('{"FL_calf_joint": "-FR_knee"}', "asset.mirror_joints names 'FR_knee', which is not an actuated joint"),
    ('{"FL_calf_joint": "FR_calf_joint", "FR_calf_joint": "-FL_calf_joint"}',
     "asset.mirror_joints contradicts itself: FR_calf_joint mirrors to -FL_calf_joint in one entry and to "
     "FL_calf_joint in another"),
])
def test_a_declared_pair_that_cannot_be_is_one_line(declared, message):
    with pytest.raises(ValueError) as err:
        mirror_of("go2", [f"asset.mirror_joints={declared}"])
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_an_asymmetric_default_pose_is_refused_naming_the_joint():
    with pytest.raises(ValueError, match=r"not mirror symmetric: FL_hip_joint = 0.1 but its twin FR_hip_joint = 0 "):
        mirror_of("go2", ["init_state.default_joint_angles.FL_hip_joint=0.1"])


def test_a_joint_without_twin_must_be_declared(tmp_path):
    """Right hips moved 2.5 cm outwards: no twin legs, and the hips' names point at joints elsewhere."""
    fr, rr = QUAD_FL.replace("0.075", "-0.075"), QUAD_FL.replace("0.12 0.075", "-0.12 -0.075")
    moved = edited(tmp_path, "example_quad", (fr, fr.replace("-0.075", "-0.1")), (rr, rr.replace("-0.075", "-0.1")))
    with pytest.raises(ValueError) as err:
        mirror_of("example_quad", moved)
    assert str(err.value).startswith("robot mirror: joint 'FL_hip_joint' has no left-right twin")
    assert "declare it in asset.mirror_joints" in str(err.value)
    declared = moved + ['asset.mirror_joints={"FL_hip_joint": "-FR_hip_joint", "FL_thigh_joint": "FR_thigh_joint", '
                        '"FL_calf_joint": "FR_calf_joint", "RL_hip_joint": "-RR_hip_joint", '
                        '"RL_thigh_joint": "RR_thigh_joint", "RL_calf_joint": "RR_calf_joint"}']
    with pytest.raises(ValueError, match="link 'FL_foot' has no left-right twin"):  # the feet sit apart too
        mirror_of("example_quad", declared)
