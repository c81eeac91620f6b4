"""NaN/inf in observations, actions, rewards, losses and gradients never reach the weights."""

from benchmarks.faults.nan_faults import INJECTIONS, halting_trial, nan_trials


def test_each_injection_leaves_the_weights_unchanged_and_is_logged(tmp_path):
    trials = nan_trials(tmp_path)
    assert len(trials) == len(INJECTIONS)
    assert all(t.ok for t in trials), [t.detail for t in trials if not t.ok]


def test_k_skipped_updates_in_a_row_stop_training_with_one_line(experiments):
    trial = halting_trial(experiments, max_skipped=2)
    assert trial.ok, trial.detail
