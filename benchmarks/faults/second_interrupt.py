"""A second Ctrl-C: during an iteration, during a checkpoint write, and before the first checkpoint.

The child (``python -m benchmarks.faults.second_interrupt -- <train.py args>``) is
train.py slowed down where the signals must land, with probe lines on stdout:
``probe: iteration <k>`` then a pause of PAUSE_S before iteration k runs, and
``probe: writing <file>`` then a pause of PAUSE_S inside each checkpoint write
(the temp file exists, the rename has not happened). The parent waits for the
chosen probe, sends SIGINT, waits for train.py's announcement, and sends SIGINT
again; at that probe the child holds until both signals came (``SECOND_INTERRUPT_AT``),
so that a slow, loaded machine cannot move them out of place. The guarantee checked: exit status 130, exactly one line on stderr (no
traceback anywhere), every checkpoint on disk loads and holds the expected
iteration, no temp file is left, and the run goes on with ``--resume``.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.faults import PROJECT_ROOT, TINY, Trial, experiments_at, experiments_env, run_quietly, temp_files
from benchmarks.faults.bad_inputs import tree_digest

PAUSE_S = 0.2  # s: the pause after every probe line
HOLD_S = 60.0  # s: at the target probe, the child waits this long at most for the parent's two signals
ANNOUNCED = "SIGINT received"
HOLD_AT = "SECOND_INTERRUPT_AT"  # env var: the parent's probe prefixes, "|"-separated; the child holds at the last


def _hold(stop, iteration_probe: bool) -> None:
    """At the target probe, wait for the first Ctrl-C, then for the second (whatever the machine's load).

    In an iteration the second Ctrl-C raises KeyboardInterrupt out of the sleep; in a protected checkpoint
    write it only marks the abort as pending, which ends the wait, and the write then finishes."""
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline and not (not iteration_probe and stop._abort_pending):
        time.sleep(0.01)  # in an iteration only the second Ctrl-C's KeyboardInterrupt ends this wait


def _child(train_argv: list[str]) -> int:
    """train.main with probes and pauses (runs in the child process)."""
    import rl.runner as runner_mod
    import train
    import utils.files as files

    original_iteration, original_write = runner_mod.OnPolicyRunner._iteration, files._atomic_write
    targets = [t for t in os.environ.get(HOLD_AT, "").split("|") if t]
    state = {"matched": 0, "runner": None}

    def probe(line: str, iteration_probe: bool) -> None:
        """Print the probe line, pause, and hold there when it completes the parent's sequence of probes."""
        print(line, flush=True)
        time.sleep(PAUSE_S)
        if state["matched"] < len(targets) and line.startswith(targets[state["matched"]]):
            state["matched"] += 1
            if state["matched"] == len(targets):
                _hold(state["runner"]._stop, iteration_probe)

    def iteration(self, obs, critic_obs):
        state["runner"] = self
        probe(f"probe: iteration {self.current_iteration + 1}", iteration_probe=True)
        return original_iteration(self, obs, critic_obs)

    def slow_write(path, write):
        if not str(path).endswith(".pt"):
            return original_write(path, write)

        def write_then_pause(f):
            write(f)
            probe(f"probe: writing {Path(path).name}", iteration_probe=False)
        return original_write(path, write_then_pause)

    runner_mod.OnPolicyRunner._iteration = iteration
    files._atomic_write = slow_write
    return train.main(train_argv)


def ctrl_c_twice(root: Path, argv: list[str], after: list[str], timeout_s: float = 120.0) -> tuple[int, str, str]:
    """Run the child; once its stdout has shown the lines starting with `after`, in order, Ctrl-C it twice.

    Returns (exit status, stdout, stderr)."""
    with tempfile.TemporaryFile("w+") as err_file:
        env = dict(experiments_env(root), **{HOLD_AT: "|".join(after)})
        proc = subprocess.Popen([sys.executable, "-m", "benchmarks.faults.second_interrupt", "--", *argv],
                                cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=err_file, text=True)
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)
        reader.start()
        seen: list[str] = []
        deadline = time.monotonic() + timeout_s

        def wait_for(prefix: str) -> bool:
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=0.1)
                except queue.Empty:
                    if not reader.is_alive() and lines.empty():  # the child closed its stdout: it ended
                        return False
                    continue
                seen.append(line)
                if line.strip().startswith(prefix):
                    return True
            return False

        if all(wait_for(prefix) for prefix in after):
            proc.send_signal(signal.SIGINT)
            if wait_for(ANNOUNCED):
                proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)  # until the child's stdout is read to its end
        err_file.seek(0)
        err = err_file.read()
    while not lines.empty():
        seen.append(lines.get())
    return proc.returncode, "".join(seen), err


def _iteration_of(path: Path) -> int | None:
    """The iteration a checkpoint holds, None if it is missing or does not load."""
    from utils.checkpoint import CheckpointError, read_checkpoint

    try:
        return int(read_checkpoint(path)["iteration"])
    except CheckpointError:
        return None


