"""Candidate changes to the training model that may make a policy step's physics cheaper.

Each change is applied to the composed training scene of a config (`env.sim.scene`):
through a config override where the config has a field for it (``overrides``), else as
an edit of the `MjSpec` here, naming the config field it would need (``needs``). One
change at a time, so that its cost and its effect on the walking robot are its own.

    substeps       sim.dt x control.decimation at the same control period (fewer, longer steps)
    solver         sim.iterations, sim.ls_iterations; tolerance (MjOption.tolerance, no field yet); also more
                   iterations than the config's cap, what converging costs where the cap binds (the G1)
    friction cone  sim.cone elliptic; foot condim 4 / 6 (torsional, rolling friction)
    contact pairs  explicit <pair>s between the floor and the geoms of the bodies the config names
                   (feet, termination and penalised bodies), with the parameters MuJoCo would mix
                   for their dynamic contacts; every other collision (and the broad phase) goes
    friction loss  the joints' dry friction removed, or replaced by the viscous damping that
                   dissipates the same torque at FRICTIONLOSS_REF_SPEED
    disable flags  MjOption.disableflags bits that locomotion does not rely on
    fusestatic     the compiler merges bodies without joints into their parents
    sensors        the foot position and contact-force sensors removed, or the touch sensors of the
                   penalised bodies (what the rough-terrain reward terms and collision penalty read)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import mujoco
import numpy as np

from config import apply_overrides
from env.sim.scene import compile_spec, compose_scene, force_sensor, position_sensor, sensor_bodies, touch_sensor
from utils.yaml import Cfg

FRICTIONLOSS_REF_SPEED = 2.0  # rad/s, joint speed at which the damping replacing friction loss gives the same torque
REFERENCE_SIM_DT = 0.002  # s, the deploy check's "reality" step: its cost is shown for scale
FLAGS = ("warmstart", "island", "midphase", "eulerdamp", "filterparent", "refsafe", "nativeccd", "multiccd")

Edit = Callable[[mujoco.MjSpec, Cfg], None]


@dataclass(frozen=True)
class Change:
    name: str
    what: str
    overrides: tuple[str, ...] = ()  # section.field=value, where the config has a field
    edit: Edit | None = None  # applied to the composed spec, where it has none
    needs: str | None = None  # the config field the edit would need


def build_model(cfg: Cfg, change: Change) -> tuple[mujoco.MjModel, Cfg]:
    """The compiled training scene (flat ground) of `cfg` with `change`; and the config it was built from."""
    cfg = apply_overrides(copy.deepcopy(cfg), change.overrides)
    spec = compose_scene(cfg)
    if change.edit is not None:
        change.edit(spec, cfg)
    return compile_spec(spec, f"{cfg.asset.file} with {change.name}"), cfg


def candidates(cfg: Cfg) -> list[Change]:
    """The baseline, then every change, for the config's control period and foot geoms."""
    dt, dec = float(cfg.sim.dt), int(cfg.control.decimation)
    control = dt * dec
    out = [Change("baseline", f"as trained: dt {dt:g} s x {dec}")]
    finest = int(np.ceil(control / REFERENCE_SIM_DT - 1e-9))
    for n in [*range(1, dec), finest] if finest > dec else range(1, dec):
        step = control / n
        out.append(Change(f"dt_{step:.4g}x{n}", f"physics step {step:.4g} s x {n} per {control:g} s policy step"
                          + (" (the deploy check's step, for scale)" if n == finest else ""),
                          (f"sim.dt={step!r}", f"control.decimation={n}")))
    out += [Change(f"iterations_{n}", f"Newton iterations {n} (of {cfg.sim.iterations})", (f"sim.iterations={n}",))
            for n in (1, 2) if n < int(cfg.sim.iterations)]
    out += [Change(f"iterations_{n}", f"Newton iterations {n} (of {cfg.sim.iterations}): nearer convergence",
                   (f"sim.iterations={n}",)) for n in (10, 20) if n > int(cfg.sim.iterations)]
    out.append(Change("ls_iterations_3", f"line-search iterations 3 (of {cfg.sim.ls_iterations})",
                      ("sim.ls_iterations=3",)))
    out += [Change(f"tolerance_{tol:g}", f"solver tolerance {tol:g} (MuJoCo's default 1e-8)",
                   edit=_option("tolerance", tol), needs="sim.tolerance") for tol in (1e-6, 1e-4)]
    if cfg.sim.cone != "elliptic":
        out.append(Change("cone_elliptic", "elliptic friction cone", ("sim.cone=elliptic",)))
    out += [Change(f"foot_condim_{n}", f"foot geoms condim {n}", edit=_foot_condim(n), needs="asset.foot_condim")
            for n in (4, 6)]
    out.append(Change("contact_pairs", "explicit floor pairs for the named bodies' geoms only, no broad phase",
                      edit=contact_pairs, needs="asset.contact_pairs (and domain_rand writing pair_friction/solref)"))
    out.append(Change("frictionloss_none", "joint friction loss 0", edit=_frictionloss(None),
                      needs="asset.joint_frictionloss = 'constraint' | 'none' | 'damping'"))
    out.append(Change("frictionloss_as_damping", f"joint friction loss -> damping + frictionloss / "
                      f"{FRICTIONLOSS_REF_SPEED:g} rad/s", edit=_frictionloss(FRICTIONLOSS_REF_SPEED),
                      needs="asset.joint_frictionloss = 'constraint' | 'none' | 'damping'"))
    out += [Change(f"disable_{flag}", f"mjDSBL_{flag.upper()}", edit=_disable(flag), needs="sim.disable_flags")
            for flag in FLAGS]
    out.append(Change("fusestatic", "compiler fusestatic: bodies without joints merged into their parents",
                      edit=_fusestatic, needs="asset.fuse_static"))
    out.append(Change("no_foot_force_pos", "no foot position and contact-force sensors (feet_clearance, stumble)",
                      edit=_drop_sensors(lambda c: [s for f in c.asset.foot_bodies for s in (position_sensor(f),
                                                                                             force_sensor(f))]),
                      needs="the sensors added only where a reward term reads them"))
    if cfg.asset.penalized_bodies:
        out.append(Change("no_penalized_touch", "no touch sensors on the penalised bodies (collision penalty)",
                          edit=_drop_sensors(lambda c: [touch_sensor(b) for b in c.asset.penalized_bodies
                                                        if b not in c.asset.foot_bodies]),
                          needs="a cheaper collision count than one touch sensor per body"))
    return out


