"""utils.warm_start on bare networks: what fits is copied, what does not is named, a misfit actor changes nothing."""

import pytest
import torch

from model import Critic, GaussianActor
from rl.normalizer import EmpiricalNormalizer
from utils.warm_start import WarmSource, WarmStartError, describe, layer_sizes


def source_ckpt(num_obs=6, num_critic_obs=9, num_actions=2, hidden=(8, 4), normalised=True, activation="elu"):
    """A checkpoint as rl.runner saves it, with recognisable (non-default) normaliser statistics."""
    torch.manual_seed(1)
    obs_norm, critic_norm = EmpiricalNormalizer(num_obs), EmpiricalNormalizer(num_critic_obs)
    obs_norm.update(torch.randn(32, num_obs) * 3 + 1)
    critic_norm.update(torch.randn(32, num_critic_obs) * 2 - 1)
    return {"actor": GaussianActor(num_obs, num_actions, hidden, init_noise_std=0.5).state_dict(),
            "critic": Critic(num_critic_obs, hidden).state_dict(),
            "obs_normalizer": obs_norm.state_dict() if normalised else None,
            "critic_obs_normalizer": critic_norm.state_dict() if normalised else None,
            "iteration": 70, "cfg": {"name": "src", "policy": {"activation": activation}}}


def new_run(num_obs=6, num_critic_obs=9, num_actions=2, hidden=(8, 4), critic_hidden=(8, 4)):
    torch.manual_seed(2)
    return (GaussianActor(num_obs, num_actions, hidden), Critic(num_critic_obs, critic_hidden),
            EmpiricalNormalizer(num_obs), EmpiricalNormalizer(num_critic_obs))


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_layer_sizes_and_their_description():
    sizes = layer_sizes(GaussianActor(45, 12, (256, 128, 64)).state_dict())
    assert sizes == [45, 256, 128, 64, 12] and describe(sizes) == "45 -> 12, 256-128-64"


def test_everything_that_fits_is_loaded_and_the_line_says_so():
    ckpt = source_ckpt()
    actor, critic, obs_norm, critic_norm = new_run()
    warm = WarmSource("src", None, ckpt)
    warm.load_into(actor, critic, obs_norm, critic_norm, activation="elu")
    assert same(actor.state_dict(), ckpt["actor"]) and same(critic.state_dict(), ckpt["critic"])
    assert same(obs_norm.state_dict(), ckpt["obs_normalizer"])
    assert same(critic_norm.state_dict(), ckpt["critic_obs_normalizer"])
    assert torch.allclose(actor.action_std, torch.full((2,), 0.5))  # the std comes with the actor
    assert warm.line() == ("warm start from src (iteration 70): loaded actor (6 -> 2, 8-4) and its action std, "
                           "observation normaliser, critic (9 -> 1, 8-4), critic normaliser; "
                           "fresh: optimizer, learning rate, counters")


def test_a_critic_of_another_shape_starts_fresh_and_both_shapes_are_named():
    ckpt = source_ckpt()
    actor, critic, obs_norm, critic_norm = new_run(num_critic_obs=11, critic_hidden=(8, 4))
    before = {k: v.clone() for k, v in critic.state_dict().items()}
    warm = WarmSource("src", None, ckpt)
    warm.load_into(actor, critic, obs_norm, critic_norm)
    assert same(actor.state_dict(), ckpt["actor"])
    assert same(critic.state_dict(), before) and int(critic_norm.count) == 0
    assert "critic (source's 9 -> 1, 8-4; this run's 11 -> 1, 8-4)" in warm.line()
    assert "critic normaliser (source's size 9; this run's size 11)" in warm.line()


def test_other_critic_hidden_dims_keep_the_critic_fresh_but_load_its_normaliser():
    ckpt = source_ckpt()
    actor, critic, obs_norm, critic_norm = new_run(critic_hidden=(16,))
    warm = WarmSource("src", None, ckpt)
    warm.load_into(actor, critic, obs_norm, critic_norm)
    assert same(critic_norm.state_dict(), ckpt["critic_obs_normalizer"])
    assert "fresh: critic (source's 9 -> 1, 8-4; this run's 9 -> 1, 16)" in warm.line()


@pytest.mark.parametrize("run, normalised, activation, words", [
    (dict(num_obs=7), True, "elu", ["its actor (6 -> 2, 8-4)", "this run's actor (7 -> 2, 8-4)"]),
    (dict(num_actions=3), True, "elu", ["its actor (6 -> 2, 8-4)", "this run's actor (6 -> 3, 8-4)"]),
    (dict(hidden=(8, 8)), True, "elu", ["its actor (6 -> 2, 8-4)", "this run's actor (6 -> 2, 8-8)"]),
    ({}, False, "elu", ["observation normalisation off, this run has it on",
                        "--set policy.normalize_observations=false"]),
    ({}, True, "tanh", ["activation 'tanh'", "policy.activation is 'elu'"]),
])
def test_a_misfit_actor_is_one_line_and_changes_nothing(run, normalised, activation, words):
    ckpt = source_ckpt(normalised=normalised, activation=activation)
    modules = new_run(**run)
    before = [{k: v.clone() for k, v in m.state_dict().items()} for m in modules]
    with pytest.raises(WarmStartError) as err:
        WarmSource("src", None, ckpt).load_into(*modules, activation="elu")
    assert "\n" not in str(err.value) and str(err.value).startswith("--init_from src: ")
    assert all(word in str(err.value) for word in words), str(err.value)
    assert all(same(m.state_dict(), b) for m, b in zip(modules, before))


def test_a_normalised_run_cannot_start_from_an_unnormalised_actor_the_other_way_round():
    actor, critic, _, _ = new_run()
    with pytest.raises(WarmStartError, match="normalisation on, this run has it off"):
        WarmSource("src", None, source_ckpt()).load_into(actor, critic, None, None)


def test_a_note_only_when_the_source_config_has_another_name():
    warm = WarmSource("src", None, source_ckpt())
    assert warm.config_note("src") is None
    assert "trained with config 'src', this run uses 'other'" in warm.config_note("other")
