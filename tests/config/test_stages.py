"""runner.stages: shape and value checks (one line each), and the settings in force at an iteration."""

import pytest

from config import ConfigError, apply_overrides, load_config
from config.stages import config_at, final_stage_config, settings_at

STAGES = [
    {"from_iteration": 10, "set": {"rewards.scales.termination": -2.0}},
    {"from_iteration": 5, "set": {"domain_rand.joint_damping_range": [0.2, 5.0]}},
    {"from_iteration": 20, "set": {"rewards.scales.termination": -5.0}},
]


def test_settings_at_merges_the_stages_passed_in_iteration_order_later_ones_winning():
    assert settings_at(STAGES, 4) == {}
    assert settings_at(STAGES, 5) == {"domain_rand.joint_damping_range": [0.2, 5.0]}
    assert settings_at(STAGES, 19) == {"domain_rand.joint_damping_range": [0.2, 5.0], "rewards.scales.termination": -2.0}
    assert settings_at(STAGES, 1000)["rewards.scales.termination"] == -5.0


def test_config_at_writes_the_settings_into_a_copy():
    cfg = apply_overrides(load_config("go2"), [f"runner.stages={STAGES}"])
    settled = config_at(cfg, 12)
    assert settled.rewards.scales.termination == -2.0
    assert settled.domain_rand.joint_damping_range == [0.2, 5.0]
    assert cfg.rewards.scales.termination == 0.0  # the config itself is unchanged
    assert config_at(cfg, 1).rewards.scales.termination == 0.0


def test_final_stage_config_holds_the_last_values_from_the_start_and_no_stages():
    cfg = apply_overrides(load_config("go2"), [f"runner.stages={STAGES}"])
    final = final_stage_config(cfg)
    assert final.runner.stages == []
    assert final.rewards.scales.termination == -5.0  # the later of the two stages that set it
    assert final.domain_rand.joint_damping_range == [0.2, 5.0]
    assert cfg.runner.stages == STAGES and cfg.rewards.scales.termination == 0.0  # the config itself is unchanged
    assert final_stage_config(load_config("go2", ["runner.stages=[]"])).to_dict() == \
        load_config("go2", ["runner.stages=[]"]).to_dict()  # no stages: nothing to settle


def test_load_config_final_stage_is_the_g1_recipe_s_second_stage_and_a_set_still_wins():
    """README, "The G1 model": --final_stage replaces the four values the committed run spelled out."""
    spelled_out = load_config("g1", ["runner.stages=[]", "algorithm.entropy_coef=0.001",
                                     "rewards.scales.action_rate=-0.1", "rewards.tracking_sigma=0.1",
                                     "rewards.tracking_sigma_yaw=0.25"])
    assert load_config("g1", final_stage=True).to_dict() == spelled_out.to_dict()
    assert load_config("g1", ["rewards.tracking_sigma=0.3"], final_stage=True).rewards.tracking_sigma == 0.3
    given = load_config("go2", [f"runner.stages={STAGES}"], final_stage=True)  # a --set of the stages settles them
    assert given.runner.stages == [] and given.rewards.scales.termination == -5.0


@pytest.mark.parametrize("stages, expected", [
    ('[{"from_iteration": 0, "set": {"rewards.scales.termination": -5}}]', "from_iteration as an integer >= 1"),
    ('[{"from_iteration": 3}]', "exactly the keys from_iteration and set"),
    ('[{"from_iteration": 3, "set": {}}]', "non-empty mapping"),
    ('[{"from_iteration": 3, "set": {"sim.dt": 0.01}}]', "not 'sim.dt'"),
    ('[{"from_iteration": 3, "set": {"domain_rand.push_robots": false}}]', "not 'domain_rand.push_robots'"),
    ('[{"from_iteration": 3, "set": {"rewards.base_height_target": 0.3}}]', "not 'rewards.base_height_target'"),
    ('[{"from_iteration": 3, "set": {"rewards.tracking_sigma": "tight"}}]', "expects a number"),
    ('[{"from_iteration": 3, "set": {"rewards.scales.nonsense": 1.0}}]', "unknown field 'nonsense' in section 'rewards.scales'"),
    ('[{"from_iteration": 3, "set": {"domain_rand.joint_damping_range": [2, 1]}}]', "ordered range"),
    ('[{"from_iteration": 3, "set": {"rewards.scales.termination": "big"}}]', "expects a number"),
    ('[{"from_iteration": 3, "set": {"algorithm.learning_rate": 0.001}}]', "not 'algorithm.learning_rate'"),
    ('[{"from_iteration": 3, "set": {"algorithm.entropy_coef": -0.01}}]', "algorithm.entropy_coef"),
    ("5", "expects a list"),
])
def test_a_bad_stage_is_one_config_error_naming_what_is_accepted(stages, expected):
    with pytest.raises(ConfigError) as err:
        apply_overrides(load_config("go2"), [f"runner.stages={stages}"])
    message = str(err.value)
    assert expected in message and "\n" not in message
    assert stages == "5" or "runner.stages[0]" in message  # the line names the stage at fault


def test_a_live_reward_parameter_is_a_stage_setting():
    stages = [{"from_iteration": 7, "set": {"rewards.tracking_sigma": 0.1}}]
    cfg = apply_overrides(load_config("go2"), [f"runner.stages={stages}"])
    assert config_at(cfg, 7).rewards.tracking_sigma == 0.1
    assert config_at(cfg, 6).rewards.tracking_sigma == cfg.rewards.tracking_sigma != 0.1


def test_the_entropy_coefficient_is_a_stage_setting():
    stages = [{"from_iteration": 4, "set": {"algorithm.entropy_coef": 0.001}}]
    cfg = apply_overrides(load_config("g1"), [f"runner.stages={stages}"])
    assert config_at(cfg, 4).algorithm.entropy_coef == 0.001
    assert config_at(cfg, 3).algorithm.entropy_coef == load_config("g1").algorithm.entropy_coef != 0.001


def test_the_committed_go2_stages_validate_and_end_with_the_robust_settings():
    cfg = load_config("go2")
    final = config_at(cfg, 10**6)
    assert final.rewards.scales.termination < 0
    assert final.domain_rand.joint_damping_range[1] > cfg.domain_rand.joint_damping_range[1]
