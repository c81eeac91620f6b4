"""benchmarks/gpu_bench.py and gpu_check.sh, as far as a machine without a GPU can run them."""

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mujoco_warp", reason="the gpu extra is part of the test extra")

from benchmarks import gpu_bench  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_bench_measures_collection_and_iteration_on_warps_cpu_device(tmp_path, capsys):
    assert gpu_bench.main(["--device", "cpu", "--configs", "go2", "--num_envs", "2", "--iterations", "1",
                           "--steps_per_env", "4", "--iteration_envs", "2", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "gpu_bench.json").read_text())
    (row,) = result["rows"]
    assert row["config"] == "go2" and row["num_envs"] == 2
    assert row["collection_env_steps_per_s"] > 0 and row["raw_physics_steps_per_s"] > 0
    assert 0 < row["collection_over_raw"] < 10  # a ratio of two timings (2 envs on a busy CPU: noisy)
    assert row["overflows"] == 0
    text = (tmp_path / "gpu_bench.txt").read_text()
    assert "end-to-end PPO iteration, go2 at 2 envs" in text
    assert result["device"] == gpu_bench.device_name(gpu_bench.torch.device("cpu"))


def test_cpu_device_is_named_by_its_model(monkeypatch):
    import torch

    monkeypatch.setattr(gpu_bench, "cpu_model", lambda: "AMD EPYC 9B14")
    assert gpu_bench.device_name(torch.device("cpu")) == "AMD EPYC 9B14 CPU (Warp's CPU device)"


@pytest.mark.parametrize("wheels, message", [(None, "no wheel folder given"), ("/nonexistent/wheels", "no CUDA torch")])
def test_gpu_check_refuses_in_one_line_without_cuda_or_wheels(wheels, message, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: gpu_check.sh would run")
    out = tmp_path / "out"
    args = [] if wheels is None else [wheels, str(out)]
    run = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), *args], capture_output=True, text=True)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not out.exists()


def test_bench_refuses_an_unknown_config_in_one_line_before_writing(tmp_path, capsys):
    out = tmp_path / "out"
    assert gpu_bench.main(["--device", "cpu", "--configs", "go2", "nope", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: unknown config 'nope'")
    assert not out.exists()
