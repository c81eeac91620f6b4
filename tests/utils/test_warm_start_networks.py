"""utils.warm_start on bare networks: what fits is copied, what does not is named, a misfit actor changes nothing."""

import pytest
import torch

from model import Critic, GaussianActor
from rl.normalizer import EmpiricalNormalizer
from utils.warm_start import WarmSource, WarmStartError, describe, input_growth, layer_sizes


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


def test_input_growth_finds_the_source_frames_in_a_longer_observation():
    layout = [("a", 4), ("b", 2), ("clock", 3)]
    # one frame, terms appended: the source is the start of the only frame
    grown = input_growth(layout, 1, 6)
    assert grown.columns().tolist() == list(range(6)) and grown.describe() == "clock (3)"
    # three frames from a one-frame source: its inputs are the newest (last) frame's first six
    grown = input_growth(layout, 3, 6)
    assert grown.columns().tolist() == list(range(18, 24)) and grown.describe() == "2 earlier frames (18), clock (3)"
    # two frames of the whole frame into three: the source's frames are our newest two, in order
    grown = input_growth(layout, 3, 18, source_history=2)
    assert grown.columns().tolist() == list(range(9, 27)) and grown.describe() == "1 earlier frame (9)"
    assert input_growth(layout, 1, 9) is None  # the same observation: nothing grows
    assert input_growth(layout, 3, 5) is None  # 5 values are not whole terms
    assert input_growth(layout, 1, 18, source_history=2) is None  # fewer frames than the source's
    assert input_growth(layout, 3, 7, source_history=2) is None  # not a whole number of frames


def test_a_history_growth_keeps_the_source_action_and_fills_the_older_frames_statistics():
    ckpt = source_ckpt(num_obs=6)
    actor, critic, obs_norm, critic_norm = new_run(num_obs=3 * 7)
    growth = input_growth([("a", 6), ("clock", 1)], 3, 6)
    warm = WarmSource("src", None, ckpt)
    warm.load_into(actor, critic, obs_norm, critic_norm, growth=growth)
    source, source_norm = GaussianActor(6, 2, (8, 4)), EmpiricalNormalizer(6)
    source.load_state_dict(ckpt["actor"])
    source_norm.load_state_dict(ckpt["obs_normalizer"])
    newest = torch.randn(5, 6)
    obs = torch.cat([torch.randn(5, 14), newest, torch.randn(5, 1)], dim=1)
    assert torch.allclose(actor.act_inference(obs_norm(obs)), source.act_inference(source_norm(newest)), atol=1e-6)
    for frame in range(3):
        assert torch.equal(obs_norm.mean[7 * frame:7 * frame + 6], ckpt["obs_normalizer"]["mean"])
    assert obs_norm.mean[[6, 13, 20]].abs().sum() == 0 and torch.equal(obs_norm.var[[6, 13, 20]], torch.ones(3))
    assert "grown to 21 -> 2, 8-4: zero weights on the new inputs 2 earlier frames (14), clock (1)" in warm.line()
