"""The README's install commands: the CPU build of torch first, so the package never pulls PyPI's CUDA torch.

An unpinned `torch` pulled in as a dependency takes PyPI's newest build, which on
Linux is the CUDA one (several GB). Every command a reader may copy that installs
the package must therefore come after a torch install, and the two Set-up
commands must take the CPU build from PyTorch's CPU index, as `.ci/run` does.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"
TORCH_INSTALL = re.compile(r"pip install (--\S+ )*torch(==[\w.]+)?( |$)")
PACKAGE_INSTALL = re.compile(r"pip install (--\S+ )*(-e |\S*\.\[)")


def command_lines(text: str) -> list[str]:
    """The README's command lines: 4-space indented lines and the lines of fenced blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            lines.append(line.strip())
    return lines


def test_the_set_up_commands_take_the_cpu_build_first():
    setup = [line for line in command_lines((ROOT / "README.md").read_text()) if line.startswith("python3 -m venv")]
    train, test = setup[0], setup[1]
    for command in (train, test):
        torch_at = command.index("pip install torch")
        assert CPU_INDEX in command[torch_at:command.index("&&", torch_at)], command
        assert torch_at < PACKAGE_INSTALL.search(command).start(), command
    assert train.endswith("python train.py --config qmini --name run1")
    assert test.endswith("python -m pytest -q")


def test_no_command_installs_the_package_before_torch():
    torch_seen = False
    for line in command_lines((ROOT / "README.md").read_text()):
        package = PACKAGE_INSTALL.search(line)
        torch = TORCH_INSTALL.search(line)
        if package and not torch_seen:
            assert torch is not None and torch.start() < package.start(), f"installs the package before torch: {line}"
        torch_seen = torch_seen or torch is not None


def test_ci_installs_torch_as_the_readme_says():
    test_command = [line for line in command_lines((ROOT / "README.md").read_text())
                    if line.startswith("python3 -m venv")][1]
    readme_torch = re.search(r"pip install (torch\S* [^&]*?)\s*&&", test_command).group(1)
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"pip install (--\S+ )*" + re.escape(readme_torch) + r"\s*$", ci, re.M), readme_torch
    assert "python -m pytest -q" in ci
