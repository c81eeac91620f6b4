"""Read an exported policy: policy.yaml (format "legged-ppo-policy/1") and policy.onnx.

This module is the reader of the export format; everything a robot program needs
is in these two files (written by model/export.py and model/policy_metadata.py in the training package):

    policy.onnx   input "obs" float32 (batch, num_obs) -> output "actions" float32 (batch, num_actions).
                  The observation normaliser is inside the network: feed the raw observation below.
    policy.yaml   the mapping below (units in brackets)

    joint_names        [str] * num_actions   the order of every per-joint list and of the actions
    default_joint_pos  [rad] * num_actions   the pose that action 0 commands
    joint_pos_limits   [[lo, hi] rad] * num_actions
    action_scale       rad per unit action
    clip_actions       actions are clipped to +-clip_actions first
    kp, kd             [N*m/rad], [N*m*s/rad] * num_actions: the joint PD
    torque_limits      [N*m or null] * num_actions: the PD output is clamped to +-limit
    control_dt         s, one policy step = decimation * sim_dt
    sim_dt, decimation s, the physics step it was trained with, and physics steps per policy step
    observation        size, frame_size, history_length, history_order ("oldest_first"), clip, and
                       terms: [{name, start, size, scale [size], offset [size], unit, description}]
    commands           lin_vel_x, lin_vel_y [m/s], ang_vel_yaw [rad/s] ranges it was trained on,
                       zero_threshold (commands below it were trained as exact zeros)
    gait               null, or {frequency_range [Hz], stance_ratio, foot_phase_offsets, update}

Each control period the robot program computes

    frame  = concat over terms of (value(term) - offset) * scale
    obs    = clip(concat(last history_length frames, oldest first), -clip, clip)
    action = network(obs)
    target = clamp(default_joint_pos + action_scale * clip(action, -clip_actions, clip_actions), joint_pos_limits)
    torque = clamp(kp * (target - q) - kd * qdot, -torque_limits, torque_limits)   (every physics step)

deploy/observation.py says what value(term) is for each term name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

FORMAT = "legged-ppo-policy/1"
YAML_NAME, ONNX_NAME = "policy.yaml", "policy.onnx"


class DeployError(ValueError):
    """Bad input (files, model, flags); the message is one line."""


@dataclass(frozen=True)
class Term:
    name: str
    start: int
    size: int
    scale: np.ndarray  # (size,)
    offset: np.ndarray  # (size,)
    clip: float | None = None  # value - offset is clipped to +-clip before the scale (height_scan)
    points: np.ndarray | None = None  # (size, 2) m, where a height_scan samples the ground (base yaw frame)
    noise: float = 0.0  # m, uniform +- noise the term trained with (height_scan; deploy adds none unless asked)
    drift: float = 0.0  # m, uniform +- per-episode map offset it trained with (height_scan; --scan-drift tests one)


@dataclass(frozen=True)
class HeldJoints:
    """Joints the policy does not drive (policy.yaml ``held_joints``): the robot's PD holds each at its target."""

    names: list[str]
    target: np.ndarray  # rad
    kp: np.ndarray  # N*m/rad
    kd: np.ndarray  # N*m*s/rad
    torque_limits: np.ndarray  # N*m, inf where unlimited


NO_HELD_JOINTS = HeldJoints([], np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))


@dataclass(frozen=True)
class PolicySpec:
    """policy.yaml, checked and turned into arrays (per-joint arrays in joint_names order)."""

    path: Path  # the folder holding policy.yaml and policy.onnx
    config: str | None
    num_obs: int
    num_actions: int
    input_name: str
    output_name: str
    joint_names: list[str]
    default_joint_pos: np.ndarray  # rad (nu,)
    joint_pos_limits: np.ndarray  # rad (nu, 2)
    action_scale: float
    clip_actions: float
    kp: np.ndarray  # N*m/rad (nu,)
    kd: np.ndarray  # N*m*s/rad (nu,)
    torque_limits: np.ndarray  # N*m (nu,), inf where unlimited
    control_dt: float
    sim_dt: float
    decimation: int
    history_length: int
    frame_size: int
    obs_clip: float
    terms: list[Term]
    command_ranges: np.ndarray  # (3, 2): vx m/s, vy m/s, yaw rate rad/s
    zero_threshold: float
    gait: dict[str, Any] | None
    training: dict[str, Any] | None  # how it was trained (fall limits, pushes); exports since issue #11 have it
    held: HeldJoints = NO_HELD_JOINTS  # joints held at a fixed target by the PD (a humanoid's arms), after joint_names


def resolve_export_dir(path: str | Path) -> Path:
    """DIR itself when it holds policy.yaml, else DIR/export (an experiment or results folder)."""
    folder = Path(path)
    if not folder.is_dir():
        raise DeployError(f"--export {folder}: no such folder")
    for candidate in (folder, folder / "export"):
        if (candidate / YAML_NAME).is_file():
            if not (candidate / ONNX_NAME).is_file():
                raise DeployError(f"{candidate} has {YAML_NAME} but no {ONNX_NAME}; export with play.py --export")
            return candidate
    raise DeployError(f"no {YAML_NAME} in {folder} or {folder / 'export'}; export with play.py --name RUN --export")


