"""Mistakes a user makes, each of which must end in one line ``error: ...``, exit status 2, and no change on disk.

`CASES` lists them (the issue's "Found" list first). Each case may prepare the
experiments folder (copy a trained run and break something in it), then runs
train.py or play.py in this process. The guarantee checked by `check_case`: status
2, exactly one line on stderr, starting with ``error:`` and holding the expected
words, no traceback, and the whole tree under the test root (experiments and a
sibling folder standing for the rest of the disk) byte-for-byte as before.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from benchmarks.faults import TINY, Trial, experiments_at, run_quietly

TRAINED = "good"  # a 4-iteration run with snapshots all/policy_2.pt and all/policy_4.pt


@dataclass
class Case:
    name: str
    script: str  # "train" or "play"
    argv: list[str]
    expect: list[str]  # words the error line must hold
    setup: Callable[[Path], None] = field(default=lambda root: None)
    machine_specific: bool = False  # the error line depends on this machine (its torch build), not only on the code


def trained_run(root: Path) -> None:
    """experiments/good/, a sibling folder outside/ with a file, a non-experiment folder notes/ and a file."""
    import train

    (root.parent / "outside").mkdir(parents=True, exist_ok=True)
    (root.parent / "outside" / "keep.txt").write_text("not ours\n")
    (root / "notes").mkdir(parents=True, exist_ok=True)
    (root / "notes" / "todo.txt").write_text("a user's folder, not an experiment\n")
    (root / "readme.txt").write_text("a user's file among the experiments\n")
    with experiments_at(root):
        code, _, err = run_quietly(train.main, TINY + ["--name", TRAINED, "--max_iterations", "4",
                                                       "--set", "runner.save_interval=2"])
    assert code == 0, err


def _copy(name: str, edit: Callable[[Path], None]) -> Callable[[Path], None]:
    """A setup that copies the trained run to `name` and breaks it with `edit(experiment_dir)`."""
    def setup(root: Path) -> None:
        if not (root / name).exists():
            shutil.copytree(root / TRAINED, root / name)
            edit(root / name)
    return setup


def _truncate(exp: Path) -> None:
    data = (exp / "model" / "policy.pt").read_bytes()
    (exp / "model" / "policy.pt").write_bytes(data[: len(data) // 3])


def _yaml_syntax(exp: Path) -> None:
    cfg = exp / "model" / "cfg.yaml"
    cfg.write_text(cfg.read_text().replace("num_steps_per_env: 4", "num_steps_per_env: [4"))


def _wrong_type(exp: Path) -> None:
    cfg = exp / "model" / "cfg.yaml"
    cfg.write_text(cfg.read_text().replace("num_steps_per_env: 4", "num_steps_per_env: abc"))


NAME_RULE = "not a plain folder name"
SNAPSHOT_HINT = ["truncated or corrupted", "model/all/policy_4.pt", "--checkpoint all/policy_4.pt"]
CASES: list[Case] = [
    # Data loss and writes outside experiments/
    Case("empty name with --overwrite", "train", TINY + ["--name", "", "--overwrite"], ["experiment name is empty"]),
    Case("'..' with --overwrite", "train", TINY + ["--name", "..", "--overwrite"], [NAME_RULE]),
    Case("name climbing out", "train", TINY + ["--name", "../../outside/x"], [NAME_RULE]),
    Case("absolute name", "train", TINY + ["--name", "/tmp/abs_experiment"], [NAME_RULE]),
    # a path is read as a (read-only) policy folder; these hold none
    Case("play: name climbing out", "play", ["--name", "../good", "--eval", "2"], ["is not a policy folder"]),
    Case("play: absolute name", "play", ["--name", "/tmp/abs_experiment", "--eval", "2"], ["is not a policy folder"]),
    Case("--overwrite of a folder that is no experiment", "train", TINY + ["--name", "notes", "--overwrite"],
         ["not an experiment folder (a folder without model/ or log/)"]),
    Case("a name taken by a file", "train", TINY + ["--name", "readme.txt"], ["already exists"]),
    Case("--overwrite of a file", "train", TINY + ["--name", "readme.txt", "--overwrite"],
         ["not an experiment folder (a file)"]),
    # Tracebacks that must be one line
    Case("resume a truncated policy.pt", "train", ["--name", "trunc", "--resume", "trunc"], SNAPSHOT_HINT,
         _copy("trunc", _truncate)),
    Case("play a truncated policy.pt", "play", ["--name", "trunc", "--eval", "2"], SNAPSHOT_HINT,
         _copy("trunc", _truncate)),
    Case("resume: cfg.yaml with a YAML syntax error", "train", ["--name", "badyaml", "--resume", "badyaml"],
         ["is not valid YAML", "line"], _copy("badyaml", _yaml_syntax)),
    Case("play: cfg.yaml with a YAML syntax error", "play", ["--name", "badyaml", "--eval", "2"],
         ["is not valid YAML", "line"], _copy("badyaml", _yaml_syntax)),
    Case("resume: cfg.yaml field of the wrong type", "train", ["--name", "badtype", "--resume", "badtype"],
         ["runner.num_steps_per_env = 'abc'", "expects an integer"], _copy("badtype", _wrong_type)),
    Case("play: cfg.yaml field of the wrong type", "play", ["--name", "badtype", "--eval", "2"],
         ["runner.num_steps_per_env = 'abc'", "expects an integer"], _copy("badtype", _wrong_type)),
    Case("--device cuda without CUDA", "train", TINY + ["--name", "dev", "--device", "cuda"],
         ["CUDA is not available", "--device cpu"], machine_specific=True),
    Case("--device cudaa", "train", TINY + ["--name", "dev", "--device", "cudaa"], ["not a torch device"]),
    Case("play --device cuda without CUDA", "play", ["--name", TRAINED, "--eval", "2", "--device", "cuda"],
         ["CUDA is not available"], machine_specific=True),
    Case("play --device cudaa", "play", ["--name", TRAINED, "--eval", "2", "--device", "cudaa"],
         ["not a torch device"]),
    # Accepted when it should be refused
    Case("--max_iterations -1", "train", TINY + ["--name", "neg", "--max_iterations", "-1"],
         ["runner.max_iterations = -1", "integer >= 1"]),
    Case("--max_iterations 0", "train", TINY + ["--name", "zero", "--max_iterations", "0"],
         ["runner.max_iterations = 0", "integer >= 1"]),
    Case("play: --set with a wrongly typed field", "play", ["--name", TRAINED, "--eval", "2",
                                                             "--set", "env.episode_length_s=long"],
         ["env.episode_length_s = 'long'", "expects a number"]),
    # Unclear or half-done
    Case("env.num_envs=0", "train", ["--config", "qmini", "--name", "none", "--set", "env.num_envs=0"],
         ["env.num_envs = 0", "integer >= 1"]),
    Case("--num_envs 0", "train", ["--config", "qmini", "--name", "none", "--num_envs", "0"],
         ["env.num_envs = 0", "integer >= 1"]),
    Case("env.num_envs=many", "train", ["--config", "qmini", "--name", "none", "--set", "env.num_envs=many"],
         ["env.num_envs = 'many'", "expects an integer"]),
    # More of the same family
    Case("--max_iterations abc", "train", TINY + ["--name", "x", "--max_iterations", "abc"], ["invalid int value"]),
    Case("resume --checkpoint outside the experiment", "train",
         ["--name", TRAINED, "--resume", TRAINED, "--checkpoint", "../../outside/keep.txt"], ["is outside experiment"]),
    Case("play --checkpoint outside the experiment", "play",
         ["--name", TRAINED, "--eval", "2", "--checkpoint", "/etc/passwd"], ["is outside experiment"]),
    Case("resume a missing experiment", "train", ["--name", "ghost", "--resume", "ghost"], ["no experiment 'ghost'"]),
    Case("unordered command range", "train", TINY + ["--name", "rng", "--set", "commands.lin_vel_x=[1,-1]"],
         ["commands.lin_vel_x", "ordered range"]),
    Case("probability above 1", "train", TINY + ["--name", "p", "--set", "algorithm.gamma=1.5"],
         ["algorithm.gamma = 1.5", "<= 1"]),
    Case("non-finite dt", "train", TINY + ["--name", "dt", "--set", "sim.dt=.nan"], ["sim.dt"]),
    Case("more minibatches than samples", "train", TINY + ["--name", "mb", "--set", "algorithm.num_mini_batches=99"],
         ["num_mini_batches = 99", "at most 16"]),
    # Warm starts (train.py --init_from)
    Case("--init_from an actor of another size", "train",
         TINY + ["--config", "go2", "--name", "warm", "--init_from", TRAINED],
         ["--init_from good: its actor (126 -> 10, 256-128-64) does not fit this run's actor (45 -> 12, 256-128-64)"]),
    Case("--init_from with --resume", "train", TINY + ["--name", "warm", "--init_from", TRAINED, "--resume", TRAINED],
         ["--init_from and --resume do not go together"]),
    Case("--init_from a missing experiment", "train", TINY + ["--name", "warm", "--init_from", "ghost"],
         ["--init_from ghost: no experiment 'ghost'"]),
    Case("--init_from a truncated policy.pt", "train", TINY + ["--name", "warm", "--init_from", "trunc"],
         ["--init_from trunc: cannot read checkpoint", "truncated or corrupted"], _copy("trunc", _truncate)),
]


def tree_digest(root: Path) -> dict[str, str]:
    """Path -> content hash of every file (and folder) under `root`: the state that must not change."""
    digest = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        digest[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return digest


def check_case(case: Case, root: Path) -> Trial:
    """Run one case under `root` (experiments) and check the one-line-error guarantee."""
    import play
    import train

    case.setup(root)
    before = tree_digest(root.parent)
    main = train.main if case.script == "train" else play.main
    with experiments_at(root):
        try:
            code, _, err = run_quietly(main, case.argv)
        except Exception as exc:  # noqa: BLE001 - a traceback is the failure being tested for
            return Trial("input", False, f"{case.name}: raised {type(exc).__name__}: {exc}")
    lines = err.strip().splitlines()
    changed = sorted(set(before.items()) ^ set(tree_digest(root.parent).items()))
    ok = (code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err
          and all(word in lines[0] for word in case.expect) and not changed)
    detail = f"{case.name}: status {code}; {lines[0] if len(lines) == 1 else f'{len(lines)} lines: {err[-300:]}'}"
    if changed:
        detail += f"; changed on disk: {[c[0] for c in changed][:5]}"
    return Trial("input", ok, detail)


def bad_input_trials(root: Path) -> list[Trial]:
    trained_run(root)
    return [check_case(case, root) for case in CASES]
