"""benchmarks/reward_budget.py: per-term rates and the negative-sum fraction, with training's own rewards unchanged."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from benchmarks.reward_budget import RewardBudget, main
from env.tasks.base import Task

ROUGH_POLICY = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "go2_rough" / "policy"


def fake_task(only_positive: bool):
    """Two robots, dt 1 s: tracking (1.0, 0.2), a penalty (0.5, 0.5), robot 1 terminated (scale -2)."""
    terms = {"tracking": (lambda t: torch.tensor([1.0, 0.2]), 1.0),
             "penalty": (lambda t: torch.tensor([0.5, 0.5]), -1.0),
             "termination": (lambda t: torch.tensor([0.0, 1.0]), -2.0)}
    task = SimpleNamespace(reward_terms=terms, env=SimpleNamespace(dt=1.0), rew_buf=torch.zeros(2),
                           episode_sums={name: torch.zeros(2) for name in terms},
                           cfg=SimpleNamespace(rewards=SimpleNamespace(only_positive_rewards=only_positive)))
    task.compute_rewards = lambda: Task.compute_rewards(task)  # the real summation on the fake state
    return task


@pytest.mark.parametrize("only_positive", [True, False])
def test_budget_counts_negative_sums_and_leaves_the_training_reward_as_it_was(only_positive):
    reference = fake_task(only_positive)
    reference.compute_rewards()
    task = fake_task(only_positive)
    budget = RewardBudget(task)
    task.compute_rewards()
    # unclipped sums (0.5, -0.3): robot 1's is negative; training's reward is the same with or without the budget
    assert torch.allclose(task.rew_buf, reference.rew_buf)
    assert task.rew_buf.tolist() == pytest.approx([0.5, -2.0] if only_positive else [0.5, -2.3])
    assert budget.negative_fraction() == 0.5
    assert budget.rates(dt=1.0) == pytest.approx({"tracking": 0.6, "penalty": -0.5, "termination": -1.0})
    assert task.cfg.rewards.only_positive_rewards is only_positive  # restored after each step


def test_main_on_the_committed_rough_policy(capsys):
    small = ["--set", "terrain.num_rows=2", "--set", "terrain.num_cols=7"]
    assert main(["--name", str(ROUGH_POLICY), "--num_envs", "2", "--steps", "3", "--level", "1"] + small) == 0
    out = capsys.readouterr().out
    fraction = float(re.search(r"negative summed reward: ([0-9.]+)", out).group(1))
    assert 0.0 <= fraction <= 1.0
    assert re.search(r"^  tracking_lin_vel +\+[0-9.]+$", out, re.M)
    assert re.search(r"^  feet_air_time ", out, re.M)


def test_a_level_the_terrain_lacks_is_one_line(capsys):
    assert main(["--name", str(ROUGH_POLICY), "--num_envs", "2", "--steps", "1", "--level", "5",
                 "--set", "terrain.num_rows=2", "--set", "terrain.num_cols=7"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "--level 5" in errors[0] and "0..1" in errors[0]
