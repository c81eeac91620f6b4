"""Terrain courses over a run's saved checkpoints: when a skill on terrain it never trained on comes and goes.

    python benchmarks/course_curve.py --name go2_rough_gait_clock --course stairs_up:0.15 \\
        --course stairs_down:0.15 --episodes 32 --every 4 --out benchmarks/results/go2_rough

Every --every-th snapshot of the experiment (model/all/policy_<it>.pt, every save_interval iterations),
from --from_iteration on, and the end of the run (model/policy.pt) is exported as play.py --export
exports it (into a temporary folder, removed afterwards) and walked over the courses by deploy.sim2sim
(the same episodes for every checkpoint: one --seed). course_curve.json holds each checkpoint's course
summaries; course_curve.png plots the share of episodes that reached the goal and that fell, per
course, against the iteration.

Why: the final checkpoint is one sample of a policy that keeps changing. The blind go2_rough climbed
the 15 cm stairs in 6 of 32 episodes at iteration 2200, 27 at 2300 and 29 at its end (2358); the
perceptive clock stage descended 10 cm stairs on its training tiles at iteration 2000 and stalled
at their top edge at 2050 (docs/rough_terrain_trials.md, "Stop 59"). A figure from one checkpoint
says as much; the curve says how settled it is.

With --select the curve also picks a checkpoint: the one that reached the goal most often over all its
courses, then the one with fewer falls, then the later one. Run it on validation courses (other box fields,
other grades) and report the chosen checkpoint on the test courses, so that the choice does not tune for
the figures it is judged by.

With --flat each checkpoint also walks flat ground in the same deploy.sim2sim run (its `nominal` check: random
commands every 5 s, pushes, as many episodes as each course), and --select then takes only checkpoints that pass
that check (falls <= 5% of episodes, steady linear error <= 0.2 m/s). Why: a terrain stage can lose the flat walk
while it learns the course; Qmini's symmetric stage fell in 2 of 64 flat episodes at iteration 1200 and in 30 at
its end, 1548, with the box skill unchanged (docs/rough_terrain_trials.md, "Stop 69"). --flat_jitter S makes
each flat command last 5 +- S s (deploy.sim2sim --resample-jitter): with exactly 5 s every command change lands at
one phase of a 2 Hz gait clock, and a policy that falls at some other phase passes unseen ("Stop 70").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import ConfigError  # noqa: E402
from deploy import sim2sim  # noqa: E402
from deploy.courses import parse_course  # noqa: E402
from deploy.episodes import RunOptions  # noqa: E402
from deploy.policy_io import DeployError  # noqa: E402
from rl.play_setup import PlayError, build_env, load_experiment, load_trained, play_cfg, session_config  # noqa: E402
from utils.checkpoint import CheckpointError, read_checkpoint  # noqa: E402
from utils.experiment import ExperimentError  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402

SUMMARY_KEYS = ("episodes", "successes", "success_rate", "falls", "fall_rate", "timeouts", "goal_time_s",
                "stopped_at_m")
FLAT_KEYS = ("episodes", "falls", "fall_rate", "lin_vel_rmse_steady", "yaw_rate_rmse_steady")


Checkpoint = tuple[int, Path, dict | None]  # iteration, file, its contents where already read


def checkpoints(exp: Any, every: int, first: int) -> list[Checkpoint]:
    """What to evaluate, oldest first: every `every`-th snapshot from iteration `first`, and the end of the run
    unless a snapshot of that iteration is already in. policy.pt is read here, once, and those weights are the
    ones evaluated: a run still training rewrites it every iteration, and its row must not be labelled with
    one iteration and walk another's weights."""
    snaps: list[Checkpoint] = [(it, p, None) for it, p in sorted(exp.snapshots()) if it >= first][::every]
    if exp.policy_path.is_file():
        end = read_checkpoint(exp.policy_path, "cpu", exp)
        it = int(end.get("iteration", -1))
        if it >= first and it not in {i for i, _, _ in snaps}:
            snaps.append((it, exp.policy_path, end))
    return sorted(snaps, key=lambda c: c[0])


