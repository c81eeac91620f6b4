"""Compose the training scene in code from the robot file and the config (MuJoCo's `MjSpec`).

Every backend starts from the `MjModel` built here, so the robot file stays a plain
robot description (URDF or MJCF, see `env.sim.robot_file`) and everything a training
run adds comes from the config, in one place:

- a free joint on ``asset.base_body`` if it has none;
- the ground (friction from ``terrain``): a plane, or the rough terrain's height field when the
  env passes its `TerrainGrid` (checks, exports and deploy scenes always get the plane); a light and a sky;
- one position actuator per controlled joint (every hinge and slide joint, in model
  order, except that ``control.held_joints`` come last): gain kp, bias (0, -kp, -kd) from ``control.stiffness/damping``, torque limit
  from ``control.torque_limits`` or the file's (a URDF's ``effort``), ctrl range = joint range;
- for every body named in ``asset.foot_bodies``, ``termination_bodies`` and
  ``penalized_bodies``: a box site around its collision geoms and a touch sensor
  ``<body>_touch`` on it (the normal force of every contact of that body), plus on each
  foot a world-frame velocity sensor ``<body>_vel``, a position sensor ``<body>_pos`` (the
  site's centre, world frame) and a contact-force sensor ``<body>_force`` (the net force of
  the foot's contacts, world frame: a mostly horizontal one is the foot hitting a riser). A name may also be a
  collision geom, for a foot that is not a body of its own (the box then covers that geom);
- robot collision geoms collide with the floor only, unless ``asset.self_collisions``;
- physics options (dt, integrator, solver, cone, impratio, iterations, gravity) from ``sim``;
- a "home" keyframe: ``init_state`` pose with the default joint angles.

The file's own actuators, actuator sensors, keyframes and floor planes are replaced.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from env.sim.rigid_joints import make_joints_rigid
from env.sim.robot_file import RobotFileError, asset_path, by_substring, check_keys_match, load_robot_spec
from env.terrain.grid import TerrainGrid
from env.terrain.mjcf import add_height_field
from utils.files import atomic_write_bytes, atomic_write_text
from utils.yaml import Cfg

__all__ = ["asset_path", "compose_scene", "held_last", "held_rigid", "load_mj_model", "actuated_joint_names", "policy_joint_names", "sensor_bodies",
           "touch_sensor", "velocity_sensor", "position_sensor", "force_sensor", "write_scene_xml", "RobotFileError"]

_CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
_SOLVERS = {"newton": mujoco.mjtSolver.mjSOL_NEWTON, "cg": mujoco.mjtSolver.mjSOL_CG, "pgs": mujoco.mjtSolver.mjSOL_PGS}
_INTEGRATORS = {"implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST, "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
                "euler": mujoco.mjtIntegrator.mjINT_EULER, "rk4": mujoco.mjtIntegrator.mjINT_RK4}
_ONE_DOF = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
SITE_MARGIN = 0.005  # m, contact sites reach this far beyond the body's collision geoms


def touch_sensor(body: str) -> str:
    return f"{body}_touch"


def velocity_sensor(body: str) -> str:
    return f"{body}_vel"


def position_sensor(body: str) -> str:
    return f"{body}_pos"


def force_sensor(body: str) -> str:
    return f"{body}_force"


# MuJoCo's contact sensor (mjSENS_CONTACT) intprm: what it reports, how it combines contacts, how many slots
_CONTACT_FORCE = 1 << int(mujoco.mjtConDataField.mjCONDATA_FORCE)  # the contact force...
_NET_FORCE = 3  # ...summed over the site's contacts, world frame (mjCONREDUCE_NETFORCE; no Python enum in mujoco 4.0)


def contact_site(body: str) -> str:
    """The box site around a named body's collision geoms, which its touch and velocity sensors read."""
    return f"{body}_contact"


