"""Export the deployment policy for a robot: ONNX, TorchScript and a YAML description.

    experiments/<name>/export/policy.onnx     input "obs" (batch, num_obs) -> output "actions" (batch, num_actions)
    experiments/<name>/export/policy.jit.pt   the same network as TorchScript (torch.jit.load)
    experiments/<name>/export/policy.yaml     what a robot-side program needs besides the network
    experiments/<name>/export/scene.xml       the robot as trained, one standalone MJCF (+ meshes/):
                                              what deploy.sim2sim runs by default

Both networks contain the observation normaliser (`rl.inference.InferencePolicy`):
they take the observation exactly as the env builds it, described in
policy.yaml, and return the raw action. On the robot:

    frame  = concat over observation.terms of (value - offset) * scale       (one control period)
    obs    = clip(concat(last history_length frames, oldest first), -clip, clip)
    action = network(obs)
    target = clamp(default_joint_pos + action_scale * clip(action, -clip_actions, clip_actions), joint_pos_limits)

and the joint PD loop (kp, kd, torque_limits) tracks `target` every control_dt. Joints the policy
does not drive (``held_joints``, a humanoid's waist and arms) keep their own target under the same PD law.
`check_export` verifies an export folder against the config and the checkpoint.
"""

from __future__ import annotations

import copy
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
import yaml

FORMAT = "legged-ppo-policy/1"
ONNX_NAME, JIT_NAME, YAML_NAME, SCENE_NAME = "policy.onnx", "policy.jit.pt", "policy.yaml", "scene.xml"
PARITY_ATOL = 1e-5


class ExportError(ValueError):
    """An export that is missing or disagrees with the config/checkpoint; one line."""


# ----------------------------------------------------------------------------- metadata
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
        trained_noise = float(noise.noise_scales.height_measurements * noise.noise_level) if noise.add_noise else 0.0
        return {"name": name, "size": size, "unit": "m", "scale": [s.height_measurements] * size,
                "offset": [float(cfg.rewards.base_height_target)] * size, "points": points,
                "clip": float(getattr(task, "scan_clip", 1.0)),  # m, on value - offset, before the scale
                "noise": trained_noise,  # m, uniform +- draw per value and step it trained with
                "description": "base height above the ground at each of `points` (x forward, y left, in m, in the "
                               "base's yaw frame: turned with the heading only); frame value = clip(value - offset, "
                               "-clip, clip) * scale; needs a height map around the robot"}
    if name not in known:
        return {"name": name, "size": size, "unit": None, "scale": None, "offset": None,
                "description": "not described by model/export.py; see the task's observation code"}
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


