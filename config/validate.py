"""Field-by-field checks of a resolved config, before anything is built or written.

`validate_config` checks every field against the reference config (`Base`, plus the
named robot class): its type (a float field takes an int, nothing else changes
type), then the field's range from `RULES` (positive counts, probabilities,
ordered ``[lo, hi]`` ranges, choices), then a few relations between fields. The
first problem raises `ConfigError` with one line: the field, the value, what is
accepted and where the value came from (a cfg.yaml, a config class, an override).
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable

from config.errors import ConfigError
from config.fields import set_field
from config.stages import stage_problem
from utils.yaml import DICT_FIELDS, Cfg


Check = Callable[[Any], "str | None"]  # None when the value is fine, else what is accepted


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def int_at_least(lo: int, hi: int | None = None) -> Check:
    what = f"an integer >= {lo}" + (f" and <= {hi:,}" if hi is not None else "")
    return lambda v: None if isinstance(v, int) and not isinstance(v, bool) and v >= lo and (hi is None or v <= hi) \
        else what


def float_range(lo: float, hi: float | None = None, lo_open: bool = False) -> Check:
    what = f"a number {'>' if lo_open else '>='} {lo:g}" + (f" and <= {hi:g}" if hi is not None else "")

    def check(v: Any) -> str | None:
        ok = _number(v) and (v > lo if lo_open else v >= lo) and (hi is None or v <= hi)
        return None if ok else what
    return check


def ordered_range(lo_min: float | None = None, lo_open: bool = False, hi_max: float | None = None) -> Check:
    bound = "" if lo_min is None else f" with lo {'>' if lo_open else '>='} {lo_min:g}"
    bound += "" if hi_max is None else f"{' and' if bound else ' with'} hi < {hi_max:g}"
    what = f"an ordered range [lo, hi] of two numbers, lo <= hi{bound}"

    def check(v: Any) -> str | None:
        if not (isinstance(v, list) and len(v) == 2 and all(_number(x) for x in v) and v[0] <= v[1]):
            return what
        if lo_min is not None and not (v[0] > lo_min if lo_open else v[0] >= lo_min):
            return what
        if hi_max is not None and not v[1] < hi_max:
            return what
        return None
    return check


def one_of(*choices: str) -> Check:
    return lambda v: None if v in choices else f"one of {', '.join(choices)}"


def optional(check: Check) -> Check:
    return lambda v: None if v is None else (None if check(v) is None else f"null or {check(v)}")


def int_list(lo: int, hi: int) -> Check:
    what = f"a non-empty list of integers in [{lo}, {hi}]"
    return lambda v: None if isinstance(v, list) and v and all(
        isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi for x in v) else what


def number_list(lo: float, hi: float) -> Check:
    what = f"a non-empty list of numbers in [{lo:g}, {hi:g}]"
    return lambda v: None if isinstance(v, list) and v and all(_number(x) and lo <= x <= hi for x in v) else what


def wandb_name(v: Any) -> str | None:
    """W&B project and entity names: non-empty, at most 128 characters, none of W&B's reserved characters."""
    ok = isinstance(v, str) and 0 < len(v) <= 128 and not any(c in v for c in "/\\#?%:") and v.strip() == v
    return None if ok else "a W&B name: 1 to 128 characters without spaces at the ends or any of / \\ # ? % :"


LOGGERS = ("tensorboard", "wandb")  # runner.logger; rl/loggers has a module for each
PRECISIONS = ("auto", "fp32", "bf16")  # runner.precision; rl/precision.py resolves "auto"
POSITIVE = float_range(0.0, lo_open=True)
NON_NEGATIVE = float_range(0.0)
PROBABILITY = float_range(0.0, 1.0)

# Lists of numbers whose length is the user's choice (other number lists are fixed-size vectors)
FREE_LENGTH_LISTS = {"terrain.obstacle_height_fractions"}

