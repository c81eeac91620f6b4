"""The task's left-right mirror of observations and actions, term by term (env/tasks/observation_mirror.py)."""

import math

import pytest
import torch

from config import load_config
from env.gym_env_wrapper import make_env
from env.tasks.observation_mirror import MirrorParts, gait_clock_mirror, layout_mirror, privileged_mirror, scan_mirror
from env.utils.mirror import SignedPermutation

SMALL_TERRAIN = ["terrain.num_rows=2", "terrain.num_cols=2"]
CONFIGS = {"go2": [], "qmini": [], "example_quad": [], "go2_rough": SMALL_TERRAIN,
           "go2_rough_perceptive": SMALL_TERRAIN + ["terrain.policy_height_scan=true"]}


def env_of(case: str):
    return make_env(load_config(case.replace("_perceptive", ""), ["env.num_envs=4", "sim.nthread=1"] + CONFIGS[case]))


@pytest.mark.parametrize("case", CONFIGS)
def test_mirroring_observations_and_actions_twice_is_the_identity(case):
    env = env_of(case)
    maps = env.mirror_maps()
    obs, critic_obs = env.reset()
    obs, critic_obs, *_ = env.step(torch.randn(4, env.num_actions))
    for mirror, x in [(maps.obs, obs), (maps.critic_obs, critic_obs), (maps.actions, torch.randn(4, env.num_actions))]:
        assert len(mirror) == x.shape[1]
        assert not torch.equal(mirror.apply(x), x)
        assert torch.equal(mirror.apply(mirror.apply(x)), x)


def test_each_history_frame_mirrors_as_the_critic_sees_the_newest_frame():
    env = env_of("qmini")  # 3 frames of history, gait clock
    maps, frame, history = env.mirror_maps(), env.task.frame_size, env.task.history_length
    index, sign = maps.obs.index.view(history, frame), maps.obs.sign.view(history, frame)
    assert torch.equal(index - index[:1], torch.arange(history)[:, None] * frame + torch.zeros_like(index))
    assert torch.equal(sign, sign[:1].expand(history, frame))
    assert torch.equal(index[0], maps.critic_obs.index[:frame]) and torch.equal(sign[0], maps.critic_obs.sign[:frame])


def terms(layout, x):
    out, start = {}, 0
    for name, size in layout:
        out[name] = x[start:start + size]
        start += size
    return out


def test_base_vectors_commands_and_feet_mirror_as_physics_says():
    env = env_of("go2")
    x = torch.arange(1.0, env.num_critic_obs + 1)
    mirrored = terms(env.task.critic_obs_layout, env.mirror_maps().critic_obs.apply(x))
    original = terms(env.task.critic_obs_layout, x)
    flip = {"base_lin_vel": [1, -1, 1], "projected_gravity": [1, -1, 1], "base_ang_vel": [-1, 1, -1],
            "commands": [1, -1, -1]}
    for name, signs in flip.items():
        assert mirrored[name].tolist() == (original[name] * torch.tensor(signs)).tolist(), name
    assert mirrored["foot_forces"].tolist() == original["foot_forces"][[1, 0, 3, 2]].tolist()  # FL FR RL RR
    assert mirrored["dof_pos"][3:6].tolist() == (original["dof_pos"][0:3] * torch.tensor([-1, 1, 1])).tolist()
    names = env.robot.domain_rand.privileged_names()
    assert mirrored["privileged"][names.index("com_y")] == -original["privileged"][names.index("com_y")]
    links = env.robot.domain_rand.link_ids.tolist()
    fl, fr = (names.index(f"link_mass_scale_{links.index(env.robot.model.body(b).id) + 1}") for b in ("FL_hip", "FR_hip"))
    assert mirrored["privileged"][fl] == original["privileged"][fr]


def test_the_gait_clock_mirror_is_the_clock_half_a_cycle_on():
    """Qmini's feet alternate: the mirror image of the schedule at phase p is the schedule at p + 0.5."""
    mirror = gait_clock_mirror(torch.tensor([0.0, 0.5]), [1, 0])
    phase, frequency = 0.3, 2.0
    clock = lambda p: torch.tensor([math.sin(2 * math.pi * p), math.cos(2 * math.pi * p), frequency])  # noqa: E731
    assert torch.allclose(mirror.apply(clock(phase)), clock(phase + 0.5), atol=1e-6)
    trot = gait_clock_mirror(torch.tensor([0.0, 0.5, 0.5, 0.0]), [1, 0, 3, 2])  # FL FR RL RR
    assert torch.equal(trot.sign, torch.tensor([-1.0, -1, 1]))
    assert torch.equal(gait_clock_mirror(torch.tensor([0.0, 0.0]), [1, 0]).sign, torch.ones(3))  # a hop: no shift
    with pytest.raises(ValueError, match="the gait clock cannot be mirrored"):
        gait_clock_mirror(torch.tensor([0.0, 0.25, 0.5, 0.75]), [1, 0, 3, 2])


def test_the_height_scan_takes_each_point_from_its_mirror_point():
    env = env_of("go2_rough")
    points = env.robot.ground.scan  # (P, 2) in the base's yaw frame, 17 x 11
    mirror = scan_mirror(points)
    assert torch.allclose(points[mirror.index], points * torch.tensor([1.0, -1.0]), atol=1e-6)
    assert (mirror.index != torch.arange(len(points))).sum() == 17 * 10  # the centre line (y = 0) stays
    with pytest.raises(ValueError, match="height scan pattern is not left-right symmetric"):
        scan_mirror(points + torch.tensor([0.0, 0.03]))


def test_a_term_or_column_without_a_mirror_rule_is_an_error_naming_it():
    parts = MirrorParts(SignedPermutation.identity(2), SignedPermutation.identity(2), SignedPermutation.identity(1))
    with pytest.raises(ValueError, match="observation term 'foot_heights' has no left-right mirror rule"):
        layout_mirror([("base_lin_vel", 3), ("foot_heights", 2)], parts)
    with pytest.raises(ValueError, match="observation term 'height_scan' has 187 entries but its mirror rule covers 0"):
        layout_mirror([("height_scan", 187)], parts)
    with pytest.raises(ValueError, match="privileged observation column 'motor_temperature' has no left-right"):
        privileged_mirror(["friction", "motor_temperature"], [], [])
