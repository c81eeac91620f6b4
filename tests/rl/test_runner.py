import os
import signal
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import utils.files
from fake_env import FakeEnv, make_cfg
from rl.inference import load_inference_policy
from config.identity import cfg_hash
from rl.runner import OnPolicyRunner
from rl.seed import set_seed


def _runner(tmp_path: Path | None, seed=0, env=None, log=True, **kwargs):
    set_seed(seed)
    env = env or FakeEnv(num_envs=16, num_actions=2, max_episode_length=5, seed=seed)
    cfg = make_cfg(hidden=(16,), runner={"num_steps_per_env": 8, "save_interval": 2},
                   algorithm={"num_learning_epochs": 2, "num_mini_batches": 2})
    log_dir = str(tmp_path / "log") if (tmp_path is not None and log) else None
    model_dir = tmp_path / "model" if tmp_path is not None else None
    return OnPolicyRunner(env, cfg, log_dir=log_dir, device="cpu", model_dir=model_dir, verbose=False,
                          cfg_dict={"runner": vars(cfg.runner), "policy": vars(cfg.policy)}, **kwargs)


def _steps(log_dir: Path, tag: str) -> list[int]:
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)]


def test_counters_continue_after_save_and_load(tmp_path):
    runner = _runner(tmp_path)
    runner.learn(3)
    assert runner.current_iteration == 3 and runner.total_env_steps == 3 * 8 * 16
    runner.close()
    ckpt = torch.load(tmp_path / "model" / "policy.pt", weights_only=False)
    assert ckpt["iteration"] == 3
    assert (tmp_path / "model" / "all" / "policy_2.pt").exists()
    assert not (tmp_path / "model" / "all" / "policy_3.pt").exists()

    resumed = _runner(tmp_path, seed=1)
    resumed.load(tmp_path / "model" / "policy.pt")
    assert resumed.current_iteration == 3 and resumed.total_env_steps == 3 * 8 * 16
    metrics = resumed.learn(2)
    resumed.close()
    assert metrics["iteration"] == 5 and resumed.total_env_steps == 5 * 8 * 16
    assert torch.load(tmp_path / "model" / "policy.pt", weights_only=False)["iteration"] == 5
    assert (tmp_path / "model" / "all" / "policy_4.pt").exists()

    log_dir = tmp_path / "log"
    for tag in ("Loss/surrogate", "Loss/value", "Loss/entropy", "Loss/learning_rate", "Loss/kl",
                "Loss/clip_fraction", "Policy/action_std", "Train/mean_reward", "Train/mean_task_reward",
                "Train/mean_episode_length", "Episode/error", "Perf/fps", "Perf/collection_time",
                "Perf/learning_time", "Sim/diverged", "Sim/diverged_total"):
        assert _steps(log_dir, tag) == [1, 2, 3, 4, 5], tag


def test_checkpoint_contents(tmp_path):
    runner = _runner(tmp_path, log=False)
    runner.learn(1)
    ckpt = torch.load(tmp_path / "model" / "policy.pt", weights_only=False)
    assert set(ckpt) >= {"actor", "critic", "optimizer", "obs_normalizer", "critic_obs_normalizer", "iteration",
                         "total_env_steps", "rng_state", "cfg", "cfg_hash", "num_obs", "num_actions",
                         "num_critic_obs"}
    assert set(ckpt["rng_state"]) >= {"torch", "numpy", "python"}
    assert ckpt["cfg"] == runner.cfg_dict and ckpt["cfg_hash"] == cfg_hash(runner.cfg_dict)
    assert int(ckpt["obs_normalizer"]["count"]) == 16 * (8 + 1)  # reset obs + 8 steps


def test_cfg_hash_ignores_run_length_and_logging_fields_only():
    from config import load_config
    from config.identity import changed_fields

    base = load_config("qmini").to_dict()
    run_only = load_config("qmini", ["runner.max_iterations=7", "runner.save_interval=3", "runner.log_interval=5",
                                     "runner.seed=9", "sim.nthread=1", "viewer.distance=4.0"]).to_dict()
    assert cfg_hash(run_only) == cfg_hash(base) and changed_fields(base, run_only) == []
    for override in ["algorithm.learning_rate=0.0003", "env.num_envs=8", "rewards.scales.alive=0.1",
                     "control.stiffness.knee=40"]:
        other = load_config("qmini", [override]).to_dict()
        assert cfg_hash(other) != cfg_hash(base), override
        key = override.split("=")[0]
        assert [c.split(":")[0] for c in changed_fields(base, other)] == [key]


