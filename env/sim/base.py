"""The physics interface every backend implements.

All tensors are batched over envs (first dimension ``num_envs``) and live: a
backend returns views of its own state, so reading them after `step` costs no
copy, and writing ``qpos``/``qvel``/``ctrl`` rows changes the simulation.

The interface is deliberately small so that a backend on other hardware
(MuJoCo Warp on a GPU, Isaac Gym) only has to provide these members.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import mujoco
import torch


class PhysicsBackend(ABC):
    """N simulations of one robot model, stepped together."""

    model: mujoco.MjModel  # the model every simulation runs
    num_envs: int
    num_dof: int  # actuated hinge joints, in actuator order
    dt: float  # s, one physics step
    device: torch.device

    # Live state, float64 on the CPU backend. Free-joint layout: qpos[:, :7] is
    # the base position and quaternion (w, x, y, z); qvel[:, :3] the base linear
    # velocity in the world frame and qvel[:, 3:6] its angular velocity in the base frame.
    qpos: torch.Tensor  # (N, nq)
    qvel: torch.Tensor  # (N, nv)
    ctrl: torch.Tensor  # (N, num_dof) joint position targets, rad
    actuator_force: torch.Tensor  # (N, num_dof) N*m, applied at the last substep
    sensordata: torch.Tensor  # (N, nsensordata)

    @abstractmethod
    def step(self, nstep: int) -> torch.Tensor:
        """Run ``nstep`` physics steps with the current targets.

        Returns an (N,) bool mask, on the backend's device, of the simulations that
        diverged (NaN/inf or unstable state); the caller must reset them. Their state
        is undefined until then. A mask, not ids: finding ids would make a GPU wait.
        """

    @abstractmethod
    def reset(self, env_ids: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor, ctrl: torch.Tensor) -> None:
        """Set the state of ``env_ids`` (clearing solver warm-starts and time) and recompute derived fields."""

    def sensor_slice(self, name: str) -> slice:
        """Columns of `sensordata` that hold sensor ``name``."""
        sid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, name)
        if sid < 0:
            names = [mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_SENSOR, i) for i in range(self.model.nsensor)]
            raise ValueError(f"sensor '{name}' not in the model; sensors: {', '.join(map(str, names))}")
        adr = int(self.model.sensor_adr[sid])
        return slice(adr, adr + int(self.model.sensor_dim[sid]))

    @abstractmethod
    def expand(self, field: str) -> torch.Tensor:
        """A live per-env (N, ...) view of a model field, for domain randomisation."""

    @abstractmethod
    def commit_model_changes(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute constants derived from per-env fields written through `expand` (masses, inertias)."""

    @property
    @abstractmethod
    def diverged_total(self) -> int:
        """Simulations reset for divergence since the backend was built."""

    @property
    def overflow_total(self) -> int:
        """World-steps whose preallocated contact/constraint buffers overflowed (0 where buffers grow, as in MuJoCo C)."""
        return 0
