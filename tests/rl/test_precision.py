"""runner.precision: bf16 autocast of the PPO update, with everything that must stay fp32 staying fp32."""

import pytest
import torch

from config import ConfigError, load_config
from fake_env import make_cfg
from model import load_actor, load_critic
from rl import precision as precision_module
from rl.alg.ppo import PPO
from rl.precision import Precision, cpu_bf16_flags, resolve_precision

OBS, CRITIC_OBS, ACTIONS, ENVS, STEPS = 45, 81, 12, 64, 24


def _filled_ppo(precision: str) -> PPO:
    """A PPO with 256-128-64 networks and one fixed rollout in its storage (same seed: same data, same weights)."""
    torch.manual_seed(0)
    cfg = make_cfg(hidden=(256, 128, 64), algorithm={"schedule": "fixed", "num_learning_epochs": 1,
                                                     "num_mini_batches": 1, "learning_rate": 1e-3})
    ppo = PPO(load_actor(cfg.policy, OBS, ACTIONS, "cpu"), load_critic(cfg.policy, CRITIC_OBS, "cpu"),
              cfg.algorithm, "cpu", precision=Precision(precision, "cpu"))
    ppo.init_storage(ENVS, STEPS, OBS, CRITIC_OBS, ACTIONS)
    with torch.no_grad():
        for _ in range(STEPS):
            ppo.act(torch.randn(ENVS, OBS), torch.randn(ENVS, CRITIC_OBS))
            ppo.process_env_step(torch.randn(ENVS), torch.zeros(ENVS), torch.zeros(ENVS))
        ppo.compute_returns(torch.randn(ENVS, CRITIC_OBS))
    return ppo


def _update_step(precision: str) -> tuple[PPO, torch.Tensor]:
    ppo = _filled_ppo(precision)
    before = torch.cat([p.detach().flatten().clone() for p in ppo.params])
    torch.manual_seed(1)  # the same minibatch permutation
    metrics = ppo.update()
    assert "skipped" not in metrics
    return ppo, torch.cat([p.detach().flatten() for p in ppo.params]) - before


def test_the_bf16_update_moves_the_parameters_as_fp32_does():
    _, step32 = _update_step("fp32")
    ppo, step16 = _update_step("bf16")
    assert torch.isfinite(step16).all() and step16.norm() > 0
    cosine = torch.nn.functional.cosine_similarity(step32, step16, dim=0)
    assert cosine > 0.99, float(cosine)
    # weights, Adam's moments and the checkpoint stay fp32 whatever trained them
    assert all(p.dtype == torch.float32 for p in ppo.params)
    assert all(v.dtype == torch.float32 for state in ppo.optimizer.state.values() for v in state.values()
               if torch.is_tensor(v) and v.numel() > 1)
    saved = ppo.state_dict()
    assert all(t.dtype == torch.float32 for key in ("actor", "critic") for t in saved[key].values())


def test_bf16_really_runs_the_networks_in_bf16(monkeypatch):
    """The autocast is on: a matmul inside the update sees bf16 (else the test above would compare fp32 to fp32)."""
    ppo = _filled_ppo("bf16")
    seen = []
    layer = ppo.actor.mean_net[0]
    layer.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    ppo.update()
    assert seen and all(dtype == torch.bfloat16 for dtype in seen)
    ppo32 = _filled_ppo("fp32")
    seen.clear()
    ppo32.actor.mean_net[0].register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    ppo32.update()
    assert seen and all(dtype == torch.float32 for dtype in seen)


def test_auto_follows_the_hardware(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f amx_bf16 amx_tile\n")
    assert cpu_bf16_flags(cpuinfo) == ["amx_bf16"]
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse avx2\n")
    assert cpu_bf16_flags(cpuinfo) == []
    assert cpu_bf16_flags(tmp_path / "missing") == []

    monkeypatch.setattr(precision_module, "cpu_bf16_flags", lambda: ["avx512_bf16"])
    choice, why = resolve_precision("auto", "cpu")
    assert choice == "bf16" and "AVX512-BF16" in why
    monkeypatch.setattr(precision_module, "cpu_bf16_flags", lambda: [])
    assert resolve_precision("auto", "cpu")[0] == "fp32"
    assert resolve_precision("bf16", "cpu") == ("bf16", "as configured")
    assert resolve_precision("fp32", "cpu") == ("fp32", "as configured")
    with pytest.raises(ValueError):
        resolve_precision("fp16", "cpu")


def test_a_bad_precision_is_one_line():
    with pytest.raises(ConfigError) as err:
        load_config("qmini", ["runner.precision=fp16"])
    assert "runner.precision" in str(err.value) and "bf16" in str(err.value) and "\n" not in str(err.value)


def test_train_prints_and_saves_the_resolved_choice(tmp_path, monkeypatch, capsys):
    import train
    from utils.yaml import ParamsProcess

    monkeypatch.setenv("LEGGED_EXPERIMENTS_DIR", str(tmp_path))
    monkeypatch.setattr(precision_module, "cpu_bf16_flags", lambda: [])
    assert train.main(["--config", "qmini", "--name", "p", "--num_envs", "4", "--max_iterations", "1",
                       "--set", "runner.num_steps_per_env=2"]) == 0
    assert "precision fp32 (auto: no AMX-BF16 or AVX512-BF16 on this CPU)" in capsys.readouterr().out
    assert ParamsProcess.load(tmp_path / "p" / "model" / "cfg.yaml").runner.precision == "fp32"
    torch_ckpt = torch.load(tmp_path / "p" / "model" / "policy.pt", weights_only=False)
    assert all(t.dtype == torch.float32 for t in torch_ckpt["actor"].values())
    assert torch_ckpt["cfg"]["runner"]["precision"] == "fp32"


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_first_minibatch_leaves_the_adaptive_learning_rate_alone(precision):
    """The first minibatch's policy is the rollout's: bf16 rounding noise in its KL must not raise the rate."""
    torch.manual_seed(0)
    cfg = make_cfg(hidden=(64, 64), algorithm={"schedule": "adaptive", "num_learning_epochs": 1,
                                               "num_mini_batches": 1, "learning_rate": 1e-3})
    ppo = PPO(load_actor(cfg.policy, OBS, ACTIONS, "cpu"), load_critic(cfg.policy, CRITIC_OBS, "cpu"),
              cfg.algorithm, "cpu", precision=Precision(precision, "cpu"))
    ppo.init_storage(ENVS, 4, OBS, CRITIC_OBS, ACTIONS)
    with torch.no_grad():
        for _ in range(4):
            ppo.act(torch.randn(ENVS, OBS), torch.randn(ENVS, CRITIC_OBS))
            ppo.process_env_step(torch.randn(ENVS), torch.zeros(ENVS), torch.zeros(ENVS))
        ppo.compute_returns(torch.randn(ENVS, CRITIC_OBS))
    metrics = ppo.update()
    assert metrics["learning_rate"] == 1e-3
    assert metrics["kl"] < 1e-3  # the rollout's statistics were computed with the update's numerics


def test_bf16_on_hardware_that_emulates_it_gets_a_note(monkeypatch):
    from rl.precision import emulated_bf16_note

    monkeypatch.setattr(precision_module, "cpu_bf16_flags", lambda: [])
    assert "emulates" in emulated_bf16_note("bf16", "cpu")
    assert emulated_bf16_note("fp32", "cpu") is None
    monkeypatch.setattr(precision_module, "cpu_bf16_flags", lambda: ["amx_bf16"])
    assert emulated_bf16_note("bf16", "cpu") is None
