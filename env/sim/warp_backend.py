"""GPU physics on MuJoCo Warp: N worlds of one model stepped by Warp kernels.

The same `MjModel` as the CPU backend (env.sim.scene) goes to `mjw.put_model`;
`mjw.make_data(nworld=num_envs)` holds every world's state. The state is exposed
as torch views of the Warp arrays (`wp.to_torch`, no copies), which are only ever
written in place. Warp works on its own stream (a CUDA graph cannot be captured
on torch's legacy default stream) and each batch of Warp work is ordered after
torch's queued work and before torch's next by stream waits on the GPU, so
nothing waits on the host. On CUDA the substeps of a policy step, the masked reset, the forward
pass and `set_const` are each captured once as a CUDA graph and replayed (a group
whose capture fails runs as plain launches, with a warning); on Warp's CPU device
(development and CI) they run as plain kernel launches.

Per-env model fields for randomisation are batched on request (`expand`), before
any graph is captured (an expand after a capture drops the graphs, so they are
re-captured with the new arrays). Fields that `mjw.set_const` derives from
masses and armature are batched with them.

A world whose state turns non-finite or huge, or whose contact/constraint buffers
overflowed (`d.overflow`), is reported as diverged: the env resets it. Buffer
overflows are counted and logged, never silent; the solver's "iteration limit
reached" bits are not overflows (a few Newton iterations is our setting).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Callable

import mujoco
import torch

from env.sim.base import PhysicsBackend
from env.sim.warp_setup import DERIVED_FROM, buffer_sizes, import_warp

log = logging.getLogger(__name__)

MAX_STATE = 1e6  # |qpos| or |qvel| beyond this is a blown-up simulation (m, rad, m/s, rad/s)


class WarpBackend(PhysicsBackend):
    def __init__(self, model: mujoco.MjModel, num_envs: int, nthread: int = 0, device: str | torch.device = "cpu",
                 nconmax: int = 0, njmax: int = 0):
        wp, mjw = import_warp()
        self._wp, self._mjw = wp, mjw
        self.device = torch.device(device)
        self.model = model
        self.num_envs = num_envs
        self.num_dof = model.nu
        self.dt = float(model.opt.timestep)
        self.nconmax, self.njmax = buffer_sizes(model, nconmax, njmax)
        self._wp_device = wp.device_from_torch(self.device)
        # Warp's own stream of the device (capture-capable), ordered against torch's by GPU-side waits
        self._stream = wp.get_stream(self._wp_device) if self.device.type == "cuda" else None
        with self._scope():
            self.m = mjw.put_model(model)
            self.m.opt.warn_overflow = 0  # we report overflows ourselves, once per step, not from every kernel
            self.d = mjw.make_data(model, nworld=num_envs, nconmax=self.nconmax, njmax=self.njmax)
            self._reset_mask = wp.zeros(num_envs, dtype=bool)
        self.qpos = wp.to_torch(self.d.qpos)
        self.qvel = wp.to_torch(self.d.qvel)
        self.ctrl = wp.to_torch(self.d.ctrl)
        self.sensordata = wp.to_torch(self.d.sensordata)
        self.actuator_force = wp.to_torch(self.d.actuator_force)
        self._overflow = wp.to_torch(self.d.overflow)
        self._mask = wp.to_torch(self._reset_mask)
        self._views: dict[str, torch.Tensor] = {}
        self._graphs: dict[object, object] = {}
        self._uncapturable: set[object] = set()  # launch groups whose capture failed once: plain launches from then on
        self.use_graphs = self._wp_device.is_cuda and wp.is_mempool_enabled(self._wp_device)
        t = mjw.OverflowType  # bits that mean a buffer was too small, not the solver's iteration limits
        self._buffer_bits = int(t.ALL) & ~int(t.ITERATIONS) & ~int(t.LS_ITERATIONS)
        self._counts = torch.zeros(2, dtype=torch.long, device=self.device)  # diverged, overflowed world-steps
        self._overflow_reported = 0
        log.info("warp backend on %s: %d worlds, nconmax %d, njmax %d, %s", self._wp_device, num_envs, self.nconmax,
                 self.njmax, "CUDA graphs" if self.use_graphs else "plain kernel launches (no CUDA graph capture here)")

    # ------------------------------------------------------------------ launching
    @contextlib.contextmanager
    def _scope(self):
        """Warp's device and stream for the launches inside; on CUDA, after torch's queued work and before its next."""
        wp = self._wp
        with wp.ScopedDevice(self._wp_device):
            if self._stream is None:
                yield
                return
            torch_stream = wp.stream_from_torch(torch.cuda.current_stream(self.device))
            self._stream.wait_stream(torch_stream)
            with wp.ScopedStream(self._stream):
                yield
            torch_stream.wait_stream(self._stream)

    def _run(self, key: object, fn: Callable[[], None]) -> None:
        """Run fn's launches: as a CUDA graph captured on first use, or directly."""
        wp = self._wp
        with self._scope():
            if not self.use_graphs or key in self._uncapturable:
                fn()
                return
            graph = self._graphs.get(key)
            if graph is None:
                try:
                    with wp.ScopedCapture(device=self._wp_device, stream=self._stream) as capture:
                        fn()
                except Exception as err:  # noqa: BLE001 - any capture failure falls back to plain launches
                    log.warning("warp backend: %s cannot be captured as a CUDA graph (%s: %s); it runs as plain "
                                "kernel launches", key, type(err).__name__, err)
                    self._uncapturable.add(key)
                    fn()
                    return
                graph = self._graphs[key] = capture.graph
            wp.capture_launch(graph, stream=self._stream)

    # ------------------------------------------------------------------ interface
    def step(self, nstep: int) -> torch.Tensor:
        m, d, mjw = self.m, self.d, self._mjw

        def substeps() -> None:
            for _ in range(nstep):
                mjw.step(m, d)

        self._run(("step", nstep), substeps)
        return self._diverged()

    def _diverged(self) -> torch.Tensor:
        """Worlds to reset: non-finite or huge state, or a contact/constraint buffer overflow.

        Counted on the device; nothing here waits for the GPU (the counts are read once per iteration).
        """
        q, v = self.qpos, self.qvel
        blown = ~(torch.isfinite(q).all(1) & torch.isfinite(v).all(1)) | (q.abs() > MAX_STATE).any(1) | (v.abs() > MAX_STATE).any(1)
        overflow = (self._overflow & self._buffer_bits) != 0
        diverged = blown | overflow
        self._counts += torch.stack([diverged.sum(), overflow.sum()])
        return diverged

    @property
    def overflow_total(self) -> int:
        """World-steps that ended with a contact or constraint buffer overflow; a new one is logged as a warning."""
        total = int(self._counts[1])
        if total > self._overflow_reported:
            log.warning("warp backend: %d world-step(s) overflowed the contact/constraint buffers (nconmax %d, njmax %d; "
                        "raise sim.nconmax / sim.njmax); those worlds were reset", total - self._overflow_reported,
                        self.nconmax, self.njmax)
            self._overflow_reported = total
        return total

    def reset(self, env_ids: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor, ctrl: torch.Tensor) -> None:
        if len(env_ids) == 0:
            return
        m, d, mjw = self.m, self.d, self._mjw
        ids = env_ids.to(self.device)
        self._mask.zero_()
        self._mask[ids] = True
        self._run("reset", lambda: mjw.reset_data(m, d, reset=self._reset_mask))
        self.qpos[ids] = qpos.to(self.device, self.qpos.dtype)
        self.qvel[ids] = qvel.to(self.device, self.qvel.dtype)
        self.ctrl[ids] = ctrl.to(self.device, self.ctrl.dtype)
        # forward runs on every world; the others keep the outputs of their last step (as on the CPU backend)
        keep = ~self._mask.unsqueeze(1)
        sensors, forces = self.sensordata.clone(), self.actuator_force.clone()
        self._run("forward", lambda: mjw.forward(m, d))
        self.sensordata.copy_(torch.where(keep, sensors, self.sensordata))
        self.actuator_force.copy_(torch.where(keep, forces, self.actuator_force))

    def expand(self, field: str) -> torch.Tensor:
        for name in [field] + DERIVED_FROM.get(field, []):
            self._batch(name)
        return self._views[field]

    def _batch(self, name: str) -> None:
        """Give model field `name` one row per world (a copy of the shared row) and keep a torch view of it."""
        if name in self._views:
            return
        wp = self._wp
        shared = getattr(self.m, name, None)
        if not isinstance(shared, wp.array):
            raise ValueError(f"model field '{name}' cannot be randomised per env on the warp backend")
        if shared.shape[0] != self.num_envs:
            rows = shared.numpy().repeat(self.num_envs, axis=0)
            with self._scope():
                batched = wp.array(rows, dtype=shared.dtype, shape=(self.num_envs,) + tuple(shared.shape[1:]))
            batched._is_batched = True  # as mjw.put_model marks its batched fields
            setattr(self.m, name, batched)
            self._graphs.clear()  # captured graphs hold the old array
        self._views[name] = wp.to_torch(getattr(self.m, name))

    def commit_model_changes(self, env_ids: torch.Tensor | None = None) -> None:
        # set_const recomputes every world (it has no mask). Captured like a step: on an H200 its plain launches
        # (about a hundred small solves launched from Python) took ~49 ms of host time per reset with mass
        # changes, most of a reset (README "GPU figures": benchmarks/results/gpu/cprofile_go2_4096.txt)
        m, d, mjw = self.m, self.d, self._mjw
        self._run("set_const", lambda: mjw.set_const(m, d))

    @property
    def diverged_total(self) -> int:
        return int(self._counts[0])
