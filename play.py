"""Watch, record, evaluate or export a trained policy: python play.py --name run1 [--video out.mp4 | --eval 64 | --export].

The env and the policy are rebuilt from experiments/<name>/model/cfg.yaml and a
checkpoint, without the Python config class. Domain randomisation, spawn noise,
observation noise and pushes are off unless --randomize / --noise / --push.
"""

from __future__ import annotations

import sys

from utils.video import VideoError, configure_headless_gl, import_mujoco

configure_headless_gl()  # before anything imports mujoco: MuJoCo picks its GL backend on import
if __name__ == "__main__":
    try:
        import_mujoco()
    except VideoError as _err:
        print(f"error: {_err}", file=sys.stderr)
        sys.exit(2)

import math  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import torch  # noqa: E402

from config import ConfigError  # noqa: E402
from env.gym_env_wrapper import GymEnvWrapper  # noqa: E402
from env.sim.mujoco_log import send_mujoco_log_to  # noqa: E402
from env.terrain.curriculum import check_tile_flags  # noqa: E402
from env.utils.command_schedule import CommandDriver, CommandSchedule  # noqa: E402
from env.utils.play_args import get_play_args  # noqa: E402
from rl.eval_plots import plot_tracking  # noqa: E402
from rl.evaluation import (EVAL_UNITS, eval_commands, evaluate, format_fall_causes, format_table,  # noqa: E402
                           parse_policy_list, random_policy, round_floats, write_json, zero_policy)
from rl.play_setup import (PlayError, action_std, build_env, load_experiment, load_trained, pick_device,  # noqa: E402
                           play_cfg, session_config)
from rl.terrain_eval import by_tile, format_tiles, plot_tiles  # noqa: E402
from utils.checkpoint import CheckpointError, read_checkpoint  # noqa: E402
from utils.devices import DeviceError  # noqa: E402
from utils.experiment import ExperimentError  # noqa: E402

Policy = Callable[[torch.Tensor], torch.Tensor]


