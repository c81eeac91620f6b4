"""train.py --init_from: a new run starts from a committed policy's actor; counters, optimizer and the rest start fresh."""

from pathlib import Path

import pytest
import torch
import yaml

import train
from benchmarks.faults import run_quietly
from benchmarks.faults.bad_inputs import Case, check_case
from env.utils.args import get_args
from model import GaussianActor
from rl.distributed import Sync
from rl.normalizer import EmpiricalNormalizer

ROOT = Path(__file__).resolve().parents[1]
GO2 = "benchmarks/results/go2/policy"  # committed: go2, 45 -> 12, 256-128-64, critic input 81
QMINI = "benchmarks/results/qmini/policy"  # committed: qmini, 126 -> 10
TINY = ["--num_envs", "4", "--set", "runner.num_steps_per_env=4", "--set", "algorithm.num_learning_epochs=1",
        "--set", "algorithm.num_mini_batches=2", "--set", "sim.nthread=1"]


@pytest.fixture(autouse=True)
def experiments(tmp_path, monkeypatch):
    """Experiments under tmp_path/experiments (tmp_path stands for the rest of the disk); paths relative to the repo."""
    root = tmp_path / "experiments"
    root.mkdir()
    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(root))
    monkeypatch.chdir(ROOT)
    return root


def source() -> dict:
    return torch.load(ROOT / GO2 / "model" / "policy.pt", weights_only=False)


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def assert_grown_from(runner, ckpt: dict, new_inputs: int) -> str:
    """The actor and its normaliser are the source's with `new_inputs` appended: zero first-layer weights and
    normaliser mean 0, variance 1 on them, everything else as loaded. Returns the first layer's key."""
    actor = runner.alg.actor.state_dict()
    first = next(k for k, v in actor.items() if v.dim() == 2)
    old = ckpt["actor"][first].shape[1]
    assert actor[first].shape == (ckpt["actor"][first].shape[0], old + new_inputs)
    assert torch.equal(actor[first][:, :old], ckpt["actor"][first]) and not actor[first][:, old:].any()
    assert all(torch.equal(actor[k], ckpt["actor"][k]) for k in actor if k != first)
    norm, loaded = runner.obs_normalizer.state_dict(), ckpt["obs_normalizer"]
    assert torch.equal(norm["mean"][:old], loaded["mean"]) and not norm["mean"][old:].any()
    assert torch.equal(norm["var"][:old], loaded["var"]) and torch.equal(norm["var"][old:], torch.ones(new_inputs))
    return first


def built(argv: list[str]):
    """train.build: the runner just after the warm start, before any learning (its folder is prepared)."""
    return train.build(get_args(argv), Sync())


def test_go2_into_a_new_go2_run_loads_actor_critic_and_normalisers_and_nothing_else(capsys):
    experiment, cfg, runner = built(["--config", "go2", "--name", "w", "--init_from", GO2] + TINY)
    try:
        ckpt = source()
        assert same(runner.alg.actor.state_dict(), ckpt["actor"]) and same(runner.alg.critic.state_dict(), ckpt["critic"])
        assert same(runner.obs_normalizer.state_dict(), ckpt["obs_normalizer"])
        assert same(runner.critic_obs_normalizer.state_dict(), ckpt["critic_obs_normalizer"])
        assert runner.current_iteration == 0 and runner.total_env_steps == 0
        assert not runner.alg.optimizer.state and runner.alg.learning_rate == cfg.algorithm.learning_rate != \
            ckpt["learning_rate"]
        out = capsys.readouterr()
        assert (f"warm start from {GO2} (iteration {ckpt['iteration']}): loaded actor (45 -> 12, 256-128-64) and its "
                "action std, observation normaliser, critic (81 -> 1, 256-128-64), critic normaliser; "
                "fresh: optimizer, learning rate, counters") in out.out
        assert "note:" not in out.err  # same config name
        record = yaml.safe_load((experiment.model_dir / "init_from.yaml").read_text())
        assert record["source"] == GO2 and record["iteration"] == ckpt["iteration"] and record["config"] == "go2"
        assert record["path"] == str((ROOT / GO2 / "model" / "policy.pt").resolve())
    finally:
        runner.close()


