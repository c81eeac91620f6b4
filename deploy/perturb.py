"""Named model variants for the sim-to-sim suite, each one edit of the robot's re-actuated MjSpec.

Each variant differs from the nominal model exactly in what its name says (tests/deploy
checks the compiled MjModel field by field):

    nominal          the model as built by robot_model.py
    damping_x10      passive damping of the controlled joints x10          (dof_damping)
    damping_x0.1     the same x0.1                                         (dof_damping)
    no_frictionloss  dry friction of the controlled joints set to 0        (dof_frictionloss)
    armature_x0      reflected rotor inertia of the controlled joints 0    (dof_armature)
    armature_x2      the same x2                                           (dof_armature)
    stiff_feet       contact solref time constant of the feet and the floor STIFF_TIMECONST s,
                     raised to 2 sim_dt where the physics step is coarser (MuJoCo's stable minimum)
                     (geom_solref; solimp unchanged). A physical constant, so that a check at a
                     finer --sim-dt tests the same contact, not a stiffer one
    soft_feet        the same, SOFT_TIMECONST s                            (geom_solref)
    heavy_base       base body mass +HEAVY_BASE_FRACTION, its inertia scaled alike (body_mass, body_inertia)
    weak_motors      actuator forcerange x WEAK_MOTOR_FACTOR (the PD's torque limits)   (actuator_forcerange)
    low_friction     sliding friction LOW_FRICTION on the floor and on every robot geom that touches it
                     (geom_friction[:, 0]); MuJoCo uses the larger of two geoms' coefficients, so the
                     floor alone would not lower the feet's friction (0.8 on the Go2)
    elliptic_cone    MuJoCo's elliptic friction cone instead of the file's pyramidal one, with
                     impratio ELLIPTIC_IMPRATIO (opt.cone, opt.impratio); the file's solver iterations
    latency_2        no model change: actions applied 2 control steps late

Setting the same solref on the feet and the floor makes every foot-floor contact use it
(MuJoCo mixes the two geoms' solref by their solmix weights). Fields MuJoCo derives from
the edited ones when compiling (body_subtreemass, *_invweight0, dof_M0, actuator_acc0 and
stat.meaninertia/meanmass) change with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mujoco

from deploy.policy_io import DeployError
from deploy.robot_model import RobotModel

STIFF_TIMECONST = 0.01  # s, of stiff_feet: 2 x the training dt 0.005 (every committed suite ran at this)
SOFT_TIMECONST = 0.04  # s, of soft_feet (the MJCF default is 0.02)
HEAVY_BASE_FRACTION = 0.2  # heavy_base adds this fraction of the base's mass (training's payload is +-1 kg ~ 14%)
WEAK_MOTOR_FACTOR = 0.7
LOW_FRICTION = 0.4
ELLIPTIC_IMPRATIO = 1.0  # MuJoCo's default: friction as soft as the normal contact, the softer of the usual choices

Edit = Callable[[mujoco.MjSpec, RobotModel], None]


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    edit: Edit | None = None  # None: the nominal model
    latency: int | None = None  # control steps, overrides --latency


def _joints(spec: mujoco.MjSpec, robot: RobotModel) -> list:
    return [spec.joint(name) for name in robot.joint_names]


def _geoms(spec: mujoco.MjSpec, ids: list[int]) -> list:
    by_id = {g.id: g for g in spec.geoms}
    return [by_id[i] for i in ids]


def _scale_joints(field: str, factor: float) -> Edit:
    def edit(spec: mujoco.MjSpec, robot: RobotModel) -> None:
        for joint in _joints(spec, robot):
            setattr(joint, field, getattr(joint, field) * factor)
    return edit


def _timeconst_floor(model: mujoco.MjModel) -> float:
    """MuJoCo's own floor on a contact time constant: 2 physics steps ("refsafe"), none where the model disables it.

    (env/domain_rand.py holds the same rule for training; deploy reads only the exported files.)"""
    if model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE:
        return 0.0
    return 2.0 * float(model.opt.timestep)


def _contact_timeconst(timeconst: float) -> Edit:
    def edit(spec: mujoco.MjSpec, robot: RobotModel) -> None:
        value = max(timeconst, _timeconst_floor(robot.model))
        for geom in _geoms(spec, robot.foot_geoms + robot.floor_geoms):
            geom.solref = [value, float(geom.solref[1])]
    return edit


def _heavy_base(spec: mujoco.MjSpec, robot: RobotModel) -> None:
    """Scale the base's mass and inertia, the inertial frame unchanged (taken from the compiled model)."""
    m, b = robot.model, robot.base_body
    body = next(x for x in spec.bodies if x.id == b)
    body.explicitinertial = True
    body.mass = float(m.body_mass[b]) * (1.0 + HEAVY_BASE_FRACTION)
    body.inertia = [float(v) * (1.0 + HEAVY_BASE_FRACTION) for v in m.body_inertia[b]]
    body.ipos = [float(v) for v in m.body_ipos[b]]
    body.iquat = [float(v) for v in m.body_iquat[b]]
    body.fullinertia = [float("nan"), 0, 0, 0, 0, 0]


