"""LeggedRobotEnv: the batched robot, independent of what it is asked to do.

It owns the physics backend and turns it into robot state (base pose and
velocities in the base frame, projected gravity, joint state, foot contacts and
air time), maps actions to joint targets, keeps episode time, resets robots with
randomised initial states and per-env physics parameters, and pushes them.
Everything is a batched tensor op over all envs; tasks (env/tasks/) build
observations, rewards and terminations on top of it.
"""

from __future__ import annotations

import math

import mujoco
import torch

from env.domain_rand import DomainRandomizer
from env.sim import load_backend
from env.sim.scene import (actuated_joint_names, force_sensor, load_mj_model, policy_joint_names, position_sensor,
                           touch_sensor, velocity_sensor)
from env.terrain import Ground, build_ground
from env.utils.math import quat_mul, quat_rotate_inverse, sample_uniform
from utils.yaml import Cfg


class LeggedRobotEnv:
    def __init__(self, cfg: Cfg, device: str | torch.device = "cpu"):
        self.cfg = cfg
        self.device = torch.device(device)
        self.num_envs = int(cfg.env.num_envs)
        self.ground: Ground = build_ground(cfg.terrain, self.num_envs, self.device)
        self.model = load_mj_model(cfg, self.ground.grid)
        sim = cfg.sim
        self.sim = load_backend(sim.backend, self.model, self.num_envs, sim.nthread, self.device,
                                nconmax=sim.nconmax, njmax=sim.njmax)
        self.decimation = int(cfg.control.decimation)
        self.dt = cfg.sim.dt * self.decimation  # s, one policy step
        self.max_episode_length = int(math.ceil(cfg.env.episode_length_s / self.dt))

        self._init_joints()
        self._init_sensors()
        self._init_buffers()
        self._init_domain_randomisation()
        self._init_reset()
        self.ground.fit_robot(self.model, cfg.init_state)
        self.reset_idx(torch.arange(self.num_envs, device=self.device))

    # ---------------------------------------------------------------- set-up
    def _init_joints(self) -> None:
        m, cfg = self.model, self.cfg
        # The scene puts the held joints' actuators last: the env's joints ("dofs") are the policy's, the first
        # num_dof actuators; the held ones only get their PD target (their default angle) at every reset.
        self.dof_names = policy_joint_names(m, cfg.control)
        self.num_dof = len(self.dof_names)
        self.held_joint_names = actuated_joint_names(m)[self.num_dof:]
        angles = cfg.init_state.default_joint_angles
        self.default_dof_pos = torch.tensor([angles[n] for n in self.dof_names], device=self.device).unsqueeze(0)
        self.held_targets = torch.tensor([[angles[n] for n in self.held_joint_names]], device=self.device)
        jnt_ids = [int(m.actuator_trnid[i, 0]) for i in range(m.nu)]
        self.qpos_idx = torch.tensor([int(m.jnt_qposadr[j]) for j in jnt_ids[:self.num_dof]], device=self.device)
        self.qvel_idx = torch.tensor([int(m.jnt_dofadr[j]) for j in jnt_ids[:self.num_dof]], device=self.device)
        self.held_qpos_idx = torch.tensor([int(m.jnt_qposadr[j]) for j in jnt_ids[self.num_dof:]],
                                          dtype=torch.long, device=self.device)
        self.dof_pos_limits = torch.tensor(m.jnt_range[jnt_ids[:self.num_dof]], dtype=torch.float32, device=self.device)
        self.torque_limits = torch.tensor(m.actuator_forcerange[:self.num_dof, 1], dtype=torch.float32,
                                          device=self.device)
        self.base_body_id = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, cfg.asset.base_body)  # checked by the scene

    def _init_sensors(self) -> None:
        """Columns of `sensordata` holding the touch (and foot velocity) sensors the scene put on the named bodies."""
        def columns(bodies: list[str], width: int = 1, sensor=touch_sensor) -> torch.Tensor:
            starts = [self.sim.sensor_slice(sensor(b)).start for b in bodies]
            return torch.tensor([s + k for s in starts for k in range(width)], dtype=torch.long, device=self.device)

        asset = self.cfg.asset
        self.foot_cols = columns(asset.foot_bodies)
        self.foot_vel_cols = columns(asset.foot_bodies, 3, velocity_sensor)
        self.foot_pos_cols = columns(asset.foot_bodies, 3, position_sensor)
        self.foot_force_cols = columns(asset.foot_bodies, 3, force_sensor)
        self.termination_cols = columns(asset.termination_bodies)
        self.penalized_cols = columns(asset.penalized_bodies)
        self.num_feet = len(self.foot_cols)

    def _init_buffers(self) -> None:
        n, d, dev = self.num_envs, self.num_dof, self.device
        zeros = lambda *shape: torch.zeros(*shape, device=dev)  # noqa: E731
        self.gravity_vec = torch.tensor([[0.0, 0.0, -1.0]], device=dev).repeat(n, 1)
        self.actions = zeros(n, d)
        self.last_actions = zeros(n, d)
        self.joint_targets = zeros(n, d)
        self.last_dof_vel = zeros(n, d)
        self.feet_air_time = zeros(n, self.num_feet)
        self.last_contacts = torch.zeros(n, self.num_feet, dtype=torch.bool, device=dev)
        self.feet_first_contact = torch.zeros(n, self.num_feet, dtype=torch.bool, device=dev)
        self.feet_air_time_at_contact = zeros(n, self.num_feet)
        self.episode_length_buf = torch.zeros(n, dtype=torch.long, device=dev)
        # envs whose episode began at a random point of its clock (spread_episode_starts): cut short, so the
        # terrain curriculum does not judge it (a robot that had one second to walk is no evidence of its level)
        self.clock_spread = torch.zeros(n, dtype=torch.bool, device=dev)
        self.time_outs = torch.zeros(n, dtype=torch.bool, device=dev)
        self.spawn_xy = zeros(n, 2)  # m, world xy where each env's episode started (terrain curriculum)
        self.push_interval = max(1, int(round(self.cfg.domain_rand.push_interval_s / self.dt)))
        # steps added to the episode clock for pushes: 0, or per episode a random phase of the interval
        self.push_phase = torch.zeros(n, dtype=torch.long, device=dev)

    def _init_domain_randomisation(self) -> None:
        self.domain_rand = DomainRandomizer(self.cfg, self.sim, self.model, self.base_body_id, self.device)
        # Joint targets of the last max_action_latency+1 steps, newest first; env i applies entry latency_i.
        depth = int(self.cfg.domain_rand.max_action_latency) + 1
        self.target_history = self.default_dof_pos.repeat(self.num_envs, depth, 1)

    # ------------------------------------------------------------- stepping
    def physics_step(self, actions: torch.Tensor) -> torch.Tensor:
        """Apply actions as joint targets, run `decimation` physics steps, refresh state.

        Returns the (N,) bool mask of envs whose simulation diverged; they must be reset.
        """
        clip = self.cfg.control.clip_actions
        self.last_actions.copy_(self.actions)
        self.last_dof_vel.copy_(self.dof_vel)
        self.actions.copy_(torch.clamp(actions.to(self.device), -clip, clip))
        targets = self.default_dof_pos + self.cfg.control.action_scale * self.actions
        self.joint_targets = torch.clamp(targets, self.dof_pos_limits[:, 0], self.dof_pos_limits[:, 1])
        self.sim.ctrl[:, :self.num_dof] = self._delayed(self.joint_targets)
        diverged = self.sim.step(self.decimation).to(self.device)
        self.episode_length_buf += 1
        self.refresh_state()
        self._update_feet_air_time()
        if self.cfg.domain_rand.push_robots:
            clock = self.episode_length_buf + self.push_phase
            self.push_robots(clock % self.push_interval == 0)
        self.time_outs = self.episode_length_buf >= self.max_episode_length
        return diverged

    def _delayed(self, targets: torch.Tensor) -> torch.Tensor:
        """The targets each env applies now: its own, latency_steps policy steps old."""
        if self.target_history.shape[1] == 1:
            return targets
        self.target_history = torch.cat([targets.unsqueeze(1), self.target_history[:, :-1]], dim=1)
        latency = self.domain_rand.params["latency_steps"][:, 0].long()
        return self.target_history[torch.arange(self.num_envs, device=self.device), latency]

    def refresh_state(self) -> None:
        """Read the backend's live state into float32 tensors on the env's device.

        Copies, never views: the backend writes its state in place on the next step.
        """
        qpos = self.sim.qpos.to(self.device, torch.float32, copy=True)
        qvel = self.sim.qvel.to(self.device, torch.float32, copy=True)
        self.base_pos = qpos[:, 0:3]
        self.base_quat = qpos[:, 3:7]
        self.base_lin_vel = quat_rotate_inverse(self.base_quat, qvel[:, 0:3])
        self.base_ang_vel = qvel[:, 3:6]
        self.projected_gravity = quat_rotate_inverse(self.base_quat, self.gravity_vec)
        self.dof_pos = qpos[:, self.qpos_idx]
        self.dof_vel = qvel[:, self.qvel_idx]
        sensors = self.sim.sensordata.to(self.device, torch.float32, copy=True)
        self.foot_forces = sensors[:, self.foot_cols]
        self.foot_vel = sensors[:, self.foot_vel_cols].view(self.num_envs, -1, 3)  # world frame, m/s
        self.foot_pos = sensors[:, self.foot_pos_cols].view(self.num_envs, -1, 3)  # world frame, m (contact site centre)
        self.foot_contact_force = sensors[:, self.foot_force_cols].view(self.num_envs, -1, 3)  # world frame, N (net contact)
        self.termination_forces = sensors[:, self.termination_cols]
        self.penalized_forces = sensors[:, self.penalized_cols]
        self.torques = self.sim.actuator_force[:, :self.num_dof].to(self.device, torch.float32, copy=True)
        self.foot_contact = self.foot_forces > self.cfg.asset.contact_threshold
        self.base_height = self.base_pos[:, 2] - self.ground.height_under(self.base_pos[:, :2])  # above the ground it stands on

    def foot_clearance(self) -> torch.Tensor:
        """(N, feet) m, height of each foot site's centre above the ground under it (feet_clearance, play.py --eval)."""
        return self.foot_pos[..., 2] - self.ground.height_at(self.foot_pos[..., :2])

    def measure_heights(self) -> torch.Tensor:
        """(N, P) m, base height above each point of the height scan (terrain.measure_heights).

        On demand, not in `refresh_state`: resets refresh the state too, and the scan is
        the env's biggest lookup, needed once per step by the observations.
        """
        return self.base_pos[:, 2:3] - self.ground.scan_heights(self.base_pos, self.base_quat)

    def _update_feet_air_time(self) -> None:
        contact = self.foot_contact
        contact_filt = contact | self.last_contacts  # one-step filter against contact flicker
        self.last_contacts = contact
        self.feet_first_contact = (self.feet_air_time > 0) & contact_filt
        self.feet_air_time += self.dt
        self.feet_air_time_at_contact = self.feet_air_time * self.feet_first_contact
        self.feet_air_time *= ~contact_filt

    def push_robots(self, due: torch.Tensor) -> None:
        """Kick the bases where the (N,) mask `due` is set: a velocity impulse, a random horizontal change of
        velocity (world frame). Drawn for every env and masked: no host synchronisation.

        Each env is pushed on its own episode clock (every push_interval_s into the
        episode, shifted by a random phase per episode with domain_rand.push_random_phase,
        so that pushes also land right after command changes), not on a global one: with episode starts spread out, every rollout
        holds a few recoveries instead of one rollout in ~30 holding all of them.
        legged_gym instead *sets* the velocity, so a robot walking at -1 m/s can be
        thrown to +1 m/s; an impulse is what a shove does, whatever the gait.
        """
        vmax = self.cfg.domain_rand.max_push_vel_xy
        kick = sample_uniform(-vmax, vmax, (self.num_envs, 2), self.device) * due.unsqueeze(1)
        self.sim.qvel[:, 0:2] += kick.to(self.sim.qvel.device, self.sim.qvel.dtype)

    def spread_episode_starts(self) -> None:
        """Set every env's episode clock to a random point of its episode.

        Used once at the start of training (rsl_rl's init_at_random_ep_len): otherwise all
        envs time out, resample commands and get pushed in the same step, all run long.
        """
        self.episode_length_buf.random_(0, int(self.max_episode_length))  # in place, like every other writer
        self.clock_spread.fill_(True)

    # ---------------------------------------------------------------- resets
    def _init_reset(self) -> None:
        """What every reset draws from, as tensors built once: the spawn pose and the bounds of its noise."""
        init, d, dev = self.cfg.init_state, self.num_dof, self.device
        self._spawn_pos = torch.tensor(init.pos, dtype=torch.float32, device=dev)
        # a spawn heading h turns init_state.rot about z: cos(h/2) rot + sin(h/2) (z (x) rot)
        rot = torch.tensor([init.rot], dtype=torch.float32, device=dev)
        self._spawn_rot = torch.cat([rot, quat_mul(torch.tensor([[0.0, 0.0, 0.0, 1.0]], device=dev), rot)])
        # one uniform draw per reset env: yaw, joint positions, base linear and angular velocity, joint velocities
        centre = torch.cat([torch.zeros(1, device=dev), self.default_dof_pos[0], torch.tensor(init.lin_vel, device=dev),
                            torch.tensor(init.ang_vel, device=dev), torch.zeros(d, device=dev)])
        noise = torch.tensor([init.yaw_noise] + [init.joint_pos_noise] * d + [init.base_vel_noise] * 6
                             + [init.joint_vel_noise] * d, dtype=torch.float32, device=dev)
        self._reset_low, self._reset_span = centre - noise, 2 * noise

    def reset_idx(self, env_ids: torch.Tensor) -> None:
        """Start new episodes for env_ids: randomised pose and velocity, re-drawn physics parameters.

        Batched end to end: one draw for all the envs' physics parameters and one for their initial
        states, each model field and the state rows written once, one backend call to commit masses
        and one forward pass.
        """
        if len(env_ids) == 0:
            return
        n, d, dev = len(env_ids), self.num_dof, self.device
        self.domain_rand.randomize(env_ids)

        draw = self._reset_low + self._reset_span * torch.rand(n, len(self._reset_span), device=dev)
        yaw, joint_pos, lin_vel, ang_vel, joint_vel = draw.split([1, d, 3, 3, d], dim=1)
        joint_pos = torch.clamp(joint_pos, self.dof_pos_limits[:, 0], self.dof_pos_limits[:, 1])
        qpos = torch.zeros(n, self.model.nq, device=dev)
        qvel = torch.zeros(n, self.model.nv, device=dev)
        qpos[:, 0:3] = self.ground.spawn_points(env_ids, self._spawn_pos)
        half = 0.5 * yaw
        qpos[:, 3:7] = torch.cos(half) * self._spawn_rot[0] + torch.sin(half) * self._spawn_rot[1]
        qpos[:, self.qpos_idx] = joint_pos
        qvel[:, 0:3] = lin_vel
        qvel[:, 3:6] = ang_vel
        qvel[:, self.qvel_idx] = joint_vel
        held = self.held_targets.expand(n, -1)
        qpos[:, self.held_qpos_idx] = held
        self.sim.reset(env_ids, qpos, qvel, torch.cat([joint_pos, held], dim=1))
        self.spawn_xy[env_ids] = qpos[:, 0:2]

        self.target_history[env_ids] = joint_pos.unsqueeze(1)
        for buf in (self.actions, self.last_actions, self.last_dof_vel, self.feet_air_time):
            buf[env_ids] = 0.0
        self.last_contacts[env_ids] = False
        self.episode_length_buf[env_ids] = 0
        self.clock_spread[env_ids] = False
        self.time_outs[env_ids] = False
        if getattr(self.cfg.domain_rand, "push_random_phase", False):  # pushes at any moment, not on a fixed clock
            self.push_phase[env_ids] = torch.randint(0, self.push_interval, (n,), device=dev)
        self.refresh_state()