# ----------------------------------------------------------------------------- writing
def _atomic(path: Path, write: Callable[[str], None]) -> Path:
    """Call write(tmp_path) for a temp file next to `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def export_onnx(policy: torch.nn.Module, num_obs: int, path: Path) -> Path:
    try:
        import onnx  # noqa: F401  (the exporter writes through it)
    except ImportError:
        raise ExportError("ONNX export needs onnx: pip install -e '.[export]'") from None
    policy = copy.deepcopy(policy).cpu().eval()
    example = torch.zeros(1, num_obs)

    def write(tmp: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript-based exporter is deprecated but needs no onnxscript
            torch.onnx.export(policy, (example,), tmp, dynamo=False, input_names=["obs"], output_names=["actions"],
                              dynamic_axes={"obs": {0: "batch"}, "actions": {0: "batch"}}, opset_version=17)

    return _atomic(path, write)


def export_jit(policy: torch.nn.Module, num_obs: int, path: Path) -> Path:
    policy = copy.deepcopy(policy).cpu().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit is deprecated in favour of torch.export, still the robot-side norm
        try:
            module = torch.jit.script(policy)
        except Exception:  # noqa: BLE001 - a module that does not script is traced instead
            module = torch.jit.trace(policy, torch.zeros(1, num_obs))
        return _atomic(path, lambda tmp: torch.jit.save(module, tmp))


def export_policy(policy: torch.nn.Module, env: Any, cfg: Any, out_dir: str | Path,
                  info: dict[str, Any] | None = None) -> dict[str, Path]:
    """Write policy.onnx, policy.jit.pt, policy.yaml and scene.xml (the robot as trained) into out_dir; return their paths."""
    out = Path(out_dir)
    if int(policy.num_obs) != int(env.num_obs) or int(policy.num_actions) != int(env.num_actions):
        raise ExportError(f"policy has num_obs={policy.num_obs}, num_actions={policy.num_actions} but the env has "
                          f"num_obs={env.num_obs}, num_actions={env.num_actions}")
    meta = policy_metadata(env, cfg)
    meta["files"] = {"onnx": ONNX_NAME, "jit": JIT_NAME, "scene": SCENE_NAME}
    meta.update(info or {})
    paths = {
        "onnx": export_onnx(policy, env.num_obs, out / ONNX_NAME),
        "jit": export_jit(policy, env.num_obs, out / JIT_NAME),
    }
    text = yaml.safe_dump(meta, sort_keys=False, default_flow_style=None, width=120)
    from utils.files import atomic_write_text

    paths["yaml"] = atomic_write_text(out / YAML_NAME, text)
    from env.sim.scene import write_scene_xml

    paths["scene"] = write_scene_xml(cfg, out / SCENE_NAME)
    return paths


# ----------------------------------------------------------------------------- loading and checking
def _read_metadata(out: Path) -> dict[str, Any]:
    """policy.yaml of an export folder as a mapping; ExportError (one line) when it is not valid YAML or no mapping."""
    try:
        meta = yaml.safe_load((out / YAML_NAME).read_text())
    except yaml.YAMLError as err:
        raise ExportError(f"{out / YAML_NAME} is not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(meta, dict):
        raise ExportError(f"{out / YAML_NAME} does not hold a mapping")
    return meta


def recorded_checkpoint(out_dir: str | Path) -> str | None:
    """The checkpoint an export folder's policy.yaml says it came from (e.g. "model/policy_500.pt"), or None."""
    out = Path(out_dir)
    if not (out / YAML_NAME).is_file():
        return None
    try:
        recorded = _read_metadata(out).get("checkpoint")
    except (ExportError, OSError):  # check_export reports a broken policy.yaml; here it only means "not recorded"
        return None
    return recorded if isinstance(recorded, str) else None


def load_onnx_session(path: str | Path):
    try:
        import onnxruntime as ort
    except ImportError:
        raise ExportError("checking ONNX needs onnxruntime: pip install -e '.[export]'") from None
    try:
        return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as err:  # noqa: BLE001 - onnxruntime raises its own types
        raise ExportError(f"{path} is not a loadable ONNX model: {' '.join(str(err).split())}") from None


def load_jit(path: str | Path) -> torch.jit.ScriptModule:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return torch.jit.load(str(path), map_location="cpu")
        except Exception as err:  # noqa: BLE001
            raise ExportError(f"{path} is not a loadable TorchScript module: {' '.join(str(err).split())}") from None


def parity(policy: torch.nn.Module | None, out_dir: str | Path, obs: torch.Tensor) -> dict[str, float]:
    """Largest |difference| of the ONNX and TorchScript actions from the reference on the same observations.

    The reference is `policy` (the PyTorch InferencePolicy) when given, else the TorchScript module.
    """
    out = Path(out_dir)
    obs = obs.detach().cpu().float()
    jit = load_jit(out / JIT_NAME)
    session = load_onnx_session(out / ONNX_NAME)
    with torch.no_grad():
        jit_actions = jit(obs).numpy()
        ref = copy.deepcopy(policy).cpu().eval()(obs).numpy() if policy is not None else jit_actions
    onnx_actions = session.run(None, {session.get_inputs()[0].name: obs.numpy()})[0]
    return {"onnx": float(np.max(np.abs(onnx_actions - ref))), "jit": float(np.max(np.abs(jit_actions - ref)))}