# ----------------------------------------------------------------------------- set-up
def _relative(path: Path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


class Session:
    """What every mode shares: the experiment, its config, the chosen checkpoint and options."""

    def __init__(self, args):
        self.args = args
        self.exp, saved = load_experiment(args)
        self.cfg = session_config(saved, args)
        send_mujoco_log_to(None if self.exp.read_only else self.exp.log_dir)  # never MUJOCO_LOG.TXT in the cwd
        check_tile_flags(self.cfg.terrain, args.terrain, args.level, getattr(self.cfg, "name", "?"))
        if self.exp.read_only and args.eval and not args.out:
            raise PlayError(f"{self.exp.dir} is a read-only policy folder; give --out DIR for eval.json")
        self.policies = parse_policy_list(args.policy)
        self.schedule = CommandSchedule.parse(args.commands) if args.commands is not None else None
        self.device = pick_device(args, self.cfg)
        self.seed = int(args.seed if args.seed is not None else getattr(self.cfg.runner, "seed", 0))
        watch = not (args.video or args.eval or args.export or args.check_export)
        self.watch = watch
        uses_trained = "trained" in (self.policies if args.eval else self.policies[:1])
        needs_ckpt = args.export or ((watch or args.video or args.eval) and uses_trained)
        self.ckpt: Path | None = None
        self.ckpt_data: dict | None = None
        if needs_ckpt or args.checkpoint is not None:
            self.ckpt = self.exp.checkpoint(args.checkpoint)
            self.ckpt_data = read_checkpoint(self.ckpt, "cpu", self.exp)
        elif self.exp.policy_path.is_file():
            self.ckpt = self.exp.policy_path  # optional: gives the random baseline the trained std
            if "random" in self.policies:  # its only reader: other modes need not load it
                try:
                    self.ckpt_data = read_checkpoint(self.ckpt, "cpu")
                except CheckpointError:
                    self.ckpt = None  # not needed by the baselines asked for
        if self.ckpt_data is not None and getattr(self.cfg.runner, "stages", None):
            self.cfg = session_config(saved, args, self.iteration())  # e.g. the fall penalty it ended with
        if self.schedule is not None:
            for note in self.schedule.out_of_range(self.cfg.commands):
                print(f"note: {note}", flush=True)

    def ckpt_name(self) -> str | None:
        return None if self.ckpt is None else _relative(self.ckpt, self.exp.dir)

    def iteration(self) -> int | None:
        return None if self.ckpt_data is None else int(self.ckpt_data["iteration"])

    def policy(self, name: str, env: GymEnvWrapper) -> Policy:
        if name == "trained":
            assert self.ckpt is not None and self.ckpt_data is not None
            return load_trained(self.ckpt_data, self.ckpt, self.cfg, env, self.device)
        if name == "zero":
            return zero_policy(env.num_actions)
        return random_policy(action_std(self.ckpt_data, self.cfg, env.num_actions), env.num_actions, self.seed)

    def header(self, mode: str, num_envs: int) -> str:
        a = self.args
        onoff = lambda b: "on" if b else "off"  # noqa: E731
        src = self.ckpt_name() or "no checkpoint"
        return (f"{a.name}: {mode} '{getattr(self.cfg, 'name', '?')}' ({src}) with {num_envs} env(s) on "
                f"{self.device}; randomize {onoff(a.randomize)}, noise {onoff(a.noise)}, push {onoff(a.push)}")


# ----------------------------------------------------------------------------- modes
def run_export(s: Session) -> None:
    from model.export import check_export, export_policy
    from model.policy_metadata import policy_metadata

    if s.exp.read_only:
        raise PlayError(f"{s.exp.dir} is a read-only policy folder: its export is {s.exp.export_dir}; "
                        "--check-export checks it, or resume it into an experiment with train.py --resume")
    env = build_env(play_cfg(s.cfg, s.args, 1, s.device), s.seed)
    policy = s.policy("trained", env)
    info = {"experiment": s.args.name, "checkpoint": s.ckpt_name(), "iteration": s.iteration()}
    paths = export_policy(policy, env, s.cfg, s.exp.export_dir, info)
    diffs = check_export(s.exp.export_dir, policy_metadata(env, s.cfg), policy)
    print(f"{s.args.name}: exported {s.ckpt_name()} to {s.exp.export_dir}: "
          f"{', '.join(p.name for p in paths.values())}; actions match the checkpoint's policy "
          f"(max |diff| onnx {diffs['onnx']:.1e}, jit {diffs['jit']:.1e})", flush=True)


def run_check_export(s: Session) -> None:
    from model.export import check_export, recorded_checkpoint
    from model.policy_metadata import policy_metadata

    env = build_env(play_cfg(s.cfg, s.args, 1, s.device), s.seed)
    ref = s.ckpt if s.args.checkpoint is not None else None
    recorded = recorded_checkpoint(s.exp.export_dir) if ref is None else None
    if recorded is not None and recorded.startswith("model/"):
        try:
            ref = s.exp.checkpoint(recorded.removeprefix("model/"))
        except ExperimentError:
            ref = None
    policy = None
    if ref is not None:
        data = s.ckpt_data if ref == s.ckpt and s.ckpt_data is not None else read_checkpoint(ref, "cpu", s.exp)
        policy = load_trained(data, ref, s.cfg, env, s.device)
    diffs = check_export(s.exp.export_dir, policy_metadata(env, s.cfg), policy)
    against = f"the checkpoint {_relative(ref, s.exp.dir)}" if ref is not None else "each other"
    print(f"{s.args.name}: {s.exp.export_dir} matches the config; ONNX and TorchScript agree with {against} "
          f"(max |diff| onnx {diffs['onnx']:.1e}, jit {diffs['jit']:.1e})", flush=True)


def run_record(s: Session) -> None:
    from env.sim.scene import load_mj_model
    from env.terrain.window import TerrainWindow
    from utils.video import VideoRecorder

    a = s.args
    probe_dt = float(s.cfg.sim.dt) * int(s.cfg.control.decimation)
    steps = a.steps or (s.schedule.num_steps(probe_dt) if s.schedule else None) \
        or int(math.ceil(float(s.cfg.env.episode_length_s) / probe_dt))
    num_envs = a.num_envs or 1
    drive = s.schedule is not None
    cfg = play_cfg(s.cfg, a, num_envs, s.device, episode_length_s=max(float(s.cfg.env.episode_length_s),
                                                                             steps * probe_dt + 1.0))
    env = build_env(cfg, s.seed, a)
    policy = s.policy(s.policies[0], env)
    driver = CommandDriver(env.task) if drive else None
    if driver is not None:
        driver.set(s.schedule.at(0.0))
    robot, dt = env.robot, env.robot.dt
    ref = min(max(int(cfg.viewer.ref_env), 0), num_envs - 1)
    print(s.header("recording", num_envs) + f"; {steps} steps ({steps * dt:.1f} s)"
          + (f", commands {s.schedule}" if s.schedule else ", the task's own commands"), flush=True)
    obs, _ = env.reset()
    v = cfg.viewer
    model, ground = robot.model, None
    if robot.ground.grid is not None:  # draw only the terrain in view: all of it costs ~0.25 s a frame
        ground = TerrainWindow(robot.ground.grid, lambda crop: load_mj_model(cfg, crop), v.azimuth, v.distance)
        model = ground.model_near(robot.sim.qpos[ref, :2].tolist())
    recorder = VideoRecorder(model, a.video, fps=1.0 / dt, track_body=robot.base_body_id, distance=v.distance,
                             elevation=v.elevation, azimuth=v.azimuth, quality=a.video_quality, ground=ground)
    falls = 0
    try:
        with torch.inference_mode():
            for step in range(steps):
                if driver is not None:
                    driver.set(s.schedule.at(step * dt))
                obs, _, _, done, info, _ = env.step(policy(obs))
                falls += int((done & ~info["time_outs"])[ref])
                recorder.add_frame(robot.sim.qpos[ref].cpu().numpy())
    finally:
        recorder.close()
    w, h = recorder.size
    print(f"{a.name}: wrote {a.video} ({recorder.frames} frames, {w}x{h}, {1.0 / dt:.2f} fps, "
          f"{recorder.frames * dt:.1f} s; {falls} fall(s) of env {ref})", flush=True)


def run_eval(s: Session) -> None:
    a = s.args
    n = a.eval
    base = play_cfg(s.cfg, a, n, s.device)
    dt = float(base.sim.dt) * int(base.control.decimation)
    max_len = int(math.ceil(float(base.env.episode_length_s) / dt))
    horizon = a.steps or max_len
    if s.schedule is not None:
        commands, mode = None, f"schedule {s.schedule}"
    else:
        commands, mode = eval_commands(base.commands, n, torch.Generator().manual_seed(s.seed))
        commands = commands.to(s.device)
    print(s.header("evaluating", n) + f"; {n} episodes of at most {min(horizon, max_len) * dt:.1f} s, "
          f"commands: {mode}; policies: {', '.join(s.policies)}", flush=True)
    results, tiles = {}, {}
    for name in s.policies:
        env = build_env(base, s.seed, a, spread=True)
        driver = CommandDriver(env.task)
        results[name] = evaluate(env, s.policy(name, env), driver, commands, horizon, schedule=s.schedule)
        if env.robot.ground.curriculum is not None:  # each episode's tile, kept per episode and grouped
            types, levels = env.robot.ground.curriculum.tile_of(torch.arange(n))
            results[name].per_env.update(terrain_type=types, terrain_level=levels)
            tiles[name] = by_tile(results[name].per_env, types, levels)
    summaries = {name: r.summary for name, r in results.items()}
    print(format_table(summaries), flush=True)
    causes = format_fall_causes(summaries)
    if causes:
        print(causes, flush=True)
    for name, per_tile in tiles.items():
        print(f"{name}: " + format_tiles(per_tile), flush=True)

    out_dir = Path(a.out) if a.out else s.exp.dir
    first = next(iter(results.values()))
    report = {
        "experiment": a.name,
        "config": getattr(s.cfg, "name", None),
        "checkpoint": s.ckpt_name() if "trained" in s.policies else None,
        "iteration": s.iteration() if "trained" in s.policies else None,
        "episodes": n,
        "horizon_s": min(horizon, max_len) * dt,
        "control_dt": dt,
        "seed": s.seed,
        "randomize": a.randomize, "noise": a.noise, "push": a.push,
        "command_mode": mode,
        "commands": first.per_env["command"],
        "units": EVAL_UNITS,
        "policies": {name: {**r.summary, "per_env": r.per_env, **({"per_terrain": tiles[name]} if name in tiles else {})}
                     for name, r in results.items()},
    }
    json_path = write_json(out_dir / "eval.json", round_floats(report))
    png = plot_tracking(results, out_dir / "eval_tracking.png")
    terrain_png = None
    if tiles:
        first = "trained" if "trained" in tiles else next(iter(tiles))
        terrain_png = plot_tiles(tiles[first], out_dir / "eval_terrain.png",
                                 f"{a.name} ({first}): {n} episodes over the tiles")
    note = f" and {png}" if png else " (no eval_tracking.png: pip install matplotlib)"
    print(f"{a.name}: wrote {json_path}{note}", flush=True)
    if not s.exp.read_only:  # an experiment trained with runner.logger=wandb: the evaluation joins its W&B run
        from rl.loggers.wandb_logger import add_evaluation

        line = add_evaluation(s.exp.log_dir, s.cfg.runner, a.name, report["iteration"], summaries,
                              [p for p in (png, terrain_png) if p is not None])
        if line is not None:
            print(line, flush=True)


def run_watch(s: Session) -> None:
    from env.viewer import display_available, run_viewer

    if not display_available():
        raise PlayError("no display ($DISPLAY is unset), so the interactive viewer cannot open; "
                        f"record a video instead: python play.py --name {s.args.name} --video out.mp4")
    a = s.args
    num_envs = a.num_envs or 1
    cfg = play_cfg(s.cfg, a, num_envs, s.device, episode_length_s=1.0e6)
    env = build_env(cfg, s.seed, a)
    policy = s.policy(s.policies[0], env)
    driver = CommandDriver(env.task)
    ref = min(max(int(cfg.viewer.ref_env), 0), num_envs - 1)
    print(s.header("watching", num_envs), flush=True)
    try:
        run_viewer(env, policy, driver, cfg, steps=a.steps, ref_env=ref)
    except ImportError as err:
        raise PlayError(f"the interactive viewer needs glfw ({err}); pip install glfw, or use --video") from None
    except RuntimeError as err:
        raise PlayError(f"the interactive viewer failed to open: {' '.join(str(err).split())}; "
                        "try --video out.mp4") from None


def main(argv: list[str] | None = None) -> int:
    args = get_play_args(argv)
    from model.export import ExportError

    try:
        session = Session(args)
        if args.export:
            run_export(session)
        if args.check_export:
            run_check_export(session)
        if args.eval:
            run_eval(session)
        if args.video:
            run_record(session)
        if session.watch:
            run_watch(session)
    except (ConfigError, ExperimentError, CheckpointError, DeviceError, ExportError, VideoError, PlayError, ValueError,
            FileNotFoundError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