def _floats(meta: dict, key: str, n: int, where: Path, none_is_inf: bool = False) -> np.ndarray:
    value = meta.get(key)
    if not isinstance(value, list) or len(value) != n:
        raise DeployError(f"{where}: {key} must be a list of {n} numbers, got {_short(value)}")
    try:
        out = np.array([np.inf if v is None and none_is_inf else float(v) for v in value], dtype=np.float64)
    except (TypeError, ValueError):
        raise DeployError(f"{where}: {key} must hold numbers, got {_short(value)}") from None
    if np.isnan(out).any() or (np.isinf(out) & ~np.array([v is None for v in value])).any():
        raise DeployError(f"{where}: {key} must hold finite numbers, got {_short(value)}")
    return out


def _scan_fields(term: dict, size: int, where: Path) -> dict[str, Any]:
    """clip, points, noise and drift of a term that has them (height_scan), checked."""
    out: dict[str, Any] = {}
    if term.get("clip") is not None:
        out["clip"] = _number(term, "clip", where)
    if term.get("points") is not None:
        pts = term["points"]
        if not isinstance(pts, list) or len(pts) != size or not all(isinstance(p, list) and len(p) == 2 for p in pts):
            raise DeployError(f"{where}: observation term '{term['name']}' points must be {size} pairs [x, y] (m)")
        out["points"] = np.array(pts, dtype=np.float64)
        if not np.isfinite(out["points"]).all():
            raise DeployError(f"{where}: observation term '{term['name']}' points must be finite numbers")
    for key in ("noise", "drift"):
        if term.get(key) is not None:
            out[key] = _number(term, key, where, positive=False)
    return out


def _number(meta: dict, key: str, where: Path, positive: bool = True) -> float:
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (positive and value <= 0):
        raise DeployError(f"{where}: {key} must be a {'positive ' if positive else ''}number, got {_short(value)}")
    return float(value)


def read_policy_yaml(folder: Path) -> PolicySpec:
    """policy.yaml of `folder`, checked; anything malformed is a one-line DeployError."""
    try:
        return _read_policy_yaml(folder)
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        if isinstance(err, DeployError):
            raise
        raise DeployError(f"{folder / YAML_NAME} is malformed: {' '.join(str(err).split())[:160]}") from None


