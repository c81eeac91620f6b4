import math
from types import SimpleNamespace

import pytest
import torch

from model import load_actor, load_critic
from model.actor import GaussianActor
from model.critic import Critic

POLICY = SimpleNamespace(actor_hidden_dims=[32, 16], critic_hidden_dims=[32, 16], activation="elu",
                         init_noise_std=1.0, min_std=0.01, max_std=2.0, normalize_observations=True)


def test_loaders_build_requested_sizes():
    actor = load_actor(POLICY, 7, 3, "cpu")
    critic = load_critic(POLICY, 9, "cpu")
    assert isinstance(actor, GaussianActor) and isinstance(critic, Critic)
    assert actor(torch.zeros(4, 7)).shape == (4, 3)
    assert critic(torch.zeros(4, 9)).shape == (4, 1)
    assert torch.allclose(actor.action_std, torch.ones(3))


def test_std_is_clamped_to_bounds():
    actor = GaussianActor(4, 2, [8], init_noise_std=0.5, min_std=0.1, max_std=1.5)
    assert torch.allclose(actor.action_std, torch.full((2,), 0.5))
    with torch.no_grad():
        actor.log_std.copy_(torch.tensor([math.log(1e-4), math.log(100.0)]))
    assert torch.allclose(actor.action_std, torch.tensor([0.1, 1.5]))
    dist = actor.distribution(torch.randn(6, 4))
    assert torch.allclose(dist.stddev, torch.tensor([0.1, 1.5]).expand(6, 2))


def test_std_gradient_zero_beyond_bound():
    actor = GaussianActor(4, 1, [8], init_noise_std=1.0, min_std=0.1, max_std=1.5)
    with torch.no_grad():
        actor.log_std.fill_(math.log(10.0))
    actor.entropy(torch.randn(3, 4)).sum().backward()
    assert actor.log_std.grad.abs().sum() == 0


def test_bad_std_settings():
    with pytest.raises(ValueError):
        GaussianActor(4, 2, [8], init_noise_std=5.0, min_std=0.1, max_std=2.0)
    with pytest.raises(ValueError):
        GaussianActor(4, 2, [8], min_std=0.0)


def test_act_inference_is_deterministic_and_act_samples():
    torch.manual_seed(0)
    actor = GaussianActor(5, 3, [16])
    obs = torch.randn(10, 5)
    a1, a2 = actor.act_inference(obs), actor.act_inference(obs)
    assert torch.equal(a1, a2)
    assert torch.equal(actor(obs), a1)
    assert torch.allclose(actor.distribution(obs).mean, a1)
    s1, s2 = actor.act(obs), actor.act(obs)
    assert s1.shape == (10, 3) and not torch.equal(s1, s2)


def test_log_prob_and_entropy_shapes_and_values():
    actor = GaussianActor(5, 3, [16], init_noise_std=0.7)
    obs = torch.randn(10, 5)
    mean = actor.act_inference(obs)
    lp = actor.log_prob(obs, mean)
    expected = -3 * (math.log(0.7) + 0.5 * math.log(2 * math.pi))
    assert lp.shape == (10,) and torch.allclose(lp, torch.full((10,), expected), atol=1e-5)
    ent = actor.entropy(obs)
    assert ent.shape == (10,)
    assert torch.allclose(ent, torch.full((10,), 3 * (0.5 + 0.5 * math.log(2 * math.pi) + math.log(0.7))), atol=1e-5)
