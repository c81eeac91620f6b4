"""Physics backends, selected by ``sim.backend`` / ``--backend``.

Each entry builds a `PhysicsBackend` from an `MjModel`; imports are lazy so that
a backend's optional dependencies (mujoco_warp on a GPU) are only needed when used.
"""

from __future__ import annotations

from typing import Callable

import mujoco
import torch

from env.sim.base import PhysicsBackend


def _mujoco(model: mujoco.MjModel, num_envs: int, nthread: int, device: torch.device) -> PhysicsBackend:
    from env.sim.mujoco_backend import MujocoBackend

    return MujocoBackend(model, num_envs, nthread, device)


BACKENDS: dict[str, Callable[..., PhysicsBackend]] = {"mujoco": _mujoco}


def load_backend(name: str, model: mujoco.MjModel, num_envs: int, nthread: int = 0, device: str | torch.device = "cpu") -> PhysicsBackend:
    if name not in BACKENDS:
        raise ValueError(f"unknown physics backend '{name}'; available: {', '.join(BACKENDS)}")
    return BACKENDS[name](model, num_envs, nthread, torch.device(device))
