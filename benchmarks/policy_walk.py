"""Walk N robots of a compiled training model with an exported policy on `mujoco.batch.Batch`, timing the physics.

The robot-side pieces of `deploy` (observation, gait clock, action -> joint target, fall
check, tracking metrics) run the policy, so that it sees exactly what it sees in the
sim-to-sim check; the physics is one `Batch.step(nstep=substeps)` per policy step, as in
training, and only that call is timed. Several walkers (one per model) advance in
lockstep through `walk`, in a shuffled order each step, so that whatever else loads the
machine loads them all alike and their timings can be compared as ratios.

A robot that falls (or whose simulation MuJoCo resets) is counted once in the metrics and
restarted from the model's "home" keyframe outside the timed call, so that the physics
timed stays that of walking robots.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import mujoco.batch
import numpy as np

from deploy.commands import random_schedule
from deploy.episodes import base_linear_velocity
from deploy.falls import fallen
from deploy.metrics import Metrics
from deploy.observation import GaitClock, ObservationBuilder, RobotState
from deploy.policy_io import OnnxPolicy, PolicySpec, joint_targets
from env.sim.scene import actuated_joint_names


@dataclass(frozen=True)
class WalkPlan:
    """The commands every walker follows: the same for all models."""

    commands: np.ndarray  # (steps, N, 3) vx m/s, vy m/s, yaw rate rad/s
    steady: np.ndarray  # (steps, N) bool: at least settle_s after the last command change
    control_dt: float  # s


def plan_walk(spec: PolicySpec, num: int, seconds: float, seed: int, resample_s: float = 5.0,
              settle_s: float = 1.0) -> WalkPlan:
    """Random commands from the trained ranges, a new one every resample_s, per robot (seeded by (seed, robot))."""
    dt = spec.control_dt
    steps = max(1, int(round(seconds / dt)))
    t_after = (np.arange(steps) + 1) * dt
    commands = np.zeros((steps, num, 3))
    steady = np.zeros((steps, num), dtype=bool)
    for i in range(num):
        schedule = random_schedule(np.random.default_rng([seed, i]), spec.command_ranges, spec.zero_threshold,
                                   seconds, resample_s)
        idx = np.array([schedule.index(k * dt) for k in range(steps)])
        commands[:, i] = schedule.commands[idx]
        steady[:, i] = t_after - schedule.starts[idx] >= settle_s - 1e-9
    return WalkPlan(commands, steady, dt)


class Walker:
    """One model's batch of robots driven by the policy; `elapsed` sums the timed physics calls."""

    def __init__(self, model: mujoco.MjModel, spec: PolicySpec, policy: OnnxPolicy, plan: WalkPlan, substeps: int,
                 nthread: int, fall_tilt: float, fall_height: float, persistent: bool = False):
        num = plan.commands.shape[1]
        self.spec, self.policy, self.substeps = spec, policy, substeps
        self.sim_dt = float(model.opt.timestep)
        self.fall = (fall_tilt, fall_height)
        self.batch = mujoco.batch.Batch(model, num, nthread, persistent)
        self.key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
        b = self.batch
        self.qpos, self.qvel, self.ctrl, self.clock = b.bind("qpos"), b.bind("qvel"), b.bind("ctrl"), b.bind("time")
        self.niter, self.ncon, self.nefc = b.bind("solver_niter"), b.bind("ncon"), b.bind("nefc")
        names = actuated_joint_names(model)
        self.columns = np.array([names.index(n) for n in spec.joint_names])  # ctrl column of each policy joint
        jids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in spec.joint_names]
        self.qpos_idx, self.qvel_idx = model.jnt_qposadr[jids], model.jnt_dofadr[jids]
        free = next(j for j in range(model.njnt) if model.jnt_type[j] == int(mujoco.mjtJoint.mjJNT_FREE))
        self.fq, self.fv = int(model.jnt_qposadr[free]), int(model.jnt_dofadr[free])
        gait_f = float(np.mean(spec.gait["frequency_range"])) if spec.gait else 0.0
        self.gait = GaitClock(num, gait_f, spec.control_dt)
        self.builder = ObservationBuilder(spec, num)
        self.metrics = Metrics(num, spec.control_dt)
        self.live = np.ones(num, dtype=bool)
        self.last_action = np.zeros((num, spec.num_actions))
        self.elapsed = 0.0  # s in timed Batch.step calls
        self.timed_steps = 0
        self.persistent = persistent
        self._timers_at_first_timed_step: dict[str, tuple[float, int]] = {}  # the warm-up's, left out of timers()
        self.restarts = 0
        self.stats = {"solver_iterations": 0.0, "contacts": 0.0, "constraint_rows": 0.0}
        self._restart(np.arange(num), plan.commands[0])
        self.prev_xy = self.qpos[:, self.fq:self.fq + 2].copy()

    def _state(self, cmd: np.ndarray) -> RobotState:
        q, v = self.qpos, self.qvel
        return RobotState(base_quat=q[:, self.fq + 3:self.fq + 7].copy(),
                          base_ang_vel=v[:, self.fv + 3:self.fv + 6].copy(),
                          dof_pos=q[:, self.qpos_idx], dof_vel=v[:, self.qvel_idx], commands=cmd,
                          last_action=self.last_action,
                          gait_clock=self.gait.observation() if self.spec.gait else np.zeros((len(q), 3)))

    def _restart(self, rows: np.ndarray, cmd: np.ndarray) -> None:
        self.batch.reset(rows, keyframe=self.key)
        self.last_action[rows] = 0.0
        self.gait.reset(rows)
        self.builder.reset(rows, self._state(cmd))

    def step(self, k: int, plan: WalkPlan, timed: bool) -> None:
        """Policy step k: observe, act, run `substeps` physics steps (timed), then check and record."""
        cmd = plan.commands[k]
        action, target = joint_targets(self.spec, self.policy.act(self.builder.observe(self._state(cmd))))
        self.ctrl[:, self.columns] = target
        self.gait.advance()
        self.last_action = action
        expected = self.clock + self.substeps * self.sim_dt
        failed = np.zeros(0, dtype=np.int64)
        if timed and self.timed_steps == 0 and self.persistent:  # cold first calls would skew the stage shares
            self._timers_at_first_timed_step = self._summed_timers()
        start = time.perf_counter()
        try:
            self.batch.step(nstep=self.substeps)
        except mujoco.batch.SimulationError as err:  # MuJoCo raised in some sims; the rest ran
            failed = np.asarray(err.ids, dtype=np.int64)
        if timed:
            self.elapsed += time.perf_counter() - start
            self.timed_steps += 1
            for key, field in (("solver_iterations", self.niter[:, 0]), ("contacts", self.ncon),
                               ("constraint_rows", self.nefc)):
                self.stats[key] += float(np.mean(field))
        qpos, qvel = self.qpos.copy(), self.qvel.copy()
        reset = self.clock < expected - 0.5 * self.sim_dt  # MuJoCo reset a blown-up simulation
        reset[failed] = True
        fell = fallen(qpos, qvel, self.fq, *self.fall) | reset
        lin = base_linear_velocity(qpos, qvel, self.fq, self.fv)
        xy = qpos[:, self.fq:self.fq + 2]
        self.live = self.metrics.record(self.live, fell, cmd, lin[:, :2], qvel[:, self.fv + 5], plan.steady[k],
                                        np.linalg.norm(xy - self.prev_xy, axis=1), (k + 1) * plan.control_dt)
        if fell.any():
            self.restarts += int(fell.sum())
            self._restart(np.flatnonzero(fell), cmd)
        self.prev_xy = self.qpos[:, self.fq:self.fq + 2].copy()

    def summary(self) -> dict:
        n = max(self.timed_steps, 1)
        s = self.metrics.summary()
        return {"elapsed_s": self.elapsed, "timed_policy_steps": self.timed_steps,
                "physics_steps_per_s": self.batch.nsim * self.substeps * self.timed_steps / max(self.elapsed, 1e-12),
                **{k: v / n for k, v in self.stats.items()}, "restarts": self.restarts,
                **{k: s[k] for k in ("falls", "fall_rate", "lin_vel_rmse_steady", "yaw_rate_rmse_steady",
                                     "distance_m")}}

    def timers(self) -> dict[str, tuple[float, int]]:
        """MuJoCo's stage timers over the timed steps, summed over the simulations: name -> (s, calls);
        needs persistent=True."""
        before = self._timers_at_first_timed_step
        return {name: (s - before.get(name, (0.0, 0))[0], n - before.get(name, (0.0, 0))[1])
                for name, (s, n) in self._summed_timers().items()}

    def _summed_timers(self) -> dict[str, tuple[float, int]]:
        total: dict[str, list] = {}
        data = None
        for i in range(self.batch.nsim):
            data = self.batch.get_data(i, data)
            for t, name in enumerate(mujoco.mjTIMERSTRING):
                entry = total.setdefault(name, [0.0, 0])
                entry[0] += float(data.timer[t].duration)
                entry[1] += int(data.timer[t].number)
        return {name: (s, n) for name, (s, n) in total.items()}


def walk(walkers: list[Walker], plan: WalkPlan, seed: int = 0, warmup: int = 2) -> None:
    """Advance every walker through the plan in lockstep, in a shuffled order each step; the first `warmup`
    policy steps are not timed."""
    rng = np.random.default_rng(seed)
    for k in range(len(plan.commands)):
        for i in rng.permutation(len(walkers)):
            walkers[i].step(k, plan, timed=k >= warmup)
