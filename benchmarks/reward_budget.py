"""Where a policy's reward comes from, per term, and how much of it `rewards.only_positive_rewards` clips away.

    python benchmarks/reward_budget.py --name benchmarks/results/go2_rough/policy --level 0

Runs a trained policy under training conditions (randomisation, pushes and observation
noise on, the config's own command resampling) and prints each reward term's mean rate
(per robot-second, scales applied) and the fraction of env steps whose summed reward is
below 0. With only_positive_rewards those steps earn exactly 0 in training, whatever the
robot does: a shaping term meant to teach a skill (foot clearance at a riser, say) is
clipped away wherever the penalties outweigh the tracking. On rough terrain --level puts
every robot on one level (the curriculum stays live, as in training).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import ConfigError  # noqa: E402
from env.terrain.curriculum import check_tile_flags  # noqa: E402
from rl.play_setup import PlayError, build_env, load_experiment, load_trained, play_cfg, session_config  # noqa: E402
from utils.checkpoint import CheckpointError, read_checkpoint  # noqa: E402
from utils.experiment import ExperimentError  # noqa: E402


class RewardBudget:
    """Wraps the task's compute_rewards: per-term sums and the steps whose unclipped sum was negative."""

    def __init__(self, task):
        self.task = task
        self._compute = task.compute_rewards
        task.compute_rewards = self.compute  # instance attribute shadows the method for the task's step
        self.clip = bool(task.cfg.rewards.only_positive_rewards)  # for the report only
        self.terms: dict[str, float] = {}
        self.steps = 0
        self.negative = 0

    def compute(self) -> None:
        task = self.task
        before = {name: sums.clone() for name, sums in task.episode_sums.items()}
        self._compute()  # training's own summation, clip and all: the rewards it trains on are unchanged
        added = {name: sums - before[name] for name, sums in task.episode_sums.items()}  # this step's terms
        unclipped = sum(value for name, value in added.items() if name != "termination")  # summed before the clip
        self.steps += task.rew_buf.numel()
        self.negative += int((unclipped < 0).sum())
        for name, value in added.items():
            self.terms[name] = self.terms.get(name, 0.0) + float(value.sum())

    def rates(self, dt: float) -> dict[str, float]:
        """Each term's mean contribution per robot-second."""
        seconds = max(1, self.steps) * dt
        return {name: total / seconds for name, total in self.terms.items()}

    def negative_fraction(self) -> float:
        return self.negative / max(1, self.steps)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True, help="experiment name or policy folder")
    p.add_argument("--num_envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=300, help="policy steps")
    p.add_argument("--level", type=int, default=None, help="rough terrain: start every robot on this level")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    args = p.parse_args(argv)
    if args.num_envs < 1 or args.steps < 1:
        print("error: --num_envs and --steps must be at least 1", file=sys.stderr)
        return 2
    flags = SimpleNamespace(name=args.name, set=args.set, backend=None, randomize=True, push=True, noise=True,
                            terrain=None, level=None, device=None)
    try:
        exp, saved = load_experiment(flags)
        cfg = play_cfg(session_config(saved, flags, 10**9), flags, args.num_envs, "cpu")
        try:
            check_tile_flags(cfg.terrain, None, args.level, getattr(cfg, "name", args.name))
        except ValueError as err:
            raise ConfigError(f"--level {args.level}: {err}") from None
        env = build_env(cfg, args.seed, flags)
        if args.level is not None:
            env.robot.ground.curriculum.levels.fill_(args.level)
        policy = load_trained(read_checkpoint(exp.policy_path, "cpu", exp), exp.policy_path, cfg, env, "cpu")
    except (ConfigError, ExperimentError, CheckpointError, PlayError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    budget = RewardBudget(env.task)
    obs, _ = env.reset()
    with torch.inference_mode():
        for _ in range(args.steps):
            obs = env.step(policy(obs))[0]
    rates = budget.rates(env.robot.dt)
    clip = "clipped to 0 in training" if budget.clip else "kept: only_positive_rewards is off"
    print(f"{args.name}: {args.num_envs} robots x {args.steps} steps, randomisation, pushes and noise on"
          + (f", from level {args.level}" if args.level is not None else ""))
    print(f"steps with a negative summed reward: {budget.negative_fraction():.2f} ({clip})")
    print(f"penalties {sum(v for v in rates.values() if v < 0):+.3f}, rewards {sum(v for v in rates.values() if v > 0):+.3f}"
          " per robot-second; by term:")
    for name, rate in sorted(rates.items(), key=lambda kv: kv[1]):
        print(f"  {name:24s} {rate:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
