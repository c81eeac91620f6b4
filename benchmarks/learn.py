"""Learning benchmark: train under a wall-clock budget, evaluate, plot the learning curve.

    python benchmarks/learn.py --config go2 --minutes 45
    python benchmarks/learn.py --config go2 --minutes 45 --algo rsl_rl   # same env, rsl-rl-lib's PPO

Writes to benchmarks/results/<config>/:
    curve_<algo>.json      per iteration: wall-clock minutes, env steps, mean task reward per step
                           (1 = perfect tracking), RMS linear/yaw tracking error, episode length, falls
    learning_curve.png     task reward and tracking error against minutes and env steps, every algo found
    eval.json, eval_tracking.png   play.py's evaluation of our trained policy (with the zero and random
                           baselines), run with randomisation and pushes as configured
    policy/                the final policy to start from (our algo): model/policy.pt (full checkpoint,
                           resumable), model/cfg.yaml, export/ (policy.onnx, policy.jit.pt, policy.yaml)
    checkpoint/            while our algo trains: its latest checkpoint and cfg.yaml, copied every
                           --keep_every minutes so that a run cut off mid-way resumes in another clone;
                           removed when the run ends and policy/ holds the final one

The policy trains into experiments/learn_<config>_<algo>/ (ignored by git).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from benchmarks.learn_folder import RUNNING_CHECKPOINT, CheckpointCopier, keep_policy, restore_experiment  # noqa: E402
from benchmarks.learning_plot import plot_curves  # noqa: E402
from config import load_config  # noqa: E402
from env.gym_env_wrapper import GymEnvWrapper, make_env  # noqa: E402
from rl.precision import resolve_precision  # noqa: E402
from rl.runner import OnPolicyRunner  # noqa: E402
from rl.seed import set_seed  # noqa: E402
from utils.cli import main_with_one_line_errors  # noqa: E402
from utils.devices import check_device, describe_machine  # noqa: E402
from utils.experiment import Experiment  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402
from utils.progress import format_duration  # noqa: E402
from utils.warm_start import RECORD_NAME as WARM_RECORD  # noqa: E402
from utils.warm_start import WarmSource, read_source  # noqa: E402
from utils.yaml import ParamsProcess  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_MINUTES = 45.0


class CurveRecorder:
    """Wraps the env's step to measure what a user compares runs by, whichever algorithm trains.

    Per iteration (between two `flush` calls): mean task reward per env step, RMS of the
    horizontal velocity error and of the yaw-rate error against the command, mean length of
    the episodes that ended, and the fraction of them that ended by a fall.
    """

    def __init__(self, env: GymEnvWrapper, previous_rows: list[dict] | None = None):
        self.env = env
        self._step = env.step
        env.step = self.step  # instance attribute shadows the method for every caller
        self.rows: list[dict] = list(previous_rows or [])
        # a resumed run continues the curve: its clock and step count start where the last row ended
        last = self.rows[-1] if self.rows else {"minutes": 0.0, "env_steps": 0}
        self.start = time.perf_counter() - last["minutes"] * 60
        self.env_steps = int(last["env_steps"])
        self._clear()

    def _clear(self) -> None:
        # sums stay on the env's device until flush: no host synchronisation per step
        self.sums = torch.zeros(7, dtype=torch.float64, device=self.env.device)
        self.steps_iter = 0

    def step(self, actions):
        robot, task = self.env.robot, self.env.task
        commands = task.commands.clone()
        lengths = robot.episode_length_buf.clone()
        obs, critic_obs, rew, done, info, task_rew = self._step(actions)
        alive = ~done  # done envs were reset inside step: their state is a new episode's
        lin_err = torch.sum(torch.square(robot.base_lin_vel[:, :2] - commands[:, :2]), dim=1)
        yaw_err = torch.square(robot.base_ang_vel[:, 2] - commands[:, 2])
        self.sums += torch.stack([alive.sum(), (lin_err * alive).sum(), (yaw_err * alive).sum(), task_rew.sum(),
                                  done.sum(), (done & ~info["time_outs"]).sum(), ((lengths + 1) * done).sum()]).double()
        self.env_steps += self.env.num_envs
        self.steps_iter += self.env.num_envs
        return obs, critic_obs, rew, done, info, task_rew

    def flush(self, iteration: int) -> dict:
        n, lin_sq, yaw_sq, task, ended, falls, length_steps = self.sums.tolist()
        steps_this = max(1.0, n)
        row = {
            "iteration": iteration,
            "minutes": (time.perf_counter() - self.start) / 60,
            "env_steps": self.env_steps,
            "task_reward_per_step": task / max(1, self.steps_iter),
            "lin_vel_rmse": math.sqrt(lin_sq / steps_this),
            "yaw_rate_rmse": math.sqrt(yaw_sq / steps_this),
            "episode_length_s": length_steps * self.env.robot.dt / ended if ended else None,
            "fall_fraction": falls / ended if ended else None,
        }
        level = self.env.robot.ground.mean_level()
        if level is not None:  # rough terrain: where the curriculum has the envs now
            row["terrain_level"] = float(level)
            row["terrain_level_by_type"] = self.env.robot.ground.curriculum.mean_level_by_type()
        self.rows.append(row)
        self._clear()
        return row


@dataclass(frozen=True)
class Budget:
    """When training stops: after `seconds` of wall clock or, where given, at iteration `iterations`, whichever
    comes first, both counted over the whole run (resumes included). Hosted 2-core machines differ up to 2x in
    speed, so a recipe compared across them needs the iteration budget."""

    seconds: float
    iterations: int | None = None

    def spent(self, row: dict) -> bool:
        out_of_time = row["minutes"] * 60 >= self.seconds
        return out_of_time or (self.iterations is not None and row["iteration"] >= self.iterations)

    def seconds_left(self, rows: list[dict], window: int = 20) -> float:
        """Time to whichever budget comes first, the iterations' at the pace of the last `window` iterations."""
        left = max(self.seconds - rows[-1]["minutes"] * 60, 0.0)
        if self.iterations is None:
            return left
        recent = rows[-window:]
        its = recent[-1]["iteration"] - recent[0]["iteration"]
        if its <= 0:
            return left if rows[-1]["iteration"] < self.iterations else 0.0
        per_it = (recent[-1]["minutes"] - recent[0]["minutes"]) * 60 / its
        return min(left, max(self.iterations - rows[-1]["iteration"], 0) * per_it)

    def progress(self, rows: list[dict]) -> str:
        row = rows[-1]
        its = f"{row['iteration']:5d}" + (f"/{self.iterations}" if self.iterations is not None else "")
        return (f"it {its}  {format_duration(row['minutes'] * 60)}/{format_duration(self.seconds)}  "
                f"ETA {format_duration(self.seconds_left(rows))}")


