"""Load an MJCF robot model and apply the config's simulation and PD settings.

Every backend that runs MuJoCo models (the CPU batch, MuJoCo Warp) starts from
the `MjModel` built here, so the physics options live in one place.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from utils.yaml import Cfg

PROJECT_ROOT = Path(__file__).resolve().parents[2]

_CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
_SOLVERS = {"newton": mujoco.mjtSolver.mjSOL_NEWTON, "cg": mujoco.mjtSolver.mjSOL_CG, "pgs": mujoco.mjtSolver.mjSOL_PGS}


def asset_path(file: str) -> Path:
    path = Path(file)
    if not path.is_absolute():
        path = PROJECT_ROOT / path
    if not path.is_file():
        raise FileNotFoundError(f"robot model not found: {path} (asset.file is relative to the project root {PROJECT_ROOT})")
    return path


def load_mj_model(cfg: Cfg) -> mujoco.MjModel:
    """The MjModel of ``cfg.asset.file`` with ``cfg.sim`` options and ``cfg.control`` gains applied."""
    model = mujoco.MjModel.from_xml_path(str(asset_path(cfg.asset.file)))
    apply_sim_options(model, cfg.sim)
    apply_pd_gains(model, cfg.control)
    return model


def apply_sim_options(model: mujoco.MjModel, sim: Cfg) -> None:
    if sim.cone not in _CONES:
        raise ValueError(f"sim.cone must be one of {', '.join(_CONES)}, got '{sim.cone}'")
    if sim.solver not in _SOLVERS:
        raise ValueError(f"sim.solver must be one of {', '.join(_SOLVERS)}, got '{sim.solver}'")
    model.opt.timestep = sim.dt
    model.opt.cone = _CONES[sim.cone]
    model.opt.solver = _SOLVERS[sim.solver]
    model.opt.iterations = int(sim.iterations)
    model.opt.ls_iterations = int(sim.ls_iterations)
    model.opt.gravity[:] = sim.gravity


def actuated_joint_names(model: mujoco.MjModel) -> list[str]:
    """Joint driven by each actuator, in actuator order (the env's dof order)."""
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, int(model.actuator_trnid[i, 0])) for i in range(model.nu)]


def gains_by_joint(names: list[str], table: dict[str, float]) -> dict[str, float]:
    """Resolve a {substring: gain} table to {joint: gain}; the longest matching key wins."""
    out = {}
    for name in names:
        keys = [k for k in table if k in name]
        if keys:
            out[name] = float(table[max(keys, key=len)])
    return out


def apply_pd_gains(model: mujoco.MjModel, control: Cfg) -> None:
    """Write kp/kd from the config into position actuators (gain kp; bias 0, -kp, -kd)."""
    names = actuated_joint_names(model)
    for key in list(control.stiffness) + list(control.damping):
        if not any(key in n for n in names):
            raise ValueError(f"control gain key '{key}' matches no actuated joint; joints: {', '.join(names)}")
    for i, name in enumerate(names):
        kp = gains_by_joint(names, control.stiffness).get(name)
        kd = gains_by_joint(names, control.damping).get(name)
        if kp is not None:
            model.actuator_gainprm[i, 0] = kp
            model.actuator_biasprm[i, 1] = -kp
        if kd is not None:
            model.actuator_biasprm[i, 2] = -kd
