"""Physical consistency of the mirror: a state and its mirror image, driven by mirrored actions, stay mirror images.

Two envs without randomisation, noise or pushes: after settling, env 1 is set to the mirror image of env 0's
state (base y -> -y, quaternion (w, x, y, z) -> (w, -x, y, -z), linear velocity y and angular velocity x, z
negated, joints through the joint mirror), gets the mirrored commands (vx, -vy, -yaw rate) and the gait phase
half a cycle on, and then the mirror image of env 0's random actions for 50 steps. After every step the
mirror of env 0's policy and critic observations must be env 1's. The state is mirrored from physics, not
through the observation rules, so a wrong rule shows as well as a wrong joint sign.

The committed models are not exactly mirror symmetric: Go2's base inertia has off-diagonal products
(Ixy 1.2e-4, Iyz -3.1e-5 kg m^2), Qmini's base centre of mass sits 0.056 mm left with products of 6e-6 and
9e-6 kg m^2; every leg link is exact. With the links' inertials made symmetric (`symmetrized`, in memory),
MuJoCo keeps Go2 a mirror image to float rounding on the ground, Qmini in the air. On the ground Qmini's
mesh soles collide as mirror images only to float rounding, which every footfall amplifies (0.8 of its
weight apart in a foot force within 35 steps, symmetric inertials or not), and it falls within ~40 steps of
random actions; so Qmini is checked in the air, falling from 6 m (no contact in 60 steps).
"""

import copy

import mujoco
import numpy as np
import pytest
import torch

import env.legged_robot as legged_robot
from config import load_config
from env.gym_env_wrapper import make_env
from env.robot_check import home_data
from env.robot_mirror import MIRROR_XZ, robot_mirror
from env.tasks import observation_mirror
from env.utils.math import quat_mul

PLACES = {"go2": [], "qmini": ["init_state.pos=[0.0, 0.0, 6.0]", "asset.terminate_tilt=3.2"]}  # Qmini in the air
# Observation units. Symmetric inertials: float rounding. Committed: Go2's base inertia moves the two apart
# by up to 0.12 in 50 steps (a foot force, in robot weights; 0.06 in a joint velocity), Qmini's by 4e-4.
TOLERANCE = {("go2", "symmetrized"): 1e-3, ("qmini", "symmetrized"): 1e-3,
             ("go2", "committed"): 0.25, ("qmini", "committed"): 5e-3}
QUIET = ["env.num_envs=2", "sim.nthread=1", "noise.add_noise=false", "domain_rand.push_robots=false",
         "domain_rand.max_action_latency=0", "init_state.joint_pos_noise=0.0", "init_state.base_vel_noise=0.0",
         "commands.gait_frequency=[2.0, 2.0]"]


def symmetrized(model: mujoco.MjModel, cfg) -> mujoco.MjModel:
    """A copy of `model` whose links' mass, centre of mass and inertia are the mean of their own and their twin's
    mirror image (base frame, default pose)."""
    data, twins = home_data(model), robot_mirror(model, cfg).bodies
    base = model.body(cfg.asset.base_body).id
    rot, origin = data.xmat[base].reshape(3, 3), data.xpos[base]

    def inertial(b):
        r = rot.T @ data.ximat[b].reshape(3, 3)
        return (data.xipos[b] - origin) @ rot, r @ np.diag(model.body_inertia[b]) @ r.T

    new = copy.copy(model)
    for b in range(1, model.nbody):
        (com, inertia), (twin_com, twin_inertia) = inertial(b), inertial(twins[b])
        to_body = data.xmat[b].reshape(3, 3).T @ rot
        new.body_mass[b] = 0.5 * (model.body_mass[b] + model.body_mass[twins[b]])
        new.body_ipos[b] = to_body @ (0.5 * (com + MIRROR_XZ @ twin_com) - (data.xpos[b] - origin) @ rot)
        values, axes = np.linalg.eigh(to_body @ (0.5 * (inertia + MIRROR_XZ @ twin_inertia @ MIRROR_XZ)) @ to_body.T)
        axes[:, 0] *= np.sign(np.linalg.det(axes))  # a rotation
        mujoco.mju_mat2Quat(new.body_iquat[b], axes.flatten())
        new.body_inertia[b] = values
    mujoco.mj_setConst(new, mujoco.MjData(new))
    return new


def quiet_env(config: str, model: str, monkeypatch):
    if model == "symmetrized":
        load = legged_robot.load_mj_model
        monkeypatch.setattr(legged_robot, "load_mj_model", lambda cfg, grid=None: symmetrized(load(cfg, grid), cfg))
    switches = [f"domain_rand.{k}=false" for k in load_config(config).domain_rand.fields() if k.startswith("randomize_")]
    return make_env(load_config(config, QUIET + switches + PLACES[config]))