def _weak_motors(spec: mujoco.MjSpec, robot: RobotModel) -> None:
    for act in spec.actuators:
        act.forcerange = [float(v) * WEAK_MOTOR_FACTOR for v in act.forcerange]


def _low_friction(spec: mujoco.MjSpec, robot: RobotModel) -> None:
    for geom in _geoms(spec, robot.floor_geoms + robot.robot_geoms):
        geom.friction = [LOW_FRICTION, float(geom.friction[1]), float(geom.friction[2])]


def _elliptic_cone(spec: mujoco.MjSpec, robot: RobotModel) -> None:
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = ELLIPTIC_IMPRATIO


VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("nominal", "the model as built from the MJCF and policy.yaml"),
    Variant("damping_x10", "joint damping x10", _scale_joints("damping", 10.0)),
    Variant("damping_x0.1", "joint damping x0.1", _scale_joints("damping", 0.1)),
    Variant("no_frictionloss", "joint friction loss 0", _scale_joints("frictionloss", 0.0)),
    Variant("armature_x0", "joint armature 0", _scale_joints("armature", 0.0)),
    Variant("armature_x2", "joint armature x2", _scale_joints("armature", 2.0)),
    Variant("stiff_feet", f"foot/floor contact solref time constant {STIFF_TIMECONST:g} s (or 2 sim_dt if more)",
            _contact_timeconst(STIFF_TIMECONST)),
    Variant("soft_feet", f"foot/floor contact solref time constant {SOFT_TIMECONST:g} s",
            _contact_timeconst(SOFT_TIMECONST)),
    Variant("heavy_base", f"base mass and inertia +{HEAVY_BASE_FRACTION:.0%}", _heavy_base),
    Variant("weak_motors", f"torque limits x{WEAK_MOTOR_FACTOR:g}", _weak_motors),
    Variant("low_friction", f"floor and robot geom friction {LOW_FRICTION:g}", _low_friction),
    Variant("elliptic_cone", f"elliptic friction cone, impratio {ELLIPTIC_IMPRATIO:g}", _elliptic_cone),
    Variant("latency_2", "actions applied 2 control steps late", latency=2),
]}


def parse_variants(text: str | None) -> list[Variant]:
    """"a,b,c" -> those variants in the given order; None -> all of them."""
    if text is None:
        return list(VARIANTS.values())
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise DeployError(f"--variants needs at least one of: {', '.join(VARIANTS)}")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise DeployError(f"unknown variant '{unknown[0]}' in --variants; choose from {', '.join(VARIANTS)}")
    if len(set(names)) != len(names):
        raise DeployError(f"--variants lists a variant twice: {text}")
    return [VARIANTS[n] for n in names]


def variant_model(robot: RobotModel, variant: Variant) -> mujoco.MjModel:
    """The compiled model of `variant` (the robot's own model for nominal and latency-only variants)."""
    if variant.edit is None:
        return robot.model
    spec = robot.spec.copy()
    variant.edit(spec, robot)
    try:
        return spec.compile()
    except Exception as err:  # noqa: BLE001
        raise DeployError(f"variant {variant.name} does not compile: {' '.join(str(err).split())[:200]}") from None
