"""GEMM epilogues from compiled graphs (python/torch_ocl/compile/epilogues.py):
relu(addmm) becomes one _addmm_activation, bit for bit eager's values,
forward and backward, 2-D and 3-D inputs; what does not match is left alone."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl

OCL = "ocl"


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shape", [(5, 12), (2, 3, 12), (1, 1, 12)])
def test_relu_of_linear_is_one_gemm_and_equals_eager(shape, dtype):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 7)).to(OCL, dtype)
    x = torch.randn(*shape, device=OCL, dtype=dtype)
    with torch.no_grad():
        ref = m(x)
        got = torch.compile(m, backend="ocl")(x)
    assert torch.equal(got.cpu(), ref.cpu())
    assert torch_ocl.compile_stats()["gemm_epilogues"] == 1


def test_training_gradients_equal_eager():
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    x = torch.randn(6, 8, device=OCL)
    F.cross_entropy(me(x), torch.arange(6, device=OCL) % 3).backward()
    F.cross_entropy(torch.compile(mc, backend="ocl")(x), torch.arange(6, device=OCL) % 3).backward()
    for pe, pc in zip(me.parameters(), mc.parameters()):
        torch.testing.assert_close(pc.grad.cpu(), pe.grad.cpu(), rtol=1e-6, atol=1e-7)
    assert torch_ocl.compile_stats()["gemm_epilogues"] == 2


def test_left_alone_when_the_product_is_used_elsewhere():
    lin = nn.Linear(4, 4).to(OCL)

    def f(x):
        y = lin(x)
        return torch.relu(y) + y  # the product has two users

    x = torch.randn(3, 4, device=OCL)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(f, backend="ocl")(x).cpu(), f(x).cpu())
    assert torch_ocl.compile_stats()["gemm_epilogues"] == 0


class Block(nn.Module):
    """A transformer block's residual adds: x + out_proj(.), x + linear2(.)."""

    def __init__(self, d=16):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, 2 * d)
        self.c = nn.Linear(2 * d, d)

    def forward(self, x):
        x = x + self.a(torch.tanh(x))
        return x + self.c(torch.relu(self.b(x)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shape", [(1, 16), (5, 16), (2, 3, 16), (1, 1, 16), (130, 16)])
def test_residual_adds_fuse_into_the_gemm(shape, dtype):
    torch.manual_seed(0)
    m = Block().to(OCL, dtype)
    x = torch.randn(*shape, device=OCL, dtype=dtype)
    ref = Block().to(torch.float64)
    ref.load_state_dict({k: v.double().cpu() for k, v in m.state_dict().items()})
    with torch.no_grad():
        got = torch.compile(m, backend="ocl")(x)
        eager = m(x)
        want = ref(x.cpu().double())
    # The fused GEMM adds bias and residual in its accumulator: as close to
    # the float64 referee as eager is (bfloat16: within its rounding).
    tol = {torch.float32: 2e-6, torch.float64: 1e-14, torch.bfloat16: 2e-2}[dtype]
    torch.testing.assert_close(got.cpu().double(), want, rtol=tol, atol=tol)
    torch.testing.assert_close(got.cpu(), eager.cpu(), rtol=2 * tol, atol=2 * tol)
    assert torch_ocl.compile_stats()["gemm_residuals"] == 2


def test_residual_training_gradients_equal_eager():
    torch.manual_seed(0)
    base = Block()
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    x = torch.randn(4, 7, 16, device=OCL)
    me(x).square().mean().backward()
    torch.compile(mc, backend="ocl")(x).square().mean().backward()
    for (name, pe), pc in zip(me.named_parameters(), mc.parameters()):
        torch.testing.assert_close(pc.grad.cpu(), pe.grad.cpu(), rtol=1e-5, atol=1e-6, msg=name)
    assert torch_ocl.compile_stats()["gemm_residuals"] == 2


def test_residual_left_alone_when_shapes_or_users_differ():
    lin = nn.Linear(4, 4).to(OCL)

    def broadcast(x, h):  # h broadcasts: not the product's shape
        return lin(x) + h

    def two_users(x, h):
        y = lin(x)
        return y + h, y * 2

    x, h = torch.randn(3, 4, device=OCL), torch.randn(4, device=OCL)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(broadcast, backend="ocl")(x, h).cpu(), broadcast(x, h).cpu())
        for g, e in zip(torch.compile(two_users, backend="ocl")(x, h.expand(3, 4)), two_users(x, h.expand(3, 4))):
            torch.testing.assert_close(g.cpu(), e.cpu())
    assert torch_ocl.compile_stats()["gemm_residuals"] == 0


def test_linear_residual_checks_its_arguments():
    x, w = torch.randn(3, 4, device=OCL), torch.randn(4, 5, device=OCL)
    b, r = torch.randn(5, device=OCL), torch.randn(3, 5, device=OCL)
    op = torch.ops.torch_ocl.linear_residual
    torch.testing.assert_close(op(x, w, b, r).cpu(), (x.cpu() @ w.cpu() + b.cpu() + r.cpu()), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(op(x, w.t().contiguous().t(), b, r.t().contiguous().t()).cpu(),
                               x.cpu() @ w.cpu() + b.cpu() + r.cpu(), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="bias"):
        op(x, w, torch.randn(4, device=OCL), r)
    with pytest.raises(RuntimeError, match="residual"):
        op(x, w, b, torch.randn(5, 3, device=OCL))
    with pytest.raises(RuntimeError, match="residual"):
        op(x, w, b, r.double())