class Exporter:
    """Exports checkpoints of one experiment as play.py --export does; the env (a terrain grid takes seconds to
    build) is built again only where the config the checkpoint trained under (its stages) differs."""

    def __init__(self, exp: Any, saved: Any, flags: Any):
        self.exp, self.saved, self.flags = exp, saved, flags
        self._env: tuple[dict, Any, Any] | None = None  # (config as a dict, config, env)

    def env_at(self, iteration: int) -> tuple[Any, Any]:
        cfg = play_cfg(session_config(self.saved, self.flags, iteration), self.flags, 1, "cpu")
        key = cfg.to_dict()
        if self._env is None or self._env[0] != key:
            self._env = (key, cfg, build_env(cfg, 0))
        return self._env[1], self._env[2]

    def export(self, iteration: int, path: Path, data: dict | None, out_dir: Path) -> None:
        """One checkpoint (`data`, or read from `path`) to `out_dir` (policy.onnx, policy.yaml, scene.xml)."""
        from model.export import export_policy

        cfg, env = self.env_at(iteration)
        policy = load_trained(data if data is not None else read_checkpoint(path, "cpu", self.exp), path, cfg, env,
                              "cpu")
        export_policy(policy, env, cfg, out_dir, {"experiment": self.flags.name, "checkpoint": path.name,
                                                  "iteration": iteration})


