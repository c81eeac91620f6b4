"""benchmarks/train_throughput.py: the split of an iteration, and settings measured side by side."""

from benchmarks import train_throughput


def test_two_variants_are_measured_side_by_side(capsys):
    assert train_throughput.main(["--config", "qmini", "--num_envs", "8", "--iterations", "1",
                                  "--variant", "fp32=runner.precision=fp32;runner.num_steps_per_env=4",
                                  "--variant", "bf16=runner.precision=bf16;runner.num_steps_per_env=4"]) == 0
    out = capsys.readouterr().out
    assert "[fp32]" in out and "precision fp32" in out and "[bf16]" in out and "precision bf16" in out
    ratios = [float(line.split(":")[-1].strip().rstrip("x")) for line in out.splitlines() if "vs [fp32]" in line]
    assert len(ratios) == 2 and ratios[0] == 1.0 and ratios[1] > 0
    shares = [float(line.split()[-1].rstrip("%")) for line in out.splitlines() if line.startswith("  ppo update")]
    assert len(shares) == 2 and all(0 < s < 100 for s in shares)