# Ranges of every field with a bound; a field not named here is only type-checked.
RULES: dict[str, Check] = {
    "env.num_envs": int_at_least(1, 1 << 20),
    "env.episode_length_s": POSITIVE,
    "env.history_length": int_at_least(1, 100),
    "runner.num_steps_per_env": int_at_least(1, 100_000),
    "runner.max_iterations": int_at_least(1),
    "runner.save_interval": int_at_least(0),
    "runner.seed": int_at_least(0, 2**63 - 1),
    "runner.log_interval": int_at_least(1),
    "runner.max_skipped_updates": int_at_least(1),
    "runner.precision": one_of(*PRECISIONS),
    "runner.logger": one_of(*LOGGERS),
    "runner.wandb_project": wandb_name,
    "runner.wandb_entity": optional(wandb_name),
    "algorithm.value_loss_coef": NON_NEGATIVE,
    "algorithm.clip_param": POSITIVE,
    "algorithm.entropy_coef": NON_NEGATIVE,
    "algorithm.num_learning_epochs": int_at_least(1, 1000),
    "algorithm.num_mini_batches": int_at_least(1),
    "algorithm.critic_warmup_iterations": int_at_least(0),
    "algorithm.learning_rate": POSITIVE,
    "algorithm.schedule": one_of("adaptive", "fixed"),
    "algorithm.gamma": PROBABILITY,
    "algorithm.lam": PROBABILITY,
    "algorithm.desired_kl": optional(POSITIVE),
    "algorithm.max_grad_norm": POSITIVE,
    "algorithm.min_lr": POSITIVE,
    "algorithm.max_lr": POSITIVE,
    "algorithm.symmetry.mirror_loss_coef": NON_NEGATIVE,
    "policy.actor_hidden_dims": int_list(1, 16384),
    "policy.critic_hidden_dims": int_list(1, 16384),
    "policy.init_noise_std": POSITIVE,
    "policy.min_std": POSITIVE,
    "policy.max_std": POSITIVE,
    "sim.dt": float_range(0.0, 1.0, lo_open=True),
    "sim.nthread": int_at_least(0, 4096),
    "sim.nconmax": int_at_least(0, 100_000),
    "sim.njmax": int_at_least(0, 1_000_000),
    "sim.cone": one_of("pyramidal", "elliptic"),
    "sim.impratio": float_range(1.0, 1000.0),
    "sim.solver": one_of("newton", "cg", "pgs"),
    "sim.iterations": int_at_least(1, 10_000),
    "sim.ls_iterations": int_at_least(1, 10_000),
    "control.decimation": int_at_least(1, 10_000),
    "control.action_scale": POSITIVE,
    "control.clip_actions": POSITIVE,
    "asset.contact_threshold": NON_NEGATIVE,
    "asset.terminate_tilt": NON_NEGATIVE,
    "asset.terminate_height": NON_NEGATIVE,
    "init_state.joint_pos_noise": NON_NEGATIVE,
    "init_state.joint_vel_noise": NON_NEGATIVE,
    "init_state.base_vel_noise": NON_NEGATIVE,
    "init_state.yaw_noise": NON_NEGATIVE,
    "commands.resampling_time": POSITIVE,
    "commands.zero_threshold": NON_NEGATIVE,
    "commands.lin_vel_x": ordered_range(),
    "commands.lin_vel_y": ordered_range(),
    "commands.ang_vel_yaw": ordered_range(),
    "commands.curriculum_initial_level": PROBABILITY,
    "commands.heading_fraction": PROBABILITY,
    "commands.curriculum_step": PROBABILITY,
    "commands.curriculum_threshold": PROBABILITY,
    "commands.gait_frequency": ordered_range(0.0, lo_open=True),
    "commands.gait_stance_ratio": PROBABILITY,
    "rewards.tracking_sigma": POSITIVE,
    "rewards.tracking_sigma_yaw": optional(POSITIVE),
    "rewards.tracking_sigma_wide": POSITIVE,
    "rewards.soft_dof_pos_limit": float_range(0.0, 1.0, lo_open=True),
    "rewards.feet_air_time_target": NON_NEGATIVE,
    "rewards.foot_clearance_target": NON_NEGATIVE,
    "domain_rand.friction_range": ordered_range(0.0),
    "domain_rand.restitution_range": ordered_range(0.0),
    "domain_rand.link_mass_range": ordered_range(0.0, lo_open=True),
    "domain_rand.added_mass_range": ordered_range(),
    "domain_rand.com_offset_range": ordered_range(),
    "domain_rand.motor_strength_range": ordered_range(0.0),
    "domain_rand.kp_range": ordered_range(0.0),
    "domain_rand.kd_range": ordered_range(0.0),
    "domain_rand.joint_friction_range": ordered_range(0.0),
    "domain_rand.joint_damping_range": ordered_range(0.0, lo_open=True),
    "domain_rand.armature_range": ordered_range(0.0),
    "domain_rand.contact_timeconst_range": ordered_range(0.0, lo_open=True),
    "domain_rand.contact_dmin_range": ordered_range(0.0, lo_open=True, hi_max=1.0),
    "domain_rand.push_interval_s": POSITIVE,
    "domain_rand.max_push_vel_xy": NON_NEGATIVE,
    "domain_rand.max_action_latency": int_at_least(0, 100),
    "noise.noise_level": NON_NEGATIVE,
    "normalization.clip_observations": POSITIVE,
    "terrain.mesh_type": one_of("plane", "heightfield"),
    "terrain.box_tiles": lambda v: None if isinstance(v, list) and all(isinstance(k, str) for k in v) else
    "a list of tile type names, e.g. [\"flat\", \"stairs_up\", \"stairs_down\"]",
    "terrain.static_friction": NON_NEGATIVE,
    "terrain.restitution": PROBABILITY,
    "terrain.horizontal_scale": float_range(0.01, lo_open=False),
    "terrain.vertical_scale": POSITIVE,
    "terrain.tile_size": POSITIVE,
    "terrain.border_size": NON_NEGATIVE,
    "terrain.num_rows": int_at_least(1, 100),
    "terrain.num_cols": int_at_least(1, 200),
    "terrain.platform_size": POSITIVE,
    "terrain.rough_amplitude": ordered_range(0.0),
    "terrain.rough_step": POSITIVE,
    "terrain.rough_cell": float_range(0.0, lo_open=False),
    "terrain.slope_range": ordered_range(0.0),
    "terrain.step_height_range": ordered_range(0.0),
    "terrain.step_width": POSITIVE,
    "terrain.obstacle_height_range": ordered_range(0.0),
    "terrain.obstacle_height_fractions": number_list(-1.0, 1.0),
    "terrain.obstacle_size": ordered_range(0.0, lo_open=True),
    "terrain.num_obstacles": int_at_least(0, 1000),
    "terrain.stone_gap_range": ordered_range(0.0),
    "terrain.pit_depth": NON_NEGATIVE,
    "terrain.max_init_level": int_at_least(0),
    "terrain.stone_size_range": lambda v: None if all(x > 0 for x in v) else "two positive sides [easiest, hardest] in m",
    "terrain.scan_size": lambda v: None if all(x > 0 for x in v) else "two positive lengths [x, y] in m",
    "terrain.scan_points": lambda v: None if isinstance(v, list) and len(v) == 2 and int_list(1, 100)(v) is None else "two point counts [x, y] in 1..100",
}
# Every noise scale is a non-negative number.
TEXT_DICT_FIELDS = {"collision_primitives", "mirror_joints"}  # dict-valued fields whose values are names, not numbers
PREFIX_RULES: dict[str, Check] = {"noise.noise_scales.": NON_NEGATIVE}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_problem(value: Any, ref: Any, name: str = "") -> str | None:
    """What `value` should be, judged by the reference default `ref`; None when the type fits."""
    if ref is None:
        return None  # a field whose default is None takes a value of any type (its rule checks it)
    if isinstance(ref, bool):
        return None if isinstance(value, bool) else "true or false"
    if isinstance(ref, int):
        return None if isinstance(value, int) and not isinstance(value, bool) else f"an integer, e.g. {ref}"
    if isinstance(ref, float):
        return None if _number(value) else f"a finite number, e.g. {ref:g}"
    if isinstance(ref, str):
        return None if isinstance(value, str) else f"a string, e.g. {ref!r}"
    if isinstance(ref, dict) and name in TEXT_DICT_FIELDS:
        ok = isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        return None if ok else "a mapping of names to names"
    if isinstance(ref, dict):
        ok = isinstance(value, dict) and all(isinstance(k, str) and _number(v) for k, v in value.items())
        return None if ok else "a mapping of names to numbers"
    if isinstance(ref, list):
        if not isinstance(value, list):
            return f"a list, e.g. {ref}"
        if ref and all(isinstance(x, float) for x in ref):  # a fixed-size vector: gravity, a position, a range
            return None if len(value) == len(ref) and all(_number(x) for x in value) \
                else f"a list of {len(ref)} numbers, e.g. {ref}"
        if ref and all(isinstance(x, str) for x in ref) or not ref:
            return None if all(isinstance(x, str) for x in value) else "a list of names (strings)"
    return None


