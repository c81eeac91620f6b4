"""20 SIGKILLs at random instants of collection, update and checkpoint write, each followed by a resume."""

import collections

from benchmarks.faults.kill_trials import kill_trials


def test_twenty_random_kills_each_resume_with_counters_continuing_and_no_temp_files(experiments):
    trials = kill_trials(experiments, 20, seed=1)
    failed = [t.detail for t in trials if not t.ok]
    assert not failed, failed
    # the kills really landed in every phase (the phase in progress is read back from the child's probes)
    phases = collections.Counter(t.detail.split()[2] for t in trials)
    assert set(phases) == {"collect", "update", "save"}, phases
    # and some kills left a half-written temp file, which the resume removed
    assert any("(0 temp file(s) left by the kill)" not in t.detail for t in trials)
