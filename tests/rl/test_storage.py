import pytest
import torch

from rl.storage import RolloutStorage


def _filled_storage(T=5, N=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = RolloutStorage(N, T, obs_dim=2, critic_obs_dim=3, action_dim=1)
    rewards = torch.randn(T, N, generator=g)
    values = torch.randn(T, N, generator=g)
    dones = (torch.rand(T, N, generator=g) < 0.3).float()
    for t in range(T):
        s.add(torch.full((N, 2), float(t)), torch.zeros(N, 3), torch.zeros(N, 1), rewards[t], dones[t].bool(),
              values[t][:, None], torch.zeros(N), torch.zeros(N, 1), torch.ones(N, 1))
    return s, rewards, values, dones


def test_gae_matches_reference_loop():
    T, N, gamma, lam = 5, 3, 0.9, 0.8
    s, rewards, values, dones = _filled_storage(T, N)
    last_values = torch.tensor([0.5, -1.0, 2.0])
    s.compute_returns(last_values, gamma, lam)
    # Reference: plain Python per env and step.
    for e in range(N):
        adv = 0.0
        for t in reversed(range(T)):
            next_v = last_values[e].item() if t == T - 1 else values[t + 1, e].item()
            nd = 1.0 - dones[t, e].item()
            delta = rewards[t, e].item() + gamma * next_v * nd - values[t, e].item()
            adv = delta + gamma * lam * nd * adv
            assert s.advantages[t, e].item() == pytest.approx(adv, abs=1e-5)
            assert s.returns[t, e].item() == pytest.approx(adv + values[t, e].item(), abs=1e-5)


def test_gae_hand_computed():
    # One env, two steps, no done: r = [1, 2], V = [0.5, 1.0], V_last = 3, gamma = 0.5, lam = 1.
    s = RolloutStorage(1, 2, 1, 1, 1)
    for r, v in [(1.0, 0.5), (2.0, 1.0)]:
        s.add(torch.zeros(1, 1), torch.zeros(1, 1), torch.zeros(1, 1), torch.tensor([r]), torch.tensor([False]),
              torch.tensor([v]), torch.zeros(1), torch.zeros(1, 1), torch.ones(1, 1))
    s.compute_returns(torch.tensor([3.0]), gamma=0.5, lam=1.0)
    # returns: R1 = 2 + 0.5*3 = 3.5, R0 = 1 + 0.5*3.5 = 2.75
    assert s.returns[:, 0].tolist() == pytest.approx([2.75, 3.5])
    assert s.advantages[:, 0].tolist() == pytest.approx([2.25, 2.5])


def test_minibatches_cover_each_transition_once_per_epoch():
    T, N = 4, 6
    s, *_ = _filled_storage(T, N)
    s.compute_returns(torch.zeros(N), 0.99, 0.95)
    batches = list(s.mini_batch_generator(num_mini_batches=3, num_epochs=2))
    assert len(batches) == 6
    assert all(b.obs.shape == (8, 2) and b.actions.shape == (8, 1) and b.values.shape == (8,) for b in batches)
    for epoch in (batches[:3], batches[3:]):
        steps = torch.cat([b.obs[:, 0] for b in epoch])
        assert sorted(steps.tolist()) == sorted([float(t) for t in range(T)] * N)


def test_overflow_and_clear():
    s, *_ = _filled_storage(2, 2)
    with pytest.raises(RuntimeError):
        s.add(torch.zeros(2, 2), torch.zeros(2, 3), torch.zeros(2, 1), torch.zeros(2), torch.zeros(2),
              torch.zeros(2), torch.zeros(2), torch.zeros(2, 1), torch.ones(2, 1))
    s.clear()
    assert s.step == 0
