"""Command-line arguments of play.py."""

from __future__ import annotations

import argparse

from env.utils.args import OneLineArgumentParser, glue_dash_values
from utils.video import QUALITIES

EPILOG = """modes (watch is the default when none of --video/--eval/--export/--check-export is given):
  python play.py --name run1                                   watch in MuJoCo's viewer, steer with the keyboard
  python play.py --name run1 --video out.mp4 --commands "0.5,0,0@5;0,0,1@5"   record a reproducible mp4
  python play.py --name run1 --eval 64 --policy trained,zero,random          compare on a command grid
  python play.py --name run1 --export                          ONNX + TorchScript + policy.yaml in export/
"""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def get_play_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = OneLineArgumentParser(
        prog="play.py",
        description="Watch, record, evaluate or export a trained policy from experiments/<name>/ "
                    "(rebuilt from its model/cfg.yaml; randomisation, observation noise and pushes off unless asked).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--name", required=True, metavar="NAME|DIR",
                        help="experiment to load: experiments/<name>/, or a policy folder given as a path (read only), "
                             "e.g. benchmarks/results/go2/policy, the pretrained Go2")
    parser.add_argument("--checkpoint", default=None, metavar="PATH",
                        help="checkpoint relative to experiments/<name>/model/, e.g. all/policy_50.pt "
                             "(default: policy.pt, the latest)")
    parser.add_argument("--num_envs", type=positive_int, default=None,
                        help="parallel robots for watch/record (default 1); --eval runs one env per episode")
    parser.add_argument("--device", default=None,
                        help="torch device of policy and env tensors, e.g. cpu or cuda:0 (default: the run's "
                             "runner.device if available, else cpu)")
    parser.add_argument("--backend", default=None,
                        help="physics backend to play on (default: the run's sim.backend): mujoco or warp; "
                             "a policy trained on either plays on either")
    parser.add_argument("--seed", type=int, default=None, help="RNG seed (default: the run's runner.seed)")
    parser.add_argument("--randomize", action="store_true",
                        help="keep the config's domain randomisation (friction, mass, ...) and spawn-state noise")
    parser.add_argument("--noise", action="store_true", help="keep the config's observation noise")
    parser.add_argument("--push", action="store_true", help="keep the config's random pushes")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="override a field of the saved config (repeatable), e.g. --set env.episode_length_s=20")
    parser.add_argument("--terrain", default=None, metavar="TYPE",
                        help="rough terrain only: put every robot on this tile type, e.g. stairs_up "
                             "(default: watch/record as the curriculum starts; --eval spreads over every type)")
    parser.add_argument("--level", type=int, default=None, metavar="L",
                        help="rough terrain only: put every robot on this difficulty level, 0 = easiest "
                             "(default: --eval spreads over every level)")

    run = parser.add_argument_group("watch / record")
    run.add_argument("--video", default=None, metavar="OUT.mp4",
                     help="record an mp4 (headless: MUJOCO_GL=egl is used when no display is set)")
    run.add_argument("--steps", type=positive_int, default=None,
                     help="policy steps to run (record default: the --commands schedule, else one episode; "
                          "watch: until the window closes; eval: episode horizon)")
    run.add_argument("--commands", default=None, metavar="SCHEDULE",
                     help="scripted commands 'vx,vy,yaw@seconds;...' (m/s, m/s, rad/s) or a YAML file; "
                          "they replace the task's random commands (eval: every env follows it)")
    run.add_argument("--video_quality", choices=QUALITIES, default="fast",
                     help="fast: no shadows, reflections or anti-aliasing (cheap on software GL); high: all on")

    ev = parser.add_argument_group("evaluate")
    ev.add_argument("--eval", type=positive_int, default=None, metavar="EPISODES",
                    help="evaluate EPISODES episodes in parallel, each holding one command from a grid over "
                         "the config's command ranges (random when too few); writes eval.json and eval_tracking.png")
    ev.add_argument("--policy", default="trained", metavar="LIST",
                    help="policies to run, comma-separated: trained, zero (default pose), random (Gaussian "
                         "actions with the policy's std); watch/record use the first")
    ev.add_argument("--out", default=None, metavar="DIR", help="folder for eval.json and eval_tracking.png "
                                                                 "(default: experiments/<name>/)")

    ex = parser.add_argument_group("export")
    ex.add_argument("--export", action="store_true",
                    help="write export/policy.onnx, export/policy.jit.pt (normaliser included) and export/policy.yaml, "
                         "then check them")
    ex.add_argument("--check-export", "--check_export", dest="check_export", action="store_true",
                    help="check export/ against the config and the checkpoint (sizes, joints, actions within 1e-5)")
    return parser.parse_args(glue_dash_values(argv, ("--commands",)))
