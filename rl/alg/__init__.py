"""RL algorithms."""

from rl.alg.ppo import PPO

__all__ = ["PPO"]
