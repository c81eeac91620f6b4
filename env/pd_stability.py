"""Is each joint's PD stable at the physics step, across the randomisation?

MuJoCo's implicitfast integrator takes the PD's damping implicitly but its stiffness
explicitly, so a joint whose PD oscillates faster than the step can resolve blows up:
for stiffness kp on an inertia I, the explicit bound is omega * dt < 2 with
omega = sqrt(kp / I). The G1's first trials hit it: its ankle's inertia is mostly the
motor's armature (0.0072 against the foot link's 0.0004 kg*m^2), and the shared
randomisation drew armature scales near 0, giving omega * dt = 1.9 at dt 0.005; those
robots diverged (NaN/huge QACC) within 0.1 s of a reset.

The check takes each driven joint's own inertia at the home pose (the joint-space mass
matrix's diagonal: the joint moving alone), with the randomisation's lightest links and
armature and its stiffest gains.
"""

from __future__ import annotations

import mujoco
import numpy as np

from env.sim.scene import actuated_joint_names
from utils.yaml import Cfg

MAX_OMEGA_DT = 1.8  # beyond this (the explicit bound is 2) a joint's PD is reported as unstable


def _low(dr: Cfg, switch: str, range_name: str) -> float:
    return float(getattr(dr, range_name)[0]) if getattr(dr, switch, False) else 1.0


def _high(dr: Cfg, switch: str, range_name: str) -> float:
    return float(getattr(dr, range_name)[1]) if getattr(dr, switch, False) else 1.0


def omega_dt(model: mujoco.MjModel, data: mujoco.MjData, cfg: Cfg) -> dict[str, float]:
    """omega * dt of every actuated joint's PD at its worst randomised draw, by joint name."""
    mass_matrix = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, mass_matrix)
    dr = cfg.domain_rand
    link_scale = _low(dr, "randomize_link_mass", "link_mass_range")
    armature_scale = _low(dr, "randomize_armature", "armature_range")
    kp_scale = _high(dr, "randomize_motor_strength", "motor_strength_range") * _high(dr, "randomize_gains", "kp_range")
    result = {}
    for actuator, name in enumerate(actuated_joint_names(model)):
        dof = int(model.jnt_dofadr[model.actuator_trnid[actuator, 0]])
        armature = float(model.dof_armature[dof])
        inertia = (mass_matrix[dof, dof] - armature) * link_scale + armature * armature_scale
        kp = float(model.actuator_gainprm[actuator, 0]) * kp_scale
        result[name] = float(np.sqrt(max(kp, 0.0) / max(inertia, 1e-12)) * model.opt.timestep)
    return result


def pd_stability(model: mujoco.MjModel, data: mujoco.MjData, cfg: Cfg) -> tuple[list[str], list[str]]:
    """(report lines, problems): the stiffest joint's omega * dt, and every joint beyond MAX_OMEGA_DT."""
    values = omega_dt(model, data, cfg)
    if not values:
        return [], []
    name = max(values, key=values.get)
    lines = [f"PD stability: stiffest joint {name}, omega*dt {values[name]:.2f} at sim.dt {model.opt.timestep:g} s "
             f"with the lightest armature and links and the stiffest gains the randomisation draws (unstable near 2)"]
    problems = [f"the PD of {joint} is unstable at sim.dt {model.opt.timestep:g} s: omega*dt {value:.2f} > "
                f"{MAX_OMEGA_DT} with the randomisation's lightest armature and stiffest gains; lower sim.dt, "
                f"raise domain_rand.armature_range[0] or lower control.stiffness"
                for joint, value in values.items() if value > MAX_OMEGA_DT]
    return lines, problems