def test_go2_into_go2_rough_starts_a_fresh_critic_and_trains(capsys):
    experiment, cfg, runner = built(["--config", "go2_rough", "--name", "r", "--init_from", GO2] + TINY)
    try:
        ckpt = source()
        assert_grown_from(runner, ckpt, 3)  # go2_rough's trot clock, zero weights on it
        critic = runner.alg.critic.state_dict()
        assert critic["value_net.0.weight"].shape == (256, 271)  # the clock and the height scan: its own input size
        assert critic["value_net.2.weight"].shape == ckpt["critic"]["value_net.2.weight"].shape
        assert not torch.equal(critic["value_net.2.weight"], ckpt["critic"]["value_net.2.weight"])  # fresh
        assert int(runner.critic_obs_normalizer.count) == 0
        out = capsys.readouterr()
        assert ("fresh: critic (source's 81 -> 1, 256-128-64; this run's 271 -> 1, 256-128-64), critic normaliser "
                "(source's size 81; this run's size 271), optimizer, learning rate, counters") in out.out
        assert "note: --init_from benchmarks/results/go2/policy was trained with config 'go2', this run uses " \
               "'go2_rough'" in out.err
        runner.learn(2)
        saved = torch.load(experiment.policy_path, weights_only=False)
        assert saved["iteration"] == 2 and saved["total_env_steps"] == 2 * 4 * 4  # counted from 0, not from 2652
        assert int(saved["obs_normalizer"]["count"]) > int(ckpt["obs_normalizer"]["count"])  # it went on learning
        assert all(torch.isfinite(v).all() for v in saved["actor"].values())
    finally:
        runner.close()


def test_go2_into_a_perceptive_run_grows_the_actor_with_zero_weights_on_the_clock_and_the_scan(capsys):
    """go2_perceptive's observation is go2's plus the trot clock (3) and the 187-point scan: the actor starts as
    the blind clock-less one, whatever the clock and the scan read, and learns from there."""
    experiment, cfg, runner = built(["--config", "go2_perceptive", "--name", "p", "--init_from", GO2] + TINY
                                    + ["--set", "terrain.num_rows=2", "--set", "terrain.num_cols=7"])
    try:
        ckpt = source()
        first = assert_grown_from(runner, ckpt, 3 + 187)
        assert runner.alg.actor.state_dict()[first].shape == (256, 45 + 3 + 187)
        # the same proprioception gives the same action as the source, whatever the clock and the scan read
        blind = torch.randn(3, 45)
        scans = [torch.zeros(3, 3 + 187), 3 * torch.randn(3, 3 + 187)]
        acts = [runner.alg.actor.act_inference(runner.obs_normalizer(torch.cat([blind, sc], dim=1))) for sc in scans]
        assert torch.allclose(acts[0], acts[1])
        out = capsys.readouterr().out
        assert "loaded actor (45 -> 12, 256-128-64, grown to 235 -> 12, 256-128-64: zero weights on the new inputs " \
               "gait_clock (3), height_scan (187)) and its action std, observation normaliser" in out
        runner.learn(1)
        assert runner.alg.actor.state_dict()[first][:, 48:].abs().sum() > 0  # it learns to use the scan
    finally:
        runner.close()

def test_go2_into_go2_rough_with_history_puts_the_source_on_the_newest_frame(capsys):
    """Three frames of history and the trot clock: the source's 45 inputs are the first 45 of the newest (last)
    48-value frame; the same newest frame gives the source's action whatever the earlier frames and the clock
    read; the earlier frames' normaliser starts with the source's statistics, the clocks' at 0 / 1."""
    experiment, cfg, runner = built(["--config", "go2_rough", "--name", "h", "--init_from", GO2,
                                     "--set", "env.history_length=3"] + TINY)
    try:
        ckpt = source()
        actor = runner.alg.actor.state_dict()
        first = next(k for k, v in actor.items() if v.dim() == 2)
        assert actor[first].shape == (256, 3 * 48)
        assert torch.equal(actor[first][:, 96:141], ckpt["actor"][first])
        assert not actor[first][:, :96].any() and not actor[first][:, 141:].any()
        newest = torch.randn(4, 45)
        obs = [torch.cat([3 * torch.randn(4, 96), newest, 3 * torch.randn(4, 3)], dim=1) for _ in range(2)]
        acts = [runner.alg.actor.act_inference(runner.obs_normalizer(o)) for o in obs]
        assert torch.allclose(acts[0], acts[1])
        alone, alone_norm = GaussianActor(45, 12, (256, 128, 64)), EmpiricalNormalizer(45)  # the source itself
        alone.load_state_dict(ckpt["actor"])
        alone_norm.load_state_dict(ckpt["obs_normalizer"])
        assert torch.allclose(alone.act_inference(alone_norm(newest)), acts[0], atol=1e-5)
        mean, var = ckpt["obs_normalizer"]["mean"], ckpt["obs_normalizer"]["var"]
        norm = runner.obs_normalizer.state_dict()
        for frame in range(3):
            assert torch.equal(norm["mean"][48 * frame:48 * frame + 45], mean)
            assert torch.equal(norm["var"][48 * frame:48 * frame + 45], var)
            assert not norm["mean"][48 * frame + 45:48 * frame + 48].any()
        assert "grown to 144 -> 12, 256-128-64: zero weights on the new inputs 2 earlier frames (96), " \
               "gait_clock (3)) and its action std" in capsys.readouterr().out
        runner.learn(1)
        assert runner.alg.actor.state_dict()[first][:, :96].abs().sum() > 0  # it learns to use the history
    finally:
        runner.close()


