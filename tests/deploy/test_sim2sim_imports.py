"""deploy is the robot-side reference: importing and running it must not pull in torch or the training code."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.deploy.conftest import GO2_MODEL, ROOT

BANNED = ("torch", "config", "env", "model", "rl", "utils")

SCRIPT = """
import json, pkgutil, sys, importlib
banned = {banned!r}
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in banned)
import deploy
import deploy.sim2sim
for info in pkgutil.iter_modules(deploy.__path__):
    importlib.import_module("deploy." + info.name)
after_import = loaded()
rc = deploy.sim2sim.main(["--export", {export!r}, "--model", {model!r}, "--suite",
                          "--variants", "nominal,heavy_base,latency_2", "--episodes", "2", "--duration", "0.3",
                          "--out", {out!r}, "--quiet"])
print(json.dumps({{"rc": rc, "after_import": after_import, "after_run": loaded()}}))
"""


def test_sim2sim_imports_neither_torch_nor_training_code(go2_export, tmp_path):
    out = tmp_path / "suite.json"
    code = SCRIPT.format(banned=BANNED, export=str(go2_export), model=str(GO2_MODEL), out=str(out))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["rc"] == 0
    assert result["after_import"] == []
    assert result["after_run"] == []
    assert set(json.loads(out.read_text())["results"]) == {"nominal", "heavy_base", "latency_2"}