def _read_policy_yaml(folder: Path) -> PolicySpec:
    where = folder / YAML_NAME
    try:
        meta = yaml.safe_load(where.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise DeployError(f"cannot read {where}: {' '.join(str(err).split())[:200]}") from None
    if not isinstance(meta, dict):
        raise DeployError(f"{where} does not hold a mapping")
    if meta.get("format") != FORMAT:
        raise DeployError(f"{where} has format {meta.get('format')!r}; this reader understands {FORMAT!r}")
    names = meta.get("joint_names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise DeployError(f"{where}: joint_names must be a non-empty list of names")
    nu = len(names)
    if meta.get("num_actions") != nu:
        raise DeployError(f"{where}: num_actions={meta.get('num_actions')} but joint_names has {nu} names")
    limits = meta.get("joint_pos_limits")
    if not isinstance(limits, list) or len(limits) != nu or not all(isinstance(r, list) and len(r) == 2 for r in limits):
        raise DeployError(f"{where}: joint_pos_limits must be {nu} pairs [lo, hi]")
    obs = meta.get("observation")
    if not isinstance(obs, dict):
        raise DeployError(f"{where}: no observation section")
    terms, start = [], 0
    for i, t in enumerate(obs.get("terms") or []):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not isinstance(t.get("size"), int):
            raise DeployError(f"{where}: observation term {i + 1} needs a name and an integer size")
        size = int(t["size"])
        if t.get("start", start) != start:
            raise DeployError(f"{where}: observation term {t['name']} starts at {t.get('start')}, expected {start}")
        if t.get("scale") is None or t.get("offset") is None:
            raise DeployError(f"{where}: observation term '{t['name']}' has no scale/offset; this reader cannot "
                              "build it")
        terms.append(Term(t["name"], start, size, _floats(t, "scale", size, where), _floats(t, "offset", size, where),
                          **_scan_fields(t, size, where)))
        start += size
    if not terms:
        raise DeployError(f"{where}: observation.terms is empty")
    history = int(obs.get("history_length", 1))
    num_obs = meta.get("num_obs")
    if obs.get("frame_size", start) != start or history < 1 or num_obs != start * history \
            or obs.get("size", num_obs) != num_obs:
        raise DeployError(f"{where}: observation terms add up to {start} per frame x history {history}, but "
                          f"frame_size={obs.get('frame_size')}, size={obs.get('size')}, num_obs={num_obs}")
    if obs.get("history_order", "oldest_first") != "oldest_first":
        raise DeployError(f"{where}: observation.history_order {obs.get('history_order')!r} is not 'oldest_first'")
    control_dt, sim_dt = _number(meta, "control_dt", where), _number(meta, "sim_dt", where)
    decimation = meta.get("decimation")
    if not isinstance(decimation, int) or decimation < 1 or abs(decimation * sim_dt - control_dt) > 1e-9 + 1e-6 * control_dt:
        raise DeployError(f"{where}: decimation={decimation} x sim_dt={sim_dt} must equal control_dt={control_dt}")
    cmd = meta.get("commands") or {}
    try:
        ranges = np.array([[float(v) for v in cmd[k]] for k in ("lin_vel_x", "lin_vel_y", "ang_vel_yaw")])
    except (KeyError, TypeError, ValueError):
        raise DeployError(f"{where}: commands needs lin_vel_x, lin_vel_y and ang_vel_yaw ranges [lo, hi]") from None
    if ranges.shape != (3, 2):
        raise DeployError(f"{where}: commands ranges must be pairs [lo, hi]")
    io = (meta.get("input") or {}), (meta.get("output") or {})
    return PolicySpec(
        path=folder, config=meta.get("config"), num_obs=int(num_obs), num_actions=nu,
        input_name=str(io[0].get("name", "obs")), output_name=str(io[1].get("name", "actions")),
        joint_names=list(names),
        default_joint_pos=_floats(meta, "default_joint_pos", nu, where),
        joint_pos_limits=np.array(limits, dtype=np.float64),
        action_scale=_number(meta, "action_scale", where), clip_actions=_number(meta, "clip_actions", where),
        kp=_floats(meta, "kp", nu, where), kd=_floats(meta, "kd", nu, where),
        torque_limits=_floats(meta, "torque_limits", nu, where, none_is_inf=True),
        control_dt=control_dt, sim_dt=sim_dt, decimation=decimation,
        history_length=history, frame_size=start, obs_clip=_number(obs, "clip", where), terms=terms,
        command_ranges=ranges, zero_threshold=float(cmd.get("zero_threshold", 0.0) or 0.0),
        gait=meta.get("gait") if isinstance(meta.get("gait"), dict) else None,
        training=meta.get("training") if isinstance(meta.get("training"), dict) else None,
        held=_held_joints(meta, names, where),
    )


def _held_joints(meta: dict, policy_joints: list[str], where: Path) -> HeldJoints:
    held = meta.get("held_joints")
    if held is None:
        return NO_HELD_JOINTS
    names = held.get("names") if isinstance(held, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or set(names) & set(policy_joints):
        raise DeployError(f"{where}: held_joints.names must be a list of joint names not in joint_names")
    n, h = len(names), {f"held_joints.{k}": v for k, v in held.items()}  # named so in the error lines
    return HeldJoints(list(names), _floats(h, "held_joints.target", n, where), _floats(h, "held_joints.kp", n, where),
                      _floats(h, "held_joints.kd", n, where),
                      _floats(h, "held_joints.torque_limits", n, where, none_is_inf=True))


class OnnxPolicy:
    """policy.onnx on onnxruntime's CPU provider: act(obs (B, num_obs) float32) -> actions (B, num_actions)."""

    def __init__(self, spec: PolicySpec, threads: int = 1):
        try:
            import onnxruntime as ort
        except ImportError:
            raise DeployError("running the policy needs onnxruntime: pip install onnxruntime") from None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads  # a small MLP: one thread is fastest and leaves the physics its core
        opts.inter_op_num_threads = threads
        opts.log_severity_level = 3
        path = spec.path / ONNX_NAME
        try:
            self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as err:  # noqa: BLE001 - onnxruntime raises its own types
            raise DeployError(f"{path} is not a loadable ONNX model: {' '.join(str(err).split())[:200]}") from None
        inp, out = self.session.get_inputs()[0], self.session.get_outputs()[0]
        if len(inp.shape) != 2 or inp.shape[1] != spec.num_obs:
            raise DeployError(f"{path} takes input of shape {inp.shape} but policy.yaml has num_obs={spec.num_obs}")
        if len(out.shape) != 2 or out.shape[1] != spec.num_actions:
            raise DeployError(f"{path} returns shape {out.shape} but policy.yaml has num_actions={spec.num_actions}")
        self.input_name = inp.name

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self.session.run(None, {self.input_name: np.ascontiguousarray(obs, dtype=np.float32)})[0]


def joint_targets(spec: PolicySpec, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Network outputs (B, nu) -> (actions clipped to +-clip_actions, joint targets clamped to the limits), float64."""
    action = np.clip(np.asarray(actions, dtype=np.float64), -spec.clip_actions, spec.clip_actions)
    target = np.clip(spec.default_joint_pos + spec.action_scale * action, spec.joint_pos_limits[:, 0],
                     spec.joint_pos_limits[:, 1])
    return action, target


def load_policy(path: str | Path) -> tuple[PolicySpec, OnnxPolicy]:
    folder = resolve_export_dir(path)
    spec = read_policy_yaml(folder)
    return spec, OnnxPolicy(spec)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
