import numpy as np
import pytest
import torch

from rl.normalizer import EmpiricalNormalizer


def test_streamed_batches_match_numpy():
    rng = np.random.default_rng(0)
    norm = EmpiricalNormalizer(3, clip=None)
    batches = [rng.normal(loc=[1.0, -2.0, 5.0], scale=[0.5, 3.0, 10.0], size=(n, 3)) for n in (1, 7, 64, 3, 200)]
    for b in batches:
        norm.update(torch.as_tensor(b, dtype=torch.float32))
    data = np.concatenate(batches)
    assert int(norm.count) == len(data)
    np.testing.assert_allclose(norm.mean.numpy(), data.mean(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(norm.var.numpy(), data.var(0), rtol=1e-4)
    x = torch.as_tensor(data[:5], dtype=torch.float32)
    expected = (data[:5] - data.mean(0)) / (data.std(0) + 1e-2)
    np.testing.assert_allclose(norm(x).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_update_flattens_leading_dims():
    norm = EmpiricalNormalizer(2)
    x = torch.randn(4, 5, 2)
    norm.update(x)
    assert torch.allclose(norm.mean, x.reshape(-1, 2).mean(0), atol=1e-6)


def test_eval_mode_does_not_update():
    norm = EmpiricalNormalizer(2)
    norm.eval()
    norm.update(torch.randn(10, 2) + 3.0)
    assert int(norm.count) == 0 and torch.equal(norm.mean, torch.zeros(2))


def test_clip_and_until():
    norm = EmpiricalNormalizer(1, clip=5.0, until=10)
    norm.update(torch.randn(10, 1))
    mean = norm.mean.clone()
    norm.update(torch.full((10, 1), 100.0))  # ignored: 'until' reached
    assert torch.equal(norm.mean, mean)
    y = norm(torch.tensor([[1e6], [-1e6]]))
    assert torch.equal(y, torch.tensor([[5.0], [-5.0]]))


def test_state_dict_roundtrip_and_update_under_inference_mode():
    a = EmpiricalNormalizer(4)
    with torch.inference_mode():
        a.update(torch.randn(50, 4) * 2 + 1)
    assert not a.mean.is_inference()
    b = EmpiricalNormalizer(4)
    b.load_state_dict(a.state_dict())
    x = torch.randn(3, 4)
    assert torch.equal(a(x), b(x)) and int(b.count) == 50


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit is deprecated but still used for export
@pytest.mark.parametrize("mode", ["trace", "script"])
def test_jit(mode):
    norm = EmpiricalNormalizer(3)
    norm.update(torch.randn(20, 3))
    x = torch.randn(5, 3)
    compiled = torch.jit.trace(norm, x) if mode == "trace" else torch.jit.script(norm)
    assert torch.allclose(compiled(x), norm(x))


def test_torch_export():
    norm = EmpiricalNormalizer(3)
    norm.update(torch.randn(20, 3))
    x = torch.randn(5, 3)
    exported = torch.export.export(norm.eval(), (x,))
    assert torch.allclose(exported.module()(x), norm(x))
