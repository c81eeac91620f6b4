"""The robot check's symmetry and level-feet findings (env/robot_symmetry.py, env/robot_check.py).

Each broken robot is a copy of one of ours in a temp folder with one line of its robot file
edited by hand, as a user would: an axis turned, an axis sign flipped, a calf made longer.
"""

import shutil
from pathlib import Path

import pytest

import train
from config import load_config
from env.check_robot import main as check_robot
from env.robot_check import RobotCheckError, inspect_robot, require_fast_check

ROOT = Path(__file__).resolve().parents[2]
FILES = {"go2": "assets/go2/go2.xml", "qmini": "assets/qmini/qmini.xml",
         "example_quad": "assets/example_quad/urdf/example_quad.urdf"}
QUAD_FL = '<origin xyz="0.12 0.075 0"/><axis xyz="1 0 0"/>'  # example_quad's FL hip joint: origin and axis
QUAD_THIGH = '<parent link="FL_hip"/><child link="FL_thigh"/><origin xyz="0 0.06 0"/><axis xyz="0 1 0"/>'
QUAD_TWINS = "left-right twins FL_foot/FR_foot, RL_foot/RR_foot; front-back twins FL_foot/RL_foot, FR_foot/RR_foot"
QUAD_FL_CALF = '<parent link="FL_thigh"/><child link="FL_calf"/><origin xyz="0 0 -0.15"/><axis xyz="0 1 0"/>'


def edited(tmp_path: Path, config: str, *edits: tuple[str, str]) -> list[str]:
    """Copy the robot's folder, replace each (old, new) exactly once in its robot file; the override naming the copy."""
    src = ROOT / FILES[config]
    folder = src.parents[1] if src.parent.name == "urdf" else src.parent
    shutil.copytree(folder, tmp_path / folder.name)
    path = tmp_path / folder.name / src.relative_to(folder)
    text = path.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text)
    return [f"asset.file={path}"]


@pytest.mark.parametrize("config, twins", [
    ("go2", QUAD_TWINS), ("example_quad", QUAD_TWINS),
    ("qmini", "left-right twins ankle_pitch_l/ankle_pitch_r;"),  # every Qmini joint mirrors with the opposite sign
])
def test_our_robots_are_symmetric(config, twins):
    _, report = inspect_robot(load_config(config))
    assert report.problems == []
    assert any(line.startswith(f"symmetry: {twins}") for line in report.lines)


