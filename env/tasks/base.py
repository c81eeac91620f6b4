"""A task turns robot state into observations, rewards, terminations and commands.

Subclasses fill in `compute_observations`, `check_termination` and the reward
terms; the episode loop (step, sum rewards, reset finished envs) lives here.
"""

from __future__ import annotations

from typing import Callable

import torch

from env.legged_robot import LeggedRobotEnv
from env.utils.mirror import MirrorMaps
from utils.yaml import Cfg

RewardFn = Callable[["Task"], torch.Tensor]


class Task:
    num_obs: int  # policy observation size (history included)
    num_critic_obs: int  # privileged critic observation size

    def __init__(self, env: LeggedRobotEnv, cfg: Cfg):
        self.env = env
        self.cfg = cfg
        self.num_envs = env.num_envs
        self.num_actions = env.num_dof
        self.device = env.device
        self.reward_terms = self._build_reward_terms()
        self.episode_sums = {name: torch.zeros(self.num_envs, device=self.device) for name in self.reward_terms}
        self.rew_buf = torch.zeros(self.num_envs, device=self.device)
        self.task_rew_buf = torch.zeros(self.num_envs, device=self.device)

    # ---- what subclasses provide
    def available_rewards(self) -> dict[str, RewardFn]:
        raise NotImplementedError

    def compute_observations(self) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def check_termination(self) -> torch.Tensor:
        """(N,) bool: episode ended by failure (not by timeout)."""
        raise NotImplementedError

    def task_reward(self) -> torch.Tensor:
        """(N,) unshaped reward that runs are compared by (per policy step)."""
        raise NotImplementedError

    def pre_physics_step(self) -> None:
        """Hook before the physics step (e.g. command resampling)."""

    def reset_idx(self, env_ids: torch.Tensor) -> None:
        """Hook: reset task state (commands, history) of env_ids after the robot was reset."""

    def mirror_maps(self) -> MirrorMaps:
        """The left-right mirror of observations and actions, for algorithm.symmetry (rl/symmetry.py)."""
        raise ValueError(f"task {type(self).__name__} has no left-right mirror of its observations; "
                         "algorithm.symmetry needs one (set its use_data_augmentation and use_mirror_loss to false)")

    # ---- the episode loop
    def _build_reward_terms(self) -> dict[str, tuple[RewardFn, float]]:
        available = self.available_rewards()
        terms = {}
        for name, scale in vars(self.cfg.rewards.scales).items():
            if name not in available:
                raise ValueError(f"unknown reward term '{name}' in rewards.scales; available: {', '.join(sorted(available))}")
            if scale != 0:
                terms[name] = (available[name], float(scale))
        return terms

    def set_reward_scale(self, name: str, scale: float, check_only: bool = False) -> None:
        """Change one reward term's weight from the next step on (0 drops it); a training stage does this."""
        available = self.available_rewards()
        if name not in available:
            raise ValueError(f"unknown reward term '{name}' in rewards.scales; available: {', '.join(sorted(available))}")
        if check_only:
            return
        if scale == 0:
            self.reward_terms.pop(name, None)
        else:
            self.reward_terms[name] = (available[name], float(scale))
            self.episode_sums.setdefault(name, torch.zeros(self.num_envs, device=self.device))

    def reset(self) -> tuple[torch.Tensor, torch.Tensor]:
        all_ids = torch.arange(self.num_envs, device=self.device)
        self.env.reset_idx(all_ids)
        self.reset_idx(all_ids)
        return self.compute_observations()

    def step(self, actions: torch.Tensor):
        """Advance one policy step; reset finished envs; return (obs, critic_obs, rew, done, info, task_rew)."""
        env = self.env
        self.pre_physics_step()
        diverged = env.physics_step(actions)
        terminated = self.check_termination()
        terminated |= diverged
        time_outs = env.time_outs & ~terminated
        done = terminated | time_outs
        self.terminated = terminated
        self.compute_rewards()
        self.task_rew_buf = self.task_reward()

        # With send_timeouts off, a timeout is reported like any other episode end (no bootstrapping).
        reported = time_outs if self.cfg.env.send_timeouts else torch.zeros_like(time_outs)
        info = {"time_outs": reported, "diverged": diverged.sum(), "episode": {}}  # a count on the device
        done_ids = done.nonzero(as_tuple=False).flatten()
        if len(done_ids):
            info["episode"] = self._finish_episodes(done_ids)
            env.reset_idx(done_ids)
            self.reset_idx(done_ids)
        obs, critic_obs = self.compute_observations()
        return obs, critic_obs, self.rew_buf.clone(), done, info, self.task_rew_buf.clone()

    def compute_rewards(self) -> None:
        """Sum the scaled terms; scales are per second, so each is multiplied by dt."""
        self.rew_buf.zero_()
        dt = self.env.dt
        for name, (fn, scale) in self.reward_terms.items():
            if name == "termination":
                continue
            value = fn(self) * scale * dt
            self.rew_buf += value
            self.episode_sums[name] += value
        if self.cfg.rewards.only_positive_rewards:
            self.rew_buf.clamp_(min=0.0)
        if "termination" in self.reward_terms:  # added after the clip so that it is never clipped away
            fn, scale = self.reward_terms["termination"]
            value = fn(self) * scale
            self.rew_buf += value
            self.episode_sums["termination"] += value

    def _finish_episodes(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Mean over the finished envs of each term's episode sum, per second of max episode length."""
        seconds = self.cfg.env.episode_length_s
        out = {}
        for name, sums in self.episode_sums.items():
            out[f"rew_{name}"] = sums[env_ids].mean() / seconds
            sums[env_ids] = 0.0
        return out