def combined(changes: list[Change]) -> Change:
    """One change made of several: their overrides in order, then their edits in order."""
    edits = [c.edit for c in changes if c.edit is not None]

    def edit(spec: mujoco.MjSpec, cfg: Cfg) -> None:
        for one in edits:
            one(spec, cfg)
    return Change("+".join(c.name for c in changes), "; ".join(c.what for c in changes),
                  tuple(o for c in changes for o in c.overrides), edit if edits else None,
                  "; ".join(c.needs for c in changes if c.needs) or None)


def _option(field: str, value: float) -> Edit:
    def edit(spec: mujoco.MjSpec, cfg: Cfg) -> None:
        setattr(spec.option, field, value)
    return edit


def _disable(flag: str) -> Edit:
    bit = int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{flag.upper()}"))

    def edit(spec: mujoco.MjSpec, cfg: Cfg) -> None:
        spec.option.disableflags |= bit
    return edit


def _drop_sensors(names: Callable[[Cfg], list[str]]) -> Edit:
    def edit(spec: mujoco.MjSpec, cfg: Cfg) -> None:
        for name in names(cfg):
            spec.delete(spec.sensor(name))
    return edit


def _fusestatic(spec: mujoco.MjSpec, cfg: Cfg) -> None:
    spec.compiler.fusestatic = True


def _collision_geoms(spec: mujoco.MjSpec, name: str) -> list:
    """A named body's collision geoms, or the one collision geom of that name (as env.sim.scene.contact_geoms)."""
    body = spec.body(name)
    geoms = list(body.geoms) if body is not None else [g for g in [spec.geom(name)] if g is not None]
    return [g for g in geoms if g.contype or g.conaffinity]


def _foot_condim(condim: int) -> Edit:
    def edit(spec: mujoco.MjSpec, cfg: Cfg) -> None:
        for name in cfg.asset.foot_bodies:
            for geom in _collision_geoms(spec, name):
                geom.condim = condim
    return edit


def _frictionloss(ref_speed: float | None) -> Edit:
    """Friction loss of the hinge/slide joints to 0; with ref_speed, added to their damping as frictionloss / speed."""
    def edit(spec: mujoco.MjSpec, cfg: Cfg) -> None:
        for joint in spec.joints:
            if joint.type != mujoco.mjtJoint.mjJNT_FREE and joint.frictionloss > 0:
                if ref_speed is not None:
                    joint.damping = joint.damping + joint.frictionloss / ref_speed
                joint.frictionloss = 0.0
    return edit


def mixed_contact(a, b) -> dict:
    """The parameters MuJoCo gives a dynamic contact between geom specs a and b (its mixing rules).

    Higher priority wins outright; otherwise condim, friction, margin and gap take the larger,
    solref and solimp the solmix-weighted mean.
    """
    if a.priority != b.priority:
        win = a if a.priority > b.priority else b
        mix, cond, fric = 1.0, win.condim, np.asarray(win.friction)
        a = b = win
    else:
        mix = 0.5 if a.solmix + b.solmix < mujoco.mjMINVAL else a.solmix / (a.solmix + b.solmix)
        cond, fric = max(a.condim, b.condim), np.maximum(a.friction, b.friction)
    return {"condim": int(cond), "friction": [fric[0], fric[0], fric[1], fric[2], fric[2]],
            "solref": list(mix * np.asarray(a.solref) + (1 - mix) * np.asarray(b.solref)),
            "solimp": list(mix * np.asarray(a.solimp) + (1 - mix) * np.asarray(b.solimp)),
            "margin": max(a.margin, b.margin), "gap": max(a.gap, b.gap)}


def contact_pairs(spec: mujoco.MjSpec, cfg: Cfg) -> None:
    """Replace the robot's dynamic floor collisions by explicit pairs for the bodies the config names."""
    floor = spec.geom("floor")
    keep = [g for name in sensor_bodies(cfg.asset) for g in _collision_geoms(spec, name)]
    for geom in spec.geoms:
        if geom.contype or geom.conaffinity:
            geom.contype, geom.conaffinity = 0, 0
    for i, geom in enumerate(keep):
        if not geom.name:
            geom.name = f"pair_geom_{i}"
        spec.add_pair(name=f"floor_{geom.name}", geomname1="floor", geomname2=geom.name,
                      **mixed_contact(floor, geom))