def check_export(out_dir: str | Path, expected: dict[str, Any], policy: torch.nn.Module | None = None,
                 num_samples: int = 64, seed: int = 0) -> dict[str, float]:
    """Check an export folder against `expected` (= `policy_metadata` of the current config).

    Raises ExportError (one line) on a missing file, a policy.yaml that disagrees
    with the config, a network whose input/output sizes differ, or actions that
    differ by more than PARITY_ATOL between ONNX, TorchScript and `policy`.
    Returns the parity figures.
    """
    out = Path(out_dir)
    for name in (YAML_NAME, ONNX_NAME, JIT_NAME):
        if not (out / name).is_file():
            raise ExportError(f"no {name} in {out}; run play.py --export first")
    meta = _read_metadata(out)
    if meta.get("format") != FORMAT:
        raise ExportError(f"{out / YAML_NAME} has format {meta.get('format')!r}, expected {FORMAT!r}")
    for key in ("num_obs", "num_actions", "joint_names", "control_dt", "action_scale", "clip_actions",
                "default_joint_pos", "kp", "kd"):
        if not _same(meta.get(key), expected[key]):
            raise ExportError(f"{out / YAML_NAME} has {key}={_short(meta.get(key))} but the config gives "
                              f"{key}={_short(expected[key])}")
    obs_meta, obs_expected = meta.get("observation") or {}, expected["observation"]
    for key in ("size", "history_length", "history_order"):
        if not _same(obs_meta.get(key), obs_expected[key]):
            raise ExportError(f"{out / YAML_NAME} has observation.{key}={_short(obs_meta.get(key))} but the config "
                              f"gives {_short(obs_expected[key])}")
    got_terms = [(t.get("name"), t.get("size")) for t in obs_meta.get("terms", [])]
    want_terms = [(t["name"], t["size"]) for t in obs_expected["terms"]]
    if got_terms != want_terms:
        raise ExportError(f"{out / YAML_NAME} has observation terms {got_terms} but the task builds {want_terms}")

    num_obs, num_actions = int(expected["num_obs"]), int(expected["num_actions"])
    session = load_onnx_session(out / ONNX_NAME)
    in_shape, out_shape = session.get_inputs()[0].shape, session.get_outputs()[0].shape
    if len(in_shape) != 2 or in_shape[1] != num_obs:
        raise ExportError(f"{out / ONNX_NAME} takes input of shape {in_shape} but num_obs is {num_obs}")
    if len(out_shape) != 2 or out_shape[1] != num_actions:
        raise ExportError(f"{out / ONNX_NAME} returns shape {out_shape} but num_actions is {num_actions}")
    jit = load_jit(out / JIT_NAME)
    try:
        with torch.no_grad():
            jit_out = jit(torch.zeros(1, num_obs))
    except Exception as err:  # noqa: BLE001 - a size mismatch surfaces as a RuntimeError inside the module
        raise ExportError(f"{out / JIT_NAME} fails on a ({1}, {num_obs}) observation: "
                          f"{' '.join(str(err).split())[:200]}") from None
    if tuple(jit_out.shape) != (1, num_actions):
        raise ExportError(f"{out / JIT_NAME} returns shape {tuple(jit_out.shape)} but num_actions is {num_actions}")

    gen = torch.Generator().manual_seed(seed)
    obs = torch.randn(num_samples, num_obs, generator=gen) * 2.0
    diffs = parity(policy, out, obs)
    for kind, diff in diffs.items():
        if not diff <= PARITY_ATOL:
            ref = "the checkpoint's policy" if policy is not None else "TorchScript"
            raise ExportError(f"{out / (ONNX_NAME if kind == 'onnx' else JIT_NAME)} gives actions up to {diff:.2e} "
                              f"away from {ref} (tolerance {PARITY_ATOL:g}); export again with --export")
    return diffs


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    return a == b


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
