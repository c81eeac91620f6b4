"""play.py's watch mode in a real window: Xvfb, a screenshot, keys sent with xdotool.

A walking Go2 policy (tests/data/go2_walk, trained with this package) is watched
in MuJoCo's viewer on a virtual X display. The test checks what a user would see:
the window opens with the robot in it, Up x5 changes the command drawn in the
window's overlay and makes the robot walk forwards, and Backspace puts it back at
its spawn point. Watch mode prints a status line per simulated second (episode
time, command, measured velocity, base position), which is what the motion checks read.

Needs Xvfb and xdotool (apt-get install xvfb xdotool, done by .ci/run); skipped
without them unless REQUIRE_XVFB=1, which CI sets so that a missing tool fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "go2_walk"
STATUS = re.compile(r"t\s+([\d.]+) s\s+cmd vx ([+-][\d.]+) \(([+-][\d.]+)\).*base x ([+-][\d.]+) y ([+-][\d.]+) m")

missing = [tool for tool in ("Xvfb", "xdotool") if shutil.which(tool) is None]
pytestmark = pytest.mark.skipif(bool(missing) and os.environ.get("REQUIRE_XVFB") != "1",
                                reason=f"needs {', '.join(missing)} (apt-get install xvfb xdotool)")


class Display:
    """An Xvfb server on a free display number, stopped on exit."""

    def __init__(self) -> None:
        self.number = next(n for n in range(170, 260) if not Path(f"/tmp/.X11-unix/X{n}").exists()
                           and not Path(f"/tmp/.X{n}-lock").exists())
        self.name = f":{self.number}"
        self.proc = subprocess.Popen(["Xvfb", self.name, "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while not Path(f"/tmp/.X11-unix/X{self.number}").exists():
            assert time.time() < deadline and self.proc.poll() is None, "Xvfb did not start"
            time.sleep(0.1)

    def xdotool(self, *args: str) -> str:
        env = dict(os.environ, DISPLAY=self.name)
        return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=30).stdout

    def screenshot(self, window: str) -> np.ndarray:
        from PIL import ImageGrab

        geometry = self.xdotool("getwindowgeometry", "--shell", window)
        g = dict(line.split("=") for line in geometry.split())
        x, y, w, h = (int(g[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))
        return np.asarray(ImageGrab.grab(bbox=(x, y, x + w, y + h), xdisplay=self.name).convert("RGB")).astype(int)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Player:
    """play.py --name walk in watch mode, its stdout read line by line."""

    def __init__(self, display: Display, experiments: Path) -> None:
        env = dict(os.environ, DISPLAY=display.name, LEGGED_EXPERIMENTS_DIR=str(experiments), PYTHONUNBUFFERED="1")
        env.pop("MUJOCO_GL", None)  # a window needs GLFW, not EGL
        env.pop("WAYLAND_DISPLAY", None)
        self.proc = subprocess.Popen([sys.executable, "play.py", "--name", "walk", "--steps", "3000"], cwd=ROOT,
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []

    def wait_for(self, predicate, timeout: float = 120.0) -> re.Match | str:
        """The first new output line for which `predicate(line)` is truthy."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"play.py exited ({self.proc.poll()}):\n" + "".join(self.lines[-20:]))
            self.lines.append(line)
            found = predicate(line)
            if found:
                return found
        raise AssertionError("timed out; last output:\n" + "".join(self.lines[-20:]))

    def next_status(self) -> tuple[float, float, float, float]:
        """(episode time, commanded vx, measured vx, base x) of the next status line."""
        m = self.wait_for(STATUS.search)
        return float(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def save_png(image: np.ndarray, path: Path) -> None:
    """Keep a screenshot next to the test's files (pytest's tmp_path), for a look when it fails."""
    from PIL import Image

    Image.fromarray(image.astype(np.uint8)).save(path)


def robot_pixels(image: np.ndarray) -> float:
    """Fraction of the window's middle that is grey (the Go2's colour; floor and sky are blue)."""
    h, w, _ = image.shape
    mid = image[int(0.2 * h):int(0.85 * h), int(0.15 * w):int(0.85 * w)]
    spread = mid.max(axis=2) - mid.min(axis=2)
    brightness = mid.mean(axis=2)
    return float(((spread < 14) & (brightness > 50) & (brightness < 235)).mean())


def test_watch_window_shows_the_robot_and_follows_the_keyboard(tmp_path):
    experiments = tmp_path / "experiments"
    shutil.copytree(FIXTURE, experiments / "walk")
    display = Display()
    player = Player(display, experiments)
    try:
        player.wait_for(lambda line: "watching 'go2'" in line)
        window = display.xdotool("search", "--sync", "--onlyvisible", "--name", "MuJoCo").split()[0]
        player.next_status()
        standing = [player.next_status() for _ in range(2)]
        shot = display.screenshot(window)
        save_png(shot, tmp_path / "standing.png")
        assert shot.shape[0] > 200 and shot.shape[1] > 200
        assert robot_pixels(shot) > 0.01, "no robot in the middle of the window"
        assert abs(standing[-1][3] - standing[0][3]) < 0.3, "the robot wanders at a zero command"

        display.xdotool("key", "--window", window, "--delay", "50", *["Up"] * 5)
        player.wait_for(lambda line: line.startswith("cmd vx +0.50"))
        overlay = slice(0, 30), slice(0, 300)  # the command line drawn in the top-left corner
        deadline = time.monotonic() + 20.0  # the window redraws at its own pace; a loaded machine is slow
        while True:
            after_keys = display.screenshot(window)
            changed = np.abs(after_keys[overlay] - shot[overlay]).mean() > 1.0
            if changed or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        save_png(after_keys, tmp_path / "command_0.5.png")
        assert changed, "the overlay did not change"
        t0, _, _, x0 = player.next_status()
        walking = [player.next_status() for _ in range(4)]
        assert all(s[1] == 0.5 for s in walking)
        assert np.mean([s[2] for s in walking[1:]]) > 0.3, f"not walking forwards: {walking}"
        assert walking[-1][3] - x0 > 1.0, f"the base did not move forwards: {walking}"

        display.xdotool("key", "--window", window, "BackSpace")
        for _ in range(10):  # the first status line of the new episode
            t, vx_cmd, _, x = player.next_status()
            if t < walking[-1][0]:
                break
        assert t <= 1.01 and x < 0.6 < walking[-1][3], f"Backspace did not reset: t {t}, x {x}"
        assert vx_cmd == 0.5  # a reset keeps the command
    finally:
        player.close()
        display.close()

