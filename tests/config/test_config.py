from pathlib import Path

import pytest

from config import ConfigError, apply_overrides, available_configs, load_config, load_saved_config
from utils.yaml import ParamsProcess

ROOT = Path(__file__).resolve().parents[2]


def test_qmini_is_available_and_loads():
    assert "qmini" in available_configs()
    cfg = load_config("qmini")
    assert cfg.asset.file == "assets/qmini/qmini.xml"
    assert cfg.commands.lin_vel_x == [-0.3, 0.7]
    # inherited fields from Base are present
    assert cfg.algorithm.clip_param == 0.2


def test_every_section_of_the_design_is_present():
    cfg = load_config("qmini")
    for section in ["runner", "algorithm", "policy", "sim", "control", "asset", "init_state", "commands",
                    "rewards", "domain_rand", "noise", "normalization", "terrain", "viewer"]:
        assert section in cfg.fields(), section


def test_unknown_config_lists_available():
    with pytest.raises(ConfigError) as err:
        load_config("qmimi")
    msg = str(err.value)
    assert "qmimi" in msg and "qmini" in msg and "\n" not in msg


def test_override_sets_and_keeps_types():
    cfg = load_config("qmini", ["runner.max_iterations=7", "sim.dt=0.002", "rewards.scales.alive=1",
                                "control.stiffness.knee=40", "domain_rand.push_robots=false"])
    assert cfg.runner.max_iterations == 7
    assert cfg.sim.dt == 0.002
    assert cfg.rewards.scales.alive == 1.0 and isinstance(cfg.rewards.scales.alive, float)
    assert cfg.control.stiffness["knee"] == 40.0
    assert cfg.domain_rand.push_robots is False


def test_override_numbers_in_exponent_notation_are_numbers():
    """YAML 1.1 reads 5e-5 as text; on the command line it is the number a researcher typed."""
    cfg = load_config("qmini", ["algorithm.learning_rate=5e-5", "algorithm.max_lr=1E-2",
                                "domain_rand.friction_range=[5e-1, 1.25]", "runner.wandb_project=1e3run"])
    assert cfg.algorithm.learning_rate == 5e-5 and cfg.algorithm.max_lr == 1e-2
    assert cfg.domain_rand.friction_range == [0.5, 1.25]
    assert cfg.runner.wandb_project == "1e3run"  # text that only starts like a number stays text


def test_a_free_length_list_takes_any_number_of_items():
    cfg = load_config("qmini_rough", ["terrain.obstacle_height_fractions=[-1.0,-0.5,0.5,1.0]"])
    assert cfg.terrain.obstacle_height_fractions == [-1.0, -0.5, 0.5, 1.0]


def test_override_does_not_leak_into_other_loads():
    load_config("qmini", ["runner.max_iterations=7"])
    assert load_config("qmini").runner.max_iterations != 7


@pytest.mark.parametrize("override, expected", [
    ("runner.max_iteration=5", ["unknown field 'max_iteration'", "section 'runner'", "max_iterations"]),
    ("runer.max_iterations=5", ["unknown section 'runer'", "runner"]),
    ("max_iterations=5", ["needs a section"]),
    ("runner.max_iterations", ["section.field=value"]),
    ("runner.max_iterations=abc", ["expects an integer"]),
    ("domain_rand.push_robots=3", ["expects true or false"]),
    ("rewards.scales=1", ["is a section"]),
    ("terrain.obstacle_height_fractions=[2.0]", ["a non-empty list of numbers in [-1, 1]"]),
    ("terrain.obstacle_height_fractions=[]", ["a non-empty list of numbers in [-1, 1]"]),
    ("terrain.slope_range=[0.0,0.1,0.2]", ["a list of 2 numbers"]),  # a range stays two numbers
])
def test_bad_overrides_name_what_is_valid(override, expected):
    cfg = load_config("qmini")
    with pytest.raises(ConfigError) as err:
        apply_overrides(cfg, [override])
    message = str(err.value)
    for text in expected:
        assert text in message
    assert "\n" not in message
    assert override == "runner.max_iterations" or "in the overrides (--set and flags)" in message  # where it came from


def test_yaml_round_trip_rebuilds_an_identical_config(tmp_path):
    cfg = load_config("qmini", ["runner.seed=3"])
    path = tmp_path / "cfg.yaml"
    path.write_text(ParamsProcess.dumps(cfg))
    again = ParamsProcess.load(path)
    assert again == cfg
    assert again.to_dict() == cfg.to_dict()
    assert ParamsProcess.digest(again) == ParamsProcess.digest(cfg)
    # dict-valued fields stay dicts, sections stay sections
    assert isinstance(again.init_state.default_joint_angles, dict)
    assert again.rewards.scales.tracking_lin_vel == cfg.rewards.scales.tracking_lin_vel