def test_same_seed_same_first_iteration():
    a = _runner(None, seed=3).learn(1)
    b = _runner(None, seed=3).learn(1)
    c = _runner(None, seed=4).learn(1)
    keys = ["surrogate", "value", "entropy", "kl", "learning_rate", "mean_reward"]
    assert [a[k] for k in keys] == [b[k] for k in keys]
    assert [a[k] for k in keys] != [c[k] for k in keys]


def test_load_rejects_mismatched_sizes(tmp_path):
    runner = _runner(tmp_path, log=False)
    path = runner.save(tmp_path / "ckpt.pt")
    other = _runner(None, env=FakeEnv(num_envs=16, num_actions=2, num_obs=5, seed=0))
    with pytest.raises(ValueError) as err:
        other.load(path)
    msg = str(err.value)
    assert "checkpoint has num_obs=2, num_actions=2" in msg and "the env has num_obs=5, num_actions=2" in msg
    assert "\n" not in msg


def test_load_restores_weights_normalizers_optimizer_and_rng(tmp_path):
    runner = _runner(tmp_path, log=False)
    runner.learn(2)
    path = runner.save(tmp_path / "ckpt.pt")
    state_rng = torch.rand(3)  # what the RNG gives right after the save
    other = _runner(None, seed=9)
    other.load(path)
    assert torch.equal(torch.rand(3), state_rng)
    for a, b in zip(runner.actor.state_dict().values(), other.actor.state_dict().values()):
        assert torch.equal(a, b)
    assert torch.equal(runner.obs_normalizer.mean, other.obs_normalizer.mean)
    assert other.alg.learning_rate == runner.alg.learning_rate
    assert other.alg.optimizer.param_groups[0]["lr"] == runner.alg.optimizer.param_groups[0]["lr"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.trace, still the TorchScript export path
def test_inference_policy_matches_actor_on_normalized_obs(tmp_path):
    runner = _runner(tmp_path, log=False)
    runner.learn(1)
    obs = torch.randn(4, 2)
    expected = runner.actor.act_inference(runner.obs_normalizer(obs))
    policy = runner.get_inference_policy()
    assert torch.allclose(policy(obs), expected)
    loaded = load_inference_policy(tmp_path / "model" / "policy.pt", runner.cfg.policy)
    assert torch.allclose(loaded(obs), expected)
    from_saved_cfg = load_inference_policy(tmp_path / "model" / "policy.pt")
    assert torch.allclose(from_saved_cfg(obs), expected)
    traced = torch.jit.trace(policy, obs)
    assert torch.allclose(traced(obs), expected)
    exported = torch.export.export(policy, (obs,))
    assert torch.allclose(exported.module()(obs), expected)


def test_crash_during_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    runner = _runner(tmp_path, log=False)
    runner.learn(1)
    path = tmp_path / "model" / "policy.pt"
    before = path.read_bytes()
    real_save = torch.save

    def partial_save(obj, f, *args, **kwargs):
        f.write(b"partial garbage")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", partial_save)
    runner.current_iteration = 99
    with pytest.raises(OSError, match="disk full"):
        runner.save()
    monkeypatch.setattr(torch, "save", real_save)

    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["policy.pt"]
    assert torch.load(path, weights_only=False)["iteration"] == 1
    _runner(None).load(path)


def test_failed_replace_leaves_no_temp_file(tmp_path, monkeypatch):
    runner = _runner(tmp_path, log=False)
    path = runner.save(tmp_path / "ckpt.pt")

    def failing_replace(src, dst):
        raise OSError("replace failed")

    monkeypatch.setattr(utils.files.os, "replace", failing_replace)
    with pytest.raises(OSError, match="replace failed"):
        runner.save(path)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    torch.load(path, weights_only=False)


class _InterruptingEnv(FakeEnv):
    """Sends SIGINT to this process during the 3rd step of iteration 1 (8 steps per iteration)."""

    def step(self, actions):
        if self.num_steps == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return super().step(actions)


def test_sigint_finishes_iteration_saves_and_returns(tmp_path):
    env = _InterruptingEnv(num_envs=16, num_actions=2, max_episode_length=5, seed=0)
    runner = _runner(tmp_path, env=env, log=False)
    before = signal.getsignal(signal.SIGINT)
    metrics = runner.learn(50)
    assert runner.stop_requested
    assert runner.current_iteration == 1 and metrics["iteration"] == 1
    assert env.num_steps == 8  # the interrupted iteration ran to its end
    assert torch.load(tmp_path / "model" / "policy.pt", weights_only=False)["iteration"] == 1
    assert signal.getsignal(signal.SIGINT) is before


class _DoubleInterruptEnv(FakeEnv):
    def step(self, actions):
        if self.num_steps in (2, 4):
            os.kill(os.getpid(), signal.SIGINT)
        return super().step(actions)


def test_second_sigint_aborts_and_restores_handlers(tmp_path):
    env = _DoubleInterruptEnv(num_envs=16, num_actions=2, max_episode_length=5, seed=0)
    runner = _runner(tmp_path, env=env, log=False)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        runner.learn(50)
    assert runner.current_iteration == 0
    assert signal.getsignal(signal.SIGINT) is before


def test_diverged_counts(tmp_path):
    env = FakeEnv(num_envs=16, num_actions=2, max_episode_length=5, seed=0, diverged_per_step=1)
    runner = _runner(tmp_path, env=env, log=False)
    m = runner.learn(2)
    assert m["diverged"] == 8 and m["diverged_total"] == 16
    other = _runner(None)
    other.load(tmp_path / "model" / "policy.pt")
    assert other.diverged_total == 16


def test_console_line(tmp_path, capsys):
    runner = _runner(None, run_name="run1")
    runner.verbose = True
    runner.learn(2)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("run1#2 ")
    for word in ("fps", "surr", "value", "ent", "rew", "task", "len", "[2/2]", "it/s", "ETA"):
        assert word in lines[1], word


def test_on_iteration_callback_sees_every_iteration_and_can_stop(tmp_path):
    env = FakeEnv(num_envs=8)
    runner = OnPolicyRunner(env, make_cfg(), None, "cpu", model_dir=tmp_path / "model", verbose=False)
    seen = []

    def budget(it, metrics):
        seen.append((it, "surrogate" in metrics))
        return it >= 3

    runner.learn(100, on_iteration=budget)
    assert seen == [(1, True), (2, True), (3, True)]
    assert runner.current_iteration == 3
    assert torch.load(tmp_path / "model" / "policy.pt", weights_only=False)["iteration"] == 3


class _SpreadCountingEnv(FakeEnv):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.spread_calls = 0

    def spread_episode_starts(self) -> None:
        self.spread_calls += 1


@pytest.mark.parametrize("spread", [True, False])
def test_random_episode_start_spreads_the_env_once_per_learn(spread):
    env = _SpreadCountingEnv(num_envs=8)
    runner = OnPolicyRunner(env, make_cfg(runner={"random_episode_start": spread}), None, "cpu", verbose=False)
    runner.learn(2)
    assert env.spread_calls == int(spread)
    runner.learn(1)  # a resumed learn spreads again, as its reset synchronises the clocks
    assert env.spread_calls == 2 * int(spread)


def test_a_tensorboard_write_that_fails_stops_the_log_not_the_run(tmp_path, capsys):
    """TensorBoard re-raises a background write error (disk full) on a later call: training must go on."""
    import errno

    runner = _runner(tmp_path)
    runner.learn(1)
    calls = {"n": 0}

    def full_disk(*args, **kwargs):
        calls["n"] += 1
        raise OSError(errno.ENOSPC, "No space left on device")

    (tensorboard,) = runner.log.loggers
    tensorboard.writer.add_scalar = full_disk
    metrics = runner.learn(2)
    assert metrics["iteration"] == 3 and calls["n"] == 1  # warned once, then the writer was dropped
    assert runner.log.loggers == [] and tensorboard.writer is None
    err = capsys.readouterr().err
    assert err.count("TensorBoard logging") == 1 and "No space left on device" in err
    assert torch.load(tmp_path / "model" / "policy.pt", weights_only=False)["iteration"] == 3