def sensor_bodies(asset: Cfg) -> list[str]:
    """Bodies that get a contact site and touch sensor, each once, in config order."""
    names = list(asset.foot_bodies) + list(asset.termination_bodies) + list(asset.penalized_bodies)
    return list(dict.fromkeys(names))


def load_mj_model(cfg: Cfg, terrain: TerrainGrid | None = None, *, rigid_held: bool | None = None) -> mujoco.MjModel:
    """The compiled training scene of ``cfg`` (see the module docstring), on ``terrain`` if given."""
    return compile_spec(compose_scene(cfg, terrain, rigid_held=rigid_held), cfg.asset.file)


def compile_spec(spec: mujoco.MjSpec, what: str) -> mujoco.MjModel:
    try:
        return spec.compile()
    except Exception as err:  # noqa: BLE001 - MuJoCo raises ValueError or its own types
        raise RobotFileError(f"cannot compile {what}: {' '.join(str(err).split())[:240]}") from None


def compose_scene(cfg: Cfg, terrain: TerrainGrid | None = None, *, rigid_held: bool | None = None) -> mujoco.MjSpec:
    """The training scene as an uncompiled spec (check_robot edits a copy; write_scene_xml saves it).

    The ground is ``terrain``'s height field when given, else a plane. ``rigid_held`` (default: the config's
    ``control.held_joints_rigid``) fixes the held joints at their default angles (`env.sim.rigid_joints`).
    """
    spec = load_robot_spec(cfg.asset)
    _strip_scene_parts(spec)
    base = _base_body(spec, cfg.asset.base_body)
    if not any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in base.joints):
        base.add_freejoint(name="root")
    _set_collisions(spec, base, bool(cfg.asset.self_collisions))
    _add_floor(spec, cfg.terrain, terrain)
    _set_options(spec, cfg.sim)
    robot = compile_spec(spec, cfg.asset.file)
    joints = held_last([mujoco.mj_id2name(robot, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(robot.njnt)
                        if robot.jnt_type[j] in [int(t) for t in _ONE_DOF]], cfg.control)
    _check_joint_keys(joints, cfg)
    rigid = held_rigid(cfg.control) if rigid_held is None else rigid_held
    if rigid:
        try:
            make_joints_rigid(spec, robot, {n: cfg.init_state.default_joint_angles[n] for n in cfg.control.held_joints})
        except ValueError as err:
            raise RobotFileError(f"control.held_joints_rigid: {err}") from None
        robot = compile_spec(spec, cfg.asset.file)
        joints = [n for n in joints if n not in cfg.control.held_joints]
    _add_actuators(spec, robot, joints, cfg.control)
    _add_sensors(spec, robot, cfg.asset)
    _add_home_key(spec, robot, joints, cfg.init_state)
    return spec


def held_rigid(control: Cfg) -> bool:
    """Whether the scene has the held joints made rigid (no joint, no actuator) rather than held by PD."""
    return bool(getattr(control, "held_joints_rigid", False)) and bool(getattr(control, "held_joints", []))


def held_last(joints: list[str], control: Cfg) -> list[str]:
    """The actuator order: the joints the policy drives, then ``control.held_joints`` (checked, one line)."""
    held = list(getattr(control, "held_joints", []) or [])
    unknown = [n for n in held if n not in joints]
    if unknown:
        raise RobotFileError(f"control.held_joints names {', '.join(unknown)}, which the robot does not have; "
                             f"its joints: {', '.join(joints)}")
    if len(set(held)) != len(held) or len(held) >= len(joints):
        raise RobotFileError(f"control.held_joints must name distinct joints and leave the policy at least one, "
                             f"got {held}")
    return [n for n in joints if n not in held] + [n for n in joints if n in held]


def _strip_scene_parts(spec: mujoco.MjSpec) -> None:
    actuator_sensors = {mujoco.mjtSensor.mjSENS_ACTUATORPOS, mujoco.mjtSensor.mjSENS_ACTUATORVEL,
                        mujoco.mjtSensor.mjSENS_ACTUATORFRC}
    for item in list(spec.actuators) + list(spec.keys) + [s for s in spec.sensors if s.type in actuator_sensors]:
        spec.delete(item)
    for geom in list(spec.worldbody.geoms):
        if geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
            spec.delete(geom)


def _base_body(spec: mujoco.MjSpec, name: str) -> mujoco.MjsBody:
    body = spec.body(name)
    if body is None:
        roots = [b.name for b in spec.worldbody.bodies]
        raise RobotFileError(f"asset.base_body '{name}' is not a body of the robot; its root link(s): {', '.join(roots)}")
    if body.parent.name != "world":
        raise RobotFileError(f"asset.base_body '{name}' must be a root link (directly under the world), "
                             f"not a child of '{body.parent.name}'")
    return body


def _subtree_bodies(body: mujoco.MjsBody) -> list[mujoco.MjsBody]:
    return [body] + [b for child in body.bodies for b in _subtree_bodies(child)]


def _set_collisions(spec: mujoco.MjSpec, base: mujoco.MjsBody, self_collisions: bool) -> None:
    """Collision geoms (those with contype or conaffinity set) hit the floor; each other only if asked."""
    for body in _subtree_bodies(base):
        for geom in body.geoms:
            if geom.contype or geom.conaffinity:
                geom.contype, geom.conaffinity = (1 if self_collisions else 0), 1


def _add_floor(spec: mujoco.MjSpec, terrain: Cfg, grid: TerrainGrid | None) -> None:
    if terrain.mesh_type not in ("plane", "heightfield"):
        raise RobotFileError(f"terrain.mesh_type '{terrain.mesh_type}' is not available; use 'plane' or 'heightfield'")
    tex = spec.add_texture(name="scene_grid", type=mujoco.mjtTexture.mjTEXTURE_2D,
                           builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=512, height=512,
                           rgb1=[0.2, 0.3, 0.4], rgb2=[0.1, 0.15, 0.2])
    spec.add_texture(name="scene_sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, width=256, height=256,
                     rgb1=[0.4, 0.6, 0.8], rgb2=[0.0, 0.0, 0.0])
    material = spec.add_material(name="scene_grid", texrepeat=[1, 1], texuniform=True, reflectance=0.1)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
    spec.visual.headlight.diffuse = [0.6, 0.6, 0.6]
    spec.visual.headlight.ambient = [0.3, 0.3, 0.3]
    spec.visual.headlight.specular = [0.0, 0.0, 0.0]
    spec.worldbody.add_light(name="scene_sun", pos=[0, 0, 3], dir=[0, 0, -1], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    friction = [float(terrain.static_friction), 0.005, 0.0001]
    if grid is not None:
        add_height_field(spec, grid, name="floor", material=material.name, friction=friction)
        return
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                            material=material.name, contype=1, conaffinity=0, condim=3, friction=friction)


def _set_options(spec: mujoco.MjSpec, sim: Cfg) -> None:
    for field, table in (("cone", _CONES), ("solver", _SOLVERS), ("integrator", _INTEGRATORS)):
        if getattr(sim, field) not in table:
            raise RobotFileError(f"sim.{field} must be one of {', '.join(table)}, got '{getattr(sim, field)}'")
    spec.option.timestep = float(sim.dt)
    spec.option.integrator = _INTEGRATORS[sim.integrator]
    spec.option.cone = _CONES[sim.cone]
    spec.option.impratio = float(sim.impratio)
    spec.option.solver = _SOLVERS[sim.solver]
    spec.option.iterations = int(sim.iterations)
    spec.option.ls_iterations = int(sim.ls_iterations)
    spec.option.gravity = [float(g) for g in sim.gravity]


def _add_actuators(spec: mujoco.MjSpec, robot: mujoco.MjModel, joints: list[str], control: Cfg) -> None:
    kp = by_substring(joints, dict(control.stiffness))
    kd = by_substring(joints, dict(control.damping))
    limits = by_substring(joints, dict(control.torque_limits))
    for name in joints:
        jid = mujoco.mj_name2id(robot, mujoco.mjtObj.mjOBJ_JOINT, name)
        if name not in kp or name not in kd:
            raise RobotFileError(f"joint '{name}' has no PD gain: add a key matching it to control.stiffness and control.damping")
        limit = limits.get(name)
        if limit is None and robot.jnt_actfrclimited[jid]:
            limit = float(np.max(np.abs(robot.jnt_actfrcrange[jid])))  # a URDF's <limit effort=...>
        if limit is None:
            raise RobotFileError(f"joint '{name}' has no torque limit: add a key matching it to control.torque_limits "
                                 f"(or an effort limit in the robot file)")
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype, act.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = kp[name]
        act.biasprm[:3] = [0.0, -kp[name], -kd[name]]
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-limit, limit]
        if robot.jnt_limited[jid]:
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.ctrlrange = [float(v) for v in robot.jnt_range[jid]]