def test_a_saved_config_missing_newer_fields_loads_with_base_defaults(tmp_path, capsys):
    from config import load_saved_config

    cfg = load_config("qmini", ["runner.seed=3"])
    data = cfg.to_dict()
    del data["rewards"]["tracking_sigma_yaw"]  # as saved before the field existed
    del data["viewer"]  # a whole section added later
    path = tmp_path / "cfg.yaml"
    path.write_text(ParamsProcess.dumps(ParamsProcess.from_dict(data)))

    again = load_saved_config(path)
    assert again.rewards.tracking_sigma_yaw is None  # Base's default: the behaviour before the field
    assert again.viewer == cfg.viewer
    assert again.runner.seed == 3 and again.rewards.tracking_sigma == cfg.rewards.tracking_sigma  # saved values kept
    err = capsys.readouterr().err
    assert "rewards.tracking_sigma_yaw" in err and "viewer" in err


def test_a_complete_saved_config_loads_unchanged_and_silently(tmp_path, capsys):
    from config import load_saved_config

    cfg = load_config("go2")
    path = tmp_path / "cfg.yaml"
    path.write_text(ParamsProcess.dumps(cfg))
    assert load_saved_config(path) == cfg
    assert capsys.readouterr().err == ""


def test_a_config_saved_before_scene_composition_reads_as_bodies(capsys):
    """cfg.yaml files that name the old MJCFs' touch sensors (asset.foot_sensors ...) still load, as bodies."""
    cfg = load_saved_config(ROOT / "tests" / "data" / "go2_walk" / "model" / "cfg.yaml")
    assert cfg.asset.foot_bodies == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
    assert cfg.asset.termination_bodies == ["base_link"]
    assert cfg.asset.penalized_bodies == ["FL_thigh", "FR_thigh", "RL_thigh", "RR_thigh"]
    assert not hasattr(cfg.asset, "foot_sensors") and not hasattr(cfg.asset, "foot_velocity_sensors")
    assert cfg.control.torque_limits == {"hip": 23.7, "thigh": 23.7, "calf": 45.43}  # lived in the old MJCF
    assert "uses the old fields asset.foot_sensors" in capsys.readouterr().err
    qmini = load_saved_config(ROOT / "benchmarks" / "results" / "qmini" / "policy" / "model" / "cfg.yaml")
    assert qmini.asset.foot_bodies == ["ankle_pitch_l", "ankle_pitch_r"]
    assert qmini.asset.termination_bodies == ["base_link", "knee_pitch_l", "knee_pitch_r"]


def test_the_committed_qmini_rough_trained_with_what_its_config_holds_now():
    """The README's terrain-stage command (the config and one --set) trains with the committed policy's settings:
    the recipe lives in config/qmini_rough.py, not only in the command a run was started with."""
    committed = load_saved_config(ROOT / "benchmarks" / "results" / "qmini_rough" / "policy" / "model" / "cfg.yaml")
    now = load_config("qmini_rough", ["algorithm.critic_warmup_iterations=40"])
    committed.runner.precision = now.runner.precision  # "auto" in the config, resolved (bf16) in the run's file
    assert now.to_dict() == committed.to_dict()


def test_an_untranslatable_old_sensor_name_says_what_to_write(tmp_path):
    text = (ROOT / "tests" / "data" / "go2_walk" / "model" / "cfg.yaml").read_text()
    path = tmp_path / "cfg.yaml"
    path.write_text(text.replace("termination_sensors: [base_touch]", "termination_sensors: [trunk_contact]"))
    with pytest.raises(ConfigError, match="names sensor 'trunk_contact', which cannot be mapped to a body; replace "
                                          "asset.termination_sensors with asset.termination_bodies"):
        load_saved_config(path)


def test_only_real_configs_are_offered():
    """The config machinery beside the configs (validate, legacy, identity) is never offered as a config."""
    names = available_configs()
    assert {"qmini", "go2", "qmini_rough", "go2_rough", "example_quad"} <= set(names)
    for machinery in ("validate", "legacy", "identity", "base", "__init__"):
        assert machinery not in names
    with pytest.raises(ConfigError) as err:
        load_config("validate")
    assert "unknown config 'validate'" in str(err.value) and "legacy" not in str(err.value)


def test_a_new_config_module_is_offered(tmp_path, monkeypatch):
    """A module defining a class of its own name is a config; a helper module beside it is not."""
    import config as config_pkg

    (tmp_path / "my_robot.py").write_text("from config.base import Base\n\n\nclass my_robot(Base):\n    pass\n")
    (tmp_path / "my_helpers.py").write_text("def gains():\n    return 1\n")
    monkeypatch.setattr(config_pkg, "__file__", str(tmp_path / "__init__.py"))
    names = config_pkg.available_configs()
    assert names == ["my_robot"]


@pytest.mark.parametrize("term", ["feet_swing_height", "gait_contact"])
def test_a_gait_reward_without_the_gait_schedule_is_refused_in_one_line(term):
    with pytest.raises(ConfigError) as err:
        load_config("go2", [f"rewards.scales.{term}=-1"])  # go2 has no gait clock
    message = str(err.value)
    assert f"rewards.scales.{term} = -1" in message and "commands.gait_phase = true" in message
    assert "\n" not in message
    with_clock = load_config("go2", [f"rewards.scales.{term}=-1", "commands.gait_phase=true"])
    assert getattr(with_clock.rewards.scales, term) == -1
    assert getattr(load_config("qmini", [f"rewards.scales.{term}=-1"]).rewards.scales, term) == -1  # qmini has one
