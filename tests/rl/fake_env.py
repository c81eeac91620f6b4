"""A tiny vectorised env with the GymEnvWrapper interface, for runner and PPO tests.

Task: "match the target". Each episode draws a target vector in [-1, 1]^A; the
policy observation is the target, the critic also sees the episode's time
fraction. Reward per step is ``-mean((a - target)^2)``, task reward
``exp(-mean((a - target)^2))``. Episodes end by time limit after
`max_episode_length` steps (start lengths are staggered so envs finish at
different steps), so every `done` is a time-out.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch


class FakeEnv:
    def __init__(self, num_envs: int = 64, num_actions: int = 3, max_episode_length: int = 8, seed: int = 0,
                 device: str = "cpu", diverged_per_step: int = 0, num_obs: int | None = None) -> None:
        self.num_envs = num_envs
        self.num_actions = num_actions
        self.num_obs = num_obs if num_obs is not None else num_actions
        self.num_critic_obs = self.num_obs + 1
        self.max_episode_length = max_episode_length
        self.device = torch.device(device)
        self.diverged_per_step = diverged_per_step
        self.gen = torch.Generator(device=self.device).manual_seed(seed)
        self.target = torch.zeros(num_envs, num_actions, device=self.device)
        self.episode_step = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.error_sum = torch.zeros(num_envs, device=self.device)
        self.num_steps = 0

    def _resample(self, mask: torch.Tensor) -> None:
        new = torch.rand(self.num_envs, self.num_actions, generator=self.gen, device=self.device) * 2.0 - 1.0
        self.target = torch.where(mask[:, None], new, self.target)
        self.episode_step = torch.where(mask, torch.zeros_like(self.episode_step), self.episode_step)
        self.error_sum = torch.where(mask, torch.zeros_like(self.error_sum), self.error_sum)

    def _observe(self) -> tuple[torch.Tensor, torch.Tensor]:
        obs = torch.zeros(self.num_envs, self.num_obs, device=self.device)
        obs[:, : self.num_actions] = self.target[:, : self.num_obs]
        phase = (self.episode_step.float() / self.max_episode_length)[:, None]
        return obs, torch.cat([obs, phase], dim=1)

    def reset(self) -> tuple[torch.Tensor, torch.Tensor]:
        self._resample(torch.ones(self.num_envs, dtype=torch.bool, device=self.device))
        # Stagger episode ends so that some env finishes at most steps.
        self.episode_step = torch.randint(0, self.max_episode_length, (self.num_envs,), generator=self.gen,
                                          device=self.device)
        return self._observe()

    def step(self, actions: torch.Tensor):
        self.num_steps += 1
        err = (actions.clamp(-3.0, 3.0) - self.target).square().mean(dim=1)
        rew = -err
        task_rew = torch.exp(-err)
        self.error_sum += err
        self.episode_step += 1
        done = self.episode_step >= self.max_episode_length
        time_outs = done.clone()
        finished = done.float()
        n_finished = finished.sum()
        episode = {}
        if bool(done.any()):
            episode["error"] = (self.error_sum * finished).sum() / n_finished
        self._resample(done)
        obs, critic_obs = self._observe()
        info = {"time_outs": time_outs, "episode": episode, "diverged": self.diverged_per_step}
        return obs, critic_obs, rew, done, info, task_rew


def make_cfg(hidden: tuple[int, ...] = (32, 32), **sections: dict) -> "SimpleNamespace":
    """A config tree mirroring config/base.py's runner/algorithm/policy values, with small networks.

    ``make_cfg(algorithm={"schedule": "fixed"})`` overrides single fields.
    """

    runner = dict(num_steps_per_env=16, max_iterations=1500, save_interval=50, seed=1, device="cpu",
                  log_interval=1, random_episode_start=False)
    algorithm = dict(value_loss_coef=1.0, use_clipped_value_loss=True, clip_param=0.2, entropy_coef=0.005,
                     num_learning_epochs=5, num_mini_batches=4, learning_rate=1.0e-3, schedule="adaptive",
                     gamma=0.99, lam=0.95, desired_kl=0.01, max_grad_norm=1.0, min_lr=1.0e-5, max_lr=1.0e-2)
    policy = dict(actor_hidden_dims=list(hidden), critic_hidden_dims=list(hidden), activation="elu",
                  init_noise_std=1.0, min_std=0.01, max_std=2.0, normalize_observations=True)
    runner.update(sections.get("runner", {}))
    algorithm.update(sections.get("algorithm", {}))
    policy.update(sections.get("policy", {}))
    return SimpleNamespace(runner=SimpleNamespace(**runner), algorithm=SimpleNamespace(**algorithm),
                           policy=SimpleNamespace(**policy))