def train_ours(env: GymEnvWrapper, cfg, experiment: Experiment, budget: Budget, recorder: CurveRecorder,
               ckpt: dict | None = None, after_iteration=None, warm: WarmSource | None = None) -> OnPolicyRunner:
    runner = OnPolicyRunner(env, cfg, log_dir=str(experiment.log_dir), device=cfg.runner.device, model_dir=experiment.model_dir,
                            cfg_dict=cfg.to_dict(), run_name=experiment.name,
                            iteration_lines=False)  # report() prints the budget-aware line instead; notes print
    if ckpt is not None:
        runner.load_state(ckpt, experiment.policy_path)
    if warm is not None:  # as train.py --init_from: the actor (and what fits of the critic) from another policy
        normalizers = (runner.obs_normalizer, runner.critic_obs_normalizer) if runner.normalize_observations else \
            (None, None)
        warm.load_into(runner.alg.actor, runner.alg.critic, *normalizers, activation=cfg.policy.activation,
                       growth=warm.growth_for(env))
        print(warm.line(), flush=True)
        atomic_write_text(experiment.model_dir / WARM_RECORD, warm.record())

    def stop_after(it: int, metrics: dict) -> bool:
        recorder.flush(it)
        report(recorder.rows, budget)
        if after_iteration is not None:
            after_iteration()  # the curve on disk follows policy.pt, so a killed run can be resumed
        return budget.spent(recorder.rows[-1])

    runner.learn(10**9, on_iteration=stop_after)
    runner.close()
    return runner


FINAL_RSL_RL_CHECKPOINT = "model_final.pt"  # in the rsl_rl run's log/: its policy when the budget ran out


def train_rsl_rl(env: GymEnvWrapper, cfg, experiment: Experiment, budget: Budget, recorder: CurveRecorder) -> None:
    from benchmarks.rsl_rl_adapter import make_rsl_rl_runner, run_iterations, save_checkpoint

    runner = make_rsl_rl_runner(env, cfg, str(experiment.log_dir), "cpu", verbose=False)
    it = 0
    while not recorder.rows or not budget.spent(recorder.rows[-1]):
        run_iterations(runner, 1)
        it += 1
        recorder.flush(it)
        report(recorder.rows, budget)
    save_checkpoint(runner, str(experiment.log_dir / FINAL_RSL_RL_CHECKPOINT))  # as ours keeps model/policy.pt


