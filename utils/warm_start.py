"""Warm start: a new run begins with another policy's actor (``train.py --init_from NAME_OR_POLICY_DIR``).

Unlike ``--resume``, which continues a run (counters, optimizer, learning rate, RNG,
terrain levels, config), a warm start takes only weights from the source's
model/policy.pt: the actor with its action std and observation normaliser, which must
fit this run's actor exactly, and the critic and its normaliser where their shapes
match (a critic that sees other privileged observations starts fresh). The source's
config is not used; the same observation size does not mean the same observation
layout, so a source trained with another config gets a note.

A run whose observation is the source's grown (`InputGrowth`): terms appended to each
frame (a perceptive policy started from a blind one, a gait clock added) and/or more
frames of history (the source's frames are this run's newest), gets the source's actor
with zero weights on the new inputs: it acts exactly as the source did until training
teaches it to use them. Appended terms' normaliser statistics start at mean 0, variance 1;
an earlier frame's copies of the source's terms start with the source's statistics.

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
                  growth: InputGrowth | None = None) -> None:
        """Copy the actor (with its std and normaliser) and what fits of the critic into this run's modules.

        A normaliser of None means normalisation is off in this run. Raises `WarmStartError`, having
        changed nothing, when the actor does not fit; fills `loaded` and `fresh`.
        """
        ckpt, flag = self.ckpt, f"--init_from {self.text}"
        theirs, ours = layer_sizes(ckpt["actor"]), layer_sizes(actor.state_dict())
        grown = growth.actor(actor, ckpt["actor"]) if growth is not None else None
        if grown is not None:  # our observation is the source's grown: zero weights on the new inputs
            ckpt = {**ckpt, "actor": grown, "obs_normalizer": growth.normalizer(obs_normalizer, ckpt.get("obs_normalizer"))}
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
            self.loaded[0] = f"actor ({describe(theirs)}, grown to {describe(ours)}: zero weights on the new inputs " \
                             f"{growth.describe()}) and its action std"
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

    def growth_for(self, env: Any) -> InputGrowth | None:
        """How `env`'s policy observation grows the source actor's inputs (see input_growth); None if it does not."""
        task = env.task
        env_cfg = (self.ckpt.get("cfg") or {}).get("env") or {}
        return input_growth(list(getattr(task, "obs_layout", [])), int(getattr(task, "history_length", 1)),
                            layer_sizes(self.ckpt["actor"])[0], int(env_cfg.get("history_length", 1)))

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


@dataclass(frozen=True)
class InputGrowth:
    """Where a source actor's inputs sit in this run's observation: each of the source's frames (oldest first,
    as the task stacks them) is the first `source_frame` values of one of this run's newest frames."""

    frame_size: int  # values per frame in this run
    history: int  # frames in this run
    source_frame: int  # values per frame in the source: whole terms at the start of this run's frame
    source_history: int  # frames in the source
    new_terms: tuple[tuple[str, int], ...]  # the terms of this run's frame after the source's

    def columns(self) -> torch.Tensor:
        """This run's input index of each source input, in the source's order."""
        first = self.history - self.source_history
        return torch.cat([torch.arange(self.source_frame) + (first + k) * self.frame_size
                          for k in range(self.source_history)])

    def describe(self) -> str:
        """'2 earlier frames (96), gait_clock (3)'."""
        extra = self.history - self.source_history
        parts = [f"{extra} earlier frame{'s' if extra > 1 else ''} ({extra * self.frame_size})"] if extra else []
        return ", ".join(parts + [f"{name} ({size})" for name, size in self.new_terms])

    def actor(self, actor: nn.Module, state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor] | None:
        """The source's actor state with its first layer spread over this run's inputs, zero weights on the new
        ones; None when the networks differ elsewhere (then the misfit is reported as such)."""
        ours = _shapes(actor.state_dict())
        first = next(k for k, v in state.items() if v.dim() == 2)
        rows = state[first].shape[0]
        if ours.keys() != _shapes(state).keys() or ours[first] != (rows, self.frame_size * self.history) or \
                state[first].shape[1] != self.source_frame * self.source_history or \
                any(ours[k] != tuple(v.shape) for k, v in state.items() if k != first):
            return None
        weight = torch.zeros(ours[first], dtype=state[first].dtype)
        weight[:, self.columns()] = state[first]
        return {**state, first: weight}

    def normalizer(self, normalizer: nn.Module | None,
                   state: dict[str, torch.Tensor] | None) -> dict[str, torch.Tensor] | None:
        """The source's statistics where its inputs went, and on an earlier frame's copies of them (the same
        quantities); mean 0, variance 1 on the appended terms."""
        if normalizer is None or not state:
            return state
        ours = normalizer.state_dict()
        mean, var = ours["mean"].clone().zero_(), torch.ones_like(ours["var"])
        mean[self.columns()], var[self.columns()] = state["mean"], state["var"]
        for k in range(self.history - self.source_history):  # the source's oldest frame stands for older ones
            cols = torch.arange(self.source_frame) + k * self.frame_size
            mean[cols], var[cols] = state["mean"][:self.source_frame], state["var"][:self.source_frame]
        return {**state, "mean": mean, "var": var}


def input_growth(layout: list[tuple[str, int]], history_length: int, source_inputs: int,
                 source_history: int = 1) -> InputGrowth | None:
    """How this run's observation (`layout` per frame, `history_length` frames) grows a source actor's
    `source_inputs` (`source_history` frames): its frames whole terms at the start of ours, no more of them than
    ours. None when it is not a growth (the same observation, or a different one)."""
    if source_history < 1 or source_inputs % source_history or source_history > history_length:
        return None
    source_frame, total = source_inputs // source_history, 0
    for i, (_, size) in enumerate(layout + [("", 0)]):
        if total == source_frame:
            new_terms = tuple((name, int(n)) for name, n in layout[i:])
            if not new_terms and history_length == source_history:
                return None
            return InputGrowth(total + sum(n for _, n in new_terms), history_length, source_frame, source_history,
                               new_terms)
        total += int(size)
    return None


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
