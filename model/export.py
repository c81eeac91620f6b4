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

from model.policy_metadata import FORMAT, policy_metadata

ONNX_NAME, JIT_NAME, YAML_NAME, SCENE_NAME = "policy.onnx", "policy.jit.pt", "policy.yaml", "scene.xml"
PARITY_ATOL = 1e-5


class ExportError(ValueError):
    """An export that is missing or disagrees with the config/checkpoint; one line."""


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