def is_collision_geom(model: mujoco.MjModel, g: int) -> bool:
    return bool(model.geom_contype[g] or model.geom_conaffinity[g])


def contact_geoms(model: mujoco.MjModel, name: str) -> tuple[int, list[int]] | None:
    """The body and collision geoms a contact name stands for: a body's, or one collision geom (a foot that is
    a geom of the shank, as in our Go2 MJCF). None when the robot has neither."""
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
    if body > 0:
        return body, [g for g in np.flatnonzero(model.geom_bodyid == body) if is_collision_geom(model, g)]
    geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
    if geom >= 0 and model.geom_bodyid[geom] > 0 and is_collision_geom(model, geom):
        return int(model.geom_bodyid[geom]), [geom]
    return None


def collision_box(model: mujoco.MjModel, geoms: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half-extents, in their body's frame, of the box around `geoms` (one body's).

    Mesh geoms count with their vertices (a tight box); primitives with the corners of their own bounding box.
    """
    points = []
    for g in geoms:
        mesh = model.geom_dataid[g] if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH else -1
        if mesh >= 0:
            local = model.mesh_vert[model.mesh_vertadr[mesh]:model.mesh_vertadr[mesh] + model.mesh_vertnum[mesh]]
        else:
            centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
            local = centre + half * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.geom_quat[g])
        points.append(local @ rot.reshape(3, 3).T + model.geom_pos[g])
    pts = np.concatenate(points)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return (lo + hi) / 2, (hi - lo) / 2


def _add_sensors(spec: mujoco.MjSpec, robot: mujoco.MjModel, asset: Cfg) -> None:
    roles = (("asset.foot_bodies", asset.foot_bodies), ("asset.termination_bodies", asset.termination_bodies),
             ("asset.penalized_bodies", asset.penalized_bodies))
    bodies = [robot.body(i).name for i in range(1, robot.nbody)]
    for field, names in roles:
        missing = [n for n in names if contact_geoms(robot, n) is None]
        if missing:
            raise RobotFileError(f"{field}: no body (or collision geom) named {', '.join(missing)} in {asset.file}; "
                                 f"bodies: {', '.join(bodies)}")
    for name in sensor_bodies(asset):
        body, geoms = contact_geoms(robot, name)
        if not geoms:
            raise RobotFileError(f"body '{name}' (named in asset) has no collision geometry, so it can never touch the ground")
        centre, half = collision_box(robot, geoms)
        site = spec.body(robot.body(body).name).add_site(
            name=contact_site(name), type=mujoco.mjtGeom.mjGEOM_BOX, pos=centre.tolist(),
            size=(half + SITE_MARGIN).tolist(), group=4, rgba=[0.2, 0.9, 0.2, 0.25])
        spec.add_sensor(name=touch_sensor(name), type=mujoco.mjtSensor.mjSENS_TOUCH,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name)
    for name in asset.foot_bodies:
        spec.add_sensor(name=velocity_sensor(name), type=mujoco.mjtSensor.mjSENS_FRAMELINVEL,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=contact_site(name))
        spec.add_sensor(name=position_sensor(name), type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=contact_site(name))
        force = spec.add_sensor(name=force_sensor(name), type=mujoco.mjtSensor.mjSENS_CONTACT,
                                objtype=mujoco.mjtObj.mjOBJ_SITE, objname=contact_site(name))
        force.intprm[:3] = [_CONTACT_FORCE, _NET_FORCE, 1]


def _check_joint_keys(joints: list[str], cfg: Cfg) -> None:
    """Every key of the per-joint settings names a controlled joint, every controlled joint has a default angle
    (one line each); checked on all of them, held ones included, before any is made rigid."""
    for field in ("stiffness", "damping", "torque_limits"):
        check_keys_match(f"control.{field}", dict(getattr(cfg.control, field)), joints)
    init = cfg.init_state
    missing = [n for n in joints if n not in init.default_joint_angles]
    if missing:
        raise RobotFileError(f"init_state.default_joint_angles lacks joint(s): {', '.join(missing)}")
    unknown = [n for n in init.default_joint_angles if n not in joints]
    if unknown:
        raise RobotFileError(f"init_state.default_joint_angles names joint(s) {', '.join(unknown)}, which the robot "
                             f"does not have; its joints: {', '.join(joints)}")


def _add_home_key(spec: mujoco.MjSpec, robot: mujoco.MjModel, joints: list[str], init: Cfg) -> None:
    qpos = robot.qpos0.copy()
    free = next(j for j in range(robot.njnt) if robot.jnt_type[j] == int(mujoco.mjtJoint.mjJNT_FREE))
    adr = int(robot.jnt_qposadr[free])
    qpos[adr:adr + 7] = list(init.pos) + list(init.rot)
    ctrl = [float(init.default_joint_angles[n]) for n in joints]
    for name, angle in zip(joints, ctrl):
        qpos[robot.jnt_qposadr[mujoco.mj_name2id(robot, mujoco.mjtObj.mjOBJ_JOINT, name)]] = angle
    spec.add_key(name="home", qpos=qpos.tolist(), ctrl=ctrl)


def actuated_joint_names(model: mujoco.MjModel) -> list[str]:
    """Joint driven by each actuator, in actuator order (the env's dof order)."""
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, int(model.actuator_trnid[i, 0])) for i in range(model.nu)]


