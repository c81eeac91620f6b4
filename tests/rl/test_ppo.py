import pytest
import torch

from fake_env import FakeEnv, make_cfg
from model import load_actor, load_critic
from rl.alg.ppo import PPO
from rl.runner import OnPolicyRunner
from rl.seed import set_seed


def _ppo(num_envs=8, num_steps=4, **algorithm):
    cfg = make_cfg(hidden=(16,), algorithm=algorithm)
    actor = load_actor(cfg.policy, 3, 2, "cpu")
    critic = load_critic(cfg.policy, 4, "cpu")
    ppo = PPO(actor, critic, cfg.algorithm, "cpu")
    ppo.init_storage(num_envs, num_steps, 3, 4, 2)
    return ppo


def _rollout(ppo, num_envs=8, num_steps=4):
    with torch.inference_mode():
        for _ in range(num_steps):
            ppo.act(torch.randn(num_envs, 3), torch.randn(num_envs, 4))
            ppo.process_env_step(torch.randn(num_envs), torch.zeros(num_envs, dtype=torch.bool),
                                 torch.zeros(num_envs, dtype=torch.bool))
        ppo.compute_returns(torch.randn(num_envs, 4))


def test_timeout_bootstrapping_adds_discounted_value():
    ppo = _ppo(num_envs=3, num_steps=1, gamma=0.9, lam=0.95)
    with torch.no_grad():  # constant critic: V = 2 everywhere
        last = ppo.critic.value_net[-1]
        last.weight.zero_()
        last.bias.fill_(2.0)
    with torch.inference_mode():
        ppo.act(torch.randn(3, 3), torch.randn(3, 4))
        ppo.process_env_step(torch.ones(3), dones=torch.tensor([True, True, False]),
                             time_outs=torch.tensor([True, False, False]))
        ppo.compute_returns(torch.randn(3, 4))
    s = ppo.storage
    assert s.rewards[0].tolist() == pytest.approx([1.0 + 0.9 * 2.0, 1.0, 1.0])
    # timeout: bootstrapped as if the episode went on; termination: no future; running: V(next) = 2.
    assert s.returns[0].tolist() == pytest.approx([1.0 + 0.9 * 2.0, 1.0, 1.0 + 0.9 * 2.0])


def test_without_time_outs_rewards_are_unchanged():
    ppo = _ppo(num_envs=2, num_steps=1)
    with torch.inference_mode():
        ppo.act(torch.randn(2, 3), torch.randn(2, 4))
        ppo.process_env_step(torch.ones(2), torch.ones(2, dtype=torch.bool), None)
    assert ppo.storage.rewards[0].tolist() == [1.0, 1.0]


def test_advantages_normalised_over_rollout():
    ppo = _ppo()
    _rollout(ppo)
    adv = ppo.storage.advantages
    assert abs(adv.mean().item()) < 1e-5 and adv.std().item() == pytest.approx(1.0, abs=1e-4)


def test_update_returns_metrics_and_clears_storage():
    ppo = _ppo()
    _rollout(ppo)
    metrics = ppo.update()
    assert set(metrics) >= {"surrogate", "value", "entropy", "kl", "approx_kl", "clip_fraction", "learning_rate"}
    assert all(isinstance(v, float) for v in metrics.values())
    assert ppo.storage.step == 0


def test_adaptive_lr_goes_down_when_kl_is_large():
    ppo = _ppo(learning_rate=1e-3, min_lr=1e-5, max_lr=1e-2)
    _rollout(ppo)
    ppo.storage.mu += 3.0  # the rollout policy looks far from the current one: KL >> desired_kl
    metrics = ppo.update()
    assert metrics["kl"] > 2 * 0.01
    assert ppo.learning_rate < 1e-3 and ppo.learning_rate >= 1e-5
    # 5 epochs x 4 minibatches of /1.5 reach the lower clamp.
    assert ppo.learning_rate == pytest.approx(1e-5)
    assert ppo.optimizer.param_groups[0]["lr"] == ppo.learning_rate == metrics["learning_rate"]


def test_adaptive_lr_goes_up_when_kl_is_small_and_fixed_keeps_it():
    ppo = _ppo(learning_rate=1e-6, min_lr=1e-7, max_lr=1e-2)  # tiny steps: KL stays far below desired
    _rollout(ppo)
    ppo.storage.mu += 1e-3  # a small, nonzero KL from the first minibatch on
    ppo.update()
    assert ppo.learning_rate > 1e-6
    fixed = _ppo(learning_rate=1e-3, schedule="fixed")
    _rollout(fixed)
    fixed.storage.mu += 3.0
    fixed.update()
    assert fixed.learning_rate == 1e-3 and fixed.optimizer.param_groups[0]["lr"] == 1e-3


@pytest.mark.parametrize("algorithm, expected", [
    ({"learning_rate": 1e-3}, 2e-4),  # the same config: the adaptive schedule goes on from where it was
    ({"learning_rate": 1e-3, "schedule": "fixed"}, 1e-3),  # a fixed schedule takes the config's step size
    ({"learning_rate": 5e-5}, 5e-5),  # a start value set on resume (--set algorithm.learning_rate) holds
])
def test_a_resumed_learning_rate_is_the_schedules_or_the_configs(algorithm, expected):
    trained = _ppo(learning_rate=1e-3)
    trained.learning_rate = 2e-4  # where the adaptive schedule had taken it
    checkpoint = {**trained.state_dict(), "cfg": {"algorithm": {"learning_rate": 1e-3, "schedule": "adaptive"}}}
    resumed = _ppo(**algorithm)
    resumed.load_state_dict(checkpoint)
    assert resumed.learning_rate == expected and resumed.optimizer.param_groups[0]["lr"] == expected


