"""The warp backend on Warp's CPU device, against the mujoco backend on the same MJCF.

Kernels compile on first use (minutes on a CPU; cached afterwards), so every test
here shares one small backend per robot where it can, and env counts stay tiny.
"""

import logging
import math

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

pytest.importorskip("mujoco_warp", reason="the gpu extra (mujoco-warp, warp-lang) is part of the test extra")

from config import load_config  # noqa: E402
from env.gym_env_wrapper import make_env  # noqa: E402
from env.sim import load_backend  # noqa: E402
from env.sim.scene import load_mj_model  # noqa: E402

STEPS = 50  # control steps compared


def home_state(model, n: int, seed: int = 0):
    """n home poses with a little per-env joint and velocity noise (the same for both backends)."""
    rng = np.random.default_rng(seed)
    qpos = np.repeat(model.key_qpos[0][None], n, axis=0)
    qpos[:, 7:] += rng.uniform(-0.05, 0.05, (n, model.nq - 7))
    qvel = np.zeros((n, model.nv))
    qvel[:, :2] = rng.uniform(-0.2, 0.2, (n, 2))
    return torch.tensor(qpos), torch.tensor(qvel), torch.tensor(qpos[:, 7:])


def rollout(sim, model, decimation: int, steps: int = STEPS) -> dict[str, np.ndarray]:
    """Reset every env to the same states, drive the joints with a smooth gait-like pattern, record the state."""
    n = sim.num_envs
    qpos, qvel, ctrl = home_state(model, n)
    sim.reset(torch.arange(n), qpos, qvel, ctrl)
    phase = torch.arange(model.nu, dtype=torch.float64) * 0.7
    out = {"height": [], "quat": [], "joints": [], "touch": []}
    for k in range(steps):
        t = k * decimation * model.opt.timestep
        sim.ctrl.copy_((ctrl + 0.25 * torch.sin(2 * math.pi * 1.5 * t + phase)).to(sim.ctrl.dtype))
        assert not sim.step(decimation).any()
        q = sim.qpos.double().cpu().numpy()
        out["height"].append(q[:, 2].copy())
        out["quat"].append(q[:, 3:7].copy())
        out["joints"].append(q[:, 7:].copy())
        out["touch"].append(sim.sensordata.double().cpu().numpy().copy())
    return {k: np.stack(v) for k, v in out.items()}


# The agreement bounds below hold at a 0.005 s step. At the configs' longer default steps (0.01 s Go2,
# 0.0075 s Qmini) float32 and float64 part faster through contacts: 2.1-2.4 degrees of base
# orientation after 2 s instead of < 2, and 0.09 in one reward step instead of < 0.05.
FINE_STEP = {"go2": ["sim.dt=0.005", "control.decimation=4"], "qmini": ["sim.dt=0.005", "control.decimation=3"]}


@pytest.fixture(scope="module", params=["go2", "qmini"])
def pair(request):
    """(cfg, model, mujoco backend, warp backend) with 2 envs each, for one robot."""
    cfg = load_config(request.param, ["env.num_envs=2", *FINE_STEP[request.param]])
    model = load_mj_model(cfg)
    return cfg, model, load_backend("mujoco", model, 2, 1), load_backend("warp", model, 2, 1, "cpu")


def differences(a: dict, b: dict) -> np.ndarray:
    """Largest base-height (m), base-orientation (degrees) and joint-position (rad) differences of two rollouts."""
    dots = np.abs((a["quat"] * b["quat"]).sum(-1))  # q and -q are one rotation
    angle = np.degrees(2 * np.arccos(np.clip(dots, 0, 1)))
    return np.array([np.abs(a["height"] - b["height"]).max(), angle.max(), np.abs(a["joints"] - b["joints"]).max()])


def test_trajectories_agree_with_the_mujoco_backend(pair):
    cfg, model, cpu, warp = pair
    dec = cfg.control.decimation
    a = rollout(cpu, model, dec)
    b = rollout(warp, model, dec)
    # the robot really moved and stood on its feet, so the comparison covers contacts
    assert np.ptp(a["joints"], axis=0).max() > 0.2
    assert a["touch"].max() > 100.0
    # float32 against float64 through 200 substeps of contacts: within 1 cm, 2 degrees, 0.04 rad ...
    diff = differences(a, b)
    assert (diff < [1e-2, 2.0, 0.04]).all(), diff
    # ... and closer than MuJoCo is to itself with 5% stiffer PD gains, so the tolerance tells models apart
    stiffer = load_mj_model(cfg)
    stiffer.actuator_gainprm[:, 0] *= 1.05
    stiffer.actuator_biasprm[:, 1] *= 1.05
    c = rollout(load_backend("mujoco", stiffer, 2, 1), stiffer, dec)
    assert (diff < 0.6 * differences(a, c)).all(), (diff, differences(a, c))


