"""Check a robot before training: what the scene built from it, and whether it can stand.

`inspect_robot` is the fast part (a few ms: the compiled scene only, including the legs'
symmetry, env/robot_symmetry.py); train.py runs it before building the env. `stand_test` simulates one robot for a few seconds under
the PD at the default pose. `python -m env.check_robot` prints both and renders the
standing robot (env/check_robot.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from env.pd_stability import pd_stability
from env.robot_symmetry import check_symmetry
from env.sim.scene import (actuated_joint_names, compose_scene, contact_geoms, contact_site, held_rigid, is_collision_geom,
                           load_mj_model, policy_joint_names, sensor_bodies, touch_sensor)
from utils.yaml import Cfg

SPAWN_TOO_HIGH = 0.05  # m, a spawn this far above the floor drops the robot on every reset
FOOT_PROBE_DEPTH = 0.001  # m, feet pressed this far into the floor to find their contact points
SETTLE_S = 1.0  # s, the stand test measures drift from here on (the drop from the spawn height is not drift)
MAX_DRIFT = 0.02  # m, base height lost after settling
MAX_LIMIT_EXCESS = 0.02  # rad (or m), beyond a joint limit
MIN_FOOT_LOAD = 0.8  # fraction of the weight the feet carry, mean over the last LOAD_WINDOW_S of the stand
LOAD_WINDOW_S = 0.5  # s: one instant would catch a foot in the chatter of a stand held upright (G1, 10 iterations)
MAX_SAG = 0.25  # fraction of the standing height (default pose, feet on the floor) the PD may give way
FOOT_TOUCH = 0.002  # m, a foot this close to the lowest one's height touches the floor with it
MAX_FOOT_TILT = 3.0  # deg, the base tilt that would bring every foot down at the default pose; beyond: feet not level


class RobotCheckError(ValueError):
    """The fast robot check found problems; the message is one line."""


def require_fast_check(cfg: Cfg) -> None:
    """Raise `RobotCheckError` naming the first problem `inspect_robot` finds (train.py, before building the env)."""
    problems = inspect_robot(cfg)[1].problems
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RobotCheckError(f"robot check: {problems[0]}{more}; python -m env.check_robot --config "
                              f"{getattr(cfg, 'name', 'NAME')} shows the full report")


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)  # what was found, for people
    problems: list[str] = field(default_factory=list)  # one line each; any makes the check fail

    def add(self, other: "Report") -> None:
        self.lines += other.lines
        self.problems += other.problems


def inspect_robot(cfg: Cfg, model: mujoco.MjModel | None = None) -> tuple[mujoco.MjModel, Report]:
    """Compose the scene (a broken robot file or config raises one-line `RobotFileError`) and check it statically."""
    model = load_mj_model(cfg) if model is None else model
    report = Report()
    report.lines += _masses(model)
    report.add(_dofs(model, cfg))
    report.lines += _named_bodies(model, cfg.asset)
    feet = {name: contact_geoms(model, name)[1] for name in cfg.asset.foot_bodies}
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, cfg.asset.base_body)
    home = home_data(model)
    report.add(Report(*check_symmetry(model, home, base, feet)))
    report.add(_spawn_and_support(model, feet))
    report.add(Report(*pd_stability(model, home, cfg)))
    return model, report


def _masses(model: mujoco.MjModel) -> list[str]:
    links = [(model.body(b).name, float(model.body_mass[b])) for b in range(1, model.nbody)]
    heavy = ", ".join(f"{name} {mass:.3f}" for name, mass in links if mass > 0)
    return [f"mass: {sum(m for _, m in links):.3f} kg in {sum(m > 0 for _, m in links)} links ({heavy} kg)"]


def _dofs(model: mujoco.MjModel, cfg: Cfg) -> Report:
    held = set(cfg.control.held_joints)
    how = ("{} held joints made rigid at their default" if held_rigid(cfg.control)
           else "then {} held at their default by the PD")
    report = Report([f"dofs ({len(policy_joint_names(model, cfg.control))} driven by the policy, in its action order"
                     + ("; " + how.format(len(held)) if held else "")
                     + "): joint  range (rad)  default  kp  kd  torque limit"])
    for i, name in enumerate(actuated_joint_names(model)):
        j = int(model.actuator_trnid[i, 0])
        lo, hi = model.jnt_range[j] if model.jnt_limited[j] else (-np.inf, np.inf)
        default = float(cfg.init_state.default_joint_angles[name])
        kp, kd = float(model.actuator_gainprm[i, 0]), float(-model.actuator_biasprm[i, 2])
        report.lines.append(f"  {i:2d} {name:24s} [{lo:+.3f}, {hi:+.3f}]  {default:+.3f}  {kp:g}  {kd:g}  "
                            f"{model.actuator_forcerange[i, 1]:g} N*m" + ("  (held)" if name in held else ""))
        if not lo <= default <= hi:
            report.problems.append(f"init_state.default_joint_angles['{name}'] = {default:g} is outside the joint's "
                                   f"range [{lo:g}, {hi:g}]")
    return report


def _named_bodies(model: mujoco.MjModel, asset: Cfg) -> list[str]:
    def describe(names: list[str]) -> str:
        return ", ".join(names) if names else "(none)"

    lines = [f"feet: {describe(list(asset.foot_bodies))}", f"termination bodies: {describe(list(asset.termination_bodies))}",
             f"penalised bodies: {describe(list(asset.penalized_bodies))}"]
    for name in sensor_bodies(asset):
        size = 2 * model.site_size[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, contact_site(name))]
        lines.append(f"  {name}: contact box {size[0] * 100:.1f} x {size[1] * 100:.1f} x {size[2] * 100:.1f} cm, "
                     f"sensor {touch_sensor(name)}")
    return lines


def home_data(model: mujoco.MjModel) -> mujoco.MjData:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    return data


def body_geoms(model: mujoco.MjModel, names: list[str]) -> list[int]:
    """The collision geoms of the named bodies (or named collision geoms)."""
    return [g for name in names for g in contact_geoms(model, name)[1]]


def _spawn_and_support(model: mujoco.MjModel, feet: dict[str, list[int]]) -> Report:
    report = Report()
    data = home_data(model)
    robot = [g for g in range(model.ngeom) if model.geom_bodyid[g] > 0 and is_collision_geom(model, g)]
    gap = floor_gaps(model, data, robot)
    foot_gaps = {name: min(gap[g] for g in geoms) for name, geoms in feet.items()}
    foot_gap = min(foot_gaps.values())
    foot_geoms = [g for geoms in feet.values() for g in geoms]
    report.lines.append(f"spawn: base at z {data.qpos[2]:.3f} m, feet {foot_gap * 1000:+.1f} mm above the floor")
    spawn_z = data.qpos[2] - foot_gap + 0.002
    uneven = _uneven_feet(data, feet, foot_gaps)
    if uneven:
        shift = f"raising init_state.pos z to {spawn_z:.3f}" if foot_gap < -0.001 else (
            f"lowering init_state.pos z to {spawn_z:.3f}" if foot_gap > SPAWN_TOO_HIGH else "")
        report.problems.append(uneven + (f"; {shift} would leave the other feet in the air" if shift else ""))
    elif foot_gap < -0.001:
        report.problems.append(f"the feet spawn {-foot_gap * 1000:.1f} mm inside the floor: raise init_state.pos z to "
                               f"{spawn_z:.3f}")
    elif foot_gap > SPAWN_TOO_HIGH:
        report.problems.append(f"the feet spawn {foot_gap * 100:.1f} cm above the floor: lower init_state.pos z to "
                               f"{spawn_z:.3f}")
    lower = [model.geom(g).name or f"geom {g}" for g in robot if g not in foot_geoms and gap[g] < foot_gap - 0.001]
    if lower:
        report.problems.append(f"at the default pose {', '.join(lower[:4])} (not on a foot body) reach lower than the "
                               f"feet: check asset.foot_bodies and init_state.default_joint_angles")
    report.lines += _support_polygon(model, data, foot_geoms, foot_gap)
    return report


def _uneven_feet(data: mujoco.MjData, feet: dict[str, list[int]], foot_gaps: dict[str, float]) -> str | None:
    """A problem line when only some feet reach the floor at the default pose and the rest would need the base to
    tilt more than MAX_FOOT_TILT to come down: the legs differ, and no spawn height makes the robot stand level."""
    low = min(foot_gaps.values())
    touching = [name for name, gap in foot_gaps.items() if gap - low <= FOOT_TOUCH]
    raised = {name: gap - low for name, gap in foot_gaps.items() if name not in touching}
    if not raised:
        return None
    where = {name: data.geom_xpos[geoms].mean(axis=0)[:2] for name, geoms in feet.items()}
    tilt = max(np.degrees(np.arctan2(height, min(np.linalg.norm(where[name] - where[t]) for t in touching)))
               for name, height in raised.items())
    if tilt <= MAX_FOOT_TILT:
        return None
    above = ", ".join(f"{name} {height * 1000:.1f} mm" for name, height in raised.items())
    alone = f"{touching[0]} alone" if len(touching) == 1 else f"{', '.join(touching[:-1])} and {touching[-1]}"
    them = "it" if len(touching) == 1 else "them"
    return (f"the feet are not level at the default pose: {alone} reach{'es' * (len(touching) == 1)} the floor "
            f"({above} above {them}), so the support polygon is {alone} and the base would tilt {tilt:.0f} deg to "
            f"bring the other feet down; make the legs alike (link lengths and axes in the robot file, "
            f"init_state.default_joint_angles)")


def floor_gaps(model: mujoco.MjModel, data: mujoco.MjData, geoms: list[int]) -> dict[int, float]:
    """Distance of each geom above the floor (negative: inside it) at the current pose."""
    floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    return {g: float(mujoco.mj_geomDistance(model, data, floor, g, 1.0, None)) for g in geoms}


def _support_polygon(model: mujoco.MjModel, data: mujoco.MjData, feet: list[int], foot_gap: float) -> list[str]:
    """Where the feet touch with the robot lowered onto the floor at the default pose, and the COM against it."""
    data.qpos[2] -= foot_gap + FOOT_PROBE_DEPTH
    mujoco.mj_forward(model, data)
    points = np.array([c.pos[:2] for c in data.contact[:data.ncon] if c.geom1 in feet or c.geom2 in feet])
    com = data.subtree_com[1][:2]
    if len(points) == 0:
        return ["support polygon: no foot contact found"]
    hull = convex_hull(points)
    margin = polygon_margin(hull, com)
    area = polygon_area(hull)
    where = "inside" if margin >= 0 else "OUTSIDE"
    return [f"support polygon at the default pose: {len(hull)} corners, {area * 1e4:.0f} cm^2; centre of mass "
            f"{where} it, {abs(margin) * 100:.1f} cm from its edge"]


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise hull of 2-D points (Andrew's monotone chain); fewer than 3 distinct points come back as they are."""
    pts = sorted(set(map(tuple, np.round(points, 6))))
    if len(pts) < 3:
        return np.array(pts)

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2 and _turn(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])