def test_a_large_critic_gradient_does_not_shrink_the_actor_step():
    ppo = _ppo(max_grad_norm=1.0)
    for p in ppo.actor.parameters():
        p.grad = torch.full_like(p, 1e-3)  # actor norm well below 1
    for p in ppo.critic.parameters():
        p.grad = torch.full_like(p, 10.0)  # critic norm far above 1
    actor_before = [p.grad.clone() for p in ppo.actor.parameters()]
    ppo._clip_gradients()
    assert all(torch.equal(a, p.grad) for a, p in zip(actor_before, ppo.actor.parameters()))
    critic_norm = torch.norm(torch.stack([p.grad.norm() for p in ppo.critic.parameters()]))
    assert critic_norm == pytest.approx(1.0, rel=1e-4)


def test_bad_schedule():
    with pytest.raises(ValueError):
        _ppo(schedule="cosine")


def test_ppo_learns_the_fake_task():
    set_seed(0)
    env = FakeEnv(num_envs=64, num_actions=3, max_episode_length=8, seed=0)
    runner = OnPolicyRunner(env, make_cfg(), log_dir=None, device="cpu", verbose=False)

    def eval_error() -> float:
        policy = runner.get_inference_policy()
        target = torch.rand(256, 3) * 2 - 1
        with torch.no_grad():
            return (policy(target) - target).square().mean().item()

    err_before = eval_error()
    first = runner.learn(1)
    last = runner.learn(39)
    per_step = lambda m: m["mean_reward"] / m["mean_episode_length"]  # noqa: E731
    assert per_step(last) > per_step(first) + 0.5, (first, last)
    assert eval_error() < 0.25 * err_before
    assert last["action_std"] < first["action_std"]


def test_kl_of_a_policy_with_itself_is_zero_and_matches_torch():
    from torch.distributions import Normal, kl_divergence

    from rl.alg.ppo import _gaussian_kl

    mu, sigma = torch.randn(6, 12), torch.rand(6, 12) + 0.1
    assert torch.equal(_gaussian_kl(mu, sigma, mu, sigma), torch.zeros(6))
    mu1, sigma1 = mu + 0.1 * torch.randn(6, 12), sigma * (1 + 0.1 * torch.rand(6, 12))
    expected = kl_divergence(Normal(mu, sigma), Normal(mu1, sigma1)).sum(-1)
    assert torch.allclose(_gaussian_kl(mu, sigma, mu1, sigma1), expected, atol=1e-6)


def test_first_minibatch_of_an_update_leaves_the_learning_rate_alone():
    ppo = _ppo(num_envs=8, num_steps=4, learning_rate=1e-3, num_learning_epochs=1, num_mini_batches=1)
    _rollout(ppo)
    ppo.update()  # one minibatch: the KL is measured on the unchanged policy
    assert ppo.learning_rate == pytest.approx(1e-3)


def test_a_frozen_actor_update_trains_the_critic_only_and_keeps_the_learning_rate():
    ppo = _ppo()
    ppo.actor_frozen = True
    actor = [p.detach().clone() for p in ppo.actor.parameters()]
    critic = [p.detach().clone() for p in ppo.critic.parameters()]
    lr = ppo.learning_rate
    _rollout(ppo)
    ppo.update()
    assert all(torch.equal(a, p) for a, p in zip(actor, ppo.actor.parameters()))
    assert not all(torch.equal(c, p) for c, p in zip(critic, ppo.critic.parameters()))
    assert ppo.learning_rate == lr  # a frozen actor's KL is 0: it must not drive the adaptive rate up
    ppo.actor_frozen = False
    _rollout(ppo)
    ppo.update()
    assert not all(torch.equal(a, p) for a, p in zip(actor, ppo.actor.parameters()))


def test_the_runner_warms_up_the_critic_for_the_first_iterations_of_a_run():
    set_seed(0)
    env = FakeEnv(num_envs=16, num_actions=3, max_episode_length=8, seed=0)
    runner = OnPolicyRunner(env, make_cfg(algorithm={"critic_warmup_iterations": 2}), log_dir=None, device="cpu",
                            verbose=False)
    start = [p.detach().clone() for p in runner.alg.actor.parameters()]
    stats = runner.obs_normalizer.state_dict()
    runner.learn(1)
    runner.learn(1)  # a second call within the warm-up: still frozen
    assert all(torch.equal(a, p) for a, p in zip(start, runner.alg.actor.parameters()))
    assert all(torch.equal(v, runner.obs_normalizer.state_dict()[k]) for k, v in stats.items())  # frozen too
    runner.learn(1)  # iteration 3: past the warm-up
    assert not all(torch.equal(a, p) for a, p in zip(start, runner.alg.actor.parameters()))
    assert runner.obs_normalizer.training and not runner.alg.actor_frozen
