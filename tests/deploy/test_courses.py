"""Terrain courses: the compiled geometry is what the course says (rise, tread, grade, box heights),
the robot collides with it, and a run on a course scores success, falls and time."""

from __future__ import annotations

import json
import math

import mujoco
import numpy as np
import pytest

from deploy.courses import APPROACH, KINDS, WIDTH, Course, course_model, parse_course
from deploy.falls import fallen
from deploy.metrics import Metrics
from deploy.policy_io import DeployError, read_policy_yaml
from deploy.robot_model import build_robot
from tests.deploy.conftest import GO2_MODEL, run_sim2sim


def surface(course: Course, xy: np.ndarray) -> np.ndarray:
    """z of the first surface a ray straight down from 5 m meets at each point, on the compiled course."""
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    course.add_to(spec, 1, 1, [1.0, 0.005, 0.0001])
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    out = np.empty(len(xy))
    geomid = np.zeros(1, dtype=np.int32)
    for i, (x, y) in enumerate(xy):
        dist = mujoco.mj_ray(model, data, np.array([x, y, 5.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
        out[i] = 5.0 - dist
    return out


def along(x0: float, x1: float, n: int = 400, y: float = 0.3) -> np.ndarray:
    xs = np.linspace(x0, x1, n)
    return np.stack([xs, np.full(n, y)], axis=1)


@pytest.mark.parametrize("text", ["stairs_up:0.1", "stairs_down:0.07,tread=0.25,steps=5", "slope_up:0.3",
                                  "slope_down:0.2,length=2", "boxes:0.08,cell=0.3,seed=3"])
def test_compiled_surface_is_the_ground_height_the_checks_use(text):
    """Falls are measured above course.ground_height: it must be the compiled geometry (away from edges)."""
    course = parse_course(text)
    xy = along(-0.5, course.goal_x + 1.0)
    edges = np.array([b[0][0] + s * b[1][0] for b in course.boxes() for s in (-1, 1)])
    if course.kind == "boxes":
        edges = np.concatenate([edges, [APPROACH + k * course.options["cell"] for k in range(40)]])
    clear = np.min(np.abs(xy[:, :1] - edges[None, :]), axis=1) > 0.005
    np.testing.assert_allclose(surface(course, xy[clear]), course.ground_height(xy[clear]), atol=1e-6)


def test_stairs_rise_and_tread():
    h, tread, steps = 0.1, 0.3, 8
    course = parse_course(f"stairs_up:{h}")
    assert course.options == {"tread": tread, "steps": steps}
    mids = APPROACH + (np.arange(steps) + 0.5) * tread  # the middle of each tread (the last: on the top)
    z = surface(course, np.stack([mids, np.zeros(steps)], axis=1))
    np.testing.assert_allclose(np.diff(np.concatenate([[0.0], z])), h, atol=1e-6)  # every riser h
    # each riser stands at APPROACH + i * tread: just before it the old height, just after the new one
    for i in range(steps):
        x = APPROACH + i * tread
        before, after = surface(course, np.array([[x - 0.002, 0.0], [x + 0.002, 0.0]]))
        assert after - before == pytest.approx(h, abs=1e-6)
    down = parse_course(f"stairs_down:{h}")
    z = surface(down, np.stack([mids, np.zeros(steps)], axis=1))
    assert surface(down, np.array([[0.0, 0.0]]))[0] == pytest.approx(steps * h)  # the robot starts on top
    np.testing.assert_allclose(np.diff(np.concatenate([[steps * h], z])), -h, atol=1e-6)
    assert z[-1] == pytest.approx(0.0, abs=1e-6)  # ends on the floor
    assert down.start_height == pytest.approx(steps * h) and course.start_height == 0.0


@pytest.mark.parametrize("kind,sign", [("slope_up", 1.0), ("slope_down", -1.0)])
def test_slope_grade(kind, sign):
    course = parse_course(f"{kind}:0.3")
    xs = APPROACH + np.array([0.5, 2.5])
    z = surface(course, np.stack([xs, np.zeros(2)], axis=1))
    assert (z[1] - z[0]) / 2.0 == pytest.approx(sign * 0.3, abs=1e-6)
    top = surface(course, np.array([[0.0, 0.0], [course.goal_x, 0.0]]))
    assert max(top) == pytest.approx(0.9, abs=1e-6) and min(top) == pytest.approx(0.0, abs=1e-6)  # 0.3 x 3 m


def test_box_field_heights_and_width():
    course = parse_course("boxes:0.08,cell=0.4,length=4,seed=1")
    heights = course.box_heights()
    assert heights.shape == (10, int(round(WIDTH / 0.4)))
    assert heights.min() >= 0.0 and heights.max() <= 0.08 and heights.max() > 0.06  # uniform on [0, 0.08]
    centres = np.array([[APPROACH + (r + 0.5) * 0.4, -WIDTH / 2 + (c + 0.5) * 0.4] for r, c in np.ndindex(heights.shape)])
    np.testing.assert_allclose(surface(course, centres), heights.ravel(), atol=1e-6)
    assert not np.array_equal(heights, parse_course("boxes:0.08,seed=2").box_heights())  # the seed draws the field


@pytest.mark.parametrize("text,words", [
    ("stairs:0.1", "KIND:VALUE"), ("stairs_up", "KIND:VALUE"), ("stairs_up:-0.1", "positive"),
    ("slope_up:abc", "positive"), ("boxes:0.08,cell=0", "positive"), ("stairs_up:0.1,steps=0", "steps must be"),
    ("stairs_up:0.1,length=3", "unknown option"), ("boxes:0.05,cell=5", "longer than the field"),
    ("boxes:0.04,layouts=0", "layouts must be >= 1"), ("boxes:0.04,layouts=2.5", "layouts must be an integer"),
])
def test_bad_course_text_is_one_line(text, words):
    with pytest.raises(DeployError) as err:
        parse_course(text)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_layouts_are_fields_seeded_in_turn():
    course = parse_course("boxes:0.04,seed=3,layouts=3")
    assert course.name == "boxes:0.04,seed=3,layouts=3"
    fields = course.layouts()
    assert [f.options["seed"] for f in fields] == [3, 4, 5] and all(f.options["layouts"] == 1 for f in fields)
    np.testing.assert_array_equal(fields[0].box_heights(), parse_course("boxes:0.04,seed=3").box_heights())
    assert not np.array_equal(fields[1].box_heights(), fields[2].box_heights())
    single = parse_course("boxes:0.04")
    assert single.layouts() == [single]


def test_metrics_concat_keeps_every_episode_in_order():
    a, b = Metrics(2, 0.02, course=True), Metrics(1, 0.02, course=True)
    a.fell[:] = [True, False]
    a.reach(np.array([False, True]), np.array([0.0, 5.0]), 4.6, 3.0)
    b.reach(np.array([True]), np.array([1.0]), 4.6, 2.0)
    rows = Metrics.concat([a, b]).per_episode()
    assert [r["fell"] for r in rows] == [True, False, False]
    assert [r["goal_time_s"] for r in rows] == [None, 3.0, None]
    assert [r["furthest_x_m"] for r in rows] == [None, 5.0, 1.0]
    assert Metrics.concat([a, b]).summary()["successes"] == 1


def test_course_layouts_from_the_command_line(go2_export, tmp_path):
    """layouts=2 runs the first episodes on the seed's field and the rest on the next; fewer episodes than
    layouts is one line, exit 2, nothing written."""
    out = tmp_path / "boxes.json"
    args = ["--export", str(go2_export), "--model", str(GO2_MODEL), "--course", "boxes:0.02,seed=4,layouts=2",
            "--duration", "1", "--quiet", "--out", str(out)]
    bad = run_sim2sim(*args, "--episodes", "1", timeout=300)
    assert bad.returncode == 2 and "2 layouts need at least as many episodes" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not out.exists()
    proc = run_sim2sim(*args, "--episodes", "3", timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())["courses"]["boxes:0.02,seed=4,layouts=2"]
    assert [e["layout_seed"] for e in result["episodes"]] == [4, 4, 5]
    assert result["summary"]["episodes"] == 3


def test_names_round_trip():
    for text in ["stairs_up:0.1", "boxes:0.04,cell=0.3", "slope_down:0.15,length=2"]:
        assert parse_course(parse_course(text).name) == parse_course(text)
    assert set(KINDS) == {"stairs_up", "stairs_down", "slope_up", "slope_down", "boxes"}


def test_course_collides_with_the_robot(go2_export):
    """The course's boxes collide with the robot's feet as the floor does: a robot dropped onto the top of the
    stairs rests there, not on the floor below."""
    spec = read_policy_yaml(go2_export)
    robot = build_robot(GO2_MODEL, spec)
    course = parse_course("stairs_up:0.1")
    model = course_model(robot, course)
    assert model.ngeom == robot.model.ngeom + len(course.boxes())
    data = mujoco.MjData(model)
    x = course.goal_x + 0.5
    data.qpos[robot.free_qpos:robot.free_qpos + 3] = [x, 0.0, robot.spawn_height + course.rise + 0.05]
    data.qpos[robot.free_qpos + 3] = 1.0
    data.qpos[robot.qpos_idx] = spec.default_joint_pos
    data.ctrl[:] = spec.default_joint_pos
    for _ in range(400):
        mujoco.mj_step(model, data)
    z = data.qpos[robot.free_qpos + 2]
    assert z > course.rise + 0.5 * robot.spawn_height  # standing on the top step, 0.8 m up


def test_fall_height_counts_from_the_ground_under_the_base():
    """A base 0.9 m up but only 0.05 m above the top of a staircase has fallen; one 0.3 m above the floor has not."""
    qpos = np.zeros((2, 7))
    qpos[:, 3] = 1.0
    qpos[:, 2] = [0.85, 0.3]
    ground = np.array([0.8, 0.0])
    assert fallen(qpos, np.zeros((2, 6)), 0, 1.0, 0.12 + ground).tolist() == [True, False]
    assert fallen(qpos, np.zeros((2, 6)), 0, 1.0, 0.12).tolist() == [False, False]  # not above z = 0


def test_goal_ends_the_episode_as_a_success():
    m = Metrics(3, 0.02, course=True)
    live = np.array([True, True, False])
    live = m.reach(live, np.array([5.0, 2.0, 9.0]), 4.6, 4.0)  # robot 2 had fallen already: no success
    assert live.tolist() == [False, True, False]
    s = m.summary()
    assert (s["successes"], s["success_rate"], s["goal_time_s"]) == (1, pytest.approx(1 / 3), 4.0)
    assert "successes" not in Metrics(1, 0.02).summary()  # flat runs report no course figures


def test_course_summary_tells_slow_from_fallen_and_where_they_stopped():
    m = Metrics(3, 0.02, course=True)
    m.fell[:] = [False, False, True]  # robot 2 fell before this step
    live = np.array([True, True, False])
    live = m.reach(live, np.array([2.5, 3.0, 9.0]), 4.6, 1.0)
    live = m.reach(live, np.array([2.0, np.nan, 9.0]), 4.6, 1.02)  # robot 0 slid back; a non-finite x is no progress
    rows = m.per_episode()
    assert [r["furthest_x_m"] for r in rows] == [2.5, 3.0, None]  # a robot never live has no furthest x
    s = m.summary()
    assert (s["successes"], s["timeouts"], s["stopped_at_m"]) == (0, 2, pytest.approx(2.75))
    m.reach(np.array([True, False, False]), np.array([4.7, 0.0, 0.0]), 4.6, 1.04)
    assert m.summary()["stopped_at_m"] == 3.0 and m.summary()["timeouts"] == 1


def test_course_run_from_the_command_line(go2_export, tmp_path):
    """The flat test policy walks a gentle slope but not 0.25 m stairs; the JSON holds both courses."""
    out = tmp_path / "courses.json"
    proc = run_sim2sim("--export", str(go2_export), "--model", str(GO2_MODEL), "--course", "slope_up:0.05,length=2",
                       "--course", "stairs_up:0.25,steps=3", "--episodes", "2", "--duration", "16", "--out", str(out),
                       "--quiet", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "slope_up:0.05" in proc.stdout and "reached" in proc.stdout
    report = json.loads(out.read_text())
    assert report["mode"] == "course" and report["results"] == {}
    slope, stairs = report["courses"]["slope_up:0.05,length=2"], report["courses"]["stairs_up:0.25,steps=3"]
    assert slope["summary"]["successes"] == 2 and slope["pass"]
    assert all(e["goal_time_s"] is not None and e["goal_time_s"] <= 16 for e in slope["episodes"])
    assert stairs["summary"]["successes"] == 0 and not stairs["pass"]
    assert math.isclose(stairs["goal_x_m"], APPROACH + 2 * 0.3 + 0.6)


def test_the_suite_adds_courses_only_for_policies_trained_on_rough_terrain():
    from deploy.defaults import GENERIC_COURSES, suite_courses

    assert suite_courses("go2", {"terrain": "plane"}) == [] and suite_courses("qmini", None) == []
    assert "stairs_up:0.10" in suite_courses("go2_rough", {"terrain": "heightfield"})
    assert "stairs_up:0.15" in suite_courses("go2_perceptive", {"terrain": "heightfield"})
    assert suite_courses("my_robot_rough", {"terrain": "heightfield"}) == GENERIC_COURSES
    for name in ["go2_rough", "go2_perceptive", "qmini_rough", "other"]:
        for text in suite_courses(name, {"terrain": "heightfield"}):
            parse_course(text)  # every default course is valid


def test_course_table_shows_timeouts_and_where_the_robots_stopped():
    from deploy.report import course_table

    summary = {"episodes": 4, "successes": 1, "success_rate": 0.25, "falls": 1, "timeouts": 2, "goal_time_s": 12.5,
               "stopped_at_m": 2.9}
    table = course_table({"slope_up:0.15": {"summary": summary, "goal_x_m": 4.6}}, 0.8)
    row = table.splitlines()[1].split()
    assert row == ["slope_up:0.15", "1/4", "0.25", "1/4", "2/4", "12.5", "2.90/4.60", "FAIL"]
    old = dict(summary, stopped_at_m=None)
    del old["timeouts"]  # a courses.json written before these fields
    assert course_table({"c": {"summary": old, "goal_x_m": 4.6}}, 0.8).splitlines()[1].split()[4:7] == \
        ["-/4", "12.5", "-/4.60"]
