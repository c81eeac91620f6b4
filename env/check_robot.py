"""Check a robot before training it: ``python -m env.check_robot --config NAME``.

Loads the robot through the same scene composition as training (env/sim/scene.py) and
prints its masses, dof order with limits and gains, the feet and contact bodies found,
whether twin legs mirror each other (env/robot_symmetry.py), the support polygon at the
default pose, and a 5 s stand under the PD; renders the standing robot to a PNG. Exit
status: 0 when nothing is wrong, 1 with one ``problem:`` line per problem, 2 when the robot
or config cannot be loaded at all.

    python -m env.check_robot --config go2
    python -m env.check_robot --config myrobot --set control.stiffness='{"knee": 30}' --png /tmp/stand.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from utils.video import configure_headless_gl

configure_headless_gl()  # before mujoco is imported: MUJOCO_GL=egl on a machine without a display

from config import ConfigError, load_config  # noqa: E402
from env.robot_check import Report, inspect_robot, stand_test  # noqa: E402
from env.sim.mujoco_log import send_mujoco_log_to  # noqa: E402
from env.sim.robot_file import RobotFileError  # noqa: E402
from utils.experiment import experiments_root  # noqa: E402
from utils.video import FrameRenderer, VideoError, save_png  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m env.check_robot", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="config name (config/<name>.py)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE", help="override a config field")
    p.add_argument("--seconds", type=float, default=5.0, help="length of the stand test (default 5)")
    p.add_argument("--png", default=None, metavar="PATH",
                   help="picture of the robot after the stand test (default experiments/robot_check/<config>.png)")
    p.add_argument("--no-png", action="store_true", help="skip the picture")
    return p.parse_args(argv)


def picture(model, qpos, base_body: str, path: Path) -> str:
    """Render the robot at qpos to path; a one-line note when rendering is not possible here."""
    import mujoco

    try:
        renderer = FrameRenderer(model, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, base_body),
                                 distance=1.5, elevation=-15.0, azimuth=135.0)
        try:
            image = renderer.render(qpos)
        finally:
            renderer.close()
        return f"picture: {save_png(image, path)}"
    except VideoError as err:
        return f"note: no picture ({err})"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.seconds <= 0:
        print(f"error: --seconds must be positive, got {args.seconds:g}", file=sys.stderr)
        return 2
    send_mujoco_log_to(None)  # MuJoCo's warnings on the console only, no MUJOCO_LOG.TXT in the cwd
    try:
        cfg = load_config(args.config, args.set)
        model, report = inspect_robot(cfg)
    except (ConfigError, RobotFileError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    print(f"robot check: {args.config} ({cfg.asset.file})")
    standing, stand_model, qpos = stand_test(cfg, args.seconds)
    report.add(standing)
    print("\n".join(report.lines))
    if not args.no_png:
        path = Path(args.png) if args.png else experiments_root() / "robot_check" / f"{args.config}.png"
        print(picture(stand_model, qpos, cfg.asset.base_body, path))
    return finish(report)


def finish(report: Report) -> int:
    for problem in report.problems:
        print(f"problem: {problem}")
    if report.problems:
        print(f"robot check FAILED: {len(report.problems)} problem(s)")
        return 1
    print("robot check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
