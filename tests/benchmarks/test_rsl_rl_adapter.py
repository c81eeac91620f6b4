"""The rsl-rl-lib adapter trains our env (skipped where rsl_rl, a benchmark-only dependency, is absent)."""

import pytest
import torch

pytest.importorskip("rsl_rl")

from benchmarks.rsl_rl_adapter import make_rsl_rl_runner, run_iterations  # noqa: E402
from config import load_config  # noqa: E402
from env.gym_env_wrapper import make_env  # noqa: E402


@pytest.mark.parametrize("spread", [True, False])
def test_rsl_rl_trains_our_env_with_the_same_episode_start_rule(spread):
    cfg = load_config("qmini", ["env.num_envs=32", "sim.nthread=2", "runner.num_steps_per_env=4",
                                f"runner.random_episode_start={str(spread).lower()}",
                                "policy.actor_hidden_dims=[16]", "policy.critic_hidden_dims=[16]"])
    env = make_env(cfg)
    runner = make_rsl_rl_runner(env, cfg, log_dir=None, verbose=False)
    clocks = env.robot.episode_length_buf.clone()
    assert (clocks.float().std() > 0) == spread  # all start at 0 unless spread
    before = [p.detach().clone() for p in runner.alg.actor.parameters()]
    run_iterations(runner, 2)
    assert any(not torch.equal(a, b) for a, b in zip(before, runner.alg.actor.parameters()))
    assert runner.current_learning_iteration == 2


def test_learn_keeps_rsl_rl_final_policy_for_eval_compare(tmp_path):
    from benchmarks.eval_compare import load_rsl_rl_actor
    from benchmarks.learn import FINAL_RSL_RL_CHECKPOINT, Budget, CurveRecorder, train_rsl_rl
    from utils.experiment import Experiment

    cfg = load_config("qmini", ["env.num_envs=16", "sim.nthread=2", "runner.num_steps_per_env=4",
                                "policy.actor_hidden_dims=[16]", "policy.critic_hidden_dims=[16]"])
    env = make_env(cfg)
    experiment = Experiment("rsl", root=tmp_path)
    train_rsl_rl(env, cfg, experiment, Budget(seconds=60, iterations=1), CurveRecorder(env))
    final = experiment.log_dir / FINAL_RSL_RL_CHECKPOINT
    act = load_rsl_rl_actor(final, cfg)
    assert act(torch.zeros(3, env.num_obs)).shape == (3, env.num_actions)