def test_train_main_writes_a_run_that_counts_from_zero(experiments):
    code, out, err = run_quietly(train.main, ["--config", "go2", "--name", "m", "--init_from", GO2,
                                              "--max_iterations", "1"] + TINY)
    assert code == 0, err
    assert out.startswith(f"warm start from {GO2} ") and "m#1" in out
    saved = torch.load(experiments / "m" / "model" / "policy.pt", weights_only=False)
    assert saved["iteration"] == 1 and saved["total_env_steps"] == 4 * 4
    assert (experiments / "m" / "model" / "init_from.yaml").is_file()
    # an experiment name is a source too
    code, out, err = run_quietly(train.main, ["--config", "go2", "--name", "m2", "--init_from", "m",
                                              "--max_iterations", "1"] + TINY)
    assert code == 0, err
    assert "warm start from m (iteration 1): loaded actor" in out


GO2_RUN = ["--config", "go2", "--name", "w"] + TINY


def _truncated_source(root: Path) -> None:
    folder = root / "cut" / "model"
    folder.mkdir(parents=True)
    (folder / "cfg.yaml").write_text((ROOT / GO2 / "model" / "cfg.yaml").read_text())
    (folder / "policy.pt").write_bytes((ROOT / GO2 / "model" / "policy.pt").read_bytes()[:5000])


CASES = [
    Case("--init_from an actor of another size", "train", GO2_RUN + ["--init_from", QMINI],
         ["--init_from benchmarks/results/qmini/policy: its actor (126 -> 10, 256-128-64) does not fit this run's "
          "actor (45 -> 12, 256-128-64)"]),
    Case("--init_from into a run without normalisation", "train",
         GO2_RUN + ["--init_from", GO2, "--set", "policy.normalize_observations=false"],
         ["normalisation on, this run has it off", "policy.normalize_observations=true"]),
    Case("--init_from other actor_hidden_dims", "train",
         GO2_RUN + ["--init_from", GO2, "--set", "policy.actor_hidden_dims=[64,64]"],
         ["(45 -> 12, 256-128-64) does not fit this run's actor (45 -> 12, 64-64)"]),
    Case("--init_from with --resume", "train", GO2_RUN + ["--init_from", GO2, "--resume", "w"],
         ["--init_from and --resume do not go together"]),
    Case("--init_from a missing experiment", "train", GO2_RUN + ["--init_from", "ghost"],
         ["--init_from ghost: no experiment 'ghost'"]),
    Case("--init_from a missing policy folder", "train", GO2_RUN + ["--init_from", "benchmarks/results/x/policy"],
         ["--init_from benchmarks/results/x/policy: ", "is not a policy folder"]),
    Case("--init_from a truncated policy.pt", "train", GO2_RUN + ["--init_from", "cut"],
         ["--init_from cut: cannot read checkpoint", "truncated or corrupted"], _truncated_source),
    Case("--init_from without --config", "train", ["--name", "w", "--init_from", GO2] + TINY,
         ["--config is required for a new run"]),
    Case("--final_stage with --resume", "train", ["--name", "w", "--resume", GO2, "--final_stage"] + TINY,
         ["--final_stage starts a new run; --resume benchmarks/results/go2/policy continues"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_warm_start_is_one_line_status_2_and_nothing_written(case, experiments):
    trial = check_case(case, experiments)
    assert trial.ok, trial.detail
    assert not (experiments / "w").exists()


def test_a_run_cannot_warm_start_from_its_own_folder_even_with_overwrite(experiments):
    code, _, err = run_quietly(train.main, ["--config", "go2", "--name", "m", "--init_from", GO2,
                                            "--max_iterations", "1"] + TINY)
    assert code == 0, err
    case = Case("own folder", "train", ["--config", "go2", "--name", "m", "--init_from", "m", "--overwrite"] + TINY,
                ["--init_from m is this run's own folder"])
    trial = check_case(case, experiments)
    assert trial.ok, trial.detail


def test_the_g1_recipe_s_second_stage_takes_the_rigid_first_stage_whole_on_the_robot_as_built():
    """README, "The G1 model": the committed rigid-upper-body policy warm-starts a G1 run whose waist and arms move."""
    first = "benchmarks/results/g1_rigid/policy"
    experiment, cfg, runner = built(["--config", "g1", "--name", "w", "--init_from", first, "--final_stage"] + TINY)
    try:
        assert cfg.runner.stages == [] and cfg.rewards.tracking_sigma_yaw == 0.25  # the stages' last values
        ckpt = torch.load(ROOT / first / "model" / "policy.pt", weights_only=False)
        assert ckpt["cfg"]["control"]["held_joints_rigid"] is True and cfg.control.held_joints_rigid is False
        assert runner.env.robot.model.nv == 35  # the as-built G1: floating base + 29 joints
        assert same(runner.alg.actor.state_dict(), ckpt["actor"]) and same(runner.alg.critic.state_dict(), ckpt["critic"])
        assert same(runner.obs_normalizer.state_dict(), ckpt["obs_normalizer"])
    finally:
        runner.close()
