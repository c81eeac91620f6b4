"""Command-line arguments of train.py."""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

from config import available_configs


class OneLineArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (``error: ...; see train.py --help``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}; see {self.prog} --help", file=sys.stderr)
        sys.exit(2)


def glue_dash_values(argv: list[str] | None, options: tuple[str, ...]) -> list[str]:
    """`argv` (default sys.argv[1:]) with each of `options` joined to a following value that starts with a minus
    and a digit or point (`--commands -0.5,0,0@5` -> `--commands=-0.5,0,0@5`): argparse takes such a value for
    an option and would answer "expected one argument"."""
    out: list[str] = []
    for arg in sys.argv[1:] if argv is None else argv:
        if out and out[-1] in options and re.match(r"-[\d.]", arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def get_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = OneLineArgumentParser(
        prog="train.py",
        description="Train a legged-robot locomotion policy with PPO. Writes experiments/<name>/.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--config", default=None,
                        help=f"robot/task config to train (one of: {', '.join(available_configs())}); "
                             "with --resume, defaults to the resumed experiment's saved cfg.yaml")
    parser.add_argument("--name", required=True, help="experiment name: outputs go to experiments/<name>/ (letters, digits, -, _, .)")
    parser.add_argument("--resume", default=None, metavar="NAME|DIR",
                        help="continue from experiments/NAME/model/policy.pt (iteration, frames, optimizer, normaliser), "
                             "or from a policy folder given as a path, e.g. benchmarks/results/go2/policy (read only); "
                             "an experiment stopped before its first save starts from iteration 0 with its cfg.yaml")
    parser.add_argument("--checkpoint", default=None, metavar="PATH",
                        help="with --resume: the checkpoint to resume from, relative to experiments/<resume>/model/, "
                             "e.g. all/policy_50.pt (default policy.pt); resuming in place, the newer policy.pt and "
                             "snapshots are moved to model/superseded_<iteration>/ first")
    parser.add_argument("--init_from", default=None, metavar="NAME|DIR",
                        help="start a new run (with --config) from another policy's weights: its actor, action std and "
                             "observation normaliser (which must fit: same observation size, action count and "
                             "actor_hidden_dims) and its critic where the shapes match; an experiment name or a "
                             "policy folder path, e.g. benchmarks/results/go2/policy; counters, optimizer and "
                             "learning rate start fresh (unlike --resume)")
    parser.add_argument("--final_stage", action="store_true",
                        help="a new run with the settings the config's runner.stages end with from its first "
                             "iteration, and no stage changes (for --init_from a policy that trained through them); "
                             "--set still overrides")
    parser.add_argument("--num_envs", type=int, default=None, help="parallel robots (overrides env.num_envs)")
    parser.add_argument("--max_iterations", type=int, default=None,
                        help="PPO iterations to run now (overrides runner.max_iterations); a resumed run adds them")
    parser.add_argument("--seed", type=int, default=None, help="RNG seed (overrides runner.seed)")
    parser.add_argument("--device", default=None, help="torch device for policy and env tensors, e.g. cpu or cuda:0")
    parser.add_argument("--backend", default=None, help="physics backend (overrides sim.backend): mujoco (CPU) or warp (MuJoCo Warp: GPU, or slowly on cpu)")
    parser.add_argument("--headless", action="store_true",
                        help="accepted for legged_gym-style scripts; training never opens a viewer")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing experiment experiments/<name>/ (a folder holding model/ or log/) "
                             "instead of refusing")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="override any config field, e.g. --set rewards.scales.alive=0 (repeatable)")
    parser.add_argument("--dist_backend", default="auto", choices=["auto", "gloo", "nccl"],
                        help="under torchrun: process-group backend (auto: NCCL when the ranks train on CUDA, "
                             "else gloo)")
    return parser.parse_args(argv)


def cli_overrides(args: argparse.Namespace) -> list[str]:
    """The dedicated flags as ``section.field=value`` overrides, applied after --set."""
    pairs = [("env.num_envs", args.num_envs), ("runner.max_iterations", args.max_iterations),
             ("runner.seed", args.seed), ("runner.device", args.device), ("sim.backend", args.backend)]
    return [f"{key}={value}" for key, value in pairs if value is not None]
