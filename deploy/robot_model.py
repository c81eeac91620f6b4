"""Build the MuJoCo model a policy runs on: any MJCF of the robot, re-actuated from policy.yaml.

The MJCF's own actuators are removed and one position actuator per exported joint
is added, in joint_names order, so that MuJoCo runs the PD loop of policy.yaml:

    torque = clamp(kp * (target - q) - kd * qdot, -torque_limit, torque_limit)
    (gain kp; bias 0, -kp, -kd; forcerange +-torque_limit; ctrlrange = joint_pos_limits)

which is how the training env drives its robot (position actuators, so the kd term is
integrated implicitly by the implicit/implicitfast integrators). The timestep is
policy.yaml's sim_dt, or the check's own physics step (`physics_step`: any step that
divides the control period, so that "reality" can run finer than training did; the
policy's control period stays policy.yaml's); every other option (integrator, solver,
cone, iterations) is the file's. Keyframes are dropped (they hold the old actuators' ctrl)
after reading the spawn height from one; sensors that read the removed actuators are dropped too.

The robot must have exactly one free joint (its base body). A file without a floor (a
plane in the world body), such as a robot-only MJCF, gets one: friction 1, colliding with
every robot geom that collides with anything.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from deploy.policy_io import DeployError, PolicySpec

SPAWN_CLEARANCE = 0.0015  # m, gap under the lowest geom when the spawn height is computed
FOOT_NAME = re.compile(r"foot|sole|toe", re.IGNORECASE)
SIM_DT_TOLERANCE = 1e-6  # relative: n * sim_dt must equal control_dt this closely
FOOT_TOLERANCE = 0.01  # m, geoms this close to the lowest point at the default pose count as feet (no foot names)
_ACTUATOR_SENSORS = {mujoco.mjtSensor.mjSENS_ACTUATORPOS, mujoco.mjtSensor.mjSENS_ACTUATORVEL,
                     mujoco.mjtSensor.mjSENS_ACTUATORFRC}


@dataclass
class RobotModel:
    """The compiled model and where things are in it."""

    spec: mujoco.MjSpec  # the re-actuated spec; perturb.py edits copies of it
    model: mujoco.MjModel
    path: Path
    joint_names: list[str]
    qpos_idx: np.ndarray  # (nu,) qpos address of each exported joint
    qvel_idx: np.ndarray  # (nu,) qvel address of each exported joint
    free_qpos: int  # qpos address of the free joint (x, y, z, qw, qx, qy, qz)
    free_qvel: int  # qvel address (vx, vy, vz world frame; wx, wy, wz base frame)
    base_body: int
    floor_geoms: list[int]
    robot_geoms: list[int]  # robot geoms that collide with the floor
    foot_geoms: list[int]
    keyframe_height: float | None  # m, base z of the file's keyframe ("home" or the first), if any
    computed_height: float  # m, base z with the lowest geom SPAWN_CLEARANCE above z=0 at the default pose
    sim_dt: float  # s, the physics step of the check (model.opt.timestep)
    substeps: int  # physics steps per control period: control_dt = substeps * sim_dt

    @property
    def spawn_height(self) -> float:
        return self.keyframe_height if self.keyframe_height is not None else self.computed_height

    def geom_name(self, gid: int) -> str:
        return mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, gid) or f"geom{gid}"


def load_spec(path: str | Path) -> mujoco.MjSpec:
    path = Path(path)
    if not path.is_file():
        raise DeployError(f"--model {path}: no such file (the project's own models are assets/<robot>/<robot>.xml)")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except Exception as err:  # noqa: BLE001 - MuJoCo reports parse errors as ValueError or its own types
        raise DeployError(f"cannot load {path}: {' '.join(str(err).split())[:200]}") from None


def _compile(spec: mujoco.MjSpec, path: Path) -> mujoco.MjModel:
    try:
        return spec.compile()
    except Exception as err:  # noqa: BLE001
        raise DeployError(f"cannot compile {path}: {' '.join(str(err).split())[:200]}") from None


def physics_step(policy: PolicySpec, sim_dt: float | None = None) -> tuple[float, int]:
    """The check's physics step (s) and physics steps per control period; None: policy.yaml's sim_dt.

    A step that does not divide policy.yaml's control_dt (to SIM_DT_TOLERANCE) is refused:
    the policy's control period is what it was trained with, whatever the physics step.
    """
    if sim_dt is None:
        return policy.sim_dt, policy.decimation
    control = policy.control_dt
    if not (math.isfinite(sim_dt) and sim_dt > 0):
        raise DeployError(f"--sim-dt must be a positive number of seconds, got {sim_dt:g}")
    n = round(control / sim_dt)
    if n < 1 or abs(n * sim_dt - control) > SIM_DT_TOLERANCE * control:
        fits = [control / k for k in range(1, 101) if abs(round(control / k, 5) - control / k) < 1e-12][:8]
        raise DeployError(f"--sim-dt {sim_dt:g} does not divide the policy's control period {control:g} s "
                          f"(policy.yaml control_dt); use control_dt / n, e.g. {', '.join(f'{v:g}' for v in fits)}")
    return float(sim_dt), int(n)


def reactuate(spec: mujoco.MjSpec, policy: PolicySpec, sim_dt: float | None = None) -> None:
    """Replace the spec's actuators with policy.yaml's PD, one position actuator per exported joint;
    the timestep becomes `sim_dt` (default policy.yaml's)."""
    for act in list(spec.actuators):
        spec.delete(act)
    for sensor in list(spec.sensors):
        if sensor.type in _ACTUATOR_SENSORS:
            spec.delete(sensor)
    for key in list(spec.keys):
        spec.delete(key)
    for i, name in enumerate(policy.joint_names):
        _add_pd(spec, name, float(policy.kp[i]), float(policy.kd[i]), float(policy.torque_limits[i]),
                [float(v) for v in policy.joint_pos_limits[i]])
    held = policy.held
    for i, name in enumerate(held.names):  # after the policy's: ctrl[num_actions:] holds their targets
        _add_pd(spec, name, float(held.kp[i]), float(held.kd[i]), float(held.torque_limits[i]), None)
    spec.option.timestep = physics_step(policy, sim_dt)[0]


def _add_pd(spec: mujoco.MjSpec, joint: str, kp: float, kd: float, limit: float, ctrlrange: list[float] | None) -> None:
    act = spec.add_actuator(name=f"pd_{joint}", target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    act.dyntype = mujoco.mjtDyn.mjDYN_NONE
    act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
    act.gainprm[:3] = [kp, 0.0, 0.0]
    act.biasprm[:3] = [0.0, -kp, -kd]
    if ctrlrange is not None:
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.ctrlrange = ctrlrange
    if np.isfinite(limit):
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-limit, limit]
    else:
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE


def add_floor_if_missing(spec: mujoco.MjSpec) -> None:
    """A plane at z=0 in the world body, unless the file has one."""
    if any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.worldbody.geoms):
        return
    spec.worldbody.add_light(pos=[0, 0, 3], dir=[0, 0, -1], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], contype=1,
                            conaffinity=1, condim=3, friction=[1.0, 0.005, 0.0001], rgba=[0.3, 0.35, 0.4, 1])


