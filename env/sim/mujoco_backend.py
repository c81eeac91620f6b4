"""CPU physics on `mujoco.batch.Batch`: a C++ thread pool over N simulations.

Python touches the batch once per policy step: the PD loop runs inside MuJoCo
(position actuators), `Batch.step(nstep=decimation)` runs all substeps of all
envs in C++ without the GIL, and the state is read through live numpy views
wrapped as torch tensors (no copies).
"""

from __future__ import annotations

import logging
import os
import warnings

import mujoco
import mujoco.batch
import numpy as np
import torch

from env.sim.base import PhysicsBackend

log = logging.getLogger(__name__)


# s, the clock of a freshly reset sim. Nothing in our models depends on time, and
# a clock far from 0 makes MuJoCo's own reset of a blown-up sim (clock back to 0)
# visible even when it happens in the first substep of an episode.
_CLOCK_START = 1000.0


# A solver that stops at its iteration cap in most steps leaves the contact forces unconverged, and a policy
# learns their error (the G1 at 4 iterations fell on low friction where a converged solve walked, README).
# Judged once, after this many policy steps of every env, so that the first falls of a fresh policy do not
# decide it.
SOLVER_CAP_WARN_FRACTION = 0.75  # one-off, 16 envs x 40 random-action steps: Go2 0.48, Qmini 0.41, G1 (cap 4) 0.89
SOLVER_CAP_WARN_AFTER_STEPS = 50


def available_cores() -> int:
    """Cores this process may run on (respects affinity masks and cgroup-limited CI boxes).

    Under torchrun, the processes of one machine (LOCAL_WORLD_SIZE) share its cores: each gets its part.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))


class MujocoBackend(PhysicsBackend):
    def __init__(self, model: mujoco.MjModel, num_envs: int, nthread: int = 0, device: str | torch.device = "cpu"):
        # MuJoCo's state lives in host memory; the env moves what it reads to its own device.
        self.device = torch.device("cpu")
        self.model = model
        self.num_envs = num_envs
        self.num_dof = model.nu
        self.dt = float(model.opt.timestep)
        self.batch = mujoco.batch.Batch(model, num_envs, nthread or available_cores())
        self.nthread = self.batch.nthread
        self._home_key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")

        b = self.batch
        self.qpos = torch.from_numpy(b.bind("qpos"))
        self.qvel = torch.from_numpy(b.bind("qvel"))
        self.ctrl = torch.from_numpy(b.bind("ctrl"))
        # Outputs are read-only arrays that every call refreshes in place; torch
        # warns when wrapping a non-writable array, but we only ever read them.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            self.sensordata = torch.from_numpy(b.bind("sensordata"))
            self.actuator_force = torch.from_numpy(b.bind("actuator_force"))
        self._time = b.bind("time")
        self._solver_niter = b.bind("solver_niter")  # per island; a robot on the floor is one island
        self._diverged_total = 0
        self.solver_capped_steps = 0  # env-steps whose last physics step stopped at sim.iterations
        self.solver_sampled_steps = 0
        self._solver_cap_judged = False
        # The state row of a fresh episode (keyframe pose, clock at _CLOCK_START, solver warm-starts, actuator
        # state and applied forces cleared): a reset writes it into the rows, with no call into the batch.
        b.reset(keyframe=self._home_key, stage=mujoco.mjtStage.mjSTAGE_NONE)
        self._time[:] = _CLOCK_START
        self._fresh_row = b.state[0].copy()
        self.batch.reset()
        self._time[:] = _CLOCK_START

    def step(self, nstep: int) -> torch.Tensor:
        failed = np.zeros(0, dtype=np.int64)
        expected_time = self._time + nstep * self.dt
        try:
            self.batch.step(nstep=nstep)
        except mujoco.batch.SimulationError as err:  # MuJoCo raised in some sims; the rest ran
            failed = np.asarray(err.ids, dtype=np.int64)
        diverged = self._diverged(failed, expected_time)
        self._diverged_total += int(diverged.sum())
        self._count_solver_cap()
        return torch.from_numpy(diverged)

    def _count_solver_cap(self) -> None:
        """Count the envs whose last physics step used every solver iteration allowed; warn once if most did."""
        cap = int(self.model.opt.iterations)
        self.solver_capped_steps += int((self._solver_niter.max(axis=1) >= cap).sum())
        self.solver_sampled_steps += self.num_envs
        if self._solver_cap_judged or self.solver_sampled_steps < SOLVER_CAP_WARN_AFTER_STEPS * self.num_envs:
            return
        self._solver_cap_judged = True
        share = self.solver_capped_steps / self.solver_sampled_steps
        if share > SOLVER_CAP_WARN_FRACTION:
            log.warning("mujoco backend: the constraint solver stopped at its cap of %d iterations (sim.iterations) "
                        "in %.0f%% of the env-steps so far: the contacts are not converged, and a policy learns their "
                        "error; raise sim.iterations (README, Adding a robot)", cap, 100 * share)

    def _diverged(self, failed: np.ndarray, expected_time: np.ndarray) -> np.ndarray:
        """Sims that blew up during the last step.

        MuJoCo resets a sim whose state turns NaN/inf or huge (a BADQPOS/QVEL/QACC
        warning) to the model defaults, restarting its clock at 0. Our clocks start
        at _CLOCK_START, so a clock behind the expected time marks such a sim
        (qpos0 is no valid episode start, so the env resets it properly).
        Non-finite states and sims MuJoCo raised in count too.
        """
        restarted = self._time < expected_time - 0.5 * self.dt
        q, v = self.qpos.numpy(), self.qvel.numpy()
        nonfinite = ~(np.isfinite(q).all(axis=1) & np.isfinite(v).all(axis=1))
        bad = restarted | nonfinite
        bad[failed] = True
        return bad

    def reset(self, env_ids: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor, ctrl: torch.Tensor) -> None:
        if len(env_ids) == 0:
            return
        rows = env_ids.cpu()
        ids = rows.numpy().astype(np.int64)
        # What a keyframe reset does (Batch.reset), as plain writes of the state rows: one call into the
        # batch per reset, the forward pass that makes the new episodes' sensors and forces current.
        self.batch.state[ids] = self._fresh_row
        self.qpos[rows] = qpos.to("cpu", self.qpos.dtype)
        self.qvel[rows] = qvel.to("cpu", self.qvel.dtype)
        self.ctrl[rows] = ctrl.to("cpu", self.ctrl.dtype)
        self.batch.forward(ids)

    def expand(self, field: str) -> torch.Tensor:
        return torch.from_numpy(self.batch.expand(field))

    def commit_model_changes(self, env_ids: torch.Tensor | None = None) -> None:
        ids = None if env_ids is None else env_ids.cpu().numpy().astype(np.int64)
        self.batch.set_const(ids)

    @property
    def diverged_total(self) -> int:
        return self._diverged_total