def test_rewards_and_observations_agree_with_the_mujoco_backend(pair):
    """Each control step from the same state gives the same observations and rewards on both backends.

    The warp world is set to the mujoco world's state before every step: left to run freely, the two
    drift apart after the first touch-down (a foot lands a substep apart in float32), and a balancing
    robot amplifies that, so a free-running comparison only agrees for lucky draws of the randomisation.
    """
    cfg, *_ = pair
    envs = {}
    for backend in ["mujoco", "warp"]:
        torch.manual_seed(3)  # the same commands, randomisation and spawn noise for both
        envs[backend] = make_env(load_config(cfg.name, ["env.num_envs=2", f"sim.backend={backend}", "sim.nthread=1",
                                                        *FINE_STEP[cfg.name]]))
    cpu, gpu = envs["mujoco"], envs["warp"]
    actions = 0.3 * torch.randn(25, 2, cpu.num_actions, generator=torch.Generator().manual_seed(1))
    for env in (cpu, gpu):
        torch.manual_seed(4)
        env.reset()
    obs = {k: [] for k in envs}
    rew = {k: [] for k in envs}
    for a in actions:
        gpu.robot.sim.qpos.copy_(cpu.robot.sim.qpos)
        gpu.robot.sim.qvel.copy_(cpu.robot.sim.qvel)
        rng = torch.get_rng_state()  # the same observation noise, pushes and commands in both steps
        for backend, env in envs.items():
            torch.set_rng_state(rng)
            o, _, r, done, _, _ = env.step(a)
            assert not done.any()
            obs[backend].append(o)
            rew[backend].append(r)
    o_cpu, o_warp = torch.stack(obs["mujoco"]), torch.stack(obs["warp"])
    r_cpu, r_warp = torch.stack(rew["mujoco"]), torch.stack(rew["warp"])
    # float32 against float64 physics, and a contact may begin a substep apart within a step
    assert (o_cpu - o_warp).abs().mean() < 1e-3
    assert (o_cpu - o_warp).abs().max() < 0.05
    assert (r_cpu - r_warp).abs().mean() < 0.03 * r_cpu.abs().mean()


def test_reset_of_a_subset_leaves_the_others_running(pair):
    cfg, model, _, warp = pair
    qpos, qvel, ctrl = home_state(model, 2)
    warp.reset(torch.arange(2), qpos, qvel, ctrl)
    warp.step(8)
    other = (warp.qpos[0].clone(), warp.qvel[0].clone(), warp.sensordata[0].clone())
    new_qpos = qpos[1:].clone()
    new_qpos[:, 2] += 0.05
    warp.reset(torch.tensor([1]), new_qpos, torch.zeros(1, model.nv), ctrl[1:])
    assert torch.allclose(warp.qpos[1].double(), new_qpos[0], atol=1e-6)
    assert torch.equal(warp.qvel[1], torch.zeros(model.nv, dtype=warp.qvel.dtype))
    # env 0 keeps its state and the sensor readings of its last step
    assert torch.equal(warp.qpos[0], other[0]) and torch.equal(warp.qvel[0], other[1])
    assert torch.equal(warp.sensordata[0], other[2])


def test_per_env_model_fields_change_only_their_world(pair):
    cfg, model, _, warp = pair
    mass = warp.expand("body_mass")
    assert mass.shape == (2, model.nbody)
    damping = warp.expand("dof_damping")
    mass[1] = torch.tensor(model.body_mass, dtype=mass.dtype) * 2.0
    damping[1, 6:] = 5.0
    warp.commit_model_changes(torch.tensor([1]))
    subtree = warp._wp.to_torch(warp.m.body_subtreemass)  # derived by set_const, per world
    assert subtree.shape[0] == 2
    assert subtree[0, 0].item() == pytest.approx(model.body_mass.sum(), rel=1e-5)
    assert subtree[1, 0].item() == pytest.approx(2 * model.body_mass.sum(), rel=1e-5)
    # the same start, different physics: the heavy, damped world moves differently
    qpos, qvel, ctrl = home_state(model, 1)
    warp.reset(torch.arange(2), qpos.repeat(2, 1), qvel.repeat(2, 1), ctrl.repeat(2, 1))
    warp.step(40)
    assert not torch.allclose(warp.qpos[0], warp.qpos[1], atol=1e-4)
    mass[1] = torch.tensor(model.body_mass, dtype=mass.dtype)
    damping[1] = damping[0]
    warp.commit_model_changes()


