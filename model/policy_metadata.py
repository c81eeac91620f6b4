"""policy.yaml's content: what a robot-side program needs besides the network, from the built env and config.

The observation terms with their units, scales and offsets, the joints with their default pose, limits
and PD gains, the action rule, the command ranges, the gait clock, the held joints and how the policy
was trained (model/export.py writes it; deploy/policy_io.py is its reader).
"""

from __future__ import annotations

from typing import Any

import numpy as np

FORMAT = "legged-ppo-policy/1"


def _term(name: str, size: int, task: Any, cfg: Any) -> dict[str, Any]:
    """Unit, scale and offset of one policy observation term (env/tasks/locomotion.py `_policy_frame`)."""
    s = cfg.normalization.obs_scales
    robot = task.env
    zeros = [0.0] * size
    known: dict[str, tuple[str, str, list[float], list[float]]] = {
        "base_ang_vel": ("rad/s", "base angular velocity in the base frame (gyro)", [s.ang_vel] * size, zeros),
        "projected_gravity": ("1", "unit gravity vector in the base frame; (0, 0, -1) when upright",
                              [1.0] * size, zeros),
        "commands": ("m/s, m/s, rad/s", "commanded vx, vy (base frame) and yaw rate",
                     [s.lin_vel, s.lin_vel, s.ang_vel], zeros),
        "dof_pos": ("rad", "joint positions, minus default_joint_pos", [s.dof_pos] * size,
                    default_joint_pos(robot, cfg)),
        "dof_vel": ("rad/s", "joint velocities", [s.dof_vel] * size, zeros),
        "actions": ("1", "the previous action, clipped to +-clip_actions (before action_scale)", [1.0] * size, zeros),
        "gait_clock": ("1, 1, Hz", "gait clock: sin(2 pi phase), cos(2 pi phase), stepping frequency; phase "
                       "advances by frequency * control_dt each step (see gait in this file)", [1.0] * size, zeros),
    }
    ground = getattr(robot, "ground", None)
    if name == "height_scan" and ground is not None and ground.scan is not None:
        points = [[round(float(x), 6), round(float(y), 6)] for x, y in ground.scan.cpu().tolist()]
        noise = cfg.noise
        level = float(noise.noise_level) if noise.add_noise else 0.0  # as the task applies its noise
        return {"name": name, "size": size, "unit": "m", "scale": [s.height_measurements] * size,
                "offset": [float(cfg.rewards.base_height_target)] * size, "points": points,
                "clip": float(getattr(task, "scan_clip", 1.0)),  # m, on value - offset, before the scale
                "noise": noise.noise_scales.height_measurements * level,  # m, uniform +- per value and step
                "drift": noise.noise_scales.height_drift * level,  # m, uniform +- per episode, every value alike
                "description": "base height above the ground at each of `points` (x forward, y left, in m, in the "
                               "base's yaw frame: turned with the heading only); frame value = clip(value - offset, "
                               "-clip, clip) * scale; needs a height map around the robot"}
    if name not in known:
        return {"name": name, "size": size, "unit": None, "scale": None, "offset": None,
                "description": "not described by model/policy_metadata.py; see the task's observation code"}
    unit, description, scale, offset = known[name]
    return {"name": name, "size": size, "unit": unit, "scale": [float(v) for v in scale],
            "offset": [float(v) for v in offset], "description": description}


def default_joint_pos(robot: Any, cfg: Any) -> list[float]:
    """rad, the default pose in dof order, from the config (exact decimals, not the env's float32 copy)."""
    angles = cfg.init_state.default_joint_angles
    return [float(angles[n]) if n in angles else float(v) for n, v in zip(robot.dof_names, robot.default_dof_pos[0].tolist())]


