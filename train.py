"""Train a locomotion policy: python train.py --config qmini --name run1 [--resume run1].

Order matters for safety: names, devices, the config and the checkpoint are all
checked, and the env and the policy built, before anything is created or
deleted under experiments/. A mistake therefore costs one line (exit status 2)
and leaves the disk as it was.

Exit status: 0 trained (or stopped by Ctrl-C/SIGTERM after saving), 1 training
failed (halted on non-finite values, the last checkpoint write failed, or a rank
failed), 2 bad input, 130 aborted by a second Ctrl-C (one line; policy.pt keeps
the last completed checkpoint, see rl.stop_signal).

Under torchrun (WORLD_SIZE > 1) every rank runs this script: each simulates
`env.num_envs` envs of its own (seed + rank), rank 0 alone writes, and
`rl.distributed` keeps the ranks one data-parallel job.
"""

from __future__ import annotations

import sys
from pathlib import Path

from config import ConfigError, apply_overrides, available_configs, load_config, load_saved_config
from env.gym_env_wrapper import make_env
from env.robot_check import require_fast_check
from env.sim.mujoco_log import send_mujoco_log_to
from env.utils.args import cli_overrides, get_args
from rl.distributed import Sync, lost_a_peer, setup as setup_distributed
from rl.loggers import require_logger
from rl.runner import OnPolicyRunner, TrainingHalted
from rl.seed import set_seed
from utils.checkpoint import CheckpointError, read_checkpoint
from utils.devices import DeviceError, check_device
from utils.experiment import Experiment, ExperimentError, open_experiment
from utils.files import atomic_write_text
from utils.superseded import set_aside_newer
from utils.warm_start import RECORD_NAME, WarmSource, read_source
from utils.yaml import Cfg, ParamsProcess

INPUT_ERRORS = (ConfigError, ExperimentError, CheckpointError, DeviceError, ValueError, FileNotFoundError)


def resolve_config(args, source: Experiment | None) -> Cfg:
    """The run's config, then --set, then the dedicated flags.

    A resumed run continues with its own saved cfg.yaml (so its earlier overrides
    hold) unless --config names a different config, which then starts from that class.
    """
    overrides = list(args.set) + cli_overrides(args)
    if source is not None and args.final_stage:
        raise ConfigError(f"--final_stage starts a new run; --resume {args.resume} continues with the run's own "
                          "saved config and stages (drop one of the two)")
    if source is not None:
        saved = load_saved_config(source.cfg_path)
        if args.config is None or args.config == getattr(saved, "name", None):
            return apply_overrides(saved, overrides)
    if args.config is None:
        raise ConfigError(f"--config is required for a new run; available configs: {', '.join(available_configs())}")
    return load_config(args.config, overrides, final_stage=args.final_stage)


def build(args, sync: Sync) -> tuple[Experiment, Cfg, OnPolicyRunner]:
    """Check everything and build env and runner; only then prepare the experiment folder (rank 0)."""
    experiment = Experiment(args.name)
    warm = warm_source(args, experiment)  # --init_from: read now, loaded once the networks exist
    source = open_experiment(args.resume) if args.resume is not None else None  # a name or a policy folder
    if args.checkpoint is not None and source is None:
        raise ExperimentError(f"--checkpoint {args.checkpoint} needs --resume NAME (the experiment it belongs to)")
    fresh = source is not None and args.checkpoint is None and source.unstarted()  # stopped before its first save
    ckpt_path = source.checkpoint(args.checkpoint) if source is not None and not fresh else None
    if args.device is not None:
        check_device(args.device, "--device")
    cfg = resolve_config(args, source)
    check_device(cfg.runner.device, "runner.device")
    require_logger(cfg.runner.logger)  # runner.logger=wandb without the wandb package: one line, nothing written
    require_fast_check(cfg)  # a robot that cannot work fails here, in milliseconds, not after the env is built
    in_place = source is not None and source.dir == experiment.dir
    if not in_place:
        experiment.check_new(args.overwrite)
    ckpt = None
    if ckpt_path is not None:
        ckpt = read_checkpoint(ckpt_path, cfg.runner.device, source, flag_prefix=f"--resume {source.name} ")

    set_seed(cfg.runner.seed + sync.rank)  # each rank its own envs
    # MuJoCo's warnings: into the run's log/ (written once the folder exists), never MUJOCO_LOG.TXT in the cwd
    send_mujoco_log_to(experiment.log_dir if sync.is_main else None)
    env = make_env(cfg, cfg.runner.device)
    main = sync.is_main  # only rank 0 writes and prints
    runner = OnPolicyRunner(env, cfg, log_dir=str(experiment.log_dir) if main else None, device=cfg.runner.device,
                            model_dir=experiment.model_dir if main else None, cfg_dict=cfg.to_dict(),
                            run_name=args.name, verbose=main, sync=sync)
    if ckpt is not None:
        runner.load_state(ckpt, ckpt_path)
        if sync.distributed:  # the checkpoint holds one RNG state; ranks must not draw the same episodes
            set_seed(cfg.runner.seed + sync.rank + 1_000_003 * runner.current_iteration)
    if warm is not None:  # every rank loads the same file; a misfit actor is one line, before anything is written
        normalizers = (runner.obs_normalizer, runner.critic_obs_normalizer) if runner.normalize_observations else \
            (None, None)
        warm.load_into(runner.alg.actor, runner.alg.critic, *normalizers, activation=cfg.policy.activation,
                       growth=warm.growth_for(env))

    if main:
        if fresh:
            print(f"note: experiment '{source.name}' has no checkpoint yet (it stopped before its first save): "
                  "starting from iteration 0 with its model/cfg.yaml", file=sys.stderr)
        prepare_folder(experiment, in_place, args.overwrite, ckpt_path, runner.current_iteration)
        if warm is not None:
            print(warm.line())
            note = warm.config_note(getattr(cfg, "name", None))
            if note:
                print(note, file=sys.stderr)
            atomic_write_text(experiment.model_dir / RECORD_NAME, warm.record())  # where the first weights came from
    return experiment, cfg, runner


