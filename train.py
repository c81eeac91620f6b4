"""Train a locomotion policy: python train.py --config qmini --name run1 [--resume run1]."""

from __future__ import annotations

import sys

from config import ConfigError, apply_overrides, available_configs, load_config, load_saved_config
from env.gym_env_wrapper import make_env
from env.utils.args import cli_overrides, get_args
from rl.runner import OnPolicyRunner
from rl.seed import set_seed
from utils.experiment import Experiment, ExperimentError
from utils.files import atomic_write_text
from utils.yaml import Cfg, ParamsProcess


def resolve_config(args) -> Cfg:
    """The run's config, then --set, then the dedicated flags.

    A resumed run continues with its own saved cfg.yaml (so its earlier overrides
    hold) unless --config names a different config, which then starts from that class.
    """
    overrides = list(args.set) + cli_overrides(args)
    if args.resume is not None:
        saved = load_saved_config(Experiment(args.resume).cfg_path)
        if args.config is None or args.config == getattr(saved, "name", None):
            return apply_overrides(saved, overrides)
    if args.config is None:
        raise ConfigError(f"--config is required for a new run; available configs: {', '.join(available_configs())}")
    return load_config(args.config, overrides)


def main(argv: list[str] | None = None) -> int:
    args = get_args(argv)
    try:
        experiment = Experiment(args.name)
        checkpoint = Experiment(args.resume).checkpoint() if args.resume else None
        cfg = resolve_config(args)
        if args.resume != args.name:  # a new folder (possibly seeded from another run)
            experiment.prepare_new(args.overwrite)
        else:
            experiment.log_dir.mkdir(parents=True, exist_ok=True)
        set_seed(cfg.runner.seed)
        env = make_env(cfg, cfg.runner.device)
        runner = OnPolicyRunner(env, cfg, log_dir=str(experiment.log_dir), device=cfg.runner.device,
                                model_dir=experiment.model_dir, cfg_dict=cfg.to_dict(), run_name=args.name)
        if checkpoint is not None:
            runner.load(checkpoint)
        atomic_write_text(experiment.cfg_path, ParamsProcess.dumps(cfg))
    except (ConfigError, ExperimentError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    start = runner.current_iteration
    print(f"{args.name}: training '{getattr(cfg, 'name', args.config)}' with {env.num_envs} envs on "
          f"{cfg.sim.backend} ({cfg.runner.device}); obs {env.num_obs}, critic obs {env.num_critic_obs}, "
          f"actions {env.num_actions}; iterations {start + 1}..{start + cfg.runner.max_iterations}; "
          f"writing {experiment.dir}")
    runner.learn(cfg.runner.max_iterations)
    runner.close()
    print(f"{args.name}: saved {experiment.policy_path} at iteration {runner.current_iteration}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