def _turn(a, b, c) -> float:
    """z of (b - a) x (c - a): positive for a left turn."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def polygon_area(hull: np.ndarray) -> float:
    if len(hull) < 3:
        return 0.0
    x, y = hull[:, 0], hull[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def polygon_margin(hull: np.ndarray, point: np.ndarray) -> float:
    """Distance from `point` to the hull's edge: positive inside, negative outside (a segment or point: negative)."""
    if len(hull) < 3:
        return -float(min(np.linalg.norm(hull - point, axis=1))) if len(hull) else -np.inf
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.linalg.norm(edges, axis=1, keepdims=True)
    return float(np.min(np.sum((hull - point) * normals, axis=1)))  # outward normals of a counter-clockwise hull


def held_upright_model(cfg: Cfg) -> mujoco.MjModel:
    """The scene with the base's free joint replaced by x, y, z slides: it can sink and slide, not tip."""
    spec = compose_scene(cfg)
    base = spec.body(cfg.asset.base_body)
    key = spec.key("home")
    body_pos, ctrl = np.array(base.pos), list(key.ctrl)
    spec.delete(key)
    for joint in [j for j in base.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]:
        spec.delete(joint)
    for axis, name in zip(np.eye(3), "xyz"):
        joint = base.add_joint(name=f"hold_{name}", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=axis.tolist())
        joint.limited, joint.armature, joint.damping[0], joint.frictionloss = mujoco.mjtLimited.mjLIMITED_FALSE, 0, 0, 0
    model = spec.compile()
    qpos = model.qpos0.copy()
    qpos[:3] = np.array(cfg.init_state.pos) - body_pos
    for i in range(model.nu):
        qpos[model.jnt_qposadr[model.actuator_trnid[i, 0]]] = ctrl[i]
    spec.add_key(name="home", qpos=qpos.tolist(), ctrl=ctrl)
    return spec.compile()