def warm_source(args, experiment: Experiment) -> WarmSource | None:
    """The --init_from source, read (before anything is built); None without --init_from."""
    if args.init_from is None:
        return None
    if args.resume is not None:
        raise ExperimentError(f"--init_from and --resume do not go together: --resume {args.resume} continues a run "
                              f"(its counters, optimizer and config), --init_from {args.init_from} starts a new run "
                              "from another policy's weights; drop one")
    return read_source(args.init_from, experiment)


def prepare_folder(experiment: Experiment, in_place: bool, overwrite: bool, resumed: Path | None = None,
                   iteration: int = 0) -> None:
    """A resumed run's folder is cleaned of killed writes' temp files and of what resuming `resumed` (an older
    checkpoint, at `iteration`) would overwrite (`utils.superseded`); a new run's is made (or replaced)."""
    if in_place:
        for path in experiment.remove_stale_temp_files():
            print(f"note: removed {path.name}, left in {path.parent} by an interrupted write", file=sys.stderr)
        note = set_aside_newer(experiment, resumed, iteration) if resumed is not None else None
        if note:
            print(note, file=sys.stderr)
        experiment.log_dir.mkdir(parents=True, exist_ok=True)
    else:
        experiment.prepare_new(overwrite)


def close_logs(runner: OnPolicyRunner, name: str, sync: Sync) -> bool:
    """Close the loggers (W&B's finish can take seconds); a Ctrl-C meanwhile is one line, not a traceback."""
    try:
        runner.close()
        return True
    except KeyboardInterrupt:
        if sync.is_main:
            print(f"{name}: interrupted (Ctrl-C) while closing the logs; the checkpoints were already written",
                  file=sys.stderr)
        return False


def main(argv: list[str] | None = None) -> int:
    args = get_args(argv)
    try:
        sync = setup_distributed(args.dist_backend, args.device or "cpu")
    except (ValueError, RuntimeError) as err:
        print(f"error: cannot join the torchrun job: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    try:
        return train(args, sync)
    except KeyboardInterrupt:  # Ctrl-C before training installed its own handler (e.g. while the env was built)
        if sync.is_main:
            print(f"{args.name}: interrupted (Ctrl-C) before training started", file=sys.stderr)
        return 130
    finally:
        sync.close()


def train(args, sync: Sync) -> int:
    try:
        experiment, cfg, runner = build(args, sync)
        cfg.runner.precision = runner.precision.choice  # cfg.yaml records what trained ("auto" resolved)
        if sync.is_main:
            atomic_write_text(experiment.cfg_path, ParamsProcess.dumps(cfg))
    except INPUT_ERRORS as err:
        if sync.is_main:  # every rank sees the same arguments: one line, not one per rank
            print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: cannot write the experiment folder: {err}", file=sys.stderr)
        return 1

    env, start = runner.env, runner.current_iteration
    ranks = f"{sync.world_size} ranks x {env.num_envs} = {env.num_envs * sync.world_size} envs ({sync.backend})" \
        if sync.distributed else f"{env.num_envs} envs"
    runner.log.print(f"{args.name}: training '{getattr(cfg, 'name', args.config)}' with {ranks} on "
                     f"{cfg.sim.backend} ({cfg.runner.device}); obs {env.num_obs}, critic obs {env.num_critic_obs}, "
                     f"actions {env.num_actions}; iterations {start + 1}..{start + cfg.runner.max_iterations}; "
                     f"precision {runner.precision.choice} ({runner.precision_reason}); writing {experiment.dir}")
    try:
        runner.learn(cfg.runner.max_iterations)
    except KeyboardInterrupt:  # a second Ctrl-C (rl.stop_signal): one line saying what is kept
        if sync.is_main:
            print(aborted_line(args, experiment), file=sys.stderr)
        return 130
    except TrainingHalted as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001
        if not sync.distributed:
            raise
        # one line from the rank that failed; a rank that only lost its peers stays quiet (torchrun names the first)
        if not lost_a_peer(err):
            print(f"error: rank {sync.rank}: {type(err).__name__}: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    finally:
        closed = close_logs(runner, args.name, sync)
    if not closed:
        return 130
    if runner.last_save_failed:
        print(f"error: the last write of {experiment.policy_path} failed; it holds an earlier iteration "
              f"(see the warnings above)", file=sys.stderr)
        return 1
    if sync.is_main:
        print(f"{args.name}: saved {experiment.policy_path} at iteration {runner.current_iteration}")
    return 0


def aborted_line(args, experiment: Experiment) -> str:
    """The one line after a second Ctrl-C: what policy.pt holds (every write is atomic) and how to go on."""
    again = f"train.py --name {args.name} --resume {args.name}"
    try:
        iteration = read_checkpoint(experiment.policy_path)["iteration"]
    except CheckpointError:
        how = f"{again} starts it from iteration 0" if args.resume in (None, args.name) else \
            "the same command with --overwrite starts it again"  # a resume of another run: its weights, once more
        return f"{args.name}: aborted by a second Ctrl-C before the first checkpoint; {how}"
    return (f"{args.name}: aborted by a second Ctrl-C; {experiment.policy_path} holds iteration {iteration}; "
            f"{again} continues from there")


if __name__ == "__main__":
    sys.exit(main())
