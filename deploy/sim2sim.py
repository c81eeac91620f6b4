"""Sim-to-sim check: run an exported policy in MuJoCo the way a robot-side program runs it.

    python -m deploy.sim2sim --export experiments/run1 --model assets/go2/go2.xml
    python -m deploy.sim2sim --export DIR --model PATH --commands "0.5,0,0@5;0,0,1@5" --episodes 4
    python -m deploy.sim2sim --export DIR --model PATH --suite --out suite.json      # nominal + perturbations
    python -m deploy.sim2sim --export DIR                  # on DIR/scene.xml, the robot as trained
    python -m deploy.sim2sim --export DIR --suite --sim-dt 0.002   # "reality" at a finer physics step
    python -m deploy.sim2sim --export DIR --course stairs_up:0.10 --episodes 32   # a terrain course

Reads only DIR/policy.yaml and DIR/policy.onnx (or DIR/export/...); imports onnxruntime,
numpy, mujoco and yaml, never torch or the training code. --model is any MJCF of the same
robot (the project's own: assets/<robot>/<robot>.xml; a floor is added to a file without
one); without it, the export's scene.xml. --sim-dt sets the physics step of the check (default:
the one the policy trained with); the policy still acts every control_dt of policy.yaml, with
control_dt / sim-dt physics steps in between, so a step that does not divide control_dt is
refused. --course adds a terrain course of boxes to the model (deploy/courses.py) and walks
the robot across it; --suite of a policy trained on rough terrain runs the courses of
deploy/defaults.py too. Bad input prints one line `error: ...` and exits with status 2
before anything is written.
"""

from __future__ import annotations

import sys

from deploy.video import configure_headless_gl

if any(a == "--video" or a.startswith("--video=") for a in sys.argv[1:]):
    configure_headless_gl()  # before mujoco is imported: MUJOCO_GL=egl on a machine without a display

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

from deploy.commands import attach_negative_schedule, parse_schedule  # noqa: E402
from deploy.courses import course_model, parse_course  # noqa: E402
from deploy.defaults import FALL_HEIGHT_FRACTION, robot_defaults, suite_courses  # noqa: E402
from deploy.episodes import ProgressLine, RunOptions  # noqa: E402
from deploy.falls import fall_body_ids  # noqa: E402
from deploy.jobs import run_in_worker, run_job  # noqa: E402
from deploy.observation import check_terms  # noqa: E402
from deploy.perturb import VARIANTS, parse_variants, variant_model  # noqa: E402
from deploy.policy_io import DeployError, PolicySpec, load_policy, resolve_export_dir  # noqa: E402
from deploy.report import course_table, episode_table, sim2sim_report, suite_table, write_json  # noqa: E402
from deploy.robot_model import RobotModel, build_robot  # noqa: E402
from deploy.trace import Tracer  # noqa: E402

REPORT_FORMAT = "legged-ppo-sim2sim/1"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse would print the usage too)
        raise DeployError(message)


