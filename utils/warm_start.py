"""Warm start: a new run begins with another policy's actor (``train.py --init_from NAME_OR_POLICY_DIR``).

Unlike ``--resume``, which continues a run (counters, optimizer, learning rate, RNG,
terrain levels, config), a warm start takes only weights from the source's
model/policy.pt: the actor with its action std and observation normaliser, which must
fit this run's actor exactly, and the critic and its normaliser where their shapes
match (a critic that sees other privileged observations starts fresh). The source's
config is not used; the same observation size does not mean the same observation
layout, so a source trained with another config gets a note.

A run whose observation is the source's with terms appended (one frame, no history:
`appended_terms`), e.g. a perceptive policy started from a blind one, gets the source's
actor with zero weights on the new inputs: it acts exactly as the source did until
training teaches it to use them. Their normaliser statistics start at mean 0, variance 1.

`read_source` runs before anything is built; `WarmSource.load_into` after the networks
are built and before the experiment folder is made, so a mismatch costs one line and
writes nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
import yaml
from torch import nn

from utils.checkpoint import CheckpointError, read_checkpoint
from utils.experiment import Experiment, ExperimentError, open_experiment

RECORD_NAME = "init_from.yaml"  # in the new run's model/: where its weights came from


class WarmStartError(ValueError):
    """A source whose actor does not fit this run; one line naming both shapes."""


def layer_sizes(state: dict[str, torch.Tensor]) -> list[int]:
    """[input, hidden..., output] of an MLP from its state dict's weight matrices, in layer order."""
    weights = [t for t in state.values() if t.dim() == 2]
    return [int(weights[0].shape[1])] + [int(w.shape[0]) for w in weights] if weights else []


def describe(sizes: list[int]) -> str:
    """'45 -> 12, 256-128-64': input -> output, hidden layers."""
    hidden = "-".join(map(str, sizes[1:-1])) or "no hidden layer"
    return f"{sizes[0]} -> {sizes[-1]}, {hidden}" if sizes else "no layers"


def _shapes(state: dict[str, torch.Tensor]) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in state.items()}


def _fits(module: nn.Module, state: dict[str, torch.Tensor] | None) -> bool:
    return bool(state) and _shapes(module.state_dict()) == _shapes(state)


@dataclass
class WarmSource:
    """The source as given on the command line, its checkpoint file and the loaded checkpoint (on the CPU)."""

    text: str
    path: Path
    ckpt: dict[str, Any]
    sha256: str = ""  # of the file as read (a source still training replaces it every iteration)
    loaded: list[str] = field(default_factory=list)
    fresh: list[str] = field(default_factory=list)

    @property
    def iteration(self) -> int:
        return int(self.ckpt["iteration"])

    @property
    def config_name(self) -> str | None:
        cfg = self.ckpt.get("cfg")
        return cfg.get("name") if isinstance(cfg, dict) else None

    def load_into(self, actor: nn.Module, critic: nn.Module, obs_normalizer: nn.Module | None,
                  critic_obs_normalizer: nn.Module | None, activation: str | None = None,
                  appended: list[tuple[str, int]] | None = None) -> None:
        """Copy the actor (with its std and normaliser) and what fits of the critic into this run's modules.

        A normaliser of None means normalisation is off in this run. Raises `WarmStartError`, having
        changed nothing, when the actor does not fit; fills `loaded` and `fresh`.
        """
        ckpt, flag = self.ckpt, f"--init_from {self.text}"
        theirs, ours = layer_sizes(ckpt["actor"]), layer_sizes(actor.state_dict())
        grown = _grown_actor(actor, ckpt["actor"], appended)
        if grown is not None:  # our observation is the source's plus appended terms: zero weights on those
            ckpt = {**ckpt, "actor": grown, "obs_normalizer": _grown_normalizer(obs_normalizer, ckpt.get("obs_normalizer"))}
        if not _fits(actor, ckpt["actor"]):
            raise WarmStartError(f"{flag}: its actor ({describe(theirs)}) does not fit this run's actor "
                                 f"({describe(ours)}); a warm start needs the same observation size, action count "
                                 "and policy.actor_hidden_dims")
        source_activation = ((ckpt.get("cfg") or {}).get("policy") or {}).get("activation")
        if activation is not None and source_activation not in (None, activation):
            raise WarmStartError(f"{flag}: its actor uses activation '{source_activation}', this run's "
                                 f"policy.activation is '{activation}'; set --set policy.activation={source_activation}")
        normalised = bool(ckpt.get("obs_normalizer"))
        if normalised != (obs_normalizer is not None):
            on_off = lambda on: "on" if on else "off"  # noqa: E731
            raise WarmStartError(f"{flag}: its actor was trained with observation normalisation {on_off(normalised)}, "
                                 f"this run has it {on_off(not normalised)}; set --set "
                                 f"policy.normalize_observations={str(normalised).lower()}")
        actor.load_state_dict(ckpt["actor"])
        self.loaded = [f"actor ({describe(ours)}) and its action std"]
        if grown is not None:
            new = ", ".join(f"{name} ({size})" for name, size in appended)
            self.loaded[0] = f"actor ({describe(theirs)}, grown to {describe(ours)}: zero weights on the new inputs " \
                             f"{new}) and its action std"
        if obs_normalizer is not None:
            obs_normalizer.load_state_dict(ckpt["obs_normalizer"])
            self.loaded.append("observation normaliser")
        self.fresh = []
        self._load_if_fits("critic", critic, ckpt.get("critic"), lambda state: describe(layer_sizes(state)))
        if critic_obs_normalizer is not None:
            self._load_if_fits("critic normaliser", critic_obs_normalizer, ckpt.get("critic_obs_normalizer"),
                               lambda state: f"size {tuple(state['mean'].shape)[0]}")
        self.fresh += ["optimizer", "learning rate", "counters"]

    def _load_if_fits(self, what: str, module: nn.Module, state: dict[str, torch.Tensor] | None,
                      shape: Callable[[dict[str, torch.Tensor]], str]) -> None:
        """Load `state` into `module` if every tensor's shape matches; else list it as fresh, with both shapes."""
        ours = shape(module.state_dict())
        if _fits(module, state):
            module.load_state_dict(state)
            self.loaded.append(f"{what} ({ours})" if what == "critic" else what)
        else:
            self.fresh.append(f"{what} (source's {shape(state) if state else 'none'}; this run's {ours})")

    def appended_to(self, env: Any) -> list[tuple[str, int]] | None:
        """The terms `env`'s policy observation adds after the source actor's inputs (see appended_terms)."""
        task = env.task
        return appended_terms(list(getattr(task, "obs_layout", [])), int(getattr(task, "history_length", 1)),
                              layer_sizes(self.ckpt["actor"])[0])

    def line(self) -> str:
        """The one line saying what was loaded and what starts fresh."""
        return (f"warm start from {self.text} (iteration {self.iteration}): loaded {', '.join(self.loaded)}; "
                f"fresh: {', '.join(self.fresh)}")

    def config_note(self, config_name: str | None) -> str | None:
        """A note when the source was trained with another config (same sizes, maybe other meanings)."""
        if self.config_name is None or self.config_name == config_name:
            return None
        return (f"note: --init_from {self.text} was trained with config '{self.config_name}', this run uses "
                f"'{config_name}': only its weights are loaded, and an observation of the same size may mean "
                "something else")

    def record(self) -> str:
        """YAML for model/init_from.yaml: where the new run's first weights came from."""
        return yaml.safe_dump({
            "source": self.text,
            "path": str(self.path.resolve()),
            "sha256": self.sha256,
            "iteration": self.iteration,
            "total_env_steps": int(self.ckpt.get("total_env_steps", 0)),
            "config": self.config_name,
            "loaded": self.loaded,
            "fresh": self.fresh,
        }, sort_keys=False)