def stand_test(cfg: Cfg, seconds: float = 5.0) -> tuple[Report, mujoco.MjModel, np.ndarray]:
    """Hold the default pose under the PD for `seconds` from the spawn pose.

    Returns the findings, the model simulated and its final qpos. With
    ``asset.stands_passively`` False (a biped, whose balance is the policy's job) the
    base is held upright by slide joints, so the test still shows whether the PD
    carries the weight on the feet.
    """
    held = not bool(cfg.asset.stands_passively)
    model = held_upright_model(cfg) if held else load_mj_model(cfg)
    report = Report()
    data = home_data(model)
    asset = cfg.asset
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, asset.base_body)
    term = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, touch_sensor(b)) for b in asset.termination_bodies]
    feet = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, touch_sensor(b)) for b in asset.foot_bodies]
    joints = [int(model.actuator_trnid[i, 0]) for i in range(model.nu)]
    standing_z = float(data.xpos[base][2]) - min(floor_gaps(model, data, body_geoms(model, list(asset.foot_bodies))).values())
    steps, settle = int(round(seconds / model.opt.timestep)), int(round(SETTLE_S / model.opt.timestep))
    settled_z, max_tilt, excess, fell = None, 0.0, 0.0, None
    window = max(1, min(steps, int(round(LOAD_WINDOW_S / model.opt.timestep))))
    load_sum = 0.0
    ctrl = data.ctrl.copy()
    for k in range(steps):
        data.ctrl[:] = ctrl
        mujoco.mj_step(model, data)
        t = (k + 1) * model.opt.timestep
        if not np.isfinite(data.qpos).all():
            report.problems.append(f"the simulation blew up at t={t:.2f} s (check masses, inertias and sim.dt)")
            return report, model, model.key("home").qpos.copy()
        z = float(data.xpos[base][2])
        tilt = float(np.arccos(np.clip(data.xmat[base][8], -1.0, 1.0)))
        max_tilt = max(max_tilt, tilt)
        for j in joints:
            if model.jnt_limited[j]:
                q, (lo, hi) = data.qpos[model.jnt_qposadr[j]], model.jnt_range[j]
                excess = max(excess, lo - q, q - hi)
        touching = [b for b, s in zip(asset.termination_bodies, term)
                    if data.sensordata[model.sensor_adr[s]] > asset.contact_threshold]
        if fell is None and (touching or tilt > asset.terminate_tilt or z < asset.terminate_height):
            fell = (t, touching, tilt)
        if k + 1 == settle:
            settled_z = z
        if k >= steps - window:
            load_sum += sum(float(data.sensordata[model.sensor_adr[s]]) for s in feet)
    z = float(data.xpos[base][2])
    weight = float(model.body_mass.sum() * -model.opt.gravity[2])
    load = load_sum / window / weight
    drift = settled_z - z if settled_z is not None else 0.0
    how = "base held upright (asset.stands_passively = False)" if held else "free-standing"
    report.lines.append(f"stand test, {seconds:g} s under the PD at the default pose, {how}: base height "
                        f"{z:.3f} m ({standing_z:.3f} m at the default pose, sinks {drift * 1000:+.1f} mm after {SETTLE_S:g} s), max tilt "
                        f"{np.degrees(max_tilt):.1f} deg, feet carry {load * 100:.0f}% of the weight, worst joint-limit "
                        f"excess {max(excess, 0.0):.3f}")
    if fell is not None:
        t, touching, tilt = fell
        what = f"{', '.join(touching)} touched the ground" if touching else (
            f"tilted {np.degrees(tilt):.0f} deg" if tilt > asset.terminate_tilt else "base fell below asset.terminate_height")
        report.problems.append(f"cannot stand: {what} at t={t:.2f} s under the PD at the default pose "
                               f"(stiffer control.stiffness, or a pose with the centre of mass over the feet)")
    elif drift > MAX_DRIFT:
        report.problems.append(f"cannot stand: the base sinks {drift * 1000:.0f} mm in {seconds - SETTLE_S:g} s "
                               f"under the PD (stiffer control.stiffness)")
    elif standing_z - z > MAX_SAG * standing_z:
        report.problems.append(f"cannot stand: the PD gives way {(standing_z - z) * 100:.1f} cm under the robot's weight "
                               f"(base {z:.3f} m against {standing_z:.3f} m at the default pose; stiffer control.stiffness)")
    elif load < MIN_FOOT_LOAD:
        report.problems.append(f"the feet carry only {load * 100:.0f}% of the weight standing: another part of the "
                               f"robot rests on the ground, or asset.foot_bodies misses a foot")
    if excess > MAX_LIMIT_EXCESS:
        report.problems.append(f"a joint goes {excess:.3f} beyond its limit while standing (check the joint ranges)")
    return report, model, data.qpos.copy()
