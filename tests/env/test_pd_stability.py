"""The robot check's PD-stability finding (env/pd_stability.py): omega * dt of each joint at the worst randomised draw."""

import math

import pytest

from config import load_config
from env.pd_stability import MAX_OMEGA_DT, omega_dt
from env.robot_check import RobotCheckError, home_data, inspect_robot, require_fast_check
from env.sim.scene import load_mj_model

# The G1 of the first trials: the published 0.005 s step and the shared armature range down to 0x, whose
# ankles diverged within 0.1 s of a reset.
FIRST_G1 = ["sim.dt=0.005", "control.decimation=4", "domain_rand.armature_range=[0.0,2.0]"]


def values(config: str, overrides: list[str]) -> dict[str, float]:
    cfg = load_config(config, overrides)
    model = load_mj_model(cfg)
    return omega_dt(model, home_data(model), cfg)


def test_the_first_g1_settings_fail_the_fast_check_at_the_ankles():
    with pytest.raises(RobotCheckError) as err:
        require_fast_check(load_config("g1", FIRST_G1))
    message = str(err.value)
    assert "\n" not in message and "ankle_roll_joint is unstable at sim.dt 0.005 s" in message
    assert "domain_rand.armature_range[0]" in message


@pytest.mark.parametrize("config", ["g1", "go2", "qmini", "example_quad"])
def test_every_shipped_config_passes_with_its_stiffest_joint_reported(config):
    _, report = inspect_robot(load_config(config))
    assert not [p for p in report.problems if "PD of" in p]
    line = next(line for line in report.lines if line.startswith("PD stability: stiffest joint"))
    worst = max(values(config, []).values())
    assert f"omega*dt {worst:.2f}" in line and worst < MAX_OMEGA_DT


def test_omega_dt_follows_the_step_the_gains_and_the_armature():
    base = values("g1", ["domain_rand.randomize_armature=False", "domain_rand.randomize_gains=False"])
    half_step = values("g1", ["domain_rand.randomize_armature=False", "domain_rand.randomize_gains=False",
                              "sim.dt=0.005", "control.decimation=4"])
    stiffer = values("g1", ["domain_rand.randomize_armature=False", "domain_rand.randomize_gains=True",
                            "domain_rand.kp_range=[1.0,4.0]"])
    no_armature = values("g1", ["domain_rand.randomize_armature=True", "domain_rand.armature_range=[0.0,1.0]",
                                "domain_rand.randomize_gains=False"])
    joint = "left_ankle_roll_joint"
    assert half_step[joint] == pytest.approx(base[joint] / 2)
    assert stiffer[joint] == pytest.approx(base[joint] * 2)  # sqrt(4)
    # the ankle's inertia is mostly its motor's armature: without it the PD is several times faster
    assert no_armature[joint] > 3 * base[joint]
    assert math.isfinite(no_armature[joint])