def _positive(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def _steps(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text}")
    return value


def get_args(argv: list[str] | None) -> argparse.Namespace:
    p = _Parser(prog="python -m deploy.sim2sim", description=__doc__.split("\n\n")[0])
    p.add_argument("--export", required=True, metavar="DIR", help="folder with policy.yaml + policy.onnx, or one "
                   "holding export/ (an experiment or benchmarks/results/<robot>/policy)")
    p.add_argument("--model", default=None, metavar="MJCF", help="MJCF of the robot (a floor is added if it has "
                   "none); default: the export's scene.xml, the robot as trained")
    p.add_argument("--sim-dt", type=_positive, default=None, metavar="SECONDS", help="physics step of the check; "
                   "must divide policy.yaml's control_dt (default: policy.yaml's sim_dt, the training step)")
    p.add_argument("--episodes", type=_count, default=24, help="episodes per model (default 24)")
    p.add_argument("--duration", type=_positive, default=20.0, help="s per episode (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seeds headings, random commands and pushes (default 0)")
    p.add_argument("--commands", default=None, metavar="SCHEDULE", help="'vx,vy,yaw@s;...' or a YAML file, as "
                   "play.py --commands (default: random commands from the trained ranges per episode)")
    p.add_argument("--resample", type=_positive, default=5.0, metavar="S",
                   help="s between random commands (default 5)")
    p.add_argument("--resample-jitter", type=_non_negative, default=0.0, metavar="S",
                   help="each random command lasts --resample +- up to S s, so that command changes land at every "
                        "phase of the gait (default 0: every change at the same phase; must be under --resample)")
    p.add_argument("--push", action="store_true", help="velocity kicks on the base (always on with --suite)")
    p.add_argument("--push-vel", type=_non_negative, default=None, metavar="M/S",
                   help="largest kick per horizontal axis (default per robot: go2 1.0)")
    p.add_argument("--push-interval", type=_positive, default=None, metavar="S",
                   help="s between kicks (default per robot: go2 15)")
    p.add_argument("--latency", type=_steps, default=0, metavar="K", help="apply actions K control steps late")
    p.add_argument("--spawn-height", type=_positive, default=None, metavar="M", help="base height at spawn "
                   "(default: the MJCF's keyframe, else computed from the default pose)")
    p.add_argument("--fall-tilt", type=_positive, default=None, metavar="RAD", help="tilt that counts as a fall")
    p.add_argument("--fall-height", type=_non_negative, default=None, metavar="M", help="base height below "
                   "which the robot has fallen")
    p.add_argument("--fall-bodies", default=None, metavar="A,B", help="bodies whose contact with the world is a "
                   "fall (> the trained contact threshold); 'none': tilt and height only (default: policy.yaml's "
                   "termination bodies, else the base)")
    p.add_argument("--settle", type=_non_negative, default=1.0, metavar="S", help="s after each command change "
                   "and push left out of the steady-state errors (default 1)")
    p.add_argument("--gait-frequency", type=_positive, default=None, metavar="HZ",
                   help="gait clock frequency for policies that observe one (default: middle of the trained range)")
    p.add_argument("--suite", action="store_true", help="run nominal + every perturbation with pushes on")
    p.add_argument("--variants", default=None, metavar="A,B", help=f"suite variants to run ({', '.join(VARIANTS)})")
    p.add_argument("--max-fall-rate", type=_non_negative, default=0.05, help="suite PASS limit (default 0.05)")
    p.add_argument("--max-lin-err", type=_positive, default=0.2, metavar="M/S",
                   help="suite PASS limit on the steady-state linear velocity RMSE (default 0.2)")
    p.add_argument("--course", action="append", default=None, metavar="KIND:VALUE[,opt=v]",
                   help="a terrain course of boxes: stairs_up:H, stairs_down:H (step height m; tread=, steps=), "
                        "slope_up:G, slope_down:G (grade; length=), boxes:H (max height m; cell=, length=, seed=, "
                        "layouts=N: the episodes shared over N fields); "
                        "repeat for several; with --suite, instead of the policy's default courses")
    p.add_argument("--course-speed", type=_positive, default=0.5, metavar="M/S",
                   help="forward speed commanded on a course (default 0.5)")
    p.add_argument("--min-success", type=_non_negative, default=0.8,
                   help="course PASS limit: fraction of episodes reaching the goal without a fall (default 0.8)")
    p.add_argument("--scan-noise", type=_non_negative, default=0.0, metavar="M",
                   help="perceptive policies: uniform +-M m noise on every height-scan value (default 0)")
    p.add_argument("--scan-drift", type=float, default=0.0, metavar="M",
                   help="perceptive policies: the height map reads the ground M m higher than it is (default 0)")
    p.add_argument("--jobs", type=_count, default=1, help="suite variants and courses run in parallel processes "
                   "(default 1)")
    p.add_argument("--out", default=None, metavar="FILE.json", help="write the results as JSON")
    p.add_argument("--video", default=None, metavar="OUT.mp4", help="record the first episode of the first model or course run (mp4; needs imageio, "
                   "imageio-ffmpeg)")
    p.add_argument("--trace", default=None, metavar="OUT.csv", help="write the first episode of the first model or "
                   "course run as CSV: base pose, velocity and foot contacts per control step (deploy/trace.py)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    args = p.parse_args(attach_negative_schedule(sys.argv[1:] if argv is None else list(argv)))
    if args.variants is not None:
        args.suite = True
    return args


def _check_output(path: str | None, flag: str) -> None:
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise DeployError(f"{flag} {target} is a folder; give a file name")
    if not target.parent.is_dir():
        raise DeployError(f"{flag}: folder {target.parent} does not exist")


def build_options(args: argparse.Namespace, spec, robot) -> tuple[RunOptions, list[str]]:
    """Run options from the flags and the per-robot defaults; notes to print."""
    defaults, known = robot_defaults(spec.config, spec.training)
    spawn = args.spawn_height if args.spawn_height is not None else robot.spawn_height
    notes = []
    if not known:
        notes.append(f"no defaults for robot '{spec.config}': fall tilt {defaults.fall_tilt} rad, fall height "
                     f"{FALL_HEIGHT_FRACTION:.0%} of the spawn height, pushes {defaults.push_vel} m/s every "
                     f"{defaults.push_interval} s unless given")
    fall_height = args.fall_height if args.fall_height is not None else (
        defaults.fall_height if defaults.fall_height is not None else FALL_HEIGHT_FRACTION * spawn)
    if args.resample_jitter >= args.resample:
        raise DeployError(f"--resample-jitter {args.resample_jitter:g} must be under --resample {args.resample:g} "
                          "(a command may not last 0 s or less)")
    schedule = parse_schedule(args.commands) if args.commands is not None else None
    if schedule is not None:
        for cmd in schedule.commands:
            for value, name, (lo, hi) in zip(cmd, ("vx", "vy", "yaw"), spec.command_ranges):
                if not lo - 1e-9 <= value <= hi + 1e-9:
                    notes.append(f"{name}={value:g} is outside the trained range [{lo:g}, {hi:g}]")
    bodies, contact = fall_bodies(args.fall_bodies, defaults.fall_bodies)
    missing = fall_body_ids(robot.model, bodies, robot.base_body)[1] if contact else []
    if missing:
        notes.append(f"{robot.path} has no bod{'y' if len(missing) == 1 else 'ies'} {', '.join(missing)}: "
                     "contacts of the others (the base where none is left) count as falls")
    opts = RunOptions(
        episodes=args.episodes, duration=args.duration, seed=args.seed, spawn_height=spawn,
        fall_tilt=args.fall_tilt if args.fall_tilt is not None else defaults.fall_tilt, fall_height=fall_height,
        schedule=schedule, resample_s=args.resample, resample_jitter_s=args.resample_jitter,
        push=args.push or args.suite,
        push_vel=args.push_vel if args.push_vel is not None else defaults.push_vel,
        push_interval=args.push_interval if args.push_interval is not None else defaults.push_interval,
        latency=args.latency, settle_s=args.settle, gait_frequency=args.gait_frequency, sim_dt=robot.sim_dt,
        course_speed=args.course_speed, course_push=args.push, scan_noise=args.scan_noise,
        scan_drift=args.scan_drift, fall_bodies=bodies, fall_contact=contact,
        fall_contact_force=defaults.contact_force)
    return opts, notes


def fall_bodies(flag: str | None, trained: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """The bodies whose contact is a fall (() = the base) and whether contacts count at all: --fall-bodies,
    else the trained ones (robot_defaults: policy.yaml's termination bodies; older exports: the base)."""
    if flag is not None:
        names = tuple(n.strip() for n in flag.split(",") if n.strip())
        return ((), False) if names == ("none",) else (names, True)
    return tuple(trained), True


def default_model(export: str) -> str:
    """The export's scene.xml (written by play.py --export since the scene is composed in code)."""
    scene = resolve_export_dir(export) / "scene.xml"
    if not scene.is_file():
        raise DeployError(f"{scene.parent} has no scene.xml (exported by an older version): pass --model MJCF, "
                          "or export again with play.py --name RUN --export")
    return str(scene)


def main(argv: list[str] | None = None) -> int:
    start = time.perf_counter()
    recorder = tracer = None
    try:
        args = get_args(argv)
        _check_output(args.out, "--out")
        _check_output(args.video, "--video")
        spec, policy = load_policy(args.export)
        check_terms(spec)
        args.model = args.model or default_model(args.export)
        robot = build_robot(args.model, spec, args.sim_dt)
        opts, notes = build_options(args, spec, robot)
        courses = [parse_course(text) for text in (args.course or (suite_courses(spec.config, spec.training)
                                                                      if args.suite else []))]
        variants = parse_variants(args.variants) if args.suite else ([] if courses else [VARIANTS["nominal"]])
        for v in variants:  # compile every variant and course now: a failing one stops the run before it starts
            variant_model(robot, v)
        for c in courses:
            course_model(robot, c)
            layouts = len(c.layouts())
            if layouts > opts.episodes:
                raise DeployError(f"--course {c.name}: {layouts} layouts need at least as many episodes, "
                                  f"got --episodes {opts.episodes}")
        jobs = [("variant", v.name) for v in variants] + [("course", c.name) for c in courses]
        _check_output(args.trace, "--trace")
        shown = (robot.model if variants else course_model(robot, courses[0])) if args.video or args.trace else None
        if args.video:
            from deploy.video import Recorder, check_writer

            check_writer()
            recorder = Recorder(shown, args.video, 1.0 / spec.control_dt, robot.base_body, side_view=not variants)
        if args.trace:
            tracer = Tracer(shown, args.trace, robot.free_qpos, robot.free_qvel,
                            {robot.geom_name(g): g for g in robot.foot_geoms},
                            None if variants else courses[0].ground_height)
    except DeployError as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2

    for note in notes:
        print(f"note: {note}", flush=True)
    mode = "suite" if args.suite else ("course" if courses else "run")
    parts = [f"sim2sim {mode}: {spec.path} ('{spec.config}') on {robot.path}",
             f"{opts.episodes} episode(s) x {opts.duration:g} s per model or course"]
    if variants:
        every = f"{opts.resample_s:g}" + (f" +- {opts.resample_jitter_s:g}" if opts.resample_jitter_s else "")
        parts += [f"commands {opts.schedule or f'random every {every} s'}",
                  f"pushes {f'{opts.push_vel:g} m/s every {opts.push_interval:g} s' if opts.push else 'off'}"]
    if courses:
        parts += [f"courses {', '.join(c.name for c in courses)} at {opts.course_speed:g} m/s, pushes "
                  f"{'on' if opts.course_push else 'off'}"]
    parts += [f"latency {opts.latency}", f"physics {_physics(spec, robot)}", f"spawn {opts.spawn_height:.3f} m",
              f"fall: tilt > {opts.fall_tilt:g} rad or height < {opts.fall_height:g} m"
              + (f" or {', '.join(opts.fall_bodies) or 'base'} contact > {opts.fall_contact_force:g} N"
                 if opts.fall_contact else ""),
              f"feet {', '.join(robot.geom_name(g) for g in robot.foot_geoms)}"]
    print("; ".join(parts), flush=True)
    steps = int(math.ceil(opts.duration / spec.control_dt - 1e-9))
    progress = None if args.quiet else ProgressLine(steps * opts.episodes * len(jobs), spec.control_dt,
                                                    "sim2sim", sys.stderr)
    sinks = [s for s in (recorder, tracer) if s is not None]  # fed the first episode of the first job
    sink = _fan_out(sinks) if sinks else None
    done: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        if args.jobs > 1 and len(jobs) > 1:
            done = _run_parallel(args, (spec, policy, robot), jobs, opts, sink)
        else:
            for i, job in enumerate(jobs):
                done[job] = run_job(spec, policy, robot, job, opts, progress, sink if i == 0 else None)
                if args.suite or job[0] == "course":
                    print(f"  {_job_line(job, done[job])}", flush=True)
    except BaseException as err:
        for each in sinks:
            each.abort()  # no half-written video or trace
        if isinstance(err, KeyboardInterrupt):
            print("interrupted", file=sys.stderr)
            return 130
        raise
    wall = time.perf_counter() - start
    results = {name: r for (kind, name), r in done.items() if kind == "variant"}
    course_results = {name: r for (kind, name), r in done.items() if kind == "course"}

    if args.suite:
        print(suite_table(results, args.max_fall_rate, args.max_lin_err))
    elif results:
        r = results["nominal"]
        print(episode_table(r["episodes"], r["summary"]))
    if course_results:
        print(course_table(course_results, args.min_success))
    print(f"wall time {wall:.1f} s", flush=True)
    if recorder is not None:
        path = recorder.finish()
        print(f"wrote {path} ({recorder.frames} frames, {1.0 / spec.control_dt:g} fps)", flush=True)
    if tracer is not None:
        print(f"wrote {tracer.finish()} ({len(tracer.rows)} control steps)", flush=True)
    if args.out:
        report = sim2sim_report(REPORT_FORMAT, mode, spec, robot, opts, args, wall, results, course_results)
        print(f"wrote {write_json(args.out, report)}", flush=True)
    return 0


def _physics(spec: PolicySpec, robot: RobotModel) -> str:
    text = f"{robot.sim_dt:g} s x {robot.substeps} per {spec.control_dt:g} s control step"
    if robot.substeps != spec.decimation:
        text += f" (trained at {spec.sim_dt:g} s x {spec.decimation})"
    return text


def _fan_out(sinks: list[Callable[[Any], None]]) -> Callable[[Any], None]:
    """One frame sink that hands each physics frame to every sink in turn (video, trace)."""
    def feed(data: Any) -> None:
        for each in sinks:
            each(data)
    return feed


def _job_line(job: tuple[str, str], r: dict[str, Any]) -> str:
    s = r["summary"]
    if job[0] == "course":
        return (f"{job[1]}: {s['successes']}/{s['episodes']} reached the goal, {s['falls']} fell, "
                f"{s['timeouts']} out of time ({r['wall_s']:.1f} s)")
    lin = s["lin_vel_rmse_steady"]
    return (f"{job[1]}: {s['falls']}/{s['episodes']} falls, steady lin err "
            f"{lin if lin is not None else float('nan'):.3f} m/s ({r['wall_s']:.1f} s)")


def _run_parallel(args: argparse.Namespace, loaded: tuple, jobs: list[tuple[str, str]], opts: RunOptions,
                  sink) -> dict:
    """Variants and courses in `jobs` processes (spawned: nothing of this process's MuJoCo or ONNX state is shared)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    done = {}
    first = jobs[0]
    rest = [(args.export, args.model, job, opts) for job in jobs[1:]]
    with ProcessPoolExecutor(max_workers=args.jobs - 1 if sink else args.jobs,
                             mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(run_in_worker, job) for job in rest]
        if sink is not None:  # the recorded or traced first job runs here, next to the pool
            done[first] = run_job(*loaded, first, opts, None, sink)
        else:
            futures.insert(0, pool.submit(run_in_worker, (args.export, args.model, first, opts)))
        for fut in futures:
            job, res = fut.result()
            done[job] = res
            print(f"  {_job_line(job, res)}", flush=True)
    return {job: done[job] for job in jobs}


if __name__ == "__main__":
    sys.exit(main())
