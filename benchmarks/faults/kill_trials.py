"""SIGKILL a training run at a random instant of a chosen phase, then resume it.

The child (``python -m benchmarks.faults.kill_trials MARKER -- <train.py args>``)
is train.py with three probes: it appends ``<iteration> collect``, ``<iteration>
update`` or ``<iteration> save`` to MARKER when a phase starts, and it writes
checkpoints in four chunks 20 ms apart, so that a kill can land in the middle of
a write (after the temp file exists, before the rename). The parent waits for the
chosen phase, sleeps a random fraction of that phase's usual length, kills the
child with SIGKILL (no handler runs), and then:

1. the latest checkpoint must load (atomic writes);
2. ``train.py --resume`` must complete, with the iteration and env-step counters
   continuing from the checkpoint;
3. no temp file may be left in the experiment.
"""

from __future__ import annotations

import io
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

from benchmarks.faults import (PROJECT_ROOT, TINY, TINY_STEPS_PER_ITERATION, Trial, experiments_at, experiments_env,
                               run_quietly, temp_files)

PHASES = ("collect", "update", "save")
CHUNKS, CHUNK_PAUSE_S = 4, 0.02
# s, about how long each phase lasts in the tiny run: the kill comes a random fraction of it after the phase starts
PHASE_LENGTH_S = {"collect": 0.01, "update": 0.01, "save": CHUNKS * CHUNK_PAUSE_S}


def _child(marker: Path, train_argv: list[str]) -> int:
    """train.main with phase probes and slow checkpoint writes (runs in the child process)."""
    import rl.alg.ppo as ppo
    import rl.runner as runner_mod
    import train
    import utils.files as files

    def mark(phase: str, iteration: int) -> None:
        with open(marker, "a") as f:
            f.write(f"{iteration} {phase}\n")

    current = {"runner": None}
    original_iteration = runner_mod.OnPolicyRunner._iteration
    original_update = ppo.PPO.update
    original_write = files._atomic_write

    def iteration(self, obs, critic_obs):
        current["runner"] = self
        mark("collect", self.current_iteration + 1)
        return original_iteration(self, obs, critic_obs)

    def update(self):
        mark("update", current["runner"].current_iteration + 1 if current["runner"] else 0)
        return original_update(self)

    def slow_write(path, write):
        def chunked(f):
            buffer = io.BytesIO()
            write(buffer)
            data = buffer.getvalue()
            step = max(1, len(data) // CHUNKS)
            for start in range(0, len(data), step):
                f.write(data[start:start + step])
                f.flush()
                time.sleep(CHUNK_PAUSE_S)
        if str(path).endswith(".pt"):
            mark("save", current["runner"].current_iteration if current["runner"] else 0)
            return original_write(path, chunked)
        return original_write(path, write)

    runner_mod.OnPolicyRunner._iteration = iteration
    ppo.PPO.update = update
    files._atomic_write = slow_write
    return train.main(train_argv)


def _read_marker(marker: Path) -> list[tuple[int, str]]:
    if not marker.exists():
        return []
    rows = []
    for line in marker.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            rows.append((int(parts[0]), parts[1]))
    return rows


def _checkpoint_counters(path: Path) -> tuple[int, int]:
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    return int(ckpt["iteration"]), int(ckpt["total_env_steps"])


def kill_once(root: Path, name: str, phase: str, rng: random.Random, timeout_s: float = 120.0) -> Trial:
    """One trial: run (or resume) `name` under `root`, SIGKILL it during `phase`, resume it, check."""
    import train

    exp = root / name
    policy = exp / "model" / "policy.pt"
    marker = root / f".{name}.marker"
    marker.unlink(missing_ok=True)
    first = not policy.exists()
    start_iteration = 0 if first else _checkpoint_counters(policy)[0]
    argv = TINY + ["--name", name, "--max_iterations", "100000", "--set", "runner.save_interval=2"]
    if not first:
        argv += ["--resume", name]
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.faults.kill_trials", str(marker), "--", *argv],
                            cwd=PROJECT_ROOT, env=experiments_env(root), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + timeout_s
    # Kill only after this child saved once, so the kill may land in any later phase, a save included.
    while time.time() < deadline and proc.poll() is None:
        rows = _read_marker(marker)
        if rows and rows[-1][1] == phase and rows[-1][0] >= start_iteration + 2:
            break
        time.sleep(0.002)
    if proc.poll() is not None:
        return Trial("kill", False, f"child exited early ({proc.returncode}): {proc.stderr.read()[-300:]}")
    time.sleep(rng.uniform(0.0, PHASE_LENGTH_S[phase]))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rows = _read_marker(marker)
    killed_in = f"{rows[-1][1]} of iteration {rows[-1][0]}" if rows else "?"
    marker.unlink(missing_ok=True)
    leftovers = len(temp_files(exp))
    try:
        saved_it, saved_steps = _checkpoint_counters(policy)
    except Exception as err:  # noqa: BLE001 - the guarantee under test
        return Trial("kill", False, f"killed in {killed_in}: policy.pt does not load ({err})")
    with experiments_at(root):
        code, _, err = run_quietly(train.main, ["--name", name, "--resume", name, "--max_iterations", "1"])
    if code != 0:
        return Trial("kill", False, f"killed in {killed_in}: resume exited {code}: {err.strip()[-300:]}")
    it, steps = _checkpoint_counters(policy)
    left = temp_files(exp)
    ok = (it == saved_it + 1 and steps == saved_steps + TINY_STEPS_PER_ITERATION
          and steps == it * TINY_STEPS_PER_ITERATION and not left)
    return Trial("kill", ok, f"killed in {killed_in} ({leftovers} temp file(s) left by the kill); checkpoint at "
                             f"iteration {saved_it}; resumed to {it}, {steps} env steps; temp files after resume: "
                             f"{len(left)}")


def kill_trials(root: Path, count: int, seed: int = 0, name: str = "killed") -> list[Trial]:
    """`count` kills of one experiment, cycling through the phases; each followed by a resume."""
    rng = random.Random(seed)
    return [kill_once(root, name, PHASES[i % len(PHASES)], rng) for i in range(count)]


if __name__ == "__main__":
    sep = sys.argv.index("--")
    sys.exit(_child(Path(sys.argv[1]), sys.argv[sep + 1:]))