def mirror_state(qpos: torch.Tensor, qvel: torch.Tensor, robot, joints) -> tuple[torch.Tensor, torch.Tensor]:
    """The mirror image of one robot's (nq,) qpos and (nv,) qvel: free base, then joints through `joints`."""
    qpos, qvel = qpos.clone(), qvel.clone()
    qpos[[1, 4, 6]] *= -1  # base y; quaternion x and z
    qvel[[1, 3, 5]] *= -1  # linear velocity y (world); angular velocity x and z (an axial vector)
    qpos[robot.qpos_idx] = joints.apply(qpos[robot.qpos_idx])
    qvel[robot.qvel_idx] = joints.apply(qvel[robot.qvel_idx])
    return qpos, qvel


def mirror_error(env, joints, seed: int = 0, steps: int = 50, settle: int = 10, scale: float = 0.3) -> tuple[float, int]:
    """The largest |mirror(obs_0) - obs_1| over policy and critic observations, and the steps run before any reset."""
    torch.manual_seed(seed)
    maps, robot, task, sim = env.mirror_maps(), env.robot, env.task, env.robot.sim
    env.reset()
    task.hold_commands(torch.zeros(3))
    for _ in range(settle):
        env.step(torch.zeros(2, env.num_actions))
    qpos, qvel = sim.qpos[0].to(torch.float32, copy=True), sim.qvel[0].to(torch.float32, copy=True)
    qpos[3:7] = _yawed(qpos[3:7], float(torch.empty(()).uniform_(-1.0, 1.0)))  # any heading: turn the robot about z
    twin = mirror_state(qpos, qvel, robot, joints)
    ids = torch.tensor([0, 1])
    sim.reset(ids, torch.stack([qpos, twin[0]]), torch.stack([qvel, twin[1]]),
              torch.stack([qpos, twin[0]])[:, robot.qpos_idx])
    robot.refresh_state()
    command = torch.tensor([0.5, 0.3, 0.4])
    task.hold_commands(torch.stack([command, command * torch.tensor([1.0, -1.0, -1.0])]))
    task.reset_idx(ids)
    if task.gait is not None:
        task.gait.phase[:] = torch.tensor([0.1, 0.6])  # the twin feet swap schedules: half a cycle on
        task.obs_history[:] = task._policy_frame().unsqueeze(1)
    worst = 0.0
    for step in range(steps):
        actions = scale * torch.randn(env.num_actions)
        obs, critic_obs, _, done, _, _ = env.step(torch.stack([actions, joints.apply(actions)]))
        if done.any():
            return worst, step
        worst = max(worst, float((maps.obs.apply(obs[0]) - obs[1]).abs().max()),
                    float((maps.critic_obs.apply(critic_obs[0]) - critic_obs[1]).abs().max()))
    return worst, steps


def _yawed(quat: torch.Tensor, yaw: float) -> torch.Tensor:
    """The orientation `quat` (w, x, y, z) turned by `yaw` about the world z axis."""
    turn = torch.tensor([[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]], dtype=quat.dtype)
    return quat_mul(turn, quat.unsqueeze(0))[0]


@pytest.mark.parametrize("model", ["symmetrized", "committed"])
@pytest.mark.parametrize("config", ["go2", "qmini"])
def test_a_state_and_its_mirror_image_stay_mirror_images(config, model, monkeypatch):
    env = quiet_env(config, model, monkeypatch)
    worst, steps = mirror_error(env, env.mirror_maps().actions)
    assert steps == 50, f"an env ended its episode after {steps} steps"
    assert worst < TOLERANCE[config, model], f"{config} ({model} model): observations {worst:.4f} apart"


WRONG = {  # config, model, what is made wrong: a joint's sign (and its twin's) or an observation term's rule
    "go2 thigh sign": ("go2", "committed", "joint", 1), "go2 hip sign": ("go2", "committed", "joint", 0),
    "qmini knee sign": ("qmini", "committed", "joint", 3),
    "go2 angular velocity rule": ("go2", "symmetrized", "base_ang_vel", (1, 1, -1)),
    "go2 command rule": ("go2", "symmetrized", "commands", (1, -1, 1)),
    "qmini gait clock rule": ("qmini", "symmetrized", "gait_clock", (1, 1, 1)),
}


@pytest.mark.parametrize("case", WRONG)
def test_one_wrong_sign_breaks_the_mirror_at_once(case, monkeypatch):
    config, model, what, change = WRONG[case]
    if what != "joint":
        monkeypatch.setitem(observation_mirror.TERMS, what, observation_mirror._signs(*change))
    env = quiet_env(config, model, monkeypatch)
    joints = env.mirror_maps().actions
    if what == "joint":
        for i in (change, int(joints.index[change])):
            joints.sign[i] *= -1
    worst, _ = mirror_error(env, joints, steps=5)
    assert worst > 2 * TOLERANCE[config, model], f"{case}: observations only {worst:.4f} apart"
