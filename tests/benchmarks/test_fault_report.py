"""benchmarks/fault_report.py: where the report goes, the kills' planned and landed phases, the committed report."""

import collections
import dataclasses
import json

import pytest

from benchmarks import fault_report
from benchmarks.faults import Trial, run_quietly
from benchmarks.faults.bad_inputs import CASES
from benchmarks.faults.kill_trials import BETWEEN, PHASES, KillTrial
from benchmarks.faults.nan_faults import INJECTIONS

STALE = f"{fault_report.COMMITTED} is stale; refresh it with: {fault_report.REFRESH_COMMITTED}"


@pytest.fixture
def experiments(tmp_path, monkeypatch):
    root = tmp_path / "experiments"
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(root))
    return root


def _stand_ins(monkeypatch):
    """Write faults, NaNs and bad inputs replaced by one trial each naming a file in its experiments folder
    (their own tests run them); the kills stay real."""
    def one(kind):
        return lambda root, *args, **kwargs: [Trial(kind, True, f"saw {root}/run1/model/policy.pt")]
    monkeypatch.setattr(fault_report, "write_fault_trials", one("write"))
    monkeypatch.setattr(fault_report, "nan_trials", one("nan"))
    monkeypatch.setattr(fault_report, "halting_trial", lambda root: one("nan-halt")(root)[0])
    monkeypatch.setattr(fault_report, "interrupt_trials", one("interrupt"))
    monkeypatch.setattr(fault_report, "bad_input_trials", one("input"))


def test_the_report_goes_to_experiments_and_names_where_the_kill_landed(experiments, monkeypatch, capsys):
    committed = fault_report.COMMITTED.read_bytes()
    _stand_ins(monkeypatch)
    assert fault_report.main(["--kills", "1"]) == 0
    out = capsys.readouterr().out
    written = experiments / "fault_report" / "faults.json"
    assert f"wrote {written}" in out
    assert fault_report.COMMITTED.read_bytes() == committed
    trials = json.loads(written.read_text())
    assert [t["kind"] for t in trials] == ["kill", "write", "nan", "nan-halt", "interrupt", "input"]
    kill = trials[0]
    assert kill["ok"] and kill["planned"] == "collect" and kill["landed"] in (*PHASES, BETWEEN), kill
    assert "kills aimed at (planned)             collect 1\n" in out
    assert f"kills landed in (probed)             {kill['landed']} 1\n" in out
    # the temporary experiments folders are written as experiments/, so a refreshed report diffs cleanly
    assert all(t["detail"] == "saw experiments/run1/model/policy.pt" for t in trials[1:]), trials


def test_out_writes_the_report_there_and_nothing_else(experiments, monkeypatch, tmp_path, capsys):
    _stand_ins(monkeypatch)
    out = tmp_path / "elsewhere" / "faults.json"
    assert fault_report.main(["--kills", "0", "--out", str(out)]) == 0
    assert "kills aimed at" not in capsys.readouterr().out  # no phase rows without kills
    assert [t["kind"] for t in json.loads(out.read_text())] == ["write", "nan", "nan-halt", "interrupt", "input"]
    assert not experiments.exists()


@pytest.mark.parametrize("argv, words", [(["--kills", "-1"], "--kills -1 is negative"),
                                         (["--out", "{tmp}"], "is a folder; give a JSON file"),
                                         (["--out", "{tmp}/file.txt/faults.json"], "a parent of it is a file")])
def test_a_bad_option_is_one_line_before_any_trial_runs(argv, words, experiments, monkeypatch, tmp_path):
    (tmp_path / "file.txt").write_text("a user's file\n")
    for step in ("kill_trials", "write_fault_trials", "nan_trials", "bad_input_trials"):
        monkeypatch.setattr(fault_report, step, lambda *args, **kwargs: pytest.fail("a trial ran"))
    code, out, err = run_quietly(fault_report.main, [a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith("error: ") and words in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_the_committed_report_has_the_fields_and_trials_the_code_writes_now():
    trials = json.loads(fault_report.COMMITTED.read_text())
    fields = {"kill": [f.name for f in dataclasses.fields(KillTrial)]}
    for t in trials:
        assert list(t) == fields.get(t["kind"], [f.name for f in dataclasses.fields(Trial)]), f"{STALE}: {t}"
    kinds = collections.Counter(t["kind"] for t in trials)
    assert set(kinds) == {k for *_, row_kinds in fault_report.ROWS for k in row_kinds}, STALE
    assert kinds["kill"] == fault_report.DEFAULT_KILLS and kinds["nan"] == len(INJECTIONS), STALE
    names = [t["detail"].split(": status")[0] for t in trials if t["kind"] == "input"]
    assert names == [c.name for c in CASES], STALE
    assert all(t["ok"] for t in trials), STALE
    assert not [t for t in trials if "fault_report_" in t["detail"]], f"{STALE} (temporary paths in it)"