def _check_joints(model: mujoco.MjModel, policy: PolicySpec, path: Path) -> np.ndarray:
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in policy.joint_names]
    one_dof = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    bad = [n for n, j in zip(policy.joint_names, ids) if int(model.jnt_type[j]) not in one_dof]
    if bad:
        raise DeployError(f"{path}: joint(s) {', '.join(bad)} are not hinge or slide joints")
    return np.array(ids)


def _free_joint(model: mujoco.MjModel, path: Path) -> int:
    free = [j for j in range(model.njnt) if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE)]
    if len(free) != 1:
        raise DeployError(f"{path} has {len(free)} free joints; the robot's base needs exactly one")
    return free[0]


def _keyframe_qpos(spec: mujoco.MjSpec) -> np.ndarray | None:
    """qpos of the keyframe named "home", else of the first keyframe; None without one."""
    keys = list(spec.keys)
    if not keys:
        return None
    key = next((k for k in keys if k.name == "home"), keys[0])
    qpos = np.array(key.qpos, dtype=np.float64)
    return qpos if len(qpos) else None


def _collides(model: mujoco.MjModel, a: int, b: int) -> bool:
    return bool((model.geom_contype[a] & model.geom_conaffinity[b]) or (model.geom_contype[b] & model.geom_conaffinity[a]))


