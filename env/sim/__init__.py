"""Physics backends, selected by ``sim.backend`` / ``--backend``.

Each entry builds a `PhysicsBackend` from an `MjModel`; imports are lazy so that
a backend's optional dependencies (mujoco_warp on a GPU) are only needed when used.
"""

from __future__ import annotations

from typing import Callable

import mujoco
import torch

from env.sim.base import PhysicsBackend


def _mujoco(model: mujoco.MjModel, num_envs: int, nthread: int, device: torch.device, **_budgets: int) -> PhysicsBackend:
    from env.sim.mujoco_backend import MujocoBackend

    return MujocoBackend(model, num_envs, nthread, device)  # MuJoCo C grows its contact arena itself


def _warp(model: mujoco.MjModel, num_envs: int, nthread: int, device: torch.device, nconmax: int = 0, njmax: int = 0) -> PhysicsBackend:
    try:
        from env.sim.warp_backend import WarpBackend
    except ImportError as err:
        raise ValueError(f"--backend warp: {err}") from err
    return WarpBackend(model, num_envs, nthread, device, nconmax=nconmax, njmax=njmax)


BACKENDS: dict[str, Callable[..., PhysicsBackend]] = {"mujoco": _mujoco, "warp": _warp}


def load_backend(name: str, model: mujoco.MjModel, num_envs: int, nthread: int = 0, device: str | torch.device = "cpu",
                 nconmax: int = 0, njmax: int = 0) -> PhysicsBackend:
    """Build backend `name`; nconmax/njmax are the per-env contact and constraint budgets where a backend has them."""
    if name not in BACKENDS:
        raise ValueError(f"unknown physics backend '{name}'; available: {', '.join(BACKENDS)}")
    return BACKENDS[name](model, num_envs, nthread, torch.device(device), nconmax=nconmax, njmax=njmax)