def test_a_launch_group_whose_capture_fails_runs_as_plain_launches(pair, monkeypatch, caplog):
    """On CUDA every launch group is captured; one that cannot be (capture raises) runs plainly, with one warning."""
    _, _, _, warp = pair
    wp = warp._wp

    class FailingCapture:
        def __init__(self, **kwargs):
            pass

        def __enter__(self):
            raise RuntimeError("operation not permitted when stream is capturing")

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(wp, "ScopedCapture", FailingCapture)
    monkeypatch.setattr(warp, "use_graphs", True)
    monkeypatch.setattr(warp, "_uncapturable", set())
    calls = []
    with caplog.at_level(logging.WARNING, logger="env.sim.warp_backend"):
        warp._run("probe", lambda: calls.append(1))
        warp._run("probe", lambda: calls.append(2))
    assert calls == [1, 2]  # ran both times, without a graph
    assert "probe" in warp._uncapturable and "probe" not in warp._graphs
    warnings = [r for r in caplog.records if "cannot be captured" in r.getMessage()]
    assert len(warnings) == 1 and "RuntimeError" in warnings[0].getMessage()


def test_divergence_is_detected_per_world(pair):
    cfg, model, _, warp = pair
    qpos, qvel, ctrl = home_state(model, 2)
    warp.reset(torch.arange(2), qpos, qvel, ctrl)
    before = warp.diverged_total
    warp.qvel[1, 0] = float("nan")
    assert warp.step(2).tolist() == [False, True]
    assert warp.diverged_total == before + 1
    assert torch.isfinite(warp.qpos[0]).all()
    warp.reset(torch.tensor([1]), qpos[1:], qvel[1:], ctrl[1:])
    assert not warp.step(2).any()


def test_a_too_small_contact_buffer_is_reported_not_silent(caplog):
    cfg = load_config("go2", ["env.num_envs=2"])
    model = load_mj_model(cfg)
    warp = load_backend("warp", model, 2, 1, "cpu", nconmax=1, njmax=8)  # four feet on the floor need more
    qpos, qvel, ctrl = home_state(model, 2)
    warp.reset(torch.arange(2), qpos, qvel, ctrl)
    diverged = warp.step(cfg.control.decimation * 10)
    assert diverged.all()  # both worlds are reset
    with caplog.at_level(logging.WARNING):
        assert warp.overflow_total > 0  # read once per iteration by the runner, which logs it to TensorBoard
    assert "overflowed" in caplog.text and "sim.nconmax" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        warp.overflow_total
    assert "overflowed" not in caplog.text  # each overflow is reported once


def test_buffers_default_to_what_the_robot_can_need():
    from env.sim.warp_setup import buffer_sizes

    model = load_mj_model(load_config("go2", []))
    nconmax, njmax = buffer_sizes(model, 0, 0)
    assert nconmax >= 4 * 4 and njmax >= 4 * nconmax // 2
    assert buffer_sizes(model, 40, 300) == (40, 300)


def test_two_iterations_of_training_then_export_and_evaluation_on_either_backend(tmp_path, monkeypatch):
    import play
    import train

    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    assert train.main(["--config", "go2", "--num_envs", "4", "--backend", "warp", "--device", "cpu", "--name", "w",
                       "--max_iterations", "2", "--set", "runner.num_steps_per_env=8"]) == 0
    exp = tmp_path / "w"
    assert (exp / "model" / "policy.pt").is_file()
    assert "backend: warp" in (exp / "model" / "cfg.yaml").read_text()
    assert play.main(["--name", "w", "--export"]) == 0  # the export does not depend on the backend
    assert (exp / "export" / "policy.onnx").is_file()
    for backend in ["warp", "mujoco"]:
        out = tmp_path / f"eval_{backend}"
        assert play.main(["--name", "w", "--backend", backend, "--eval", "2", "--policy", "trained", "--out", str(out),
                          "--set", "env.episode_length_s=1.0"]) == 0
        assert (out / "eval.json").is_file()


class SyncCounter(TorchDispatchMode):
    """Counts the torch ops that make the host wait for the device (on a GPU; they run on the CPU here too)."""

    SYNCING = {"nonzero", "_local_scalar_dense", "item", "is_nonzero", "masked_select", "equal", "unique"}

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += func.__name__.split(".")[0] in self.SYNCING
        return func(*args, **(kwargs or {}))


def test_host_synchronisations_per_env_step_are_counted():
    """Today: none in the backend, none for pushes and command resampling (masks), and one in the env: the ids
    of the envs to reset (legged_gym and Isaac Lab sync there too). This pins the count so that it only goes down."""
    env = make_env(load_config("go2", ["env.num_envs=2", "sim.backend=warp"]))
    env.reset()
    with SyncCounter() as backend_only:
        env.robot.sim.step(1)
    assert backend_only.count == 0
    with SyncCounter() as whole_step:
        for _ in range(5):
            env.step(torch.zeros(2, env.num_actions))
    assert whole_step.count == 5 * 1
