"""Applies ``runner.stages`` (config/stages.py) to the running env and PPO as training passes each stage's iteration."""

from __future__ import annotations

from typing import Any, Callable

from config.stages import settings_at, split_algorithm_settings


class TrainingStages:
    """Writes each stage's settings into the env (and the PPO's live settings into `algorithm`) before the first
    iteration it holds for.

    A resumed run starts at its checkpoint's iteration and applies, before its first
    iteration, every stage it has already passed, so it trains on what the
    uninterrupted run would have had.
    """

    def __init__(self, env: Any, stages: list[dict[str, Any]], print_fn: Callable[[str], None],
                 algorithm: Any = None) -> None:
        self.env = env
        self.algorithm = algorithm  # the PPO whose attributes of the same name take algorithm.* settings
        self.stages = sorted(stages or [], key=lambda s: s["from_iteration"])
        self.print = print_fn
        self.applied = 0  # stages written into the env so far
        for stage in self.stages:  # a stage the env cannot take fails now, not minutes into the run
            env_settings, algorithm_settings = split_algorithm_settings(stage["set"])
            env.check_settings(env_settings)
            for name in algorithm_settings:
                if not hasattr(algorithm, name):
                    raise ValueError(f"runner.stages: this run's algorithm has no setting '{name}' to change")

    def advance(self, iteration: int) -> None:
        """Apply every stage that holds at `iteration` (the iteration about to run) and is not applied yet."""
        due = [s for s in self.stages[self.applied:] if s["from_iteration"] <= iteration]
        if not due:
            return
        first = self.applied == 0 and len(due) > 1
        self.applied += len(due)
        settings = settings_at(due, iteration)
        env_settings, algorithm_settings = split_algorithm_settings(settings)
        self.env.apply_settings(env_settings)
        for name, value in algorithm_settings.items():
            setattr(self.algorithm, name, float(value))
        shown = ", ".join(f"{k} = {v}" for k, v in settings.items())
        what = f"stages up to iteration {due[-1]['from_iteration']}" if first else \
            f"stage from iteration {due[-1]['from_iteration']}"
        self.print(f"{what}: {shown}")