def policy_joint_names(model: mujoco.MjModel, control: Cfg) -> list[str]:
    """The joints the policy drives, in action order: every actuated joint but ``control.held_joints``,
    whose actuators the scene puts last (held_last), or which it made rigid (held_joints_rigid)."""
    return actuated_joint_names(model)[:model.nu - (0 if held_rigid(control) else len(control.held_joints))]


def write_scene_xml(cfg: Cfg, path: Path) -> Path:
    """Write the training scene as one standalone MJCF, its mesh files copied into ``meshes/`` beside it.

    The export carries it (export/scene.xml) so that the robot-side checks (deploy.sim2sim)
    run the model as trained, whatever the robot file was (a URDF included), with one difference:
    held joints made rigid for training (control.held_joints_rigid) are joints again, held by their PD
    as on the robot.
    """
    spec = compose_scene(cfg, rigid_held=False)
    text = spec.to_xml()  # MuJoCo compiles the spec to write it, so the mesh paths are still the absolute ones here
    for mesh in spec.meshes:
        if mesh.file:
            source = Path(mesh.file)
            target = path.parent / "meshes" / f"{mesh.name}{source.suffix}"
            atomic_write_bytes(target, source.read_bytes())
            text = text.replace(f'file="{mesh.file}"', f'file="meshes/{target.name}"')
    return atomic_write_text(path, text)