def appended_terms(layout: list[tuple[str, int]], history_length: int,
                   source_inputs: int) -> list[tuple[str, int]] | None:
    """The terms of this run's observation `layout` after its first `source_inputs` values, when those are whole
    terms of one frame (history 1); None otherwise (a different observation, not a longer one)."""
    if history_length != 1:
        return None
    total = 0
    for i, (_, size) in enumerate(layout):
        if total == source_inputs:
            return list(layout[i:]) or None
        total += int(size)
    return None


def _grown_actor(actor: nn.Module, state: dict[str, torch.Tensor],
                 appended: list[tuple[str, int]] | None) -> dict[str, torch.Tensor] | None:
    """The source's actor state with its first layer widened by zero columns for the appended inputs; None when
    the actor is not the source's with exactly those inputs added."""
    ours = actor.state_dict()
    if not appended or _shapes(ours).keys() != _shapes(state).keys():
        return None
    first = next(k for k, v in state.items() if v.dim() == 2)
    extra = sum(size for _, size in appended)
    (rows, cols), want = state[first].shape, ours[first].shape
    if want != (rows, cols + extra) or any(_shapes(ours)[k] != _shapes(state)[k] for k in state if k != first):
        return None
    grown = dict(state)
    grown[first] = torch.cat([state[first], torch.zeros(rows, extra, dtype=state[first].dtype)], dim=1)
    return grown


def _grown_normalizer(normalizer: nn.Module | None,
                      state: dict[str, torch.Tensor] | None) -> dict[str, torch.Tensor] | None:
    """The source's normaliser statistics, with mean 0 and variance 1 for the appended inputs."""
    if normalizer is None or not state:
        return state
    ours = normalizer.state_dict()
    n = state["mean"].shape[0]
    mean, var = ours["mean"].clone().zero_(), torch.ones_like(ours["var"])
    mean[:n], var[:n] = state["mean"], state["var"]
    return {**state, "mean": mean, "var": var}


def read_source(text: str, new_run: Experiment) -> WarmSource:
    """The source's model/policy.pt, read on the CPU; one-line `ExperimentError`/`CheckpointError` if unusable."""
    try:
        source = open_experiment(text)  # an experiment name, or a policy folder given as a path
    except ExperimentError as err:
        raise ExperimentError(f"--init_from {text}: {err}") from None
    if not source.dir.is_dir():
        raise ExperimentError(f"--init_from {text}: no experiment '{text}': looked for {source.dir}")
    if source.dir.resolve() == new_run.dir.resolve():
        raise ExperimentError(f"--init_from {text} is this run's own folder; give the new run another --name")
    if not source.policy_path.is_file():
        raise ExperimentError(f"--init_from {text}: it has no model/policy.pt (looked for {source.policy_path}); "
                              "--init_from starts from a trained policy's policy.pt")
    data = source.policy_path.read_bytes()  # read once: the recorded sha256 is of the weights loaded
    try:
        ckpt = read_checkpoint(source.policy_path, "cpu", data=data)
        return WarmSource(text, source.policy_path, ckpt, hashlib.sha256(data).hexdigest())
    except CheckpointError as err:
        raise CheckpointError(f"--init_from {text}: {err}") from None
