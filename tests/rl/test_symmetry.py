"""Mirror augmentation and mirror loss in PPO (rl/symmetry.py), on the fake env and a 2-iteration Qmini run."""

import copy
from types import SimpleNamespace

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import train
from env.utils.mirror import MirrorMaps, SignedPermutation
from fake_env import FakeEnv, make_cfg
from model import load_actor, load_critic
from rl.alg.ppo import PPO
from rl.normalizer import EmpiricalNormalizer
from rl.runner import OnPolicyRunner
from rl.storage import MiniBatch
from rl.symmetry import Symmetry, make_symmetry

ACTIONS = SignedPermutation([1, 0, 2], [1.0, 1.0, -1.0])  # the fake env's 3 actions: swap the first two, negate z
ON = SimpleNamespace(use_data_augmentation=True, use_mirror_loss=True, mirror_loss_coef=0.5)
LOSS_ONLY = SimpleNamespace(use_data_augmentation=False, use_mirror_loss=True, mirror_loss_coef=0.5)


class MirroredFakeEnv(FakeEnv):
    """The fake env's task (match a target) is symmetric under any signed permutation of the target."""

    def mirror_maps(self) -> MirrorMaps:
        return MirrorMaps(obs=ACTIONS, critic_obs=SignedPermutation.concat([ACTIONS, SignedPermutation.identity(1)]),
                          actions=ACTIONS)


def fake_maps() -> MirrorMaps:
    return MirroredFakeEnv(num_envs=2).mirror_maps()


def batch(n: int = 6) -> MiniBatch:
    return MiniBatch(obs=torch.randn(n, 3), critic_obs=torch.randn(n, 4), actions=torch.randn(n, 3),
                     values=torch.randn(n), advantages=torch.randn(n), returns=torch.randn(n),
                     log_probs=torch.randn(n), mu=torch.randn(n, 3), sigma=torch.rand(n, 3))


def test_augmentation_appends_mirror_images_and_repeats_what_the_original_earned():
    b = batch()
    out = Symmetry(fake_maps(), ON).augment(b)
    assert torch.equal(out.obs[:6], b.obs)
    assert torch.equal(out.obs[6:], b.obs[:, [1, 0, 2]] * torch.tensor([1, 1, -1.0]))
    assert torch.equal(out.critic_obs[6:, 3], b.critic_obs[:, 3])  # the time fraction stays
    assert torch.equal(out.critic_obs[6:, 0], b.critic_obs[:, 1])
    assert torch.equal(out.actions[6:], ACTIONS.apply(b.actions))
    for name in ("values", "advantages", "returns", "log_probs"):
        assert torch.equal(getattr(out, name), getattr(b, name).repeat(2)), name
    assert out.mu is b.mu and out.sigma is b.sigma  # the KL is measured on the rollout's own samples
    assert Symmetry(fake_maps(), LOSS_ONLY).augment(b) is b


def test_the_mirror_loss_compares_the_mirrored_mean_with_the_mean_of_the_mirror_and_trains_only_the_latter():
    actor = load_actor(make_cfg(hidden=(8,)).policy, 3, 3, "cpu")
    b = batch()
    augmented = Symmetry(fake_maps(), ON)
    alone = Symmetry(fake_maps(), LOSS_ONLY)
    big = augmented.augment(b)
    mean = actor.act_inference(big.obs).detach().requires_grad_()
    loss = augmented.mirror_loss(actor, big, mean)
    with torch.no_grad():
        expected = float((actor.act_inference(ACTIONS.apply(b.obs)) - ACTIONS.apply(actor.act_inference(b.obs)))
                         .square().mean())
        assert float(alone.mirror_loss(actor, b, actor.act_inference(b.obs))) == pytest.approx(expected, rel=1e-5)
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-5) and expected > 0
    loss.backward()
    assert torch.equal(mean.grad[:6], torch.zeros(6, 3)) and mean.grad[6:].abs().sum() > 0  # the target is detached


def test_a_mirror_equivariant_actor_has_no_mirror_loss():
    actor = load_actor(make_cfg(hidden=(8,)).policy, 3, 3, "cpu")
    with torch.no_grad():  # one linear layer commuting with the mirror: y = W x with W M = M W
        actor.mean_net = torch.nn.Linear(3, 3, bias=False)
        actor.mean_net.weight.copy_(torch.tensor([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]))
    b = batch()
    with torch.no_grad():
        loss = Symmetry(fake_maps(), ON).mirror_loss(actor, b, actor.act_inference(b.obs))
    assert float(loss.detach()) == pytest.approx(0.0, abs=1e-10)