def policy_metadata(env: Any, cfg: Any) -> dict[str, Any]:
    """Everything besides the network that a robot-side program needs, from the built env and its config."""
    robot, task = env.robot, env.task
    m = robot.model
    nu = robot.num_dof
    layout = list(getattr(task, "obs_layout", []))
    terms, start = [], 0
    for name, size in layout:
        term = _term(name, int(size), task, cfg)
        terms.append({"name": term.pop("name"), "start": start, **term})
        start += int(size)
    history = int(getattr(task, "history_length", 1))
    c = cfg.commands
    return {
        "format": FORMAT,
        "config": getattr(cfg, "name", None),
        "num_obs": int(env.num_obs),
        "num_actions": int(env.num_actions),
        "input": {"name": "obs", "shape": ["batch", int(env.num_obs)], "dtype": "float32"},
        "output": {"name": "actions", "shape": ["batch", int(env.num_actions)], "dtype": "float32"},
        "normalizer": "included in the network: feed the observation as described below",
        "joint_names": list(robot.dof_names),
        "default_joint_pos": default_joint_pos(robot, cfg),  # rad
        "joint_pos_limits": [[float(v) for v in m.jnt_range[int(m.actuator_trnid[i, 0])]] for i in range(nu)],  # rad
        "action_scale": float(cfg.control.action_scale),  # rad per unit action
        "clip_actions": float(cfg.control.clip_actions),
        "joint_target": "clamp(default_joint_pos + action_scale * clip(action, -clip_actions, clip_actions), "
                        "joint_pos_limits)",
        **_pd_gains(m, range(nu)),
        "control_dt": float(robot.dt),  # s, one policy step
        "sim_dt": float(cfg.sim.dt),
        "decimation": int(cfg.control.decimation),
        "observation": {
            "size": int(env.num_obs),
            "frame_size": start,
            "history_length": history,
            "history_order": "oldest_first",
            "clip": float(cfg.normalization.clip_observations),
            "formula": "frame = concat((value - offset) * scale); obs = clip(concat(frames, oldest first), -clip, clip)",
            "terms": terms,
        },
        "commands": {
            "lin_vel_x": [float(v) for v in c.lin_vel_x],  # m/s
            "lin_vel_y": [float(v) for v in c.lin_vel_y],  # m/s
            "ang_vel_yaw": [float(v) for v in c.ang_vel_yaw],  # rad/s
            "zero_threshold": float(getattr(c, "zero_threshold", 0.0)),
        },
        "gait": _gait(task),
        "training": _training(cfg),
        **_held_joints(robot, cfg),
    }


def _pd_gains(m: Any, actuators: range) -> dict[str, list]:
    """kp (N*m/rad), kd (N*m*s/rad) and torque limits (N*m, None where unlimited) of these actuators."""
    limited = np.asarray(m.actuator_forcelimited).reshape(-1) if hasattr(m, "actuator_forcelimited") \
        else np.ones(m.nu, dtype=bool)
    return {"kp": [float(m.actuator_gainprm[i, 0]) for i in actuators],
            "kd": [float(-m.actuator_biasprm[i, 2]) for i in actuators],
            "torque_limits": [float(m.actuator_forcerange[i, 1]) if bool(limited[i]) else None for i in actuators]}


def _held_joints(robot: Any, cfg: Any) -> dict[str, Any]:
    """The joints the policy does not drive (control.held_joints): their PD holds them at these targets.

    Held joints made rigid for training (control.held_joints_rigid) are the robot's joints all the same:
    they are listed from the robot as built, as the exported scene has them.
    """
    from env.sim.scene import actuated_joint_names, held_rigid, load_mj_model

    first = robot.num_dof
    if held_rigid(cfg.control):
        model = load_mj_model(cfg, rigid_held=False)
        names = actuated_joint_names(model)[first:]
    else:
        model, names = robot.model, list(getattr(robot, "held_joint_names", []))
    if not names:
        return {}
    return {"held_joints": {
        "names": names,
        "target": [float(cfg.init_state.default_joint_angles[n]) for n in names],  # rad
        **_pd_gains(model, range(first, first + len(names))),  # their actuators follow the policy's
        "rule": "ctrl = target for the whole run, by the same PD law as the policy's joints",
    }}


def _training(cfg: Any) -> dict[str, Any]:
    """How the policy was trained, for sim-to-sim checks (deploy.sim2sim's fall limits and pushes); not for the robot."""
    a, d = cfg.asset, cfg.domain_rand
    return {
        "episode_length_s": float(cfg.env.episode_length_s),  # s
        "terminate_tilt": float(a.terminate_tilt),  # rad, base tilt that ended an episode
        "terminate_height": float(a.terminate_height),  # m, base height below which an episode ended (0 = off)
        "termination_bodies": list(a.termination_bodies),  # bodies whose contact ended an episode
        "contact_threshold": float(a.contact_threshold),  # N, the contact force that counted
        "push_interval_s": float(d.push_interval_s) if d.push_robots else None,  # s, None = no pushes
        "max_push_vel_xy": float(d.max_push_vel_xy),  # m/s per horizontal axis
        "max_action_latency": int(getattr(d, "max_action_latency", 0)),  # control steps
        "terrain": str(cfg.terrain.mesh_type),  # "plane" (flat floor) or "heightfield" (rough terrain)
    }


def _gait(task: Any) -> dict[str, Any] | None:
    """The gait clock a robot program must run when the policy observes one (commands.gait_phase)."""
    gait = getattr(task, "gait", None)
    if gait is None:
        return None
    return {
        "frequency_range": [float(v) for v in gait.frequency_range],  # Hz, the command it was trained on
        "stance_ratio": float(gait.stance_ratio),
        "foot_phase_offsets": [float(v) for v in gait.offsets.tolist()],
        "update": "phase = (phase + frequency * control_dt) mod 1, phase = 0 at the start; foot i is meant to be "
                  "down while (phase + offset_i) mod 1 < stance_ratio",
    }
