"""Run episodes of an exported policy on a MuJoCo model, the way the robot program runs it.

One control step (control_dt = substeps * sim_dt; sim_dt is the robot model's physics step,
policy.yaml's or the check's own --sim-dt), for every robot still standing:

    1. command   = the episode's schedule at time t
    2. obs       = observation.py's frame of the current state (+ history), gait phase as of now
    3. action    = policy(obs); a = clip(action, -clip_actions, clip_actions)
    4. target    = clamp(default_joint_pos + action_scale * a, joint_pos_limits)
    5. ctrl      = the target of `latency` control steps ago (the spawn pose before that); the joints
                   policy.yaml holds (held_joints, after the policy's) keep their target all episode
    6. gait phase advances by f * control_dt; `substeps` mj_steps run MuJoCo's PD on ctrl
    7. previous action for the next observation = a
    8. pushes: once in every push_interval s of episode time, at a random moment of it, the
       base's world-frame horizontal velocity changes by a kick drawn uniformly in +-push_vel
       per axis (a velocity impulse). Random moments, so that pushes land at every phase of the
       gait and of the command schedule, not always on a command change.
    9. fall check (deploy/falls.py: a termination body touching the ground, tilt, height, non-finite or
       reset state), then metrics (metrics.py)

Episodes spawn at the default joint pose, the base at spawn_height with zero velocity and
a random heading. On a terrain course (deploy/courses.py) the spawn point, heading and the
commands are the course's, the fall height is measured above the course's ground, and an
episode ends early, as a success, once the base crosses the goal line. Each episode's heading, random commands and pushes come from its own
generator seeded with (seed, episode index), so every variant of a suite sees the same
episodes. The B episodes of a run step in lockstep (one batched ONNX call per control step),
each on its own plain MjData.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import mujoco
import numpy as np

from deploy.commands import Schedule, random_schedule
from deploy.courses import Course
from deploy.falls import CAUSES, DEFAULT_CONTACT_FORCE, ContactFall, fall_body_ids, fall_causes, first_cause, safe_quat
from deploy.height_scan import HeightScanner
from deploy.metrics import Metrics
from deploy.observation import GaitClock, ObservationBuilder, RobotState, quat_rotate_inverse
from deploy.policy_io import OnnxPolicy, PolicySpec, joint_targets
from deploy.robot_model import RobotModel, default_pose_qpos


@dataclass(frozen=True)
class RunOptions:
    episodes: int
    duration: float  # s per episode
    seed: int
    spawn_height: float  # m, base z at spawn
    fall_tilt: float  # rad, base tilt from upright that counts as a fall
    fall_height: float  # m, base z below which the robot has fallen
    schedule: Schedule | None = None  # the same commands in every episode; None: random per episode
    resample_s: float = 5.0  # s, period of the random commands
    resample_jitter_s: float = 0.0  # s, each random command lasts resample_s +- up to this (uniform)
    push: bool = False
    push_vel: float = 1.0  # m/s, largest kick per horizontal axis
    push_interval: float = 15.0  # s between pushes
    latency: int = 0  # control steps by which actions are applied late
    settle_s: float = 1.0  # s after a command change or a push excluded from steady-state figures
    gait_frequency: float | None = None  # Hz; None: the middle of policy.yaml's gait.frequency_range
    sim_dt: float | None = None  # s, physics step of the check; None: policy.yaml's (workers build the robot with it)
    course: Course | None = None  # a terrain course (its model is built by the caller); None: flat floor
    course_speed: float = 0.5  # m/s, commanded forward speed on a course
    course_push: bool = False  # pushes on courses (only with --push; a suite's pushes are for its variants)
    scan_noise: float = 0.0  # m, uniform +- noise on every height-scan value (perceptive policies)
    scan_drift: float = 0.0  # m, the height map reads the ground this much higher than it is
    fall_bodies: tuple[str, ...] = ()  # bodies whose contact with the world is a fall; () = the base only
    fall_contact: bool = True  # bool, such a contact counts as a fall (deploy/falls.py)
    fall_contact_force: float = DEFAULT_CONTACT_FORCE  # N, normal force above which it counts

    @property
    def num_pushes(self) -> int:
        return int(math.floor(self.duration / self.push_interval + 1e-9)) if self.push else 0


@dataclass(frozen=True)
class EpisodePlan:
    heading: float  # rad, spawn yaw
    schedule: Schedule
    kicks: np.ndarray  # (num_pushes, 2) m/s, world-frame velocity change of each push
    push_steps: np.ndarray  # (num_pushes,) control step after which each push lands, one per interval
    start_xy: tuple[float, float] = (0.0, 0.0)  # m, spawn point (a course's; 0, 0 on the flat floor)


def plan_episodes(opts: RunOptions, policy: PolicySpec) -> list[EpisodePlan]:
    plans = []
    for i in range(opts.episodes):
        rng = np.random.default_rng([opts.seed, i])
        if opts.course is not None:
            x, y, heading = opts.course.spawn(rng)
            start = (x, y)
        else:
            start, heading = (0.0, 0.0), float(rng.uniform(-math.pi, math.pi))
        kicks = rng.uniform(-opts.push_vel, opts.push_vel, size=(opts.num_pushes, 2))
        if opts.course is not None:  # straight ahead; run_episodes steers the yaw rate
            schedule = Schedule(np.array([[opts.course_speed, 0.0, 0.0]]), np.array([np.inf]))
        else:  # drawn after the kicks, as before courses existed: the same seed gives the same episodes
            schedule = opts.schedule or random_schedule(rng, policy.command_ranges, policy.zero_threshold,
                                                        opts.duration, opts.resample_s, opts.resample_jitter_s)
        every = max(1, int(round(opts.push_interval / policy.control_dt)))
        push_steps = np.arange(opts.num_pushes) * every + rng.integers(0, every, size=opts.num_pushes)
        plans.append(EpisodePlan(heading, schedule, kicks, push_steps, start))
    return plans


Progress = Callable[[int], None]  # called with the number of control steps just simulated (all robots)
FrameSink = Callable[[mujoco.MjData], None]  # called after every control step of episode 0


def run_episodes(robot: RobotModel, model: mujoco.MjModel, spec: PolicySpec, policy: OnnxPolicy,
                 opts: RunOptions, plans: list[EpisodePlan], progress: Progress | None = None,
                 frame_sink: FrameSink | None = None, terrain: mujoco.MjSpec | None = None) -> Metrics:
    """Run one episode per plan on `model` (the robot's model or a variant of it); `terrain`: the spec `model`
    was compiled from where it has ground the robot's own spec lacks (a course), for a perceptive policy's scan."""
    num, nu, dt = len(plans), spec.num_actions, spec.control_dt
    sim_dt = robot.sim_dt  # s; variant models are compiled from the robot's spec and keep its step
    steps = int(math.ceil(opts.duration / dt - 1e-9))
    fq, fv = robot.free_qpos, robot.free_qvel
    lo, hi = spec.joint_pos_limits[:, 0], spec.joint_pos_limits[:, 1]

    course = opts.course
    datas = [mujoco.MjData(model) for _ in range(num)]
    spawn_pose = np.clip(spec.default_joint_pos, lo, hi)
    start_z = course.start_height if course is not None else 0.0
    for d, plan in zip(datas, plans):
        d.qpos[:] = default_pose_qpos(model, robot.qpos_idx, fq, spec, opts.spawn_height + start_z, plan.heading)
        d.qpos[fq:fq + 2] = plan.start_xy
        d.ctrl[:] = np.concatenate([spawn_pose, spec.held.target])  # held joints: their target for good
        mujoco.mj_forward(model, d)
    targets = np.tile(spawn_pose, (num, opts.latency + 1, 1))  # newest first
    last_action = np.zeros((num, nu))
    gait_f = opts.gait_frequency or (float(np.mean(spec.gait["frequency_range"])) if spec.gait else 0.0)
    gait = GaitClock(num, gait_f, dt)
    builder = ObservationBuilder(spec, num)
    scanner = height_scanner(robot, spec, terrain or robot.spec, opts)
    metrics = Metrics(num, dt, course=course is not None)
    contact = fall_contact(model, robot, opts)
    live = np.ones(num, dtype=bool)
    seg_start = np.zeros(num)  # s, start of each robot's current command segment
    last_push = np.full(num, -np.inf)  # s
    seg_index = np.full(num, -1)

    def state(cmd: np.ndarray) -> tuple[RobotState, np.ndarray, np.ndarray]:
        qpos = np.stack([d.qpos for d in datas])
        qvel = np.stack([d.qvel for d in datas])
        scan = None if scanner is None else scanner.values(qpos[:, fq:fq + 3], yaw_of(qpos[:, fq + 3:fq + 7]))
        s = RobotState(base_quat=qpos[:, fq + 3:fq + 7], base_ang_vel=qvel[:, fv + 3:fv + 6],
                       dof_pos=qpos[:, robot.qpos_idx], dof_vel=qvel[:, robot.qvel_idx], commands=cmd,
                       last_action=last_action, gait_clock=gait.observation() if spec.gait else np.zeros((num, 3)),
                       height_scan=scan)
        return s, qpos, qvel

    def commands_at(t: float) -> np.ndarray:
        idx = np.array([p.schedule.index(t) for p in plans])
        changed = idx != seg_index
        seg_start[changed] = t
        seg_index[:] = idx
        cmd = np.stack([p.schedule.commands[i] for p, i in zip(plans, idx)])
        if course is not None:  # steer along the course's axis, as the heading command trained it
            qpos = np.stack([d.qpos for d in datas])
            cmd = course.commands(qpos[:, fq:fq + 2], yaw_of(qpos[:, fq + 3:fq + 7]), opts.course_speed,
                                  tuple(spec.command_ranges[2]))
        return cmd

    cmd = commands_at(0.0)
    st, qpos, _ = state(cmd)
    builder.reset(np.arange(num), st)
    prev_xy = qpos[:, fq:fq + 2].copy()
    energy = np.zeros(num)
    for k in range(steps):
        t = k * dt
        if k:
            cmd = commands_at(t)
            st, qpos, _ = state(cmd)
        obs = builder.observe(st)
        action, target = joint_targets(spec, policy.act(obs))
        targets = np.concatenate([target[:, None], targets[:, :-1]], axis=1)
        applied = targets[:, opts.latency]
        gait.advance()
        energy[:] = 0.0
        reset = np.zeros(num, dtype=bool)
        for i in np.flatnonzero(live):
            d = datas[i]
            d.ctrl[:nu] = applied[i]
            expected = d.time + robot.substeps * sim_dt
            for _ in range(robot.substeps):
                mujoco.mj_step(model, d)
                # power of the step just taken: force and velocity both as of its start
                energy[i] += float(np.abs(d.actuator_force * d.actuator_velocity).sum()) * sim_dt
            reset[i] = d.time < expected - 0.5 * sim_dt  # MuJoCo reset a blown-up simulation (bad qacc)
        last_action = action
        t_after = (k + 1) * dt
        for i in np.flatnonzero(live):
            pushed = np.flatnonzero(plans[i].push_steps == k)
            if len(pushed):
                datas[i].qvel[fv:fv + 2] += plans[i].kicks[pushed[0]]
                last_push[i] = t_after
        qpos = np.stack([d.qpos for d in datas])
        qvel = np.stack([d.qvel for d in datas])
        xy = qpos[:, fq:fq + 2]
        ground = course.ground_height(np.nan_to_num(xy)) if course is not None else 0.0
        causes = fall_causes(qpos, qvel, fq, opts.fall_tilt, opts.fall_height + ground)
        causes["state"] |= reset
        causes["contact"] = contact.check(model, datas, live) if contact is not None else np.zeros(num, dtype=bool)
        fell = np.logical_or.reduce([causes[c] for c in CAUSES])
        metrics.note_fall_causes(live & fell, first_cause(causes))
        lin = base_linear_velocity(qpos, qvel, fq, fv)
        steady = (t_after - seg_start >= opts.settle_s - 1e-9) & (t_after - last_push >= opts.settle_s - 1e-9)
        live = metrics.record(live, fell, cmd, lin[:, :2], qvel[:, fv + 5], steady,
                              np.linalg.norm(xy - prev_xy, axis=1), t_after)
        metrics.add_energy(live, energy[live])
        if course is not None:  # past the goal line standing: a success, and the episode ends
            live = metrics.reach(live, xy[:, 0], course.goal_x, t_after)
        prev_xy = np.where(live[:, None], xy, prev_xy)
        if frame_sink is not None and live[0]:
            frame_sink(datas[0])
        if progress is not None:
            progress(num)
        if not live.any():
            if progress is not None:
                progress(num * (steps - k - 1))
            break
    return metrics


def fall_contact(model: mujoco.MjModel, robot: RobotModel, opts: RunOptions) -> ContactFall | None:
    """The contact part of the fall check on `model` (bodies by name: a course's model numbers its own)."""
    if not opts.fall_contact:
        return None
    base = mujoco.mj_id2name(robot.model, mujoco.mjtObj.mjOBJ_BODY, robot.base_body)
    ids, _ = fall_body_ids(model, opts.fall_bodies, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, base))
    return ContactFall(model, ids, opts.fall_contact_force)


def height_scanner(robot: RobotModel, spec: PolicySpec, terrain: mujoco.MjSpec,
                   opts: RunOptions) -> HeightScanner | None:
    """The map of `terrain` a perceptive policy reads its height scan from; None for a blind policy."""
    term = next((t for t in spec.terms if t.name == "height_scan"), None)
    if term is None:
        return None
    base = mujoco.mj_id2name(robot.model, mujoco.mjtObj.mjOBJ_BODY, robot.base_body)
    return HeightScanner(terrain, base, term.points, float(term.offset[0]), opts.scan_noise, opts.scan_drift,
                         seed=opts.seed)


def yaw_of(quat: np.ndarray) -> np.ndarray:
    """(B,) rad, the heading of quaternions (B, 4) as (w, x, y, z)."""
    q = safe_quat(quat)
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def base_linear_velocity(qpos: np.ndarray, qvel: np.ndarray, fq: int, fv: int) -> np.ndarray:
    """(B, 3) m/s, the base's linear velocity in the base frame (free joint at qpos address fq, qvel address fv)."""
    return quat_rotate_inverse(safe_quat(qpos[:, fq + 3:fq + 7]), np.nan_to_num(qvel[:, fv:fv + 3]))


class ProgressLine:
    """A progress line on stderr every `every` s: simulated robot-seconds, rate and ETA."""

    def __init__(self, total_steps: int, dt: float, label: str, stream, every: float = 5.0):
        self.total, self.dt, self.label, self.stream, self.every = total_steps, dt, label, stream, every
        self.done = 0
        self.start = self.last = time.perf_counter()

    def __call__(self, steps: int) -> None:
        self.done += steps
        now = time.perf_counter()
        if now - self.last >= self.every and self.done < self.total:
            self.last = now
            rate = self.done / (now - self.start)
            eta = (self.total - self.done) / max(rate, 1e-9)
            print(f"{self.label}: {100.0 * self.done / self.total:5.1f}%  {rate * self.dt:7.1f} robot-s/s  "
                  f"ETA {eta:5.0f} s", file=self.stream, flush=True)
