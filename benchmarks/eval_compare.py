"""Evaluate ours and rsl_rl's policies from a compare.py run at the same iteration, deterministically.

    python benchmarks/eval_compare.py --config go2 --seeds 1 2 --iteration 300
    python benchmarks/eval_compare.py --config go2 --seeds 1 2 --iteration 300 --out benchmarks/results/go2/compare
    python benchmarks/eval_compare.py --config go2 --seeds 1 2 --iteration final

compare.py's task reward is measured on the training rollouts, with the
exploration noise of each run's current action std, so a run whose std has
shrunk further scores higher for the same mean action. This script takes the
checkpoints both runs saved at one iteration (same env steps), runs play.py's
evaluation on each with the *mean* action (randomisation and pushes on, same
commands and seed for both), and writes eval_iteration<N>.json to the compare
folder. ``--iteration final`` takes each run's last policy instead, the one it
had when the wall-clock budget ran out (eval_final.json). rsl_rl's checkpoint
(normaliser + MLP, rsl-rl-lib 5.x layout) is read without rsl_rl installed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from benchmarks.compare import run_name  # noqa: E402
from benchmarks.learn import FINAL_RSL_RL_CHECKPOINT, RESULTS  # noqa: E402
from config import load_saved_config  # noqa: E402
from env.utils.command_schedule import CommandDriver  # noqa: E402
from model.mlp import build_mlp  # noqa: E402
from rl.evaluation import eval_commands, evaluate  # noqa: E402
from rl.play_setup import build_env, load_trained, play_cfg  # noqa: E402
from utils.cli import main_with_one_line_errors  # noqa: E402
from utils.experiment import Experiment  # noqa: E402
from utils.files import atomic_write_text  # noqa: E402


def load_rsl_rl_actor(path: Path, cfg) -> Callable[[torch.Tensor], torch.Tensor]:
    """obs -> mean action from an rsl-rl-lib 5.x checkpoint (obs_normalizer + mlp of the actor)."""
    state = torch.load(path, map_location="cpu", weights_only=False)["actor_state_dict"]
    mlp_state = {k.removeprefix("mlp."): v for k, v in state.items() if k.startswith("mlp.")}
    last = max(int(key.split(".")[0]) for key in mlp_state)
    num_obs, num_actions = state["mlp.0.weight"].shape[1], mlp_state[f"{last}.weight"].shape[0]
    mlp = build_mlp(num_obs, cfg.policy.actor_hidden_dims, num_actions, cfg.policy.activation)
    mlp.load_state_dict(mlp_state)
    mlp.eval()
    mean, std = state.get("obs_normalizer._mean"), state.get("obs_normalizer._std")

    def act(obs: torch.Tensor) -> torch.Tensor:
        if mean is not None:
            obs = (obs - mean) / (std + 1e-2)  # rsl_rl EmpiricalNormalization, eps 0.01, no clip
        return mlp(obs)

    return act


def checkpoints(config: str, seed: int, iteration: int | None) -> dict[str, Path]:
    """Both runs' checkpoints at `iteration`, or (None) at the end of their wall-clock budget."""
    ours_run, rsl_run = Experiment(run_name(config, "ours", seed)), Experiment(run_name(config, "rsl_rl", seed))
    if iteration is None:
        ours, rsl = ours_run.policy_path, rsl_run.log_dir / FINAL_RSL_RL_CHECKPOINT
        hint = "learn.py saves both at the end of the budget (rsl_rl's since this file was added)"
    else:
        ours = ours_run.model_dir / "all" / f"policy_{iteration}.pt"
        rsl = rsl_run.log_dir / f"model_{iteration}.pt"
        hint = "compare.py keeps one every runner.save_interval iterations"
    for path in (ours, rsl):
        if not path.is_file():
            raise SystemExit(f"no checkpoint {path}; {hint}")
    return {"ours": ours, "rsl_rl": rsl}


def describe(metrics: dict) -> str:
    return (f"fall rate {metrics['fall_rate']:.3f}  lin {metrics['lin_vel_rmse']:.3f}  "
            f"yaw {metrics['yaw_rate_rmse']:.3f}  task reward/episode {metrics['task_reward']:.1f}")


def parse_iteration(text: str) -> int | None:
    """``--iteration``: a number, or 'final' (None) for the policies at the end of the budget."""
    if text == "final":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an iteration number or 'final', got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="go2")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--iteration", type=parse_iteration, required=True,
                        help="a multiple of runner.save_interval, or 'final' for each run's last policy")
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--out", default=None, help="folder (default benchmarks/results/<config>/compare)")
    args = parser.parse_args(argv)

    # the config the runs trained with (compare.py may have passed --set overrides)
    cfg_path = Experiment(run_name(args.config, "ours", args.seeds[0])).cfg_path
    if not cfg_path.is_file():
        raise SystemExit(f"error: no compare.py run for {args.config} seed {args.seeds[0]} (looked for {cfg_path})")
    cfg = load_saved_config(cfg_path)
    flags = SimpleNamespace(randomize=True, push=True, noise=False)
    base = play_cfg(cfg, flags, args.episodes, "cpu")
    commands, mode = eval_commands(base.commands, args.episodes, torch.Generator().manual_seed(1))
    final = args.iteration is None
    tag = "final" if final else f"it {args.iteration}"
    report: dict = {"config": args.config, "iteration": "final" if final else args.iteration,
                    "episodes": args.episodes,
                    "command_mode": mode, "randomize": True, "push": True, "noise": False, "runs": {}}
    for seed in args.seeds:
        for algo, path in checkpoints(args.config, seed, args.iteration).items():
            env = build_env(base, 1)
            policy = load_trained(path, cfg, env, "cpu") if algo == "ours" else load_rsl_rl_actor(path, cfg)
            summary = evaluate(env, policy, CommandDriver(env.task), commands, env.max_episode_length).summary
            report["runs"].setdefault(algo, {})[seed] = summary
            print(f"seed {seed} {algo:7s} {tag}: {describe(summary)}", flush=True)
    for algo, runs in report["runs"].items():
        for key in ("fall_rate", "lin_vel_rmse", "yaw_rate_rmse", "task_reward"):
            report.setdefault("mean", {}).setdefault(algo, {})[key] = statistics.fmean(r[key] for r in runs.values())
        print(f"{algo:7s} mean of {len(runs)} seeds: {describe(report['mean'][algo])}")
    out = Path(args.out) if args.out else RESULTS / args.config / "compare"
    out.mkdir(parents=True, exist_ok=True)
    path = out / ("eval_final.json" if final else f"eval_iteration{args.iteration}.json")
    atomic_write_text(path, json.dumps(report, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main_with_one_line_errors(main))
