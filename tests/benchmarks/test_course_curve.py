"""benchmarks/course_curve.py: every snapshot exported and walked over the courses, the same episodes for each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

import benchmarks.course_curve as course_curve
from benchmarks.course_curve import main, select_checkpoint

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "go2_walk"
COURSE = ["--course", "slope_down:0.1", "--episodes", "2", "--jobs", "1", "--duration", "12"]


@pytest.fixture()
def run(tmp_path, monkeypatch):
    """A copy of the go2_walk experiment (its policy.pt is iteration 400) with two snapshots: model/all/policy_100.pt
    an actor that outputs zero actions (it stands), policy_200.pt the walking policy itself."""
    root = tmp_path / "experiments"
    shutil.copytree(FIXTURE, root / "walk")
    snaps = root / "walk" / "model" / "all"
    snaps.mkdir()
    ckpt = torch.load(FIXTURE / "model" / "policy.pt", weights_only=False)
    shutil.copy(FIXTURE / "model" / "policy.pt", snaps / "policy_200.pt")
    ckpt["actor"] = {k: (torch.zeros_like(v) if k.startswith("mean_net") else v) for k, v in ckpt["actor"].items()}
    torch.save(ckpt, snaps / "policy_100.pt")
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(root))
    return tmp_path


def test_each_checkpoint_walks_the_course_and_flat_ground(run, capsys):
    out = run / "curve"
    assert main(["--name", "walk", "--out", str(out), "--select", "--flat"] + COURSE) == 0
    report = json.loads((out / "course_curve.json").read_text())
    rows = report["rows"]
    assert report["selected"]["iteration"] == 400  # walks as well as 200 (the same policy): the later one
    assert report["selected"]["rule"].startswith("of the checkpoints that passed the flat check")
    assert [r["iteration"] for r in rows] == [100, 200, 400]  # the snapshots, then the end of the run
    stands, walks, end = (r["courses"]["slope_down:0.1"] for r in rows)
    assert stands["successes"] == 0 and stands["episodes"] == 2  # zero actions: it stays at the spawn point
    assert walks["successes"] >= 1
    assert walks == end  # the same policy on the same episodes (one seed for every checkpoint)
    flat_stands, flat_walks, flat_end = (r["flat"] for r in rows)
    assert flat_stands["episodes"] == 2 and flat_stands["lin_vel_rmse_steady"] > 0.2  # it ignores its commands
    assert not flat_stands["passed"] and flat_walks["passed"]
    assert flat_walks == flat_end
    assert (out / "course_curve.png").stat().st_size > 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[1/3] it 100: slope_down:0.1 0/2 reached") and "ETA" in lines[0]
    assert lines[0].split("; ")[1].startswith("flat 0/2 fell, steady linear error") and "FAIL" in lines[0]


def _row(iteration, *courses):
    """A course_curve row: courses c0, c1, ... with (successes, falls) each."""
    return {"iteration": iteration,
            "courses": {f"c{k}": {"successes": s, "falls": f} for k, (s, f) in enumerate(courses)}}


def test_select_takes_most_goals_then_fewest_falls_then_the_latest():
    assert select_checkpoint([_row(1, (9, 0), (5, 1)), _row(2, (8, 0), (5, 0))])["iteration"] == 1  # 14 goals > 13
    assert select_checkpoint([_row(1, (9, 0), (5, 0)), _row(2, (9, 1), (5, 0))])["iteration"] == 1  # fewer falls
    assert select_checkpoint([_row(1, (9, 0)), _row(2, (9, 0))])["iteration"] == 2  # a tie: the later


def _flat(row, passed):
    row["flat"] = {"falls": 0, "passed": passed}
    return row


def test_select_with_the_flat_check_takes_only_checkpoints_that_passed_it():
    best, other = _row(1, (9, 0)), _row(2, (5, 0))
    assert select_checkpoint([_flat(best, False), _flat(other, True)])["iteration"] == 2  # 9 goals, but it fails
    assert select_checkpoint([_flat(best, True), _flat(other, True)])["iteration"] == 1  # flat not counted as a course
    assert select_checkpoint([_flat(_row(1, (9, 0)), False), _flat(_row(2, (5, 0)), False)]) is None


def test_every_and_from_iteration_pick_the_snapshots(run):
    out = run / "curve"
    assert main(["--name", "walk", "--out", str(out), "--from_iteration", "150"] + COURSE) == 0
    assert [r["iteration"] for r in json.loads((out / "course_curve.json").read_text())["rows"]] == [200, 400]


def test_a_live_run_rewriting_policy_pt_does_not_change_the_end_row(run, monkeypatch):
    """A run still training rewrites policy.pt every iteration: the end row walks the weights of the iteration it
    is labelled with (400, the walking policy), not the file as it is when its turn comes (here: a standing actor)."""
    policy_pt = run / "experiments" / "walk" / "model" / "policy.pt"
    standing = torch.load(run / "experiments" / "walk" / "model" / "all" / "policy_100.pt", weights_only=False)
    standing["iteration"] = 401
    walk = course_curve.walk_courses

    def walk_then_train_on(*args, **kwargs):
        result = walk(*args, **kwargs)
        torch.save(standing, policy_pt)  # the training run saves its next iteration meanwhile
        return result

    monkeypatch.setattr(course_curve, "walk_courses", walk_then_train_on)
    out = run / "curve"
    assert main(["--name", "walk", "--out", str(out), "--from_iteration", "150"] + COURSE) == 0
    rows = json.loads((out / "course_curve.json").read_text())["rows"]
    assert [r["iteration"] for r in rows] == [200, 400]
    assert rows[1]["courses"] == rows[0]["courses"] and rows[1]["courses"]["slope_down:0.1"]["successes"] >= 1


@pytest.mark.parametrize("extra, message", [
    (["--episodes", "0"], "--episodes must be at least 1"),
    (["--course", "ramp:0.1"], "ramp"),
    (["--from_iteration", "1000"], "no checkpoint from iteration 1000"),
    (["--flat_jitter", "2"], "add --flat"),
    (["--flat", "--flat_jitter", "5"], "under the 5 s command period, got 5"),
    (["--flat", "--flat_jitter", "-1"], "at least 0"),
])
def test_bad_input_is_one_line_and_writes_nothing(run, capsys, extra, message):
    out = run / "curve"
    args = ["--name", "walk", "--out", str(out), "--course", "slope_down:0.1", "--jobs", "1"] + extra
    assert main(args) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("note: ")]  # the old
    assert len(errors) == 1 and errors[0].startswith("error: ") and message in errors[0]  # fixture cfg's notes
    assert not out.exists()


def test_flat_jitter_reaches_the_flat_check(run, monkeypatch):
    """--flat_jitter S becomes sim2sim's --resample-jitter S on the flat check, so that its command changes land
    at every gait phase; sim2sim's own failure then stops the curve with exit 1."""
    seen = []

    def refuse(argv):
        seen.append(argv)
        return 1

    monkeypatch.setattr(course_curve.sim2sim, "main", refuse)
    out = run / "curve"
    assert main(["--name", "walk", "--out", str(out), "--flat", "--flat_jitter", "2"] + COURSE) == 1
    argv = seen[0]
    assert argv[argv.index("--variants") + 1] == "nominal"
    assert float(argv[argv.index("--resample-jitter") + 1]) == 2.0
    assert len(seen) == 1 and not out.exists()  # it stopped at the first checkpoint and wrote nothing
