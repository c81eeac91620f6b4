"""Checkpoint writes that fail (disk full, permission denied): warned, logged, training goes on, nothing lost."""

from benchmarks.faults.write_faults import failing_writes, write_fault_trials


def test_failed_writes_are_reported_and_the_previous_checkpoint_survives(experiments):
    trials = write_fault_trials(experiments)
    assert len(trials) == 9
    assert all(t.ok for t in trials), [t.detail for t in trials if not t.ok]


def test_a_run_whose_last_save_fails_exits_1_with_the_earlier_checkpoint(experiments, capsys):
    trials = failing_writes(experiments, "lost", {2, 3, 4}, 3)
    assert all(t.ok for t in trials), [t.detail for t in trials]
    assert "exit status 1" in trials[-1].detail and "policy.pt at iteration 1" in trials[-1].detail
