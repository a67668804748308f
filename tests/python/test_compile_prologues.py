"""LayerNorm prologues (python/torch_ocl/compile/prologues.py and
torch_ocl::norm_linear): a norm that only feeds a linear layer becomes one
op; on one float32 row it is one kernel (tocl_gemm_dot1_norm) normalising x
as it reads it. Checked against a float64 referee of layer_norm then linear
at and around the kernel's limits, against eager through torch.compile, and
that graphs that need the norm's output (training) are left alone."""

import copy
import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl
from conftest import ocl_kernels_run

OCL = "ocl"
pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def rand(shape, seed, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift


def referee(x, gamma, beta, eps, w, bias, relu):
    y = F.linear(F.layer_norm(x, [x.shape[-1]], gamma, beta, eps), w, bias)
    return y.relu() if relu else y


def run(x, gamma, beta, eps, w, bias, relu, dtype=torch.float32):
    o = lambda t: None if t is None else t.to(dtype).to(OCL)  # noqa: E731
    return torch.ops.torch_ocl.norm_linear(o(x), o(gamma), o(beta), eps, o(w).t(), o(bias), relu)


def check(got, want, k):
    # float32 moments and k products in another order than the referee's
    tol = 4e-6 * max(1.0, k ** 0.5)
    torch.testing.assert_close(got.cpu().double(), want, rtol=tol, atol=tol)


CASES = [  # (K, N, gamma, beta, bias, relu)
    (256, 768, True, True, True, False),
    (256, 1024, True, True, True, True),
    (100, 37, True, False, False, False),   # K and N off the 16 x 8 blocking
    (8, 8, False, False, True, False),      # the smallest it takes
    (1000, 9, False, True, True, True),
    (17, 250, True, True, False, False),
]


@pytest.mark.parametrize("k,n,g,b,bias,relu", CASES)
def test_one_row_is_one_kernel_and_matches_the_referee(k, n, g, b, bias, relu):
    x = rand((1, k), 1, 3.0, 1.5)  # a mean and scale far from 0 and 1
    gamma, beta = (rand((k,), 2) if g else None), (rand((k,), 3) if b else None)
    w, lb = rand((n, k), 4), (rand((n,), 5) if bias else None)
    got = run(x, gamma, beta, 1e-5, w, lb, relu)
    check(got, referee(x, gamma, beta, 1e-5, w, lb, relu), k)
    names = ocl_kernels_run(lambda: run(x, gamma, beta, 1e-5, w, lb, relu))
    assert [n for n in names if n.startswith("tocl_gemm") or n.startswith("nn_norm")] == ["tocl_gemm_dot1_norm"]


@pytest.mark.parametrize("case", ["rows", "float64", "float16", "x strided along k", "weight across k",
                                  "strided gamma", "small k", "wide k"])
def test_other_shapes_run_norm_then_gemm(case):
    k, n, m, dtype = 64, 40, 1, torch.float32
    x, gamma, beta, w, lb = rand((1, k), 1, 2.0, -1.0), rand((k,), 2), rand((k,), 3), rand((n, k), 4), rand((n,), 5)
    if case == "rows":
        m = 5
        x = rand((m, k), 1)
    if case in ("float64", "float16"):
        dtype = getattr(torch, case)
    if case == "small k":
        k = 4
        x, gamma, beta, w = x[:, :k], gamma[:k], beta[:k], w[:, :k]
    if case == "wide k":
        k = 20000
        x, gamma, beta, w = rand((1, k), 1), rand((k,), 2), rand((k,), 3), rand((n, k), 4)
    o = lambda t: t.to(dtype).to(OCL)  # noqa: E731
    xo, go, bo, wto, lbo = o(x), o(gamma), o(beta), o(w).t(), o(lb)
    if case == "x strided along k":
        xo = o(torch.stack([x, x], -1)).select(-1, 0)
    if case == "weight across k":
        wto = o(w.t().contiguous())
    if case == "strided gamma":
        go = o(torch.stack([gamma, gamma], -1)).select(-1, 1)
    got = torch.ops.torch_ocl.norm_linear(xo, go, bo, 1e-5, wto, lbo, False)
    want = referee(x.to(dtype).double(), gamma.to(dtype).double(), beta.to(dtype).double(), 1e-5,
                   w.to(dtype).double(), lb.to(dtype).double(), False)
    if dtype == torch.float16:
        torch.testing.assert_close(got.cpu().double(), want, rtol=2e-2, atol=2e-2)
    else:
        check(got, want, k)
    names = ocl_kernels_run(lambda: torch.ops.torch_ocl.norm_linear(xo, go, bo, 1e-5, wto, lbo, False))
    assert "tocl_gemm_dot1_norm" not in names


def test_offset_views_and_empty():
    k, n = 48, 24
    big, w = rand((4, 3 * k), 1, 2.0), rand((n, k), 2)
    bo = big.float().to(OCL)
    x = bo[2:3, k:2 * k]  # a row at an offset, contiguous along k
    got = torch.ops.torch_ocl.norm_linear(x, None, None, 1e-5, w.float().to(OCL).t(), None, False)
    check(got, referee(big[2:3, k:2 * k], None, None, 1e-5, w, None, False), k)
    empty = torch.ops.torch_ocl.norm_linear(torch.empty(0, k, device=OCL), None, None, 1e-5,
                                            w.float().to(OCL).t(), None, False)
    assert empty.shape == (0, n)


def test_bad_input_raises_clear_errors():
    x, w = torch.randn(1, 16, device=OCL), torch.randn(8, 16, device=OCL)
    with pytest.raises(RuntimeError, match="norm weight of 16"):
        torch.ops.torch_ocl.norm_linear(x, torch.ones(15, device=OCL), None, 1e-5, w.t(), None, False)
    with pytest.raises(RuntimeError, match="bias of 8"):
        torch.ops.torch_ocl.norm_linear(x, None, None, 1e-5, w.t(), torch.ones(7, device=OCL), False)
    with pytest.raises(RuntimeError, match="expected every tensor on"):
        torch.ops.torch_ocl.norm_linear(x, torch.ones(16), None, 1e-5, w.t(), None, False)
    with pytest.raises(RuntimeError, match="relu needs a bias"):
        torch.ops.torch_ocl.norm_linear(x, None, None, 1e-5, w.t(), None, True)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.ops.torch_ocl.norm_linear(x, None, None, 1e-5, w, None, False)
    # the device still works afterwards
    check(torch.ops.torch_ocl.norm_linear(x, None, None, 1e-5, w.t(), None, False),
          referee(x.cpu().double(), None, None, 1e-5, w.cpu().double(), None, False), 16)


class Decoder(nn.Module):
    """norm -> linear (+ReLU) on [1, 1, d], and a final norm -> head on a
    selected row, as a decoding step has them."""

    def __init__(self, d=64, vocab=50):
        super().__init__()
        self.n1, self.l1, self.n2, self.head = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.LayerNorm(3 * d), \
            nn.Linear(3 * d, vocab, bias=False)
        self.n3, self.l3 = nn.LayerNorm(d, elementwise_affine=False), nn.Linear(d, d)

    def forward(self, h):
        y = torch.relu(self.l1(self.n1(h)))
        return self.head(self.n2(y[:, -1])), self.l3(self.n3(h))


def test_compiled_decoder_fuses_each_norm_and_matches_eager():
    torch.manual_seed(0)
    m = Decoder().to(OCL).eval()
    h = torch.randn(1, 1, 64, device=OCL) * 2 + 1
    with torch.no_grad():
        ref = m(h)
        got = torch.compile(m, backend="ocl")(h)
    for g, r in zip(got, ref):
        torch.testing.assert_close(g.cpu(), r.cpu(), rtol=2e-5, atol=2e-5)
    assert torch_ocl.compile_stats()["gemm_norms"] == 3


def test_longer_rows_and_dynamic_sizes_match_eager():
    """[1, t, d] with t > 1: the same op runs norm then GEMM, one compile."""
    torch.manual_seed(0)
    m = Decoder().to(OCL).eval()
    f = torch.compile(m, backend="ocl", dynamic=True)
    with torch.no_grad():
        for t in (3, 5, 1):
            h = torch.randn(1, t, 64, device=OCL)
            for g, r in zip(f(h), m(h)):
                torch.testing.assert_close(g.cpu(), r.cpu(), rtol=2e-5, atol=2e-5)


def test_training_graphs_are_left_alone_and_gradients_match():
    torch.manual_seed(0)
    base = Decoder()
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    h = torch.randn(1, 2, 64, device=OCL)
    sum(o.sum() for o in me(h)).backward()
    sum(o.sum() for o in torch.compile(mc, backend="ocl")(h)).backward()
    for pe, pc in zip(me.parameters(), mc.parameters()):
        torch.testing.assert_close(pc.grad.cpu(), pe.grad.cpu(), rtol=1e-5, atol=1e-5)
    assert torch_ocl.compile_stats()["gemm_norms"] == 0


def test_left_alone_when_the_norm_output_is_used_elsewhere_or_turned_off(monkeypatch):
    n, lin = nn.LayerNorm(32).to(OCL), nn.Linear(32, 16).to(OCL)

    def f(x):
        y = n(x)
        return lin(y), y.sum()  # the norm's output has a second user

    x = torch.randn(1, 32, device=OCL)
    with torch.no_grad():
        for g, r in zip(torch.compile(f, backend="ocl")(x), f(x)):
            torch.testing.assert_close(g.cpu(), r.cpu())
    assert torch_ocl.compile_stats()["gemm_norms"] == 0
    torch._dynamo.reset()
    monkeypatch.setenv("TORCH_OCL_GEMM_EPILOGUES", "0")
    with torch.no_grad():
        torch.compile(lambda x: lin(n(x)), backend="ocl")(x)
    assert torch_ocl.compile_stats()["gemm_norms"] == 0