BROKEN = {  # config, (old, new) in its robot file, how the fast check's line starts
    "thigh turned to yaw": ("example_quad", (QUAD_THIGH, QUAD_THIGH.replace("0 1 0", "0 0 1")),
                            "FL_thigh_joint's axis breaks the robot's symmetry: it turns about (+0.00, +0.00, +1.00), "
                            "its mirror twin FR_thigh_joint about (+0.00, +1.00, +0.00)"),
    "calf sign flipped": ("example_quad", (QUAD_FL_CALF, QUAD_FL_CALF.replace("0 1 0", "0 -1 0")),
                          "FL_calf_joint turns the other way from its mirror twin FR_calf_joint: from the same "
                          "(mirrored) pose a positive motion moves FL_foot forward and up, FR_foot backward and down, "
                          "though their ranges and default angles are alike; its axis sign in the robot file is flipped"),
    "hip sign flipped, symmetric range": ("example_quad", (QUAD_FL, QUAD_FL.replace("1 0 0", "-1 0 0")),
                                          "FL_hip_joint turns the same way as its mirror twin FR_hip_joint: from the "
                                          "same (mirrored) pose a positive motion moves FL_foot inward, FR_foot inward, "
                                          "though the other twins move their feet opposite ways"),
    "hip tilted (go2)": ("go2", ('name="FR_hip_joint" class="hip" axis="1 0 0"',
                                 'name="FR_hip_joint" class="hip" axis="1 0 0.4"'),
                         "FR_hip_joint's axis breaks the robot's symmetry"),
    "rear calf sign flipped (go2)": ("go2", ('name="RR_calf_joint" class="calf" axis="0 1 0"',
                                            'name="RR_calf_joint" class="calf" axis="0 -1 0"'),
                                     "RR_calf_joint turns the other way from its mirror twin RL_calf_joint"),
    "hip roll tilted (biped)": ("qmini", ('name="hip_roll_r" axis="1 0 0"', 'name="hip_roll_r" axis="1 0.3 0"'),
                                "hip_roll_l and its mirror twin hip_roll_r turn about axes that are not mirror images"),
    "knee sign flipped (biped)": ("qmini", ('name="knee_pitch_l" axis="0 -1 0"', 'name="knee_pitch_l" axis="0 1 0"'),
                                  "knee_pitch_l turns the same way as its mirror twin knee_pitch_r"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_joint_that_breaks_the_symmetry_fails_the_fast_check(case, tmp_path):
    config, edit, start = BROKEN[case]
    cfg = load_config(config, edited(tmp_path, config, edit))
    with pytest.raises(RobotCheckError) as err:
        require_fast_check(cfg)
    message = str(err.value)
    assert message.startswith(f"robot check: {start}") and "\n" not in message


def test_front_thighs_both_turned_break_the_front_back_symmetry(tmp_path):
    fr_thigh = QUAD_THIGH.replace("FL_", "FR_").replace("0.06", "-0.06")
    override = edited(tmp_path, "example_quad", *[(old, old.replace("0 1 0", "0 0 1")) for old in (QUAD_THIGH, fr_thigh)])
    _, report = inspect_robot(load_config("example_quad", override))
    assert report.problems[0].startswith("FL_thigh_joint and its front-back twin RL_thigh_joint turn about "
                                         "(+0.00, +0.00, +1.00) and (+0.00, +1.00, +0.00): neither the same line")
    assert report.problems[1].startswith("FR_thigh_joint and its front-back twin RR_thigh_joint")


def test_train_refuses_a_turned_thigh_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    override = edited(tmp_path, "example_quad", (QUAD_THIGH, QUAD_THIGH.replace("0 1 0", "0 0 1")))
    assert train.main(["--config", "example_quad", "--name", "run", "--set", override[0]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: robot check: FL_thigh_joint's axis breaks")
    assert not (tmp_path / "experiments").exists()


def test_the_full_check_names_a_flipped_calf_before_the_stand_test(tmp_path, capsys):
    override = edited(tmp_path, "example_quad", (QUAD_FL_CALF, QUAD_FL_CALF.replace("0 1 0", "0 -1 0")))
    assert check_robot(["--config", "example_quad", "--set", override[0], "--seconds", "1", "--no-png"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem:")]
    assert problems[0].startswith("problem: FL_calf_joint turns the other way from its mirror twin FR_calf_joint")


def test_one_longer_calf_is_a_support_polygon_problem_not_a_spawn_height(tmp_path):
    foot = '<parent link="FL_calf"/><child link="FL_foot"/><origin xyz="0 0 -0.15"/>'
    override = edited(tmp_path, "example_quad", (foot, foot.replace("-0.15", "-0.185")))
    _, report = inspect_robot(load_config("example_quad", override))
    assert len(report.problems) == 1  # the axes are all right: no symmetry problem, and no bare spawn-height hint
    assert report.problems[0].startswith(
        "the feet are not level at the default pose: FL_foot alone reaches the floor (FR_foot 24.4 mm, RL_foot 24.4 mm, "
        "RR_foot 24.4 mm above it), so the support polygon is FL_foot alone and the base would tilt 5 deg")
    assert report.problems[0].endswith("raising init_state.pos z to 0.253 would leave the other feet in the air")


def test_a_robot_without_twin_legs_is_not_checked(tmp_path):
    """Right hips moved 2.5 cm outwards: no leg has a mirror twin, and a turned axis goes unremarked."""
    fr, rr = QUAD_FL.replace("0.075", "-0.075"), QUAD_FL.replace("0.12 0.075", "-0.12 -0.075")
    override = edited(tmp_path, "example_quad", (fr, fr.replace("-0.075", "-0.1")), (rr, rr.replace("-0.075", "-0.1")),
                      (QUAD_FL, QUAD_FL.replace("1 0 0", "1 0 0.5")))
    _, report = inspect_robot(load_config("example_quad", override))
    assert "symmetry: no legs are left-right mirror twins; not checked" in report.lines
    assert not any("twin" in problem for problem in report.problems)
