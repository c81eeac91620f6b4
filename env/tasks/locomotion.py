"""Velocity-tracking locomotion: follow commanded (vx, vy, yaw rate), on flat ground or rough terrain."""

from __future__ import annotations

import math

import torch

from env.legged_robot import LeggedRobotEnv
from env.sim.robot_file import by_substring, check_keys_match
from env.tasks import register_task
from env.tasks.base import Task
from env.tasks.curriculum import CommandCurriculum
from env.tasks.gait import GaitSchedule
from env.tasks.observation_mirror import task_mirror_maps
from env.tasks.rewards import REWARDS
from env.utils.math import rotate_by_yaw, sample_uniform, wrap_to_pi, yaw_from_quat
from env.utils.mirror import MirrorMaps
from utils.yaml import Cfg

# Policy observation frame, in order: name -> size given the number of joints.
# play/export read this layout to describe the observation to a robot program.
def policy_obs_layout(num_dof: int, gait_phase: bool = False, scan_points: int = 0) -> list[tuple[str, int]]:
    layout = [("base_ang_vel", 3), ("projected_gravity", 3), ("commands", 3),
              ("dof_pos", num_dof), ("dof_vel", num_dof), ("actions", num_dof)]
    if gait_phase:
        layout.append(("gait_clock", GaitSchedule.obs_size))
    if scan_points:
        layout.append(("height_scan", scan_points))
    return layout


# Critic observation, in order: the policy's newest frame (without noise), then privileged state.
def critic_obs_layout(frame: list[tuple[str, int]], num_feet: int, num_privileged: int,
                      scan_points: int = 0) -> list[tuple[str, int]]:
    layout = frame + [("base_lin_vel", 3), ("base_height", 1), ("foot_forces", num_feet), ("privileged", num_privileged)]
    if scan_points:
        layout.append(("height_scan", scan_points))
    return layout


def joint_weights(names: list[str], table: dict[str, float], device: torch.device) -> torch.Tensor:
    """(num_dof,) weights from a {joint-name substring: weight} table (longest key wins; 0 for the rest)."""
    check_keys_match("rewards.joint_deviation_weights (on the policy's joints)", table, names)
    weights = by_substring(names, table)
    return torch.tensor([weights.get(n, 0.0) for n in names], device=device)


