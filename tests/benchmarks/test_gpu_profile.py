"""benchmarks/gpu_profile.py on Warp's CPU device: one profiled PPO iteration, its report and JSON."""

import json

import pytest

pytest.importorskip("mujoco_warp", reason="the gpu extra is part of the test extra")

from benchmarks import gpu_profile  # noqa: E402


def test_profile_reports_the_iterations_host_time_by_operator(tmp_path, capsys):
    assert gpu_profile.main(["--device", "cpu", "--configs", "go2", "--num_envs", "2", "--steps_per_env", "3",
                             "--out", str(tmp_path)]) == 0
    (row,) = json.loads((tmp_path / "gpu_profile.json").read_text())["rows"]
    assert row["config"] == "go2" and row["num_envs"] == 2 and row["steps_per_env"] == 3
    assert row["wall_s"] > 0
    # no CUDA here: no kernel launches, no host waits, no GPU time
    assert row["launches_per_env_step"] == 0 and row["syncs_per_env_step"] == 0 and row["device_busy_s"] == 0
    names = [name for name, _, _ in row["top_total_cpu"]]
    assert any(name.startswith("aten::") for name in names)  # the env's and PPO's torch work is profiled
    ms = [t for _, _, t in row["top_self_cpu"]]
    assert ms == sorted(ms, reverse=True) and ms[0] > 0
    text = (tmp_path / "gpu_profile.txt").read_text()
    assert text.startswith("go2 at 2 envs x 3 steps: one iteration") and "most host time, self" in text


@pytest.mark.parametrize("args, message", [(["--configs", "nope"], "unknown config 'nope'"),
                                           (["--set", "env.nope=1"], "unknown field 'nope'"),
                                           (["--device", "tpu"], "--device")])
def test_bad_input_is_one_line_and_writes_nothing(args, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert gpu_profile.main(["--device", "cpu", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert not out.exists()
