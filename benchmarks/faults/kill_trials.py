"""SIGKILL a training run at a random instant of a chosen phase, then resume it.

The child (``python -m benchmarks.faults.kill_trials PROBES -- <train.py args>``)
is train.py with probes that only this child has (normal training is not
touched): it appends ``<iteration> <phase> start|end <monotonic time>`` to the
PROBES file when collection, the PPO update or a checkpoint write starts and
ends, and it writes checkpoints in four chunks 20 ms apart, so that a kill can
land in the middle of a write (after the temp file exists, before the rename).

The parent waits for the chosen (planned) phase to start, kills the child with
SIGKILL (no handler runs) a random fraction of that phase's shortest length so
far after its start, and then reads the probes again: the phase that had started
and not ended is where the kill *landed* (``between phases`` if none), which
may differ from the plan when a phase ends early. Then:

1. the latest checkpoint must load (atomic writes);
2. ``train.py --resume`` must complete, with the iteration and env-step counters
   continuing from the checkpoint;
3. no temp file may be left in the experiment.
"""

from __future__ import annotations

import contextlib
import io
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch

from benchmarks.faults import (PROJECT_ROOT, TINY, TINY_STEPS_PER_ITERATION, Trial, experiments_at, experiments_env,
                               run_quietly, temp_files)

PHASES = ("collect", "update", "save")
BETWEEN = "between phases"  # the kill came after one probed phase ended and before the next started
CHUNKS, CHUNK_PAUSE_S = 4, 0.02


@dataclass
class KillTrial(Trial):
    """A kill trial: the phase the kill was aimed at and the phase the child's probes say it landed in."""

    planned: str = ""
    landed: str = ""


class Probe(NamedTuple):
    iteration: int
    phase: str
    event: str  # "start" or "end"
    time: float  # time.monotonic() in the child (one clock for every process on the machine)


def _child(probes: Path, train_argv: list[str]) -> int:
    """train.main with phase probes and slow checkpoint writes (runs in the child process)."""
    import rl.alg.ppo as ppo
    import rl.runner as runner_mod
    import train
    import utils.files as files

    current = {"runner": None}

    def mark(phase: str, event: str, next_iteration: bool) -> None:
        runner = current["runner"]
        iteration = runner.current_iteration + int(next_iteration) if runner else 0
        with open(probes, "a") as f:
            f.write(f"{iteration} {phase} {event} {time.monotonic():.6f}\n")

    original_iteration = runner_mod.OnPolicyRunner._iteration
    original_compute_returns = ppo.PPO.compute_returns
    original_update = ppo.PPO.update
    original_write = files._atomic_write

    def iteration(self, obs, critic_obs):
        current["runner"] = self
        mark("collect", "start", True)  # collection: from the first env step to the computed returns
        return original_iteration(self, obs, critic_obs)

    def compute_returns(self, *args, **kwargs):
        result = original_compute_returns(self, *args, **kwargs)
        mark("collect", "end", True)
        return result

    def update(self):
        mark("update", "start", True)
        result = original_update(self)
        mark("update", "end", True)
        return result

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
        if not str(path).endswith(".pt"):
            return original_write(path, write)
        mark("save", "start", False)
        result = original_write(path, chunked)
        mark("save", "end", False)
        return result

    runner_mod.OnPolicyRunner._iteration = iteration
    ppo.PPO.compute_returns = compute_returns
    ppo.PPO.update = update
    files._atomic_write = slow_write
    return train.main(train_argv)


def read_probes(path: Path) -> list[Probe]:
    """The child's probes so far (a line still being written is skipped)."""
    if not path.exists():
        return []
    probes = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0].isdigit() and parts[2] in ("start", "end"):
            with contextlib.suppress(ValueError):
                probes.append(Probe(int(parts[0]), parts[1], parts[2], float(parts[3])))
    return probes


def landed_in(probes: list[Probe]) -> tuple[str, str]:
    """(phase, words) of where a kill landed: the phase whose start the child recorded and whose end it did not."""
    if not probes:
        return BETWEEN, "before the first probe"
    last = probes[-1]
    if last.event == "start":
        return last.phase, f"in {last.phase} of iteration {last.iteration}"
    return BETWEEN, f"between phases, after {last.phase} of iteration {last.iteration}"