def validate_config(cfg: Cfg, reference: Cfg, origin: str, allow_unknown: bool = False) -> None:
    """Raise `ConfigError` for the first field of `cfg` that `reference` or `RULES` refuse.

    Fields of a float type given as integers are converted to floats in place, so a
    hand-edited ``dt: 1`` is 1.0 afterwards. `origin` says where values came from.
    `allow_unknown` skips fields the reference lacks (a run whose config class is gone).
    """
    _check_section(cfg, reference, "", origin, allow_unknown)
    _check_relations(cfg, origin)
    _check_stages(cfg, reference, origin, allow_unknown)


def _check_section(cfg: Cfg, reference: Cfg, prefix: str, origin: str, allow_unknown: bool) -> None:
    for name in cfg.fields():
        key, value = prefix + name, getattr(cfg, name)
        if name not in reference.fields():
            if allow_unknown:
                continue
            valid = ", ".join(reference.fields())
            where = f"section '{prefix[:-1]}'" if prefix else "the config"
            raise ConfigError(f"unknown field '{key}' in {origin}; {where} has: {valid}")
        ref = getattr(reference, name)
        if isinstance(ref, Cfg) or isinstance(value, Cfg):
            if not (isinstance(ref, Cfg) and isinstance(value, Cfg)):
                raise ConfigError(f"{key} in {origin} must be a section with fields {', '.join(ref.fields())}, "
                                  f"got {_shown(value)}" if isinstance(ref, Cfg) else
                                  f"{key} in {origin} is a field, not a section; got {_shown(value)}")
            _check_section(value, ref, key + ".", origin, allow_unknown)
            continue
        if key == "runner.stages":
            continue  # a list of stages: _check_stages checks each against the fields it sets
        rule = RULES.get(key) or next((r for p, r in PREFIX_RULES.items() if key.startswith(p)), None)
        if value is None and rule is not None and rule(None) is None:
            continue  # an optional field (its Base default is None), whatever the robot class sets
        problem = None if key in FREE_LENGTH_LISTS else _type_problem(value, ref, name)  # its rule checks it
        if problem is None and rule is not None:
            problem = rule(value)
        if problem is not None:
            raise ConfigError(f"{key} = {_shown(value)} in {origin}: expects {problem}")
        if isinstance(ref, float) and isinstance(value, int):
            setattr(cfg, name, float(value))
        if name in DICT_FIELDS and name not in TEXT_DICT_FIELDS and isinstance(value, dict):
            setattr(cfg, name, {k: float(v) for k, v in value.items()})


