"""Physics cost per policy step: where MuJoCo spends a walking robot's step, and what cheaper models would save.

    python benchmarks/physics_cost.py --config go2
    python benchmarks/physics_cost.py --config qmini --num_envs 256 --seconds 5 --out experiments/qmini_cost.json
    python benchmarks/physics_cost.py --config go2 --changes dt_0.01x2,contact_pairs --combine dt_0.01x2,contact_pairs

The committed pretrained policy (benchmarks/results/<config>/policy, or --policy DIR) walks
--num_envs robots on random commands from its trained ranges, on the training scene its
cfg.yaml composes (flat ground, no randomisation), once per candidate change of
benchmarks/physics_changes.py. All models advance in lockstep (benchmarks/policy_walk.py),
each on its own `mujoco.batch.Batch` with the same env and thread counts; only `Batch.step`
is timed. Printed:

- the baseline's profile: MuJoCo's stage timers (mjData.timer, a persistent batch of the same
  robots) as shares of mj_step, mean solver iterations, contacts and constraint rows;
- per change: physics steps per policy step, physics cost per policy step relative to the
  baseline (the ratio of the two timed totals over the same policy steps; lower is cheaper),
  and whether the pretrained policy still walks on it (falls, steady-state tracking errors
  against the baseline's). That is a pre-screen only: a change is kept when a policy trained
  with it passes `python -m deploy.sim2sim --suite --sim-dt 0.002`.

Results go to --out as JSON (default experiments/physics_cost_<config>.json).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mujoco  # noqa: E402

from benchmarks.physics_changes import Change, build_model, candidates, combined  # noqa: E402
from benchmarks.policy_walk import Walker, plan_walk, walk  # noqa: E402
from config import ConfigError, load_saved_config  # noqa: E402
from deploy.defaults import FALL_HEIGHT_FRACTION, robot_defaults  # noqa: E402
from deploy.policy_io import DeployError, load_policy  # noqa: E402
from env.sim.mujoco_backend import available_cores  # noqa: E402
from env.sim.scene import RobotFileError  # noqa: E402
from utils.experiment import experiments_root  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402

FORMAT = "legged-ppo-physics-cost/1"
# the profile's rows: (label, timer, depth); shares of mj_step
STAGES = [("step", "step", 0), ("forward", "forward", 1), ("position", "position", 2),
          ("kinematics", "pos_kinematics", 3), ("inertia", "pos_inertia", 3), ("collision", "pos_collision", 3),
          ("broad phase", "col_broadphase", 4), ("narrow phase", "col_narrowphase", 4),
          ("make constraint", "pos_make", 3), ("project", "pos_project", 3), ("velocity", "velocity", 2),
          ("actuation", "actuation", 2), ("constraint solver", "constraint", 2), ("advance (integrator)", "advance", 1)]


class BenchmarkError(ValueError):
    """Bad input; one line."""


def get_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="go2", help="robot whose committed policy walks: "
                   "benchmarks/results/<config>/policy")
    p.add_argument("--policy", default=None, metavar="DIR", help="policy folder with export/ and model/cfg.yaml "
                   "(default benchmarks/results/<config>/policy)")
    p.add_argument("--num_envs", type=int, default=256, help="robots per model (default 256)")
    p.add_argument("--seconds", type=float, default=5.0, help="walking time per model, s (default 5)")
    p.add_argument("--nthread", type=int, default=0, help="Batch threads (default: all available cores)")
    p.add_argument("--changes", default=None, metavar="A,B", help="changes to run (default all; baseline always)")
    p.add_argument("--combine", default=None, metavar="A,B", help="also run these changes together, as one row")
    p.add_argument("--seed", type=int, default=0, help="seeds the commands (default 0)")
    p.add_argument("--out", default=None, metavar="FILE.json", help="default experiments/physics_cost_<config>.json")
    return p.parse_args(argv)


def _check(args: argparse.Namespace) -> tuple[Path, Path]:
    if args.num_envs < 1 or args.seconds <= 0 or args.nthread < 0:
        raise BenchmarkError("--num_envs must be >= 1, --seconds > 0 and --nthread >= 0")
    folder = Path(args.policy) if args.policy else ROOT / "benchmarks" / "results" / args.config / "policy"
    if not (folder / "model" / "cfg.yaml").is_file():
        raise BenchmarkError(f"{folder} has no model/cfg.yaml; give --policy DIR, a policy folder with export/ "
                             "and model/cfg.yaml (benchmarks/results/<robot>/policy)")
    out = Path(args.out) if args.out else experiments_root() / f"physics_cost_{args.config}.json"
    if out.is_dir() or not out.parent.is_dir():
        raise BenchmarkError(f"--out {out}: give a file name in an existing folder")
    return folder, out


def _named(all_changes: list[Change], text: str, flag: str) -> list[Change]:
    by_name = {c.name: c for c in all_changes}
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        raise BenchmarkError(f"unknown change '{unknown[0] if unknown else text}' in {flag}; choose from "
                             f"{', '.join(by_name)}")
    return [by_name[n] for n in names]


def _select(all_changes: list[Change], text: str | None, combine: str | None) -> list[Change]:
    """The baseline, the --changes (default all), and the --combine row."""
    base = all_changes[0]
    picked = all_changes if text is None else [base] + [c for c in _named(all_changes, text, "--changes")
                                                         if c is not base]
    return picked + ([combined(_named(all_changes, combine, "--combine"))] if combine else [])


def profile_rows(timers: dict[str, tuple[float, int]]) -> list[dict]:
    """Each stage's share of mj_step and mean time per call (from the summed timers).

    A restart of a fallen robot calls mj_forward outside mj_step, and the forward stages' timers count
    it too; their sums are scaled by (mj_step calls / mj_forward calls) so that only the forward
    passes inside mj_step are counted.
    """
    step, steps = timers["step"]
    inside = min(1.0, steps / timers["forward"][1]) if timers["forward"][1] else 1.0
    rows = []
    for label, name, depth in STAGES:
        seconds = timers[name][0] * (1.0 if name in ("step", "advance") else inside)  # the rest run in mj_forward
        rows.append({"stage": label, "timer": name, "depth": depth, "share": seconds / step if step else None,
                     "us_per_step": 1e6 * seconds / max(steps, 1)})
    return rows


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_report(report: dict) -> None:
    prof = report["profile"]
    print(f"\nprofile of the baseline while walking ({report['num_envs']} robots, mjData.timer summed over them):")
    for row in prof["stages"]:
        print(f"  {'  ' * row['depth']}{row['stage']:<{24 - 2 * row['depth']}} {100 * row['share']:5.1f}%  "
              f"{row['us_per_step']:7.2f} us/step")
    print(f"  solver iterations {prof['solver_iterations']:.2f}, contacts {prof['contacts']:.1f}, constraint rows "
          f"{prof['constraint_rows']:.1f} (means per physics step)")
    base = report["changes"][0]
    print(f"\n{'change':<24} {'dt s':>9} {'steps':>5} {'cost':>6} {'phys/s':>9} {'iters':>5} {'falls':>7} "
          f"{'lin err':>8} {'yaw err':>8}  config field")
    for row in report["changes"]:
        if "error" in row:
            print(f"{row['name']:<24} error: {row['error']}")
            continue
        print(f"{row['name']:<24} {row['sim_dt']:>9.6g} {row['substeps']:>5d} {row['cost_ratio']:>6.2f} "
              f"{row['physics_steps_per_s']:>9,.0f} {row['solver_iterations']:>5.2f} "
              f"{row['falls']:>3d}/{report['num_envs']:<3d} {_fmt(row['lin_vel_rmse_steady'], '8.3f'):>8} "
              f"{_fmt(row['yaw_rate_rmse_steady'], '8.3f'):>8}  {row['config']}")
    print(f"cost: physics time per policy step / the baseline's ({base['elapsed_s']:.2f} s for "
          f"{base['timed_policy_steps']} policy steps); lower is cheaper. lin/yaw err: steady-state RMSE, m/s and "
          "rad/s. A pre-screen: keep a change only if a policy trained with it passes deploy.sim2sim --suite "
          "--sim-dt 0.002.")


def run(args: argparse.Namespace, folder: Path) -> dict:
    with contextlib.redirect_stderr(io.StringIO()) as notes:  # printed once the input is known to be good
        cfg = load_saved_config(folder / "model" / "cfg.yaml")
    spec, policy = load_policy(folder)
    changes = _select(candidates(cfg), args.changes, args.combine)
    print(notes.getvalue(), end="", file=sys.stderr)
    nthread = args.nthread or available_cores()
    defaults, _ = robot_defaults(spec.config, spec.training)
    plan = plan_walk(spec, args.num_envs, args.seconds, args.seed)
    rows, walkers = [], []
    for change in changes:
        row = {"name": change.name, "what": change.what, "overrides": list(change.overrides), "needs": change.needs,
               "config": "; ".join(filter(None, [", ".join(change.overrides),
                                                  f"needs {change.needs}" if change.needs else ""]))}
        try:
            model, ccfg = build_model(cfg, change)
            substeps = int(ccfg.control.decimation)
            if abs(substeps * model.opt.timestep - spec.control_dt) > 1e-6 * spec.control_dt:
                raise ValueError(f"dt {model.opt.timestep:g} x {substeps} is not the policy's {spec.control_dt:g} s")
        except (ConfigError, RobotFileError, ValueError) as err:
            rows.append({**row, "error": " ".join(str(err).split())})
            continue
        height = defaults.fall_height or FALL_HEIGHT_FRACTION * float(model.key_qpos[0, 2])
        row.update(sim_dt=float(model.opt.timestep), substeps=substeps, bodies=int(model.nbody),
                   contact_pairs=int(model.npair))
        walkers.append((row, Walker(model, spec, policy, plan, substeps, nthread, defaults.fall_tilt, height)))
        rows.append(row)
    if "error" in rows[0]:
        raise BenchmarkError(f"the baseline does not build: {rows[0]['error']}")
    base_walker = walkers[0][1]
    profiler = Walker(base_walker.batch.model, spec, policy, plan, base_walker.substeps, nthread,
                      *base_walker.fall, persistent=True)
    start = time.perf_counter()
    walk([w for _, w in walkers] + [profiler], plan, args.seed)
    base = base_walker.summary()
    for row, w in walkers:
        row.update(w.summary())
        row["cost_ratio"] = row["elapsed_s"] / base["elapsed_s"]
    persistent = profiler.summary()
    rows.append({"name": "batch_persistent", "what": "Batch(persistent=True): each sim keeps its MjData",
                 "overrides": [], "needs": "env/sim/mujoco_backend.py (no config field)",
                 "config": "needs Batch(persistent=True) in the backend", "sim_dt": base_walker.sim_dt,
                 "substeps": base_walker.substeps, **persistent,
                 "cost_ratio": persistent["elapsed_s"] / base["elapsed_s"]})
    return {"format": FORMAT, "config": args.config, "policy": str(folder), "num_envs": args.num_envs,
            "nthread": nthread, "seconds": args.seconds, "policy_steps": len(plan.commands), "seed": args.seed,
            "control_dt": spec.control_dt, "mujoco": mujoco.__version__, "wall_s": time.perf_counter() - start,
            "profile": {"stages": profile_rows(profiler.timers()),
                        **{k: persistent[k] for k in ("solver_iterations", "contacts", "constraint_rows")}},
            "changes": rows}


def main(argv: list[str] | None = None) -> int:
    try:
        args = get_args(argv)
        folder, out = _check(args)
        report = run(args, folder)
    except (BenchmarkError, ConfigError, DeployError, RobotFileError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    print_report(report)
    atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
