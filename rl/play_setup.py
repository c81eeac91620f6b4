"""The pieces of a play.py session: a run's saved config and checkpoint turned into an env and a policy.

play.py and the benchmarks that replay a trained policy (eval_compare, ground_contacts, reward_budget)
build their env and policy the same way: the config as trained at the checkpoint's iteration (its
stages) with the user's --set on top, randomisation, noise and pushes off unless asked.
"""

from __future__ import annotations

from pathlib import Path

import torch

from config import apply_overrides, load_saved_config
from config.stages import config_at
from env.gym_env_wrapper import GymEnvWrapper, make_env
from rl.inference import inference_policy_from_checkpoint
from rl.seed import set_seed
from utils.devices import DeviceError, check_device
from utils.experiment import Experiment, ExperimentError, open_experiment
from utils.yaml import Cfg, ParamsProcess


class PlayError(ValueError):
    """A user-facing problem; printed as one line."""


def load_experiment(args) -> tuple[Experiment, Cfg]:
    """The experiment and its saved config, as trained (no overrides yet: see `session_config`)."""
    exp = open_experiment(args.name)  # a name in experiments/, or a policy folder's path (read only)
    if not exp.dir.is_dir():
        raise ExperimentError(f"no experiment '{args.name}': looked for {exp.dir}")
    if not exp.cfg_path.is_file():
        raise ExperimentError(f"experiment '{args.name}' has no model/cfg.yaml (looked for {exp.cfg_path}); "
                              "train it with train.py first")
    return exp, load_saved_config(exp.cfg_path)


def session_config(saved: Cfg, args, iteration: int = 0) -> Cfg:
    """A copy of the saved config with the stage settings (runner.stages) it trained under at `iteration`
    (0: none yet) and the user's --set and --backend on top."""
    return apply_overrides(config_at(saved, iteration),
                           args.set + ([f"sim.backend={args.backend}"] if args.backend else []))


def pick_device(args, cfg: Cfg) -> str:
    """--device if usable here; else the run's runner.device when usable, else cpu."""
    if args.device is not None:
        return check_device(args.device, "--device")
    saved = str(getattr(cfg.runner, "device", "cpu"))
    try:
        return check_device(saved, "runner.device")
    except DeviceError:
        return "cpu"  # trained on a GPU, played on a laptop


def play_cfg(cfg: Cfg, args, num_envs: int, device: str, episode_length_s: float | None = None) -> Cfg:
    """A copy of the run's config for playing: randomisation, noise and pushes off unless asked."""
    cfg = ParamsProcess.from_dict(cfg.to_dict())
    cfg.env.num_envs = num_envs
    cfg.runner.device = device
    if not args.randomize:
        for field in cfg.domain_rand.fields():
            if field.startswith("randomize_") and isinstance(getattr(cfg.domain_rand, field), bool):
                setattr(cfg.domain_rand, field, False)
        if hasattr(cfg.domain_rand, "max_action_latency"):
            cfg.domain_rand.max_action_latency = 0  # latency is drawn per env too: nominal is none
        for field in ("joint_pos_noise", "joint_vel_noise", "base_vel_noise", "yaw_noise"):
            if hasattr(cfg.init_state, field):
                setattr(cfg.init_state, field, 0.0)
    if not args.push and hasattr(cfg.domain_rand, "push_robots"):
        cfg.domain_rand.push_robots = False
    if not args.noise and hasattr(cfg.noise, "add_noise"):
        cfg.noise.add_noise = False
    if episode_length_s is not None:
        cfg.env.episode_length_s = float(episode_length_s)
    return cfg


def build_env(cfg: Cfg, seed: int, args=None, spread: bool = False) -> GymEnvWrapper:
    """The env; on rough terrain with --terrain/--level (or `spread`, for --eval) its robots pinned to tiles."""
    set_seed(seed)
    env = make_env(cfg, cfg.runner.device)
    curriculum = env.robot.ground.curriculum
    terrain, level = (args.terrain, args.level) if args is not None else (None, None)
    if curriculum is not None and (spread or terrain is not None or level is not None):
        curriculum.pin(terrain, level)
    return env


def load_trained(ckpt: dict, path: Path, cfg: Cfg, env: GymEnvWrapper, device: str):
    try:
        policy = inference_policy_from_checkpoint(ckpt, cfg.policy, device, str(path))
    except (RuntimeError, KeyError, ValueError) as err:
        raise PlayError(f"cannot build the policy of checkpoint {path}: {' '.join(str(err).split())}") from None
    if policy.num_obs != env.num_obs or policy.num_actions != env.num_actions:
        raise PlayError(f"checkpoint {path} has num_obs={policy.num_obs}, num_actions={policy.num_actions} but the "
                        f"env built from cfg.yaml has num_obs={env.num_obs}, num_actions={env.num_actions}")
    return policy


def action_std(ckpt: dict | None, cfg: Cfg, num_actions: int) -> torch.Tensor:
    """The trained policy's action std (the random baseline's scale), else policy.init_noise_std."""
    log_std = (ckpt or {}).get("actor", {}).get("log_std")
    if isinstance(log_std, torch.Tensor) and log_std.numel() == num_actions:
        return log_std.detach().cpu().exp().clamp(float(cfg.policy.min_std), float(cfg.policy.max_std)).float()
    return torch.full((num_actions,), float(cfg.policy.init_noise_std))
