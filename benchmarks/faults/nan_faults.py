"""NaN and inf injected into a real (tiny) Qmini training run, one kind per iteration.

Kinds: observations, critic observations, actions (from the policy), rewards
(env), losses (a poisoned return) and gradients (a poisoned backward pass). For each
injection the guarantee is: actor, critic and optimizer are exactly as before the
iteration, the observation normalisers stay finite, the skip is logged (stderr
warning, ``Faults/skipped_update`` in TensorBoard), and the next clean iteration
learns again. Separately, K skipped updates in a row stop training with one line
and exit status 1 (`halting_trial`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import torch

from benchmarks.faults import TINY, Trial, experiments_at, run_quietly

INJECTIONS = ("observations", "critic_observations", "actions", "rewards", "losses", "gradients")


def _tiny_runner(log_dir: Path):
    from config import load_config
    from env.gym_env_wrapper import make_env
    from rl.runner import OnPolicyRunner
    from rl.seed import set_seed

    cfg = load_config("qmini", ["env.num_envs=4", "runner.num_steps_per_env=4", "algorithm.num_learning_epochs=1",
                                "algorithm.num_mini_batches=2", "sim.nthread=1", "runner.max_skipped_updates=100"])
    set_seed(0)
    return OnPolicyRunner(make_env(cfg), cfg, log_dir=str(log_dir), device="cpu", verbose=False)


def _state(runner) -> list[torch.Tensor]:
    opt = runner.alg.optimizer.state_dict()["state"]
    tensors = [v.clone() for v in runner.actor.state_dict().values()] + \
              [v.clone() for v in runner.critic.state_dict().values()]
    return tensors + [t.clone() for s in opt.values() for t in s.values() if isinstance(t, torch.Tensor)]


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def _inject(runner, kind: str) -> Callable[[], None]:
    """Patch the runner so that the next iteration meets a non-finite `kind`; returns the undo."""
    env, alg = runner.env, runner.alg
    nan = float("nan")
    if kind in ("observations", "critic_observations", "rewards"):
        step = env.step
        calls = {"n": 0}

        def poisoned_step(actions):
            obs, critic_obs, rew, done, info, task_rew = step(actions)
            calls["n"] += 1
            if calls["n"] == 2:  # in the middle of the rollout, one env
                target = {"observations": obs, "critic_observations": critic_obs, "rewards": rew}[kind]
                target = target.clone()
                target.view(target.shape[0], -1)[1, 0] = nan if kind != "critic_observations" else float("inf")
                obs, critic_obs, rew = [target if name == kind else t for name, t in
                                        (("observations", obs), ("critic_observations", critic_obs), ("rewards", rew))]
            return obs, critic_obs, rew, done, info, task_rew
        env.step = poisoned_step
        return lambda: setattr(env, "step", step)
    if kind == "actions":
        act = alg.act

        def poisoned_act(obs, critic_obs):
            actions = act(obs, critic_obs).clone()
            actions[0, 0] = nan
            return actions
        alg.act = poisoned_act
        return lambda: setattr(alg, "act", act)
    if kind == "losses":
        compute = alg.compute_returns

        def poisoned_returns(last_critic_obs):
            compute(last_critic_obs)
            alg.storage.returns[0, 0] = nan
        alg.compute_returns = poisoned_returns
        return lambda: setattr(alg, "compute_returns", compute)
    if kind == "gradients":  # the second minibatch: the first one's optimizer step must be undone too
        calls = {"n": 0}

        def poisoned_grad(grad):
            calls["n"] += 1
            return grad * float("inf") if calls["n"] == 2 else grad
        handle = next(runner.actor.parameters()).register_hook(poisoned_grad)
        return handle.remove
    raise ValueError(f"unknown injection {kind}")


def nan_trials(root: Path, kinds: tuple[str, ...] = INJECTIONS) -> list[Trial]:
    """For each kind: a clean iteration (must learn), then a poisoned one (must change nothing)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    runner = _tiny_runner(root / "nan_log")
    trials, poisoned_at = [], {}
    for kind in kinds:
        before_clean = _state(runner)
        run_quietly(lambda _: _learn_one(runner), [])
        learned = not _same(before_clean, _state(runner))
        before = _state(runner)
        undo = _inject(runner, kind)
        try:
            _, _, err = run_quietly(lambda _: _learn_one(runner), [])
        finally:
            undo()
        metrics: dict[str, Any] = runner.last_metrics
        unchanged = _same(before, _state(runner))
        finite = all(torch.isfinite(b).all() for n in (runner.obs_normalizer, runner.critic_obs_normalizer)
                     for b in n.buffers())
        warned = "update skipped" in err
        poisoned_at[kind] = runner.current_iteration
        trials.append(Trial("nan", learned and unchanged and finite and warned and metrics.get("skipped_update") == 1,
                            f"{kind}: weights unchanged {unchanged}, normalisers finite {finite}, warned {warned}, "
                            f"clean iteration before it learned {learned}; {metrics.get('skipped', 'not skipped')}"))
    runner.close()
    acc = EventAccumulator(str(root / "nan_log"))
    acc.Reload()
    logged = {e.step: e.value for e in acc.Scalars("Faults/skipped_update")}
    for trial, (kind, it) in zip(trials, poisoned_at.items()):
        if logged.get(it) != 1.0 or logged.get(it - 1) != 0.0:
            trial.ok = False
            trial.detail += f"; TensorBoard Faults/skipped_update at {it}: {logged.get(it)}"
    return trials


def _learn_one(runner) -> int:
    """One iteration; its metrics are kept on the runner (run_quietly only passes an exit status)."""
    runner.last_metrics = runner.learn(1)
    return 0


def halting_trial(root: Path, max_skipped: int = 2) -> Trial:
    """NaN observations every step: train.py must stop after `max_skipped` skipped updates, one line, exit 1."""
    import env.gym_env_wrapper as wrapper
    import train

    step = wrapper.GymEnvWrapper.step

    def always_nan(self, actions):
        obs, critic_obs, rew, done, info, task_rew = step(self, actions)
        return torch.full_like(obs, float("nan")), critic_obs, rew, done, info, task_rew

    wrapper.GymEnvWrapper.step = always_nan
    try:
        with experiments_at(root):
            code, _, err = run_quietly(train.main, TINY + ["--name", "halted", "--max_iterations", "10",
                                                           "--set", f"runner.max_skipped_updates={max_skipped}"])
    finally:
        wrapper.GymEnvWrapper.step = step
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    ckpt = torch.load(root / "halted" / "model" / "policy.pt", map_location="cpu", weights_only=False)
    ok = code == 1 and len(errors) == 1 and f"{max_skipped} updates in a row" in errors[0] \
        and ckpt["iteration"] == max_skipped and "Traceback" not in err
    return Trial("nan-halt", ok, f"exit status {code}; {errors[0] if errors else 'no error line'}")
