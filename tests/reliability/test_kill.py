"""20 SIGKILLs at random instants of collection, update and checkpoint write, each followed by a resume."""

import collections

from benchmarks.faults.kill_trials import BETWEEN, PHASES, count_phases, kill_trials, landed_in, read_probes


def test_twenty_random_kills_each_resume_with_counters_continuing_and_no_temp_files(experiments):
    trials = kill_trials(experiments, 20, seed=1)
    failed = [t.detail for t in trials if not t.ok]
    assert not failed, failed
    assert collections.Counter(t.planned for t in trials) == {"collect": 7, "update": 7, "save": 6}
    # where the kills landed is read back from the killed child's phase probes, not taken from the plan
    landed = collections.Counter(t.landed for t in trials)
    assert set(landed) <= {*PHASES, BETWEEN} and set(PHASES) <= set(landed), count_phases(list(landed.elements()))
    assert all(f"planned in {t.planned}, landed " in t.detail for t in trials)
    # some kills left a half-written temp file, which the resume removed; only a kill during a save can leave one
    left_temp = [t for t in trials if "(0 temp file(s) left by the kill)" not in t.detail]
    assert left_temp and all(t.landed == "save" for t in left_temp), [t.detail for t in left_temp]


def test_a_kill_landed_in_the_phase_that_started_and_did_not_end(tmp_path):
    probes = tmp_path / "probes"
    probes.write_text("3 collect start 10.0\n3 collect end 10.02\n3 update start 10.021\n3 upd")  # last line cut
    assert read_probes(probes)[-1].phase == "update"
    assert landed_in(read_probes(probes)) == ("update", "in update of iteration 3")
    probes.write_text("3 update start 10.021\n3 update end 10.035\n")
    assert landed_in(read_probes(probes)) == (BETWEEN, "between phases, after update of iteration 3")
    assert landed_in(read_probes(tmp_path / "none")) == (BETWEEN, "before the first probe")


def test_phase_counts_follow_the_training_loop_order():
    counted = count_phases(["save", BETWEEN, "collect", "save", "update"])
    assert counted == "collect 1, update 1, save 2, between phases 1"
