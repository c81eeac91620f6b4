"""The runner applies runner.stages before the first iteration each holds for, and again on resume."""

from pathlib import Path

import pytest

from fake_env import FakeEnv, make_cfg
from rl.runner import OnPolicyRunner
from rl.seed import set_seed

STAGES = [{"from_iteration": 3, "set": {"rewards.scales.termination": -2.0}},
          {"from_iteration": 5, "set": {"rewards.scales.termination": -5.0, "domain_rand.kp_range": [0.9, 1.1]}}]


class StagedEnv(FakeEnv):
    """FakeEnv that records each settings change with the number of env steps taken before it."""

    def __init__(self, **kwargs):
        super().__init__(num_envs=8, num_actions=2, max_episode_length=5, **kwargs)
        self.applied: list[tuple[int, dict]] = []

    def check_settings(self, settings: dict) -> None:
        if "rewards.scales.refused" in settings:
            raise ValueError("unknown reward term 'refused'")

    def apply_settings(self, settings: dict) -> None:
        self.applied.append((self.num_steps, dict(settings)))


def _runner(tmp_path: Path, env: FakeEnv, stages=STAGES) -> OnPolicyRunner:
    set_seed(0)
    cfg = make_cfg(hidden=(8,), runner={"num_steps_per_env": 4, "stages": stages},
                   algorithm={"num_learning_epochs": 1, "num_mini_batches": 1})
    return OnPolicyRunner(env, cfg, device="cpu", model_dir=tmp_path / "model", verbose=False,
                          cfg_dict={"runner": vars(cfg.runner)})


def test_each_stage_is_applied_once_before_its_first_iteration(tmp_path):
    env = StagedEnv()
    runner = _runner(tmp_path, env)
    runner.learn(6)
    # iteration k starts after (k - 1) * 4 env steps
    assert env.applied == [(2 * 4, {"rewards.scales.termination": -2.0}),
                           (4 * 4, {"rewards.scales.termination": -5.0, "domain_rand.kp_range": [0.9, 1.1]})]


def test_a_resumed_run_applies_the_stages_it_has_passed_before_its_first_iteration(tmp_path):
    runner = _runner(tmp_path, StagedEnv())
    runner.learn(5)
    runner.close()
    env = StagedEnv()
    resumed = _runner(tmp_path, env)
    resumed.load(tmp_path / "model" / "policy.pt")
    resumed.learn(1)
    assert env.applied == [(0, {"rewards.scales.termination": -5.0, "domain_rand.kp_range": [0.9, 1.1]})]


def test_a_stage_the_env_refuses_fails_when_the_runner_is_built(tmp_path):
    with pytest.raises(ValueError, match="refused"):
        _runner(tmp_path, StagedEnv(), [{"from_iteration": 9, "set": {"rewards.scales.refused": 1.0}}])


def test_an_entropy_stage_changes_the_ppo_coefficient_and_is_not_sent_to_the_env(tmp_path):
    env = StagedEnv()
    stages = [{"from_iteration": 3, "set": {"algorithm.entropy_coef": 0.0005, "rewards.scales.termination": -1.0}}]
    runner = _runner(tmp_path, env, stages)
    before = runner.alg.entropy_coef
    runner.learn(2)
    assert runner.alg.entropy_coef == before != 0.0005
    runner.learn(1)
    assert runner.alg.entropy_coef == 0.0005
    assert env.applied == [(2 * 4, {"rewards.scales.termination": -1.0})]
    runner.close()
    resumed = _runner(tmp_path, StagedEnv(), stages)  # a resumed run past the stage starts with its coefficient
    resumed.load(tmp_path / "model" / "policy.pt")
    resumed.learn(1)
    assert resumed.alg.entropy_coef == 0.0005