GAIT_REWARDS = ("gait_contact", "feet_swing_height")  # reward terms that read the gait schedule (env/tasks/rewards.py)


def _check_relations(cfg: Cfg, origin: str) -> None:
    a, p = cfg.algorithm, cfg.policy
    if a.min_lr > a.max_lr:
        raise ConfigError(f"algorithm.min_lr = {a.min_lr:g} is above algorithm.max_lr = {a.max_lr:g} in {origin}; "
                          "min_lr must be <= max_lr")
    if p.min_std > p.max_std:
        raise ConfigError(f"policy.min_std = {p.min_std:g} is above policy.max_std = {p.max_std:g} in {origin}; "
                          "min_std must be <= max_std")
    gait_terms = [t for t in GAIT_REWARDS if getattr(cfg.rewards.scales, t, 0.0)]
    if gait_terms and not cfg.commands.gait_phase:
        raise ConfigError(f"rewards.scales.{gait_terms[0]} = {getattr(cfg.rewards.scales, gait_terms[0]):g} in "
                          f"{origin} follows the gait schedule; set commands.gait_phase = true or the scale to 0")
    samples = cfg.env.num_envs * cfg.runner.num_steps_per_env
    if a.num_mini_batches > samples:
        raise ConfigError(f"algorithm.num_mini_batches = {a.num_mini_batches} in {origin} exceeds the rollout's "
                          f"{samples} samples (env.num_envs x runner.num_steps_per_env); use at most {samples}")


def _check_stages(cfg: Cfg, reference: Cfg, origin: str, allow_unknown: bool) -> None:
    """Each stage of runner.stages (config/stages.py) has its shape, and each value it sets passes that field's checks."""
    stages = getattr(getattr(cfg, "runner", None), "stages", None) or []
    if not isinstance(stages, list):
        raise ConfigError(f"runner.stages = {_shown(stages)} in {origin}: expects a list of "
                          "{from_iteration: N, set: {section.field: value}} mappings")
    for i, stage in enumerate(stages):
        where = f"runner.stages[{i}] in {origin}"
        problem = stage_problem(stage)
        if problem is not None:
            raise ConfigError(f"{where} = {_shown(stage)}: expects {problem}")
        staged = copy.deepcopy(cfg)
        staged.runner.stages = []
        for key, value in stage["set"].items():
            set_field(staged, key, value, origin=where)
        validate_config(staged, reference, where, allow_unknown)