def test_symmetric_statistics_are_those_of_the_data_and_its_mirror_image_and_commute_with_the_mirror():
    maps = fake_maps()
    data = torch.randn(500, 3) * torch.tensor([1.0, 3.0, 0.5]) + torch.tensor([2.0, -1.0, 0.7])
    both, mirrored = EmpiricalNormalizer(3), EmpiricalNormalizer(3)
    both.update(torch.cat([data, maps.obs.apply(data)]))
    mirrored.update(data)
    Symmetry(maps, ON).symmetrize_normalizer(mirrored)
    assert torch.allclose(mirrored.mean, both.mean, atol=1e-5) and torch.allclose(mirrored.var, both.var, atol=1e-4)
    x = torch.randn(4, 3)
    assert torch.allclose(mirrored(maps.obs.apply(x)), maps.obs.apply(mirrored(x)), atol=1e-6)
    mirrored.eval()  # play, export: the statistics are left alone
    mirrored.mean.add_(1.0)
    Symmetry(maps, ON).symmetrize_normalizer(mirrored)
    assert torch.allclose(mirrored.mean, both.mean + 1.0, atol=1e-5)


def test_the_learning_rate_follows_the_kl_of_the_rollouts_own_samples():
    """One minibatch of an unchanged policy: its KL is exactly 0, though the random actor is not symmetric."""
    cfg = make_cfg(hidden=(16,), algorithm={"num_learning_epochs": 1, "num_mini_batches": 1})
    ppo = PPO(load_actor(cfg.policy, 3, 3, "cpu"), load_critic(cfg.policy, 4, "cpu"), cfg.algorithm, "cpu",
              symmetry=Symmetry(fake_maps(), ON))
    ppo.init_storage(8, 4, 3, 4, 3)
    with torch.inference_mode():
        for _ in range(4):
            ppo.act(torch.randn(8, 3), torch.randn(8, 4))
            ppo.process_env_step(torch.randn(8), torch.zeros(8, dtype=torch.bool), None)
        ppo.compute_returns(torch.randn(8, 4))
    metrics = ppo.update()
    assert metrics["kl"] == 0.0 and metrics["learning_rate"] == cfg.algorithm.learning_rate
    assert metrics["mirror"] > 0


def test_symmetry_is_off_unless_asked_and_needs_an_env_that_can_mirror():
    assert make_symmetry(make_cfg().algorithm, MirroredFakeEnv()) is None  # an older config has no section
    off = make_cfg(algorithm={"symmetry": SimpleNamespace(use_data_augmentation=False, use_mirror_loss=False,
                                                          mirror_loss_coef=0.1)})
    assert make_symmetry(off.algorithm, MirroredFakeEnv()) is None
    with pytest.raises(ValueError, match="algorithm.symmetry is on but the env has no mirror_maps"):
        make_symmetry(make_cfg(algorithm={"symmetry": ON}).algorithm, FakeEnv())


def test_the_runner_learns_the_fake_task_with_mirrored_samples_and_symmetric_normalisers():
    torch.manual_seed(0)
    cfg = make_cfg(algorithm={"symmetry": ON}, runner={"num_steps_per_env": 8})
    runner = OnPolicyRunner(MirroredFakeEnv(num_envs=32), cfg, verbose=False)
    first = runner.learn(1)
    last = runner.learn(4)
    assert last["mirror"] < first["mirror"] and last["mean_task_reward"] > first["mean_task_reward"]
    mean = runner.obs_normalizer.mean
    assert torch.allclose(ACTIONS.apply(mean), mean) and float(mean[2]) == pytest.approx(0.0, abs=1e-6)


