"""Training stages: settings that change at given iterations of one run (``runner.stages``).

Some settings only work once the policy can already do something: a fall penalty
from the first iteration teaches a robot to stand still, and a wide damping range
from the start slows learning to walk. A stage names the iteration from which its
settings hold, so that one config trains the robust policy in one command:

    stages = [
        {"from_iteration": 500, "set": {"rewards.scales.termination": -5.0}},
        {"from_iteration": 700, "set": {"domain_rand.joint_damping_range": [0.1, 20.0]}},
    ]

Only settings the run can change while it runs are accepted: reward scales and
the reward parameters the terms read at every step (`LIVE_REWARD_PARAMS`, e.g.
tightening `rewards.tracking_sigma` once the robot walks) take effect at the next
step, randomisation ranges at each env's next reset (a robot does not change
mid-episode), and the PPO settings it reads at every update (`LIVE_ALGORITHM_PARAMS`,
e.g. lowering `algorithm.entropy_coef` once the gait has formed) at the next update. Stages are applied in order of
``from_iteration``; a later stage overrides an earlier one's value. A resumed run
applies every stage it has passed before its first iteration.

A warm start (``--init_from``) from a policy that went through the stages starts
where they ended with ``--final_stage`` (`final_stage_config`): every stage's
settings written into the config from the first iteration, and no stages left.
"""

from __future__ import annotations

import copy
from typing import Any

from config.fields import set_field
from utils.yaml import Cfg

# Reward parameters that env/tasks/rewards.py reads at every step (base_height_target is not one:
# the height-scan observation is measured from it).
LIVE_REWARD_PARAMS = ("tracking_sigma", "tracking_sigma_yaw", "tracking_sigma_wide", "feet_air_time_target",
                      "soft_dof_pos_limit")
# PPO settings the update reads afresh each iteration (rl/stages.py writes them into the algorithm).
LIVE_ALGORITHM_PARAMS = ("entropy_coef",)
LIVE_SETTINGS = ("rewards.scales.<term>, rewards.<" + "|".join(LIVE_REWARD_PARAMS) + ">, domain_rand.<name>_range or "
                 "algorithm.<" + "|".join(LIVE_ALGORITHM_PARAMS) + ">")
STAGE_KEYS = ("from_iteration", "set")


def stage_problem(stage: Any) -> str | None:
    """What is wrong with the shape of one stage, or None."""
    if not isinstance(stage, dict) or set(stage) != set(STAGE_KEYS):
        return "a mapping with exactly the keys from_iteration and set"
    it, settings = stage["from_iteration"], stage["set"]
    if not isinstance(it, int) or isinstance(it, bool) or it < 1:
        return "from_iteration as an integer >= 1"
    if not isinstance(settings, dict) or not settings or not all(isinstance(k, str) for k in settings):
        return "set as a non-empty mapping of section.field names to values"
    for key in settings:
        if not is_live_setting(key):
            return f"settings the env can change while it runs ({LIVE_SETTINGS}), not '{key}'"
    return None


def is_live_setting(key: str) -> bool:
    """Whether a dotted config key is one the running env or algorithm can take (by its name; values are checked apart)."""
    section, _, name = key.partition(".")
    if section == "domain_rand":
        return name.endswith("_range")
    if section == "algorithm":
        return name in LIVE_ALGORITHM_PARAMS
    return section == "rewards" and (name.startswith("scales.") or name in LIVE_REWARD_PARAMS)


def split_algorithm_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(env settings, algorithm settings by their field name) of one merged stage setting."""
    env = {k: v for k, v in settings.items() if not k.startswith("algorithm.")}
    algorithm = {k.partition(".")[2]: v for k, v in settings.items() if k.startswith("algorithm.")}
    return env, algorithm


def settings_at(stages: list[dict[str, Any]], iteration: int) -> dict[str, Any]:
    """The settings in force at `iteration`: every stage with from_iteration <= iteration, later ones winning."""
    merged: dict[str, Any] = {}
    for stage in sorted(stages, key=lambda s: s["from_iteration"]):
        if stage["from_iteration"] <= iteration:
            merged.update(copy.deepcopy(stage["set"]))
    return merged


def config_at(cfg: Cfg, iteration: int) -> Cfg:
    """A copy of `cfg` with the stage settings in force at `iteration` written into it (for play and eval)."""
    settled = copy.deepcopy(cfg)
    for key, value in settings_at(getattr(cfg.runner, "stages", []) or [], iteration).items():
        set_field(settled, key, value, origin="runner.stages")
    return settled


def final_stage_config(cfg: Cfg) -> Cfg:
    """A copy of `cfg` with the settings its last stage leaves in force written in and no stages left
    (train.py/learn.py --final_stage: a run warm-started from a policy that trained through the stages goes on
    with what they ended with, instead of the config's first-iteration values)."""
    stages = getattr(cfg.runner, "stages", []) or []
    settled = config_at(cfg, max((stage["from_iteration"] for stage in stages), default=0))
    settled.runner.stages = []
    return settled