def walk_courses(export_dir: Path, courses: list[str], episodes: int, jobs: int, seed: int,
                 duration: float | None, flat: bool = False,
                 flat_jitter: float = 0.0) -> tuple[dict[str, dict[str, Any]], dict | None]:
    """deploy.sim2sim over the courses, and flat ground where `flat` (its commands lasting 5 +- `flat_jitter` s):
    ({course: summary}, the flat check's summary with its PASS flag, or None). Its table goes nowhere, its errors
    to stderr."""
    out = export_dir / "courses.json"
    argv = ["--export", str(export_dir), "--episodes", str(episodes), "--jobs", str(jobs), "--seed", str(seed),
            "--out", str(out), "--quiet"] + [a for c in courses for a in ("--course", c)]
    if duration is not None:
        argv += ["--duration", str(duration)]
    if flat:
        argv += ["--variants", "nominal", "--resample-jitter", str(flat_jitter)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = sim2sim.main(argv)
    if code != 0:
        raise DeployError(f"deploy.sim2sim failed on {export_dir} (exit {code})")
    report = json.loads(out.read_text())
    walked = {name: {k: c["summary"].get(k) for k in SUMMARY_KEYS} for name, c in report["courses"].items()}
    if not flat:
        return walked, None
    nominal = report["results"]["nominal"]  # its verdict as sim2sim gave it (deploy/report.py, pass_criteria)
    return walked, {**{k: nominal["summary"].get(k) for k in FLAT_KEYS}, "passed": nominal["pass"]}


def select_checkpoint(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The row whose checkpoint reached the goal most often over all courses; ties: fewer falls, later. Where the
    rows hold the flat check, only those that passed it; None where none did."""
    eligible = [r for r in rows if r.get("flat", {}).get("passed", True)]
    if not eligible:
        return None

    def key(row: dict[str, Any]) -> tuple[int, int, int]:
        courses = row["courses"].values()
        return sum(c["successes"] for c in courses), -sum(c["falls"] for c in courses), row["iteration"]
    return max(eligible, key=key)


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rl.eval_plots import save_figure

    fig, ax = plt.subplots(figsize=(8, 4))
    its = [r["iteration"] for r in rows]
    for k, name in enumerate(rows[0]["courses"]):
        color = f"C{k}"
        ax.plot(its, [r["courses"][name]["success_rate"] for r in rows], "o-", color=color, label=f"{name} reached")
        ax.plot(its, [r["courses"][name]["fall_rate"] for r in rows], "x--", color=color, label=f"{name} fell")
    if "flat" in rows[0]:  # no goal on flat ground: its falls only
        ax.plot(its, [r["flat"]["fall_rate"] for r in rows], "x--", color="k", label="flat ground fell")
    ax.set_xlabel("iteration")
    ax.set_ylabel("share of episodes")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True, help="experiment name (its model/all/ snapshots) or experiment folder")
    p.add_argument("--course", action="append", required=True, metavar="KIND:VALUE",
                   help="a deploy.sim2sim course, e.g. stairs_up:0.15 (repeatable)")
    p.add_argument("--episodes", type=int, default=32, help="episodes per course and checkpoint (default 32)")
    p.add_argument("--every", type=int, default=1, help="take every N-th snapshot (default every one)")
    p.add_argument("--from_iteration", type=int, default=0, help="skip snapshots before this iteration")
    p.add_argument("--jobs", type=int, default=2, help="deploy.sim2sim worker processes (default 2)")
    p.add_argument("--seed", type=int, default=0, help="the courses' episode seed, the same for every checkpoint")
    p.add_argument("--duration", type=float, default=None, help="s per episode (default: deploy.sim2sim's 20)")
    p.add_argument("--flat", action="store_true",
                   help="also walk flat ground (random commands, pushes) with each checkpoint; --select then takes "
                        "only those that pass (falls <= 5%%, steady linear error <= 0.2 m/s)")
    p.add_argument("--flat_jitter", type=float, default=0.0, metavar="S",
                   help="with --flat: each flat command lasts 5 +- up to S s, so that command changes land at every "
                        "gait phase (deploy.sim2sim --resample-jitter; default 0, the committed figures' schedule)")
    p.add_argument("--select", action="store_true",
                   help="pick the checkpoint that reached the goal most often (ties: fewer falls, later)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for course_curve.json and course_curve.png")
    args = p.parse_args(argv)
    flags = SimpleNamespace(name=args.name, set=[], backend=None, randomize=False, push=False, noise=False,
                            terrain=None, level=None, device=None)
    try:
        for flag, value in (("--episodes", args.episodes), ("--every", args.every), ("--jobs", args.jobs)):
            if value < 1:
                raise ValueError(f"{flag} must be at least 1, got {value}")
        for text in args.course:
            parse_course(text)
        if args.flat_jitter and not args.flat:
            raise ValueError("--flat_jitter sets the flat check's schedule: add --flat")
        if not 0 <= args.flat_jitter < RunOptions.resample_s:
            raise ValueError(f"--flat_jitter must be at least 0 and under the {RunOptions.resample_s:g} s command "
                             f"period, got {args.flat_jitter:g}")
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} is a file; give a folder")
        exp, saved = load_experiment(flags)
        todo = checkpoints(exp, args.every, args.from_iteration)
        if not todo:
            raise ExperimentError(f"experiment '{args.name}' has no checkpoint from iteration {args.from_iteration} "
                                  f"on (looked in {exp.snapshot_dir} and {exp.policy_path})")
    except (ConfigError, ExperimentError, CheckpointError, PlayError, DeployError, ValueError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2

    exporter, rows, start = Exporter(exp, saved, flags), [], time.perf_counter()
    for k, (iteration, path, data) in enumerate(todo):
        with tempfile.TemporaryDirectory(prefix="course_curve_") as tmp:
            try:
                exporter.export(iteration, path, data, Path(tmp))
                result, flat = walk_courses(Path(tmp), args.course, args.episodes, args.jobs, args.seed,
                                            args.duration, args.flat, args.flat_jitter)
            except (CheckpointError, PlayError, DeployError) as err:
                print(f"error: {path}: {' '.join(str(err).split())}", file=sys.stderr)
                return 1
        rows.append({"iteration": iteration, "checkpoint": str(path), "courses": result,
                     **({"flat": flat} if flat is not None else {})})
        elapsed = time.perf_counter() - start
        eta = elapsed / (k + 1) * (len(todo) - k - 1)
        shown = "; ".join(f"{name} {c['successes']}/{c['episodes']} reached, {c['falls']} fell"
                          for name, c in result.items())
        if flat is not None:
            shown += (f"; flat {flat['falls']}/{flat['episodes']} fell, steady linear error "
                      f"{flat['lin_vel_rmse_steady']:.3f} m/s {'PASS' if flat['passed'] else 'FAIL'}")
        print(f"[{k + 1}/{len(todo)}] it {iteration}: {shown} ({elapsed / (k + 1):.0f} s per checkpoint, "
              f"ETA {eta / 60:.1f} min)", flush=True)

    out.mkdir(parents=True, exist_ok=True)
    report = {"experiment": args.name, "config": getattr(saved, "name", None), "episodes": args.episodes,
              "seed": args.seed, "courses": args.course, "flat": args.flat,
              **({"flat_jitter_s": args.flat_jitter} if args.flat else {}), "rows": rows}
    if args.select:
        best = select_checkpoint(rows)
        rule = "most goals reached over the courses, then fewest falls, then the latest"
        if args.flat:
            rule = "of the checkpoints that passed the flat check: " + rule
        report["selected"] = None if best is None else {"iteration": best["iteration"],
                                                        "checkpoint": best["checkpoint"], "rule": rule}
        print("selected: none (no checkpoint passed the flat check)" if best is None else
              f"selected: iteration {best['iteration']} ({best['checkpoint']})", flush=True)
    atomic_write_text(out / "course_curve.json", json.dumps(report, indent=2) + "\n")
    png = plot(rows, out / "course_curve.png", f"{args.name}: {args.episodes} episodes per course and checkpoint")
    print(f"wrote {out / 'course_curve.json'} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