@register_task("locomotion")
class LocomotionTask(Task):
    def __init__(self, env: LeggedRobotEnv, cfg: Cfg):
        n, dev = env.num_envs, env.device
        c = cfg.commands
        self.gait = GaitSchedule(n, env.num_feet, c.gait_frequency, c.gait_stance_ratio, env.dt, dev) if c.gait_phase else None
        super().__init__(env, cfg)
        self.curriculum = CommandCurriculum(c, n, dev)
        self.commands = torch.zeros(n, 3, device=dev)
        self.heading = torch.zeros(n, device=dev)  # rad, world-frame heading command (commands.heading_command)
        self.steering = torch.full((n,), bool(cfg.commands.heading_command), device=dev)  # envs steering to it
        self.held_commands: torch.Tensor | None = None  # set by hold_commands: play, evaluation, keyboard
        self.resample_steps = max(1, int(round(cfg.commands.resampling_time / env.dt)))
        self.history_length = int(cfg.env.history_length)
        scan = env.ground.num_scan_points
        if cfg.terrain.policy_height_scan and not scan:
            raise ValueError("terrain.policy_height_scan needs terrain.measure_heights = true (the scan it observes)")
        self.policy_scan = bool(cfg.terrain.policy_height_scan)
        self.obs_layout = policy_obs_layout(env.num_dof, self.gait is not None, scan if self.policy_scan else 0)
        self.frame_size = sum(size for _, size in self.obs_layout)
        self.num_obs = self.frame_size * self.history_length
        self.critic_scan = 0 if self.policy_scan else scan  # a perceptive policy's frame, which the critic sees, has it
        self.critic_obs_layout = critic_obs_layout(self.obs_layout, env.num_feet, env.domain_rand.num_privileged,
                                                   self.critic_scan)
        self.num_critic_obs = sum(size for _, size in self.critic_obs_layout)
        self.commanded_offset = torch.zeros(n, 2, device=dev)  # m, world xy the commands asked for (terrain curriculum)
        self.obs_history = torch.zeros(n, self.history_length, self.frame_size, device=dev)
        scales = cfg.normalization.obs_scales
        self.command_scale = torch.tensor([scales.lin_vel, scales.lin_vel, scales.ang_vel], device=dev)
        self.noise_vec = self._noise_vector()
        self.scan_drift_vec = self._scan_drift_vector()
        self.drifting = bool(self.scan_drift_vec.any())
        self.scan_drift = torch.zeros(n, 1, device=dev)  # per episode, in units of noise_scales.height_drift
        self.robot_weight = float(env.model.body_mass.sum()) * 9.81  # N, to scale contact forces
        self.joint_deviation_weights = joint_weights(env.dof_names, dict(cfg.rewards.joint_deviation_weights), dev)

    def available_rewards(self):
        return REWARDS

    def mirror_maps(self) -> MirrorMaps:
        """The left-right mirror of the observations and actions (algorithm.symmetry); ValueError naming a term
        or joint that cannot be mirrored."""
        return task_mirror_maps(self)

    # ---------------------------------------------------------------- commands
    def hold_commands(self, commands: torch.Tensor | None) -> None:
        """Drive the task with commands from outside, (3,) for all envs or (N, 3); None resumes sampling.

        Held commands replace the random ones at every resample (timer or reset),
        so scripted schedules and evaluations see exactly what they asked for.
        """
        if commands is None:
            self.held_commands = None
            return
        self.held_commands = commands.to(self.device, self.commands.dtype).expand(self.num_envs, 3).clone()
        self.commands[:] = self.held_commands
        if self.gait is not None:
            self.gait.moving[:] = torch.norm(self.commands, dim=1) > 0

    def resample_commands(self, envs: torch.Tensor) -> None:
        """New commands for `envs`: ids, or an (N,) bool mask.

        Drawn for every env and kept where due (torch.where), so that the per-step
        resample never asks the device which envs are due (no host synchronisation).
        """
        due = envs
        if envs.dtype != torch.bool:
            due = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device).index_fill_(0, envs.to(self.device), True)
        if self.held_commands is not None:
            new = self.held_commands
        else:
            c, n, scaled = self.cfg.commands, self.num_envs, self.curriculum.scaled
            new = torch.stack([sample_uniform(*scaled(c.lin_vel_x), (n,), self.device),
                               sample_uniform(*scaled(c.lin_vel_y), (n,), self.device),
                               sample_uniform(*scaled(c.ang_vel_yaw), (n,), self.device)], dim=1)
            # Small commands become exact zeros so that standing still is practised.
            new[:, :2] *= torch.norm(new[:, :2], dim=1, keepdim=True) >= c.zero_threshold
            new[:, 2] *= torch.abs(new[:, 2]) >= c.zero_threshold
        self.commands.copy_(torch.where(due.unsqueeze(1), new, self.commands))
        if self.cfg.commands.heading_command and self.held_commands is None:
            heading = sample_uniform(*self.cfg.commands.heading, (self.num_envs,), self.device)
            self.heading.copy_(torch.where(due, heading, self.heading))
            steer = torch.rand(self.num_envs, device=self.device) < self.cfg.commands.heading_fraction
            self.steering.copy_(torch.where(due, steer, self.steering))
            self._steer_to_heading()
        if self.gait is not None:
            self.gait.resample(due, torch.norm(self.commands, dim=1) > 0)

    def _steer_to_heading(self) -> None:
        """Yaw-rate command from the heading error (legged_gym's heading command): robots walk straight lines,
        which is what the terrain curriculum's distance test measures."""
        c = self.cfg.commands
        error = wrap_to_pi(self.heading - yaw_from_quat(self.env.base_quat))
        steered = torch.clamp(c.heading_gain * error, c.ang_vel_yaw[0], c.ang_vel_yaw[1])
        self.commands[:, 2] = torch.where(self.steering, steered, self.commands[:, 2])

    def pre_physics_step(self) -> None:
        due = (self.env.episode_length_buf % self.resample_steps == 0) & (self.env.episode_length_buf > 0)
        self.resample_commands(due)
        if self.cfg.commands.heading_command and self.held_commands is None:
            self._steer_to_heading()
        if self.gait is not None:
            self.gait.advance()
        self._add_commanded_offset()

    def _add_commanded_offset(self) -> None:
        """Add this step's commanded velocity, turned into the world frame by the robot's own yaw: the sum is
        where a perfect tracker would stand now, relative to its spawn point. The terrain curriculum compares
        the episode's displacement with it; a path length (the sum of |command|) would demote a perfect tracker
        whose commands point apart, and a yaw-rate command's arc is accounted for."""
        self.commanded_offset += rotate_by_yaw(self.commands[:, :2], yaw_from_quat(self.env.base_quat)) * self.env.dt

    def reset_idx(self, env_ids: torch.Tensor) -> None:
        if self.gait is not None:
            self.gait.reset(env_ids)
        self.commanded_offset[env_ids] = 0.0
        self.scan_drift[env_ids] = 2 * torch.rand(len(env_ids), 1, device=self.device) - 1
        self.resample_commands(env_ids)
        frame = self._policy_frame()[env_ids]
        self.obs_history[env_ids] = frame.unsqueeze(1)  # a new episode's history is its first frame repeated

    # ------------------------------------------------------------ observations
    def _policy_frame(self) -> torch.Tensor:
        env, s = self.env, self.cfg.normalization.obs_scales
        parts = [
            env.base_ang_vel * s.ang_vel,
            env.projected_gravity,
            self.commands * self.command_scale,
            (env.dof_pos - env.default_dof_pos) * s.dof_pos,
            env.dof_vel * s.dof_vel,
            env.actions,
        ]
        if self.gait is not None:
            parts.append(self.gait.observation())
        if self.policy_scan:
            parts.append(self._scan_obs())
        return torch.cat(parts, dim=1)

    scan_clip = 1.0  # m, the height scan's values (less the standing height) are clipped to +-this

    def _scan_obs(self) -> torch.Tensor:
        """Base height above each scan point, less the nominal standing height, clipped to +-scan_clip and scaled."""
        target = self.cfg.rewards.base_height_target
        return (self.env.measure_heights() - target).clamp(-self.scan_clip, self.scan_clip) \
            * self.cfg.normalization.obs_scales.height_measurements

    def _noise_vector(self) -> torch.Tensor:
        noise, s = self.cfg.noise, self.cfg.normalization.obs_scales
        ns = noise.noise_scales
        per_term = {"base_ang_vel": ns.ang_vel * s.ang_vel, "projected_gravity": ns.gravity, "commands": 0.0,
                    "dof_pos": ns.dof_pos * s.dof_pos, "dof_vel": ns.dof_vel * s.dof_vel, "actions": 0.0,
                    "gait_clock": 0.0, "height_scan": ns.height_measurements * s.height_measurements}
        return self._noise_frame(per_term)

    def _scan_drift_vector(self) -> torch.Tensor:
        """(frame_size,) what a map reading the ground noise_scales.height_drift higher adds to the policy frame:
        every scan value (base height above the point) lower by that much; zero off the scan. Each episode scales it
        by its own draw in [-1, 1], so the map's error is the same all episode, as an elevation map's drift against
        the base's height estimate is (robust perceptive policies train with such offsets: Miki et al., 2022)."""
        drift = -self.cfg.noise.noise_scales.height_drift * self.cfg.normalization.obs_scales.height_measurements
        return self._noise_frame({name: drift if name == "height_scan" else 0.0 for name, _ in self.obs_layout})

    def _noise_frame(self, per_term: dict[str, float]) -> torch.Tensor:
        """(frame_size,) per_term[name] on each term's entries, times noise.noise_level; zeros with noise off."""
        noise = self.cfg.noise
        vec = torch.cat([torch.full((size,), per_term[name]) for name, size in self.obs_layout])
        return (vec * noise.noise_level if noise.add_noise else torch.zeros_like(vec)).to(self.device)

    def compute_observations(self) -> tuple[torch.Tensor, torch.Tensor]:
        env, s = self.env, self.cfg.normalization.obs_scales
        clip = self.cfg.normalization.clip_observations
        frame = self._policy_frame()
        noisy = frame + (2 * torch.rand_like(frame) - 1) * self.noise_vec
        if self.drifting:  # only where a drift is configured: no extra work per step for every other config
            noisy = noisy + self.scan_drift * self.scan_drift_vec
        self.obs_history = torch.cat([self.obs_history[:, 1:], noisy.unsqueeze(1)], dim=1)
        obs = self.obs_history.flatten(1)
        critic_obs = torch.cat([  # in critic_obs_layout's order
            frame,
            env.base_lin_vel * s.lin_vel,
            env.base_height.unsqueeze(1) * s.height,
            env.foot_forces / self.robot_weight,
            env.domain_rand.privileged_obs(),
        ] + ([self._scan_obs()] if self.critic_scan else []), dim=1)
        return torch.clamp(obs, -clip, clip), torch.clamp(critic_obs, -clip, clip)

    # ------------------------------------------------------------ terminations
    def check_termination(self) -> torch.Tensor:
        """A termination body touching something, the base tilted past asset.terminate_tilt, or lower than
        asset.terminate_height; each condition's (N,) mask is kept in `termination_causes` (play.py --eval)."""
        env, a = self.env, self.cfg.asset
        contact = torch.any(env.termination_forces > a.contact_threshold, dim=1)
        tilted = env.projected_gravity[:, 2] > -math.cos(a.terminate_tilt)
        low = env.base_height < a.terminate_height
        self.termination_causes = {"contact": contact, "tilt": tilted, "height": low}
        return contact | tilted | low

    def task_reward(self) -> torch.Tensor:
        """Mean of the linear and yaw-rate tracking kernels: 1 per step at perfect tracking."""
        lin = REWARDS["tracking_lin_vel"](self)
        self.curriculum.accumulate(lin)
        return 0.5 * (lin + REWARDS["tracking_ang_vel"](self))

    def _finish_episodes(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        out = super()._finish_episodes(env_ids)
        self.curriculum.finish_episodes(env_ids)
        out["curriculum_level"] = torch.tensor(self.curriculum.level)
        judged = env_ids[~self.env.clock_spread[env_ids]]  # not the first, cut-short episode after a (re)start
        walked = torch.norm(self.env.base_pos[judged, :2] - self.env.spawn_xy[judged], dim=1)
        commanded = torch.norm(self.commanded_offset[judged], dim=1)
        fell = self.terminated[judged]  # not a timeout
        self.env.ground.finish_episodes(judged, walked, commanded, fell)  # terrain curriculum
        level = self.env.ground.mean_level()
        if level is not None:
            out["terrain_level"] = level
        return out