def _aborted(name: str, code: int, out: str, err: str, exp: Path) -> list[str]:
    """What is wrong with how a second Ctrl-C ended (nothing: [])."""
    lines = err.strip().splitlines()
    problems = [] if code == 130 else [f"exit status {code}"]
    if len(lines) != 1 or "aborted by a second Ctrl-C" not in lines[0] or f"--resume {name}" not in lines[0]:
        problems.append(f"stderr is not the one abort line: {err[-300:]!r}")
    if "Traceback" in out + err:
        problems.append("a traceback")
    if temp_files(exp):
        problems.append(f"temp files left: {[p.name for p in temp_files(exp)]}")
    return problems


def _resume(root: Path, name: str, iteration: int) -> list[str]:
    """Resume `name` in place for one iteration: it must reach `iteration`; what is wrong ([] if nothing)."""
    import train

    with experiments_at(root):
        code, _, err = run_quietly(train.main, ["--name", name, "--resume", name, "--max_iterations", "1"])
    reached = _iteration_of(root / name / "model" / "policy.pt")
    return [] if code == 0 and reached == iteration else [f"resume exited {code} at iteration {reached}: {err[-300:]}"]


def _twice_keeping_iteration_2(root: Path, name: str, after: list[str], when: str) -> Trial:
    """Ctrl-C twice after the probe lines `after`: status 130, one line, policy.pt and all/policy_2.pt hold
    iteration 2, and the run resumes to iteration 3."""
    argv = TINY + ["--name", name, "--max_iterations", "100", "--set", "runner.save_interval=2"]
    code, out, err = ctrl_c_twice(root, argv, after)
    problems = _aborted(name, code, out, err, root / name)
    held = [_iteration_of(root / name / "model" / f) for f in ("policy.pt", "all/policy_2.pt")]
    if held != [2, 2]:
        problems.append(f"policy.pt and all/policy_2.pt hold iterations {held}, not [2, 2]")
    problems += _resume(root, name, 3) if not problems else []
    return Trial("interrupt", not problems,
                 f"second Ctrl-C {when}: status {code}; " + ("; ".join(problems) or err.strip()))


def during_an_iteration(root: Path, name: str = "twice_collect") -> Trial:
    """Ctrl-C twice while iteration 3 runs: it stops at once, keeping the checkpoints of iteration 2."""
    return _twice_keeping_iteration_2(root, name, ["probe: iteration 3"], "during iteration 3")


def during_a_write(root: Path, name: str = "twice_save") -> Trial:
    """Ctrl-C twice while policy.pt of iteration 2 is written: the write and its snapshot finish, then it stops."""
    return _twice_keeping_iteration_2(root, name, ["probe: iteration 2", "probe: writing policy.pt"],
                                      "while policy.pt of iteration 2 is written")


def before_the_first_checkpoint(root: Path, name: str = "twice_first") -> Trial:
    """Ctrl-C twice in iteration 1 leaves cfg.yaml and log/ but no checkpoint: `--name` alone is refused in one
    line naming --resume and --overwrite (nothing changed on disk), and `--resume` starts it from iteration 0."""
    import train

    code, out, err = ctrl_c_twice(root, TINY + ["--name", name, "--max_iterations", "100"], ["probe: iteration 1"])
    exp = root / name
    problems = _aborted(name, code, out, err, exp)
    if (exp / "model" / "policy.pt").exists() or not (exp / "model" / "cfg.yaml").is_file():
        problems.append("expected model/cfg.yaml and no policy.pt")
    before = tree_digest(root)
    with experiments_at(root):
        again, _, again_err = run_quietly(train.main, TINY + ["--name", name, "--max_iterations", "1"])
    lines = again_err.strip().splitlines()
    if again != 2 or len(lines) != 1 or not all(w in lines[0] for w in (f"--resume {name}", "--overwrite")):
        problems.append(f"--name {name} again: status {again}, {again_err[-300:]!r}")
    if tree_digest(root) != before:
        problems.append(f"--name {name} again changed the disk")
    with experiments_at(root):
        resumed, _, resume_err = run_quietly(train.main, ["--name", name, "--resume", name, "--max_iterations", "1"])
    notes = resume_err.strip().splitlines()
    if resumed != 0 or len(notes) != 1 or "starting from iteration 0" not in notes[0] \
            or _iteration_of(exp / "model" / "policy.pt") != 1:
        problems.append(f"--resume {name}: status {resumed}, {resume_err[-300:]!r}")
    return Trial("interrupt", not problems, f"second Ctrl-C before the first checkpoint: status {code}; "
                 + ("; ".join(problems) or f"{err.strip()}; then {notes[0] if notes else ''}"))


def interrupt_trials(root: Path) -> list[Trial]:
    """Every second-Ctrl-C trial, in experiments under `root`."""
    return [during_an_iteration(root), during_a_write(root), before_the_first_checkpoint(root)]


if __name__ == "__main__":
    sys.exit(_child(sys.argv[sys.argv.index("--") + 1:]))
