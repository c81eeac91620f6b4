"""GymEnvWrapper: the batched env as the training loop sees it.

gymnasium `Box` spaces describe one env's observation and action; `reset` and
`step` work on all envs at once and exchange torch tensors. Finished envs are
reset inside `step`, and the observation returned for them is the first of
their new episode; ``info["time_outs"]`` tells which ended by the time limit so
that PPO can bootstrap their value.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from config.stages import LIVE_REWARD_PARAMS, LIVE_SETTINGS
from config.validate import RULES
from env.legged_robot import LeggedRobotEnv
from env.tasks import load_task_cls
from env.tasks.base import Task
from env.utils.mirror import MirrorMaps
from utils.yaml import Cfg


class GymEnvWrapper:
    def __init__(self, task: Task):
        self.task = task
        self.robot = task.env
        self.cfg = task.cfg
        self.num_envs = task.num_envs
        self.num_obs = task.num_obs
        self.num_critic_obs = task.num_critic_obs
        self.num_actions = task.num_actions
        self.device = task.device
        self.max_episode_length = self.robot.max_episode_length
        clip_obs = float(self.cfg.normalization.clip_observations)
        clip_act = float(self.cfg.control.clip_actions)
        self.observation_space = gym.spaces.Box(-clip_obs, clip_obs, (self.num_obs,), np.float32)
        self.critic_observation_space = gym.spaces.Box(-clip_obs, clip_obs, (self.num_critic_obs,), np.float32)
        self.action_space = gym.spaces.Box(-clip_act, clip_act, (self.num_actions,), np.float32)

    def reset(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.task.reset()

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict, torch.Tensor]:
        if actions.shape != (self.num_envs, self.num_actions):
            raise ValueError(f"actions must have shape ({self.num_envs}, {self.num_actions}), got {tuple(actions.shape)}")
        return self.task.step(actions)

    def mirror_maps(self) -> MirrorMaps:
        """The task's left-right mirror of observations and actions (rl/symmetry.py augments PPO with it)."""
        return self.task.mirror_maps()

    def apply_settings(self, settings: dict[str, Any], check_only: bool = False) -> None:
        """Change reward scales, live reward parameters and randomisation ranges of the running env (a training
        stage, config/stages.py).

        With `check_only`, nothing changes: a setting the env cannot take raises ValueError.
        """
        for key, value in settings.items():
            section, _, name = key.partition(".")
            if key.startswith("rewards.scales."):
                self.task.set_reward_scale(key.removeprefix("rewards.scales."), float(value), check_only)
            elif section == "domain_rand":
                self.robot.domain_rand.set_range(name, [float(x) for x in value], check_only)
            elif section == "rewards" and name in LIVE_REWARD_PARAMS:
                self._set_reward_param(name, value, check_only)
            else:
                raise ValueError(f"{key} cannot change during a run; a stage sets {LIVE_SETTINGS}")

    def _set_reward_param(self, name: str, value: Any, check_only: bool) -> None:
        """A reward parameter the terms read at every step, checked by the config's own rule for its field."""
        key = f"rewards.{name}"
        problem = RULES[key](value)
        if problem is not None:
            raise ValueError(f"{key} = {value!r}: expects {problem}")
        if not check_only:
            setattr(self.cfg.rewards, name, None if value is None else float(value))

    def check_settings(self, settings: dict[str, Any]) -> None:
        """Raise ValueError if `apply_settings` would refuse any of `settings`."""
        self.apply_settings(settings, check_only=True)

    def spread_episode_starts(self) -> None:
        """Put every env at a random point of its episode (at the start of training)."""
        self.robot.spread_episode_starts()

    def state_dict(self) -> dict:
        """What a checkpoint keeps of the env so that a resumed run continues it: the terrain levels."""
        return {"terrain": self.robot.ground.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.robot.ground.load_state_dict(state.get("terrain", {}))

    @property
    def diverged_total(self) -> int:
        return self.robot.sim.diverged_total

    @property
    def overflow_total(self) -> int:
        """World-steps whose contact/constraint buffers overflowed (warp backend; 0 where buffers grow)."""
        return self.robot.sim.overflow_total


def make_env(cfg: Cfg, device: str | torch.device = "cpu") -> GymEnvWrapper:
    """config -> LeggedRobotEnv(backend) -> Task -> GymEnvWrapper."""
    robot = LeggedRobotEnv(cfg, device)
    task = load_task_cls(cfg.env.task)(robot, cfg)
    return GymEnvWrapper(task)