def report(rows: list[dict], budget: Budget) -> None:
    row = rows[-1]
    print(f"{budget.progress(rows)}  "
          f"steps {row['env_steps']:>11,}  task/step {row['task_reward_per_step']:.3f}  "
          f"lin rmse {row['lin_vel_rmse']:.3f}  yaw rmse {row['yaw_rate_rmse']:.3f}  "
          f"ep len {row['episode_length_s'] or float('nan'):.1f}s  falls {row['fall_fraction'] if row['fall_fraction'] is not None else float('nan'):.2f}"
          + (f"  level {row['terrain_level']:.2f}" if "terrain_level" in row else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="go2")
    parser.add_argument("--minutes", type=float, default=None,
                        help="wall-clock training budget (default 45; a resume: the run's own)")
    parser.add_argument("--iterations", type=int, default=None, metavar="N",
                        help="also stop at iteration N (counted over the whole run), to compare recipes across "
                             "machines of different speed; the run stops at whichever budget comes first")
    parser.add_argument("--algo", choices=["ours", "rsl_rl"], default="ours")
    parser.add_argument("--num_envs", type=int, default=None, help="overrides env.num_envs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval_episodes", type=int, default=64, help="episodes of play.py --eval afterwards (0: skip)")
    parser.add_argument("--out", default=None, help="results folder (default benchmarks/results/<config>)")
    parser.add_argument("--experiment", default=None, help="experiment name (default learn_<config>_<algo>)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    parser.add_argument("--backend", default=None, help="physics backend (mujoco, warp; default: the config's)")
    parser.add_argument("--device", default="cpu", help="torch device of env and PPO (cpu, cuda:0)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the experiment and its curve_ours.json (ours only); --minutes is the total budget")
    parser.add_argument("--init_from", default=None, metavar="NAME|DIR",
                        help="start from another policy's actor, as train.py --init_from (ours only; the warm "
                             "start's own training time is not in this run's minutes)")
    parser.add_argument("--final_stage", action="store_true",
                        help="the settings the config's stages end with from the first iteration, no stage changes "
                             "(as train.py --final_stage; a new run only)")
    parser.add_argument("--keep_every", type=float, default=5.0, metavar="MINUTES",
                        help="copy the running checkpoint into <out>/checkpoint/ this often, so a run cut off "
                             "part-way can be committed and resumed elsewhere (ours only; 0: off)")
    args = parser.parse_args(argv)
    if not args.keep_every >= 0:
        raise ValueError(f"--keep_every is minutes between checkpoint copies, 0 or more (0: off), "
                         f"not {args.keep_every}")
    if args.init_from is not None and (args.resume or args.algo != "ours"):
        raise ValueError("--init_from starts a new run of our PPO: not with --resume or --algo rsl_rl")
    if args.iterations is not None and args.iterations < 1:
        raise ValueError(f"--iterations is the run's last iteration, 1 or more, not {args.iterations}")
    if args.final_stage and args.resume:
        raise ValueError("--final_stage starts a new run: --resume continues with the run's own saved config")

    overrides = list(args.set) + ([f"env.num_envs={args.num_envs}"] if args.num_envs else []) \
        + ([f"sim.backend={args.backend}"] if args.backend else []) + [f"runner.device={check_device(args.device)}"]
    out_dir = Path(args.out) if args.out else RESULTS / args.config
    experiment = Experiment(args.experiment or f"learn_{args.config}_{args.algo}")
    ckpt, previous = None, {}
    if args.resume:
        cfg, ckpt, previous = resume_state(args, experiment, out_dir, overrides)
        # a resume goes on to the budgets the run was given, unless new ones are
        args.minutes = previous["minutes"] if args.minutes is None else args.minutes
        args.iterations = previous["iterations"] if args.iterations is None else args.iterations
        done, trained = previous["rows"][-1]["iteration"], previous["rows"][-1]["minutes"]
        if args.iterations is not None and args.iterations <= done:
            raise ValueError(f"--iterations {args.iterations}: the run is already at iteration {done}; "
                             "give a larger total")
        if args.minutes is not None and args.minutes <= trained:
            raise ValueError(f"--minutes {args.minutes:g}: the run has already trained {trained:.3g} minutes; "
                             "give a larger total")
    else:
        cfg = load_config(args.config, overrides + [f"runner.seed={args.seed}"], final_stage=args.final_stage)
    args.minutes = DEFAULT_MINUTES if args.minutes is None else args.minutes
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg.runner.precision = resolve_precision(cfg.runner.precision, cfg.runner.device)[0]  # recorded as trained
    warm = read_source(args.init_from, experiment) if args.init_from is not None else None
    if not args.resume:
        experiment.prepare_new(overwrite=True)
    # as train.py: cfg.yaml is what trains now, a resume's --set included (play.py and the export read it)
    atomic_write_text(experiment.cfg_path, ParamsProcess.dumps(cfg))

    previous_rows = previous.get("rows")
    set_seed(args.seed + (len(previous_rows) if previous_rows else 0))  # a resumed run draws new episodes
    env = make_env(cfg, cfg.runner.device)
    recorder = CurveRecorder(env, previous_rows)
    budget = Budget(args.minutes * 60, args.iterations)
    print(f"{args.algo} on {args.config}: {env.num_envs} envs, budget {format_duration(budget.seconds)}"
          + (f" or {args.iterations} iterations" if args.iterations is not None else "")
          + (f", resumed at {format_duration(recorder.rows[-1]['minutes'] * 60)}" if previous_rows else ""), flush=True)
    machine = describe_machine(cfg.runner.device)  # the curve's title shows it

    def write_curve() -> None:
        curve = {"config": args.config, "algo": args.algo, "num_envs": env.num_envs, "minutes": args.minutes,
                 "iterations": args.iterations,
                 "seed": args.seed, "overrides": recorded_overrides, "torch_threads": torch.get_num_threads(),
                 "machine": machine,
                 "resumed_at_iterations": resumed_at, "init_from": init_from,
                 "stage_iterations": sorted({st["from_iteration"] for st in getattr(cfg.runner, "stages", []) or []}),
                 "rows": recorder.rows}
        atomic_write_text(out_dir / f"curve_{args.algo}.json", json.dumps(curve, indent=1) + "\n")

    init_from = previous.get("init_from") if args.resume else args.init_from
    resumed_at = previous.get("resumed_at_iterations", []) + ([previous_rows[-1]["iteration"]] if previous_rows else [])
    # a resume's curve keeps the settings the run started with (its cfg.yaml holds them) and adds its own --set
    first_overrides = previous.get("overrides", [])
    recorded_overrides = first_overrides + [o for o in overrides if o not in first_overrides]
    copier = CheckpointCopier(experiment, out_dir, args.keep_every * 60)
    if not args.resume:
        copier.remove()  # a copy an earlier, cut-off run left there is not this run's

    def after_iteration() -> None:
        write_curve()
        copier()  # after the curve: the copy's iteration is never ahead of the curve on disk

    if args.algo == "ours":
        train_ours(env, cfg, experiment, budget, recorder, ckpt, after_iteration=after_iteration, warm=warm)
    else:
        train_rsl_rl(env, cfg, experiment, budget, recorder)
    write_curve()
    print(f"wrote {out_dir / f'curve_{args.algo}.json'} and {plot_curves(out_dir)}")

    if args.algo == "ours" and args.eval_episodes > 0:
        import play

        code = play.main(["--name", experiment.name, "--eval", str(args.eval_episodes), "--policy", "trained,zero,random",
                          "--out", str(out_dir), "--randomize", "--push"])
        if code != 0:
            return code
    if args.algo == "ours":
        print(f"kept the final policy in {keep_policy(experiment, out_dir / 'policy')}", flush=True)
        copier.remove()
    return 0


def resume_state(args, experiment: Experiment, out_dir: Path, overrides: list[str]):
    """The saved config, the checkpoint and what the curve recorded so far (its rows up to the checkpoint,
    resumes, warm start and overrides) of the run to continue; ValueError if any is missing."""
    from config import apply_overrides, load_saved_config
    from utils.checkpoint import read_checkpoint

    curve_path = out_dir / f"curve_{args.algo}.json"
    if args.algo != "ours":
        raise ValueError("--resume continues our PPO only (--algo ours)")
    kept = out_dir / "policy" / "model"
    if (out_dir / RUNNING_CHECKPOINT / "policy.pt").is_file():  # the run was cut off after its last kept policy
        kept = out_dir / RUNNING_CHECKPOINT
    if not experiment.policy_path.is_file() and (kept / "policy.pt").is_file() and curve_path.is_file():
        restore_experiment(experiment, kept)  # a fresh clone: the experiments folder is not in git
    if not experiment.policy_path.is_file() or not curve_path.is_file():
        raise ValueError(f"--resume needs {experiment.policy_path} (or {kept}/policy.pt) and {curve_path} "
                         "from an earlier run")
    cfg = apply_overrides(load_saved_config(experiment.cfg_path), overrides)
    ckpt = read_checkpoint(experiment.policy_path, "cpu", experiment)
    curve = json.loads(curve_path.read_text())
    it = int(ckpt["iteration"])
    rows = [r for r in curve["rows"] if r["iteration"] <= it]
    # a kill between the checkpoint write and the curve write leaves the curve one iteration behind
    if not rows or rows[-1]["iteration"] < it - 1:
        raise ValueError(f"{curve_path} ends at iteration {rows[-1]['iteration'] if rows else 0} but the checkpoint "
                         f"is at {it}; they are not the same run")
    return cfg, ckpt, {"rows": rows, "resumed_at_iterations": curve.get("resumed_at_iterations", []),
                       "init_from": curve.get("init_from"), "overrides": curve.get("overrides", []),
                       "minutes": curve.get("minutes", DEFAULT_MINUTES), "iterations": curve.get("iterations")}



if __name__ == "__main__":
    sys.exit(main_with_one_line_errors(main))