def test_qmini_trains_two_iterations_with_augmentation_and_mirror_loss(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    assert train.main(["--config", "qmini", "--name", "mirror", "--num_envs", "8", "--max_iterations", "2",
                       "--set", "runner.num_steps_per_env=8", "--set", "algorithm.symmetry.use_data_augmentation=true",
                       "--set", "algorithm.symmetry.use_mirror_loss=true"]) == 0
    events = EventAccumulator(str(tmp_path / "mirror" / "log"))
    events.Reload()
    assert [e.step for e in events.Scalars("Loss/mirror")] == [1, 2]
    ckpt = torch.load(tmp_path / "mirror" / "model" / "policy.pt", weights_only=False)
    assert ckpt["cfg"]["algorithm"]["symmetry"]["use_mirror_loss"] is True
    from config import load_config
    from env.gym_env_wrapper import make_env
    maps = make_env(load_config("qmini", ["env.num_envs=1"])).mirror_maps()
    for key, mirror in [("obs_normalizer", maps.obs), ("critic_obs_normalizer", maps.critic_obs)]:
        mean = ckpt[key]["mean"]
        assert torch.allclose(mirror.apply(mean), mean, atol=1e-5), key


def test_a_robot_that_cannot_be_mirrored_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    assert train.main(["--config", "go2", "--name", "lopsided", "--num_envs", "4", "--set",
                       "init_state.default_joint_angles.FL_hip_joint=0.1", "--set",
                       "algorithm.symmetry.use_data_augmentation=true"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: robot mirror: init_state.default_joint_angles is not mirror symmetric: "
                          "FL_hip_joint = 0.1 but its twin FR_hip_joint = 0") and "\n" not in err
    assert not (tmp_path / "experiments").exists()


def lopsided_normalizer(n: int = 3) -> EmpiricalNormalizer:
    """Statistics of data that is not mirror symmetric, as a checkpoint trained without symmetry has."""
    normalizer = EmpiricalNormalizer(n)
    normalizer.update(torch.randn(400, n) * torch.linspace(0.5, 3.0, n) + torch.linspace(-2.0, 1.5, n))
    return normalizer


def test_symmetrising_loaded_statistics_keeps_what_the_network_computes():
    torch.manual_seed(1)
    actor = load_actor(make_cfg(hidden=(8,)).policy, 3, 3, "cpu")
    untouched = copy.deepcopy(actor)
    normalizer, plain = lopsided_normalizer(), lopsided_normalizer()
    plain.load_state_dict(normalizer.state_dict())
    x = normalizer.inverse(torch.rand(64, 3) * 4.0 - 2.0)  # within the clip before and after
    with torch.no_grad():
        before = actor.act_inference(normalizer(x))
        Symmetry(fake_maps(), ON).symmetrize_normalizer(normalizer, keep=actor)
        after = actor.act_inference(normalizer(x))
        Symmetry(fake_maps(), ON).symmetrize_normalizer(plain)
        without_keep = untouched.act_inference(plain(x))
    assert torch.allclose(ACTIONS.apply(normalizer.mean), normalizer.mean, atol=1e-6)  # symmetric now
    assert torch.allclose(normalizer.mean, plain.mean) and torch.allclose(normalizer.var, plain.var)
    assert torch.allclose(after, before, atol=1e-5)
    assert (without_keep - before).abs().max() > 0.05  # what the first layer absorbed


def test_a_run_with_symmetry_starts_from_lopsided_loaded_statistics_acting_as_the_checkpoint_did():
    """A warm start trained without symmetry: the runner symmetrises its statistics before the first rollout
    and the actor (frozen by the critic warm-up) still maps every observation to the same action."""
    torch.manual_seed(2)
    cfg = make_cfg(algorithm={"symmetry": ON, "critic_warmup_iterations": 5}, runner={"num_steps_per_env": 4})
    runner = OnPolicyRunner(MirroredFakeEnv(num_envs=8), cfg, verbose=False)
    loaded = lopsided_normalizer()
    loaded.count.fill_(10 ** 9)  # the rollout's samples barely move these statistics
    runner.obs_normalizer.load_state_dict(loaded.state_dict())
    x = loaded.inverse(torch.rand(32, 3) * 4.0 - 2.0)
    with torch.no_grad():
        before = runner.get_inference_policy()(x)
    runner.learn(1)
    with torch.no_grad():
        after = runner.get_inference_policy()(x)
    mean = runner.obs_normalizer.mean
    assert torch.allclose(ACTIONS.apply(mean), mean, atol=1e-5)
    assert not torch.allclose(mean, loaded.mean, atol=1e-2)  # the statistics did change
    assert torch.allclose(after, before, atol=1e-4)
