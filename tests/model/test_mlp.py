import pytest
import torch
from torch import nn

from model.mlp import ACTIVATIONS, build_mlp, get_activation


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_every_listed_activation_builds(name):
    mlp = build_mlp(4, [8, 6], 2, name)
    assert mlp(torch.randn(5, 4)).shape == (5, 2)


def test_expected_activation_set():
    assert set(ACTIVATIONS) == {"elu", "relu", "tanh", "leaky_relu", "selu", "gelu", "silu"}
    assert isinstance(get_activation("ELU"), nn.ELU)


def test_unknown_activation_lists_valid_names():
    with pytest.raises(ValueError) as err:
        build_mlp(4, [8], 2, "swishy")
    msg = str(err.value)
    assert "swishy" in msg
    for name in ACTIVATIONS:
        assert name in msg


def test_layout_hidden_layers_then_linear_output():
    mlp = build_mlp(3, [16, 8], 5, "tanh")
    kinds = [type(m) for m in mlp]
    assert kinds == [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear]
    assert mlp[0].in_features == 3 and mlp[-1].out_features == 5


def test_no_hidden_layer_is_linear():
    mlp = build_mlp(3, [], 2, "elu")
    assert len(mlp) == 1 and isinstance(mlp[0], nn.Linear)


@pytest.mark.parametrize("args", [(0, [8], 2), (3, [8], 0), (3, [0], 2)])
def test_bad_sizes(args):
    with pytest.raises(ValueError):
        build_mlp(*args, "elu")
