import math

import torch

from rl.faults import RolloutFaults, describe


def test_clean_rows_zero_non_finite_entries_and_count_the_rows():
    faults = RolloutFaults("cpu")
    obs = torch.ones(4, 3)
    obs[1, 2] = float("nan")
    obs[3, 0] = float("-inf")
    clean, ok = faults.clean("observations", obs)
    assert torch.equal(ok, torch.tensor([True, False, True, False]))
    assert torch.isfinite(clean).all() and clean[1, 2] == 0 and clean[1, 0] == 1 and clean[3, 0] == 0
    rew = torch.tensor([0.5, float("inf"), 1.0, 2.0])
    _, ok = faults.clean("rewards", rew)
    assert ok.tolist() == [True, False, True, True]
    assert faults.summary() == {"observations": 2, "rewards": 1}
    assert describe(faults.summary()) == "non-finite values in observations (2 env steps), rewards (1 env step)"


def test_a_clean_tensor_is_returned_as_is_on_the_cpu_and_masked_without_a_sync_elsewhere():
    faults = RolloutFaults("cpu")
    obs = torch.randn(8, 5)
    same, ok = faults.clean("observations", obs)
    assert same is obs and ok is None  # no copy, no mask: the common case costs one reduction
    copy, mask = faults.clean_rows("observations", obs)  # what an accelerator runs every step
    assert torch.equal(copy, obs) and bool(mask.all())
    big = torch.full((2, 2), 3e38)  # finite values whose sum overflows: the full check decides
    kept, ok = faults.clean("observations", big)
    assert torch.equal(kept, big) and bool(ok.all()) and math.isinf(float(big.sum()))
    assert faults.summary() == {}
