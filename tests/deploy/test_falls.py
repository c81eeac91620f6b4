"""deploy's fall rule: a termination body touching the world, as training ends its episodes, besides tilt and height."""

from __future__ import annotations

import math

import mujoco
import numpy as np

from deploy.commands import parse_schedule
from deploy.defaults import robot_defaults
from deploy.episodes import EpisodePlan, RunOptions, run_episodes
from deploy.falls import CAUSES, ContactFall, fall_body_ids, first_cause
from deploy.policy_io import read_policy_yaml
from deploy.robot_model import build_robot
from deploy.sim2sim import fall_bodies
from tests.deploy.conftest import GO2_MODEL

TWO_BODIES = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="trunk" pos="0 0 {z}">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="5"/>
      <body name="thigh" pos="0.3 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="sphere" size="0.02" mass="0.1"/>
        <body name="leg" pos="-0.1 0 0">
          <joint type="hinge" axis="0 1 0"/>
          <geom type="sphere" size="0.03" mass="0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _settled(z: float, steps: int = 50) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = mujoco.MjModel.from_xml_string(TWO_BODIES.format(z=z))
    data = mujoco.MjData(model)
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return model, data


def test_contact_with_the_world_counts_above_the_threshold():
    model, data = _settled(0.05)  # the box lies on the floor
    trunk = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "trunk")
    assert ContactFall(model, [trunk], 1.0).touching(model, data)
    assert not ContactFall(model, [trunk], 1e4).touching(model, data)  # ~50 N of weight: under 10 kN


def test_contact_with_its_own_robot_does_not_count():
    model, data = _settled(1.0, steps=1)  # in the air: the trunk touches only its own leg (a grandchild)
    trunk, leg = (mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in ("trunk", "leg"))
    pairs = {tuple(sorted(int(model.geom_bodyid[g]) for g in c.geom)) for c in data.contact}
    assert pairs == {(trunk, leg)}  # the check below has a contact to ignore
    assert not ContactFall(model, [trunk], 0.0).touching(model, data)


def test_fall_bodies_from_the_flag_then_policy_yaml():
    def trained(training: dict | None) -> tuple[str, ...]:
        return robot_defaults("qmini", training)[0].fall_bodies

    yaml = {"termination_bodies": ["base_link", "knee_l"], "contact_threshold": 2.5}
    assert fall_bodies(None, trained(yaml)) == (("base_link", "knee_l"), True)
    assert robot_defaults("qmini", yaml)[0].contact_force == 2.5
    assert fall_bodies(None, trained({"terminate_tilt": 1.0})) == ((), True)  # an older export: the base
    assert robot_defaults("qmini", {"terminate_tilt": 1.0})[0].contact_force == 1.0
    assert fall_bodies("trunk, leg", trained(None)) == (("trunk", "leg"), True)
    assert fall_bodies("none", trained({"termination_bodies": ["base_link"]})) == ((), False)
    model, _ = _settled(1.0, steps=0)
    assert fall_body_ids(model, ("leg", "shin"), base_body=1) == ([3], ["shin"])
    assert fall_body_ids(model, ("shin",), base_body=1) == ([1], ["shin"])  # none found: the base


def test_first_cause_order():
    causes = {"state": np.array([0, 0, 0, 1]), "tilt": np.array([0, 1, 0, 1]), "height": np.array([0, 1, 1, 0]),
              "contact": np.array([0, 1, 1, 1])}
    got = first_cause({k: v.astype(bool) for k, v in causes.items()})
    assert [CAUSES[i] if i >= 0 else None for i in got] == [None, "tilt", "height", "state"]


class Crouch:
    """Thighs forward, calves folded: Go2 lays its belly on the floor within a few tenths of a second."""

    def __init__(self, num_actions: int, thigh: float, calf: float):
        self.num_actions, self.thigh, self.calf = num_actions, thigh, calf

    def act(self, obs: np.ndarray) -> np.ndarray:
        a = np.zeros((len(obs), self.num_actions), dtype=np.float32)
        a[:, 1::3], a[:, 2::3] = self.thigh, self.calf
        return a


def _run(go2_export, policy, contact: bool):
    spec = read_policy_yaml(go2_export)
    assert spec.training["termination_bodies"] == ["base_link"]  # the export names the trunk
    robot = build_robot(GO2_MODEL, spec)
    # tilt and height limits out of reach: only the contact rule can call the fall
    opts = RunOptions(episodes=1, duration=1.0, seed=0, spawn_height=0.29, fall_tilt=math.pi, fall_height=0.0,
                      schedule=parse_schedule("0,0,0"), fall_bodies=tuple(spec.training["termination_bodies"]),
                      fall_contact=contact)
    plan = EpisodePlan(0.0, opts.schedule, np.zeros((0, 2)), np.zeros(0, dtype=int))
    return run_episodes(robot, robot.model, spec, policy, opts, [plan]).summary()


def test_belly_on_the_floor_is_a_fall(go2_export):
    spec = read_policy_yaml(go2_export)
    lying = _run(go2_export, Crouch(spec.num_actions, 2.0, -4.0), contact=True)
    assert lying["falls"] == 1 and lying["falls_by_cause"]["contact"] == 1
    assert _run(go2_export, Crouch(spec.num_actions, 2.0, -4.0), contact=False)["falls"] == 0  # the old rule
    standing = _run(go2_export, Crouch(spec.num_actions, 0.0, 0.0), contact=True)
    assert standing["falls"] == 0
