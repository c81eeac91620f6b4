"""Property-based: any experiment name and any --set value ends in a valid run or one line with status 2.

Never a traceback, and nothing created or deleted outside ``experiments/<valid name>/``
(the test root holds the experiments folder, an existing experiment and a sibling
folder standing for the rest of the disk).
"""

import json
import os
import shutil

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import train
from benchmarks.faults import experiments_at, run_quietly
from benchmarks.faults.bad_inputs import tree_digest, trained_run
from utils.experiment import ExperimentError, validate_name

FAST = ["--config", "qmini", "--num_envs", "2", "--max_iterations", "1", "--set", "runner.num_steps_per_env=2",
        "--set", "algorithm.num_mini_batches=1", "--set", "algorithm.num_learning_epochs=1", "--set", "sim.nthread=1"]
TRICKY_NAMES = ["", ".", "..", "/abs", "/tmp/x", "a/b", "../x", "..\\x", "a\\b", "run1", "a.b", "_x", "-x", ".hidden",
                "x\x00y", "x\n", " x", "üñí", "名前", "good", "notes", "readme.txt", "a" * 101, "a" * 100]
SETTINGS = dict(max_examples=int(os.environ.get("PROPERTY_EXAMPLES", 25)), deadline=None,  # more: PROPERTY_EXAMPLES=250
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def disk(tmp_path_factory):
    root = tmp_path_factory.mktemp("disk") / "experiments"
    trained_run(root)
    return root


def _is_valid(name: str) -> bool:
    try:
        validate_name(name)
        return True
    except ExperimentError:
        return False


def _outcome(root, argv):
    before = tree_digest(root.parent)
    with experiments_at(root):
        code, _, err = run_quietly(train.main, argv)  # any exception propagates: that is a failure
    after = tree_digest(root.parent)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    return code, err, changed


def _assert_clean(code, err, changed, name, valid_name):
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert not changed, sorted(changed)[:5]
    else:
        assert valid_name
        assert all(path == f"experiments/{name}" or path.startswith(f"experiments/{name}/")
                   for path in changed), sorted(changed)[:5]


@settings(**SETTINGS)
@given(name=st.one_of(st.sampled_from(TRICKY_NAMES), st.text(max_size=12)), overwrite=st.booleans())
def test_any_name_ends_in_a_run_in_its_own_folder_or_one_line(disk, name, overwrite):
    shutil.rmtree(disk / "good_copy", ignore_errors=True)
    argv = FAST + ["--name", name] + (["--overwrite"] if overwrite else [])
    code, err, changed = _outcome(disk, argv)
    _assert_clean(code, err, changed, name, _is_valid(name))
    if not _is_valid(name):
        assert code == 2
    if name in ("notes", "readme.txt"):  # a user's folder or file among the experiments: never replaced
        assert code == 2 and (disk / "notes" / "todo.txt").is_file() and (disk / "readme.txt").is_file()
    if name == "good" and not overwrite:
        assert code == 2 and "already exists" in err


FIELDS = ["env.num_envs", "runner.num_steps_per_env", "runner.max_iterations", "algorithm.gamma",
          "algorithm.num_mini_batches", "sim.dt", "commands.lin_vel_x", "domain_rand.friction_range",
          "rewards.scales.alive", "domain_rand.push_robots", "policy.actor_hidden_dims", "control.stiffness.knee",
          "env.history_length", "policy.activation", "algorithm.schedule", "runner.save_interval"]
VALUES = st.one_of(
    st.integers(-3, 4), st.floats(allow_nan=True, allow_infinity=True, width=32), st.booleans(), st.none(),
    st.sampled_from(["abc", "", "[", "{a: 1}", "elu", "fixed", "adaptive", "1e400", "0x10", ".nan"]),
    st.lists(st.one_of(st.integers(-2, 8), st.floats(-2, 2)), max_size=3),
)


def _render(value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, list) else yaml.safe_dump(value).splitlines()[0]


@settings(**SETTINGS)
@given(field=st.sampled_from(FIELDS), value=VALUES)
def test_any_set_value_ends_in_a_run_or_one_line(disk, field, value):
    name = "prop_set"
    shutil.rmtree(disk / name, ignore_errors=True)
    argv = FAST + ["--name", name, "--set", f"{field}={_render(value)}"]
    code, err, changed = _outcome(disk, argv)
    _assert_clean(code, err, changed, name, True)
