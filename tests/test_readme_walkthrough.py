"""The README's "Adding a robot" walk-through runs as written (with tiny sizes).

The commands are read from the fenced block after the README's walkthrough marker,
so the README cannot drift from what works. Each runs as a subprocess from a
scratch folder whose experiments/ is the run's (LEGGED_EXPERIMENTS_DIR), with
2 iterations of 8 envs instead of a real run's size.
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- walkthrough: run by tests/test_readme_walkthrough.py -->"
TINY = {  # extra arguments per program, appended after the README's own (argparse: the last value wins)
    "train.py": ["--max_iterations", "2", "--num_envs", "8", "--set", "runner.num_steps_per_env=8"],
    "deploy.sim2sim": ["--episodes", "1", "--duration", "2", "--quiet"],
}


def walkthrough_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    assert MARKER in text, "the README lost its walk-through marker"
    block = text.split(MARKER, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.strip().splitlines()]


def runnable(argv: list[str]) -> list[str]:
    assert argv[0] == "python", argv
    program = argv[2] if argv[1] == "-m" else argv[1]
    head = [sys.executable, "-m", program] if argv[1] == "-m" else [sys.executable, str(ROOT / program)]
    rest = argv[3:] if argv[1] == "-m" else argv[2:]
    return head + rest + TINY.get(program, [])


def test_the_walkthrough_runs_as_written(tmp_path):
    commands = walkthrough_commands()
    assert [c[1] if c[1] != "-m" else c[2] for c in commands] == \
        ["env.check_robot", "train.py", "play.py", "deploy.sim2sim"]
    env = dict(os.environ, LEGGED_EXPERIMENTS_DIR=str(tmp_path / "experiments"), PYTHONPATH=str(ROOT))
    for argv in commands:
        done = subprocess.run(runnable(argv), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    run = tmp_path / "experiments" / "quad1"
    assert (run / "model" / "policy.pt").is_file()
    assert {"policy.onnx", "policy.yaml", "scene.xml"} <= {p.name for p in (run / "export").iterdir()}
    assert (run / "export" / "meshes" / "trunk.stl").is_file()  # the URDF's package:// mesh, copied
    report = json.loads((run / "sim2sim.json").read_text())
    assert report["model"] == str(Path("experiments/quad1/export/scene.xml"))  # the default --model: the export's scene
    assert (tmp_path / "experiments" / "robot_check" / "example_quad.png").is_file()