def _shortest_length(probes: list[Probe], phase: str) -> float:
    """s, the shortest completed `phase` so far (the kill comes a random fraction of it after the phase starts)."""
    lengths, started = [], None
    for probe in probes:
        if probe.phase == phase and probe.event == "start":
            started = probe.time
        elif probe.phase == phase and started is not None:
            lengths.append(probe.time - started)
            started = None
    return min(lengths, default=0.0)


def _checkpoint_counters(path: Path) -> tuple[int, int]:
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    return int(ckpt["iteration"]), int(ckpt["total_env_steps"])


def _wait_for_start(proc: subprocess.Popen, probes_file: Path, phase: str, from_iteration: int,
                    timeout_s: float) -> list[Probe]:
    """The probes once the child's last one is the start of `phase` at `from_iteration` or later ([] if never)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline and proc.poll() is None:
        probes = read_probes(probes_file)
        if probes and probes[-1][1:3] == (phase, "start") and probes[-1].iteration >= from_iteration:
            return probes
        time.sleep(0.002)
    return []


def kill_once(root: Path, name: str, phase: str, rng: random.Random, timeout_s: float = 120.0) -> KillTrial:
    """One trial: run (or resume) `name` under `root`, SIGKILL it during `phase`, resume it, check."""
    import train

    exp = root / name
    policy = exp / "model" / "policy.pt"
    probes_file = root / f".{name}.probes"
    probes_file.unlink(missing_ok=True)
    first = not policy.exists()
    start_iteration = 0 if first else _checkpoint_counters(policy)[0]
    argv = TINY + ["--name", name, "--max_iterations", "100000", "--set", "runner.save_interval=2"]
    if not first:
        argv += ["--resume", name]
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.faults.kill_trials", str(probes_file), "--", *argv],
                            cwd=PROJECT_ROOT, env=experiments_env(root), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    # Kill only after this child saved once (so the kill may land in any phase, a save included) and after
    # its first, slower iteration (so that the shortest length so far is a usual one).
    probes = _wait_for_start(proc, probes_file, phase, start_iteration + 3, timeout_s)
    if not probes:
        proc.kill()
        _, err = proc.communicate()
        return KillTrial("kill", False, f"planned in {phase}: the child did not reach it (exit status "
                                        f"{proc.returncode}): {err[-300:]}", planned=phase, landed="not killed")
    time.sleep(max(0.0, probes[-1].time + rng.random() * _shortest_length(probes, phase) - time.monotonic()))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    landed, where = landed_in(read_probes(probes_file))
    probes_file.unlink(missing_ok=True)

    def trial(ok: bool, seen: str) -> KillTrial:
        return KillTrial("kill", ok, f"planned in {phase}, landed {where}{seen}", planned=phase, landed=landed)

    leftovers = len(temp_files(exp))
    try:
        saved_it, saved_steps = _checkpoint_counters(policy)
    except Exception as err:  # noqa: BLE001 - the guarantee under test
        return trial(False, f": policy.pt does not load ({err})")
    with experiments_at(root):
        code, _, err = run_quietly(train.main, ["--name", name, "--resume", name, "--max_iterations", "1"])
    if code != 0:
        return trial(False, f": resume exited {code}: {err.strip()[-300:]}")
    it, steps = _checkpoint_counters(policy)
    left = temp_files(exp)
    ok = (it == saved_it + 1 and steps == saved_steps + TINY_STEPS_PER_ITERATION
          and steps == it * TINY_STEPS_PER_ITERATION and not left)
    return trial(ok, f" ({leftovers} temp file(s) left by the kill); checkpoint at iteration {saved_it}; resumed to "
                     f"{it}, {steps} env steps; temp files after resume: {len(left)}")


def kill_trials(root: Path, count: int, seed: int = 0, name: str = "killed") -> list[KillTrial]:
    """`count` kills of one experiment, cycling through the phases; each followed by a resume."""
    rng = random.Random(seed)
    return [kill_once(root, name, PHASES[i % len(PHASES)], rng) for i in range(count)]


def count_phases(phases: list[str]) -> str:
    """'collect 7, update 6, save 6, between phases 1': the phases in loop order, then the rest."""
    order = [p for p in (*PHASES, BETWEEN) if p in phases] + sorted(set(phases) - {*PHASES, BETWEEN})
    return ", ".join(f"{p} {phases.count(p)}" for p in order)


if __name__ == "__main__":
    sep = sys.argv.index("--")
    sys.exit(_child(Path(sys.argv[1]), sys.argv[sep + 1:]))
