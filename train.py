"""Train a locomotion policy: python train.py --config qmini --name run1 [--resume run1].

Order matters for safety: names, devices, the config and the checkpoint are all
checked, and the env and the policy built, before anything is created or
deleted under experiments/. A mistake therefore costs one line (exit status 2)
and leaves the disk as it was.

Exit status: 0 trained (or stopped by Ctrl-C/SIGTERM after saving), 1 training
failed (halted on non-finite values, or the last checkpoint write failed), 2 bad input.
"""

from __future__ import annotations

import sys

from config import ConfigError, apply_overrides, available_configs, load_config, load_saved_config
from env.gym_env_wrapper import make_env
from env.utils.args import cli_overrides, get_args
from rl.runner import OnPolicyRunner, TrainingHalted
from rl.seed import set_seed
from utils.checkpoint import CheckpointError, read_checkpoint
from utils.devices import DeviceError, check_device
from utils.experiment import Experiment, ExperimentError, open_experiment
from utils.files import atomic_write_text
from utils.yaml import Cfg, ParamsProcess

INPUT_ERRORS = (ConfigError, ExperimentError, CheckpointError, DeviceError, ValueError, FileNotFoundError)


def resolve_config(args, source: Experiment | None) -> Cfg:
    """The run's config, then --set, then the dedicated flags.

    A resumed run continues with its own saved cfg.yaml (so its earlier overrides
    hold) unless --config names a different config, which then starts from that class.
    """
    overrides = list(args.set) + cli_overrides(args)
    if source is not None:
        saved = load_saved_config(source.cfg_path)
        if args.config is None or args.config == getattr(saved, "name", None):
            return apply_overrides(saved, overrides)
    if args.config is None:
        raise ConfigError(f"--config is required for a new run; available configs: {', '.join(available_configs())}")
    return load_config(args.config, overrides)


def build(args) -> tuple[Experiment, Cfg, OnPolicyRunner]:
    """Check everything and build env and runner; only then prepare the experiment folder."""
    experiment = Experiment(args.name)
    source = open_experiment(args.resume) if args.resume is not None else None  # a name or a policy folder
    if args.checkpoint is not None and source is None:
        raise ExperimentError(f"--checkpoint {args.checkpoint} needs --resume NAME (the experiment it belongs to)")
    ckpt_path = source.checkpoint(args.checkpoint) if source is not None else None
    if args.device is not None:
        check_device(args.device, "--device")
    cfg = resolve_config(args, source)
    check_device(cfg.runner.device, "runner.device")
    in_place = source is not None and source.dir == experiment.dir
    if not in_place:
        experiment.check_new(args.overwrite)
    ckpt = None
    if ckpt_path is not None:
        ckpt = read_checkpoint(ckpt_path, cfg.runner.device, source, flag_prefix=f"--resume {source.name} ")

    set_seed(cfg.runner.seed)
    env = make_env(cfg, cfg.runner.device)
    runner = OnPolicyRunner(env, cfg, log_dir=str(experiment.log_dir), device=cfg.runner.device,
                            model_dir=experiment.model_dir, cfg_dict=cfg.to_dict(), run_name=args.name)
    if ckpt is not None:
        runner.load_state(ckpt, ckpt_path)

    if in_place:
        for path in experiment.remove_stale_temp_files():
            print(f"note: removed {path.name}, left in {path.parent} by an interrupted write", file=sys.stderr)
        experiment.log_dir.mkdir(parents=True, exist_ok=True)
    else:
        experiment.prepare_new(args.overwrite)
    return experiment, cfg, runner


def main(argv: list[str] | None = None) -> int:
    args = get_args(argv)
    try:
        experiment, cfg, runner = build(args)
        atomic_write_text(experiment.cfg_path, ParamsProcess.dumps(cfg))
    except INPUT_ERRORS as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: cannot write the experiment folder: {err}", file=sys.stderr)
        return 1

    env, start = runner.env, runner.current_iteration
    print(f"{args.name}: training '{getattr(cfg, 'name', args.config)}' with {env.num_envs} envs on "
          f"{cfg.sim.backend} ({cfg.runner.device}); obs {env.num_obs}, critic obs {env.num_critic_obs}, "
          f"actions {env.num_actions}; iterations {start + 1}..{start + cfg.runner.max_iterations}; "
          f"writing {experiment.dir}", flush=True)
    try:
        runner.learn(cfg.runner.max_iterations)
    except TrainingHalted as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        runner.close()
    if runner.last_save_failed:
        print(f"error: the last write of {experiment.policy_path} failed; it holds an earlier iteration "
              f"(see the warnings above)", file=sys.stderr)
        return 1
    print(f"{args.name}: saved {experiment.policy_path} at iteration {runner.current_iteration}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