def default_pose_qpos(model: mujoco.MjModel, qpos_idx: np.ndarray, free_qpos: int, policy: PolicySpec,
                      height: float, yaw: float = 0.0) -> np.ndarray:
    """qpos0 with the base at (0, 0, height) heading `yaw` and the joints at default_joint_pos."""
    qpos = model.qpos0.copy()
    qpos[free_qpos:free_qpos + 3] = [0.0, 0.0, height]
    qpos[free_qpos + 3:free_qpos + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    qpos[qpos_idx] = policy.default_joint_pos
    for name, angle in zip(policy.held.names, policy.held.target):
        qpos[model.jnt_qposadr[model.joint(name).id]] = angle
    return qpos


def build_robot(path: str | Path, policy: PolicySpec, sim_dt: float | None = None) -> RobotModel:
    """Load the MJCF, check it against policy.yaml and re-actuate it, with physics step `sim_dt`
    (default policy.yaml's; see physics_step)."""
    dt, substeps = physics_step(policy, sim_dt)  # a bad step is refused before the file is read
    log = mujoco.MjLogConfig.get()  # MuJoCo's warnings on the console only: no MUJOCO_LOG.TXT in the cwd
    log.logto_file = False
    log.set()
    path = Path(path)
    spec = load_spec(path)
    have = {j.name for j in spec.joints}
    missing = [n for n in policy.joint_names + policy.held.names if n not in have]
    if missing:
        raise DeployError(f"{path} lacks joint(s) {', '.join(missing)} named in policy.yaml's joint_names "
                          "or held_joints")
    key_qpos = _keyframe_qpos(spec)
    reactuate(spec, policy, dt)
    add_floor_if_missing(spec)
    model = _compile(spec, path)
    jids = _check_joints(model, policy, path)
    free = _free_joint(model, path)
    base = int(model.jnt_bodyid[free])
    free_qpos = int(model.jnt_qposadr[free])
    key_height = float(key_qpos[free_qpos + 2]) if key_qpos is not None and len(key_qpos) == model.nq else None
    floor = [g for g in range(model.ngeom) if model.geom_bodyid[g] == 0
             and int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE)]
    robot_geoms = [g for g in range(model.ngeom) if _in_subtree(model, int(model.geom_bodyid[g]), base)
                   and any(_collides(model, g, f) for f in floor)]
    if not robot_geoms:
        raise DeployError(f"{path}: no geom of the robot collides with the floor")
    qpos_idx = model.jnt_qposadr[jids].astype(np.int64)
    gaps, floor_z = _clearances(model, policy, qpos_idx, free_qpos, floor[0], robot_geoms)
    computed = 1.0 - min(gaps.values()) + floor_z + SPAWN_CLEARANCE
    named = [g for g in robot_geoms if FOOT_NAME.search(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or "")]
    feet = named or [g for g, gap in gaps.items() if gap <= min(gaps.values()) + FOOT_TOLERANCE]
    return RobotModel(spec=spec, model=model, path=path, joint_names=list(policy.joint_names), qpos_idx=qpos_idx,
                      qvel_idx=model.jnt_dofadr[jids].astype(np.int64), free_qpos=free_qpos,
                      free_qvel=int(model.jnt_dofadr[free]), base_body=base, floor_geoms=floor,
                      robot_geoms=robot_geoms, foot_geoms=sorted(feet), keyframe_height=key_height,
                      computed_height=computed, sim_dt=dt, substeps=substeps)


def _in_subtree(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return False


def _clearances(model: mujoco.MjModel, policy: PolicySpec, qpos_idx: np.ndarray, free_qpos: int, floor: int,
                geoms: list[int]) -> tuple[dict[int, float], float]:
    """Gap between the floor and each geom with the base at z=1 in the default pose; the floor's z."""
    data = mujoco.MjData(model)
    data.qpos[:] = default_pose_qpos(model, qpos_idx, free_qpos, policy, 1.0)
    mujoco.mj_kinematics(model, data)
    gaps = {g: float(mujoco.mj_geomDistance(model, data, floor, g, 10.0, None)) for g in geoms}
    return gaps, float(data.geom_xpos[floor][2])
