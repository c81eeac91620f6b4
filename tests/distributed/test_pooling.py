"""Pooling over ranks, with two threads standing in for two ranks (an in-place sum through a barrier)."""

import threading

import torch

from rl.episode_stats import EpisodeStats
from rl.normalizer import EmpiricalNormalizer


class FakeRanks:
    """`reduce` for two threads: each call sums the tensors both threads passed at the same point."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2)
        self.slots: list = [None, None]

    def reduce(self, rank: int):
        def sum_(t: torch.Tensor) -> torch.Tensor:
            self.slots[rank] = t.clone()
            self.barrier.wait()
            total = self.slots[0] + self.slots[1]
            self.barrier.wait()
            return t.copy_(total)
        return sum_


def run_two(fn):
    ranks = FakeRanks()
    results: list = [None, None]
    threads = [threading.Thread(target=lambda r=r: results.__setitem__(r, fn(r, ranks.reduce(r)))) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_pooled_normaliser_equals_one_normaliser_over_both_batches():
    torch.manual_seed(0)
    batches = [[torch.randn(6, 3) * (r + 1) + 5 * r for _ in range(4)] for r in (0, 1)]  # different per rank

    def rank(r, reduce):
        norm = EmpiricalNormalizer(3)
        for x in batches[r]:
            norm.update(x, reduce=reduce)
        return norm

    pooled = run_two(rank)
    single = EmpiricalNormalizer(3)
    for a, b in zip(*batches):
        single.update(torch.cat([a, b]))
    for norm in pooled:
        assert int(norm.count) == int(single.count) == 48
        assert torch.allclose(norm.mean, single.mean, atol=1e-5) and torch.allclose(norm.var, single.var, atol=1e-4)
    assert torch.equal(pooled[0].mean, pooled[1].mean) and torch.equal(pooled[0].var, pooled[1].var)


def test_episode_means_and_terms_pool_over_ranks():
    def rank(r, reduce):
        stats = EpisodeStats(2, "cpu")
        stats.step(torch.tensor([1.0 + r, 3.0]), torch.tensor([0.5, 0.5]), torch.tensor([True, r == 0]),
                   {"term_a": torch.tensor(2.0 + r)} if r == 0 else {})
        return stats.means(reduce), stats.pop_terms(reduce, ["term_a"])

    (m0, t0), (m1, t1) = run_two(rank)
    # rank 0 finished envs with returns 1 and 3, rank 1 one env with return 2
    assert m0 == m1 and m0["mean_reward"] == 2.0
    assert t0 == t1 == {"term_a": 2.0}  # rank 1 saw no term: it counts zero times
