import os
import stat

import pytest
import torch

import utils.files
from utils.files import atomic_torch_save, atomic_write_text


def _leftovers(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_torch_save_roundtrip_creates_parents(tmp_path):
    path = tmp_path / "a" / "b" / "x.pt"
    atomic_torch_save({"w": torch.arange(3)}, path)
    assert torch.equal(torch.load(path)["w"], torch.arange(3))
    assert _leftovers(path.parent) == []
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_write_text_replaces_and_keeps_mode(tmp_path):
    path = tmp_path / "cfg.yaml"
    atomic_write_text(path, "a: 1\n")
    os.chmod(path, 0o600)
    atomic_write_text(path, "a: 2\n")
    assert path.read_text() == "a: 2\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_crash_while_writing_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "x.pt"
    atomic_torch_save({"v": 1}, path)

    def crash(obj, f, *args, **kwargs):
        f.write(b"half a checkpoint")
        raise KeyboardInterrupt  # also BaseExceptions clean up

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        atomic_torch_save({"v": 2}, path)
    monkeypatch.undo()
    assert torch.load(path) == {"v": 1}
    assert _leftovers(tmp_path) == []


def test_failed_rename_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "t.txt"
    atomic_write_text(path, "old")

    def fail(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(utils.files.os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_sigkill_at_any_instant_leaves_a_loadable_checkpoint(tmp_path):
    """A process killed mid-save (SIGKILL, no cleanup) never leaves a torn policy.pt."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import torch

    root = Path(__file__).resolve().parents[2]
    path = tmp_path / "policy.pt"
    script = (
        "import sys, torch; sys.path.insert(0, sys.argv[2]);"
        "from utils.files import atomic_torch_save\n"
        "i = 0\n"
        "while True:\n"
        "    i += 1; atomic_torch_save({'it': i, 'w': torch.full((1_000_000,), float(i))}, sys.argv[1])\n"
    )
    for delay in (0.6, 0.9, 1.3):
        proc = subprocess.Popen([sys.executable, "-c", script, str(path), str(root)])
        deadline = time.time() + 30
        while not path.exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        ckpt = torch.load(path, weights_only=False)
        assert bool((ckpt["w"] == float(ckpt["it"])).all())
