"""The mujoco backend counts the steps whose solver stopped at sim.iterations and warns once when most did."""

import logging

import torch

from config import load_config
from env.gym_env_wrapper import make_env
from env.sim.mujoco_backend import SOLVER_CAP_WARN_AFTER_STEPS

QUIET = ["env.num_envs=2", "sim.nthread=1", "domain_rand.push_robots=false", "noise.add_noise=false"]


def _walk(iterations: int, steps: int, caplog) -> tuple[object, list[str]]:
    env = make_env(load_config("go2", QUIET + [f"sim.iterations={iterations}"]))
    env.reset()
    with caplog.at_level(logging.WARNING, logger="env.sim.mujoco_backend"):
        for _ in range(steps):
            env.step(torch.zeros(env.num_envs, env.num_actions))
    warned = [r.getMessage() for r in caplog.records if "stopped at its cap" in r.getMessage()]
    caplog.clear()
    return env.robot.sim, warned


def test_a_cap_of_one_iteration_is_reported_once(caplog):
    sim, warned = _walk(1, 2 * SOLVER_CAP_WARN_AFTER_STEPS, caplog)
    assert sim.solver_sampled_steps == 2 * SOLVER_CAP_WARN_AFTER_STEPS * 2
    assert sim.solver_capped_steps > 0.9 * sim.solver_sampled_steps  # standing on 4 feet takes more than 1
    assert len(warned) == 1 and "cap of 1 iterations" in warned[0] and "sim.iterations" in warned[0]


def test_a_converging_solver_is_not_reported(caplog):
    sim, warned = _walk(50, SOLVER_CAP_WARN_AFTER_STEPS + 2, caplog)
    assert sim.solver_capped_steps == 0 and sim.solver_sampled_steps > 0
    assert warned == []
