"""Multi-layer perceptron builder shared by the actor and the critic."""

from __future__ import annotations

from typing import Sequence

from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "elu": nn.ELU,
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "leaky_relu": nn.LeakyReLU,
    "selu": nn.SELU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
}


def get_activation(name: str) -> nn.Module:
    """A new activation module by (case-insensitive) name."""
    key = name.lower()
    if key not in ACTIVATIONS:
        raise ValueError(f"unknown activation '{name}'; valid: {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[key]()


def build_mlp(input_dim: int, hidden_dims: Sequence[int], output_dim: int, activation: str) -> nn.Sequential:
    """Linear -> activation for each hidden layer, then a linear output layer (no output activation).

    Layers keep PyTorch's default initialisation (Kaiming-uniform), as rsl_rl does for
    legged-robot PPO; the actor's small initial output spread comes from the std, not the init.
    """
    if input_dim <= 0 or output_dim <= 0:
        raise ValueError(f"MLP sizes must be positive, got input_dim={input_dim}, output_dim={output_dim}")
    if any(int(h) <= 0 for h in hidden_dims):
        raise ValueError(f"hidden layer sizes must be positive, got {list(hidden_dims)}")
    get_activation(activation)  # validate once, even with no hidden layer
    layers: list[nn.Module] = []
    last = input_dim
    for width in hidden_dims:
        layers += [nn.Linear(last, int(width)), get_activation(activation)]
        last = int(width)
    layers.append(nn.Linear(last, output_dim))
    return nn.Sequential(*layers)
