"""The GEMM's dot kernels (kernels/gemm.cl, tocl_gemm_dot, and tocl_gemm_dot1
for one row): float32, float16
and bfloat16 products with few rows whose operands are both contiguous along k, as x @ W^T in a
linear layer while decoding. Checked against a float64 referee at and around
its limits (rows 1-64, columns and depth off its 4 x 8 blocking), with the
epilogue (bias, alpha, beta, activations), batches, offset views and strided
outputs; and that the products it is meant for do reach it."""

import pytest
import torch

from conftest import ocl_kernels_run

OCL = "ocl"
F = torch.nn.functional


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def referee(got, want64, k):
    # float32 sums of k products in another order: error grows like sqrt(k)
    tol = 2e-6 * max(1.0, k ** 0.5) * 4
    torch.testing.assert_close(got.cpu().double(), want64, rtol=tol, atol=tol)


def gemm_kernels(fn):
    return {n for n in ocl_kernels_run(fn) if n.startswith("tocl_gemm")}


@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (1, 768, 256), (1, 9, 15), (1, 250, 259), (1, 1000, 17), (2, 9, 15), (3, 250, 259), (4, 4 * 33, 8 * 17),
                                   (17, 250, 259), (32, 768, 256), (63, 65, 129), (64, 100, 1000)])
def test_linear_against_float64(m, n, k, no_fallback):
    x, w, b = rand((m, k), 1), rand((n, k), 2), rand((n,), 3)
    want = F.linear(x.double(), w.double(), b.double())
    referee(F.linear(x.to(OCL), w.to(OCL), b.to(OCL)), want, k)
    referee(F.linear(x.to(OCL), w.to(OCL)), F.linear(x.double(), w.double()), k)


def test_the_decoding_shapes_reach_the_dot_kernel(no_fallback):
    x, w = rand((32, 256), 1).to(OCL), rand((768, 256), 2).to(OCL)
    assert gemm_kernels(lambda: F.linear(x, w)) == {"tocl_gemm_dot"}
    # 16-bit storage too (a bfloat16 model decoding)
    assert gemm_kernels(lambda: F.linear(x.half(), w.half())) == {"tocl_gemm_dot"}
    assert gemm_kernels(lambda: F.linear(x[:4].bfloat16(), w.bfloat16())) == {"tocl_gemm_dot"}
    # one row (a decoding step): the single-row variant, in every storage type
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        assert gemm_kernels(lambda: F.linear(x[:1].to(dt), w.to(dt))) == {"tocl_gemm_dot1"}
    # past its row limit, or a B walked across k: the other kernels
    assert "tocl_gemm_dot" not in gemm_kernels(lambda: F.linear(rand((65, 256), 3).to(OCL), w))
    assert "tocl_gemm_dot" not in gemm_kernels(lambda: x @ rand((256, 768), 4).to(OCL))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("m,n,k", [(1, 768, 256), (3, 250, 259), (16, 100, 1000), (40, 65, 129)])
def test_16bit_storage(dtype, m, n, k, no_fallback):
    """Widened as loaded, summed in float32, rounded once: within one
    rounding of the output type of the float64 product of the same inputs."""
    x, w, b = rand((m, k), 1, dtype), rand((n, k), 2, dtype), rand((n,), 3, dtype)
    got = F.linear(x.to(OCL), w.to(OCL), b.to(OCL)).cpu().double()
    want = F.linear(x.double(), w.double(), b.double())
    mag = x.double().abs() @ w.double().abs().t() + b.double().abs()
    ulp = 2.0 ** -8 if dtype == torch.bfloat16 else 2.0 ** -11
    bad = (got - want).abs() > want.abs() * ulp + mag * k * 2.0 ** -23 + 1e-30
    assert not bad.any(), f"{int(bad.sum())} of {bad.numel()} off"


def test_addmm_epilogue_and_activations(no_fallback):
    m, n, k = 5, 37, 70
    x, w, s = rand((m, k), 1), rand((n, k), 2), rand((m, n), 3)
    got = torch.addmm(s.to(OCL), x.to(OCL), w.to(OCL).t(), beta=0.5, alpha=1.5)
    referee(got, torch.addmm(s.double(), x.double(), w.double().t(), beta=0.5, alpha=1.5), k)
    sb = rand((n,), 4)
    for act in ("relu", "gelu"):
        got = torch._addmm_activation(sb.to(OCL), x.to(OCL), w.to(OCL).t(), use_gelu=act == "gelu")
        want = torch._addmm_activation(sb.double(), x.double(), w.double().t(), use_gelu=act == "gelu")
        referee(got, want, k)


def test_batches_views_and_strided_outputs(no_fallback):
    bsz, m, n, k = 3, 6, 20, 40
    a, w = rand((bsz, m, k), 1), rand((bsz, n, k), 2)
    want = torch.bmm(a.double(), w.double().transpose(1, 2))
    referee(torch.bmm(a.to(OCL), w.to(OCL).transpose(1, 2)), want, k)
    # a weight shared by every batch (stride 0), rows of A inside a wider buffer at an offset
    wide = rand((m + 1, k + 9), 3)
    av = wide.to(OCL)[1:, 5:5 + k]
    ws = w[0].to(OCL)
    referee(torch.matmul(av.expand(bsz, m, k), ws.t()), (wide[1:, 5:5 + k].double() @ w[0].double().t()).expand(bsz, m, n), k)
    # the output written through a transposed view
    out = torch.empty(n, m, device=OCL).t()
    torch.mm(av, ws.t(), out=out)
    referee(out, wide[1:, 5:5 + k].double() @ w[0].double().t(), k)


def test_nonfinite_values_propagate(no_fallback):
    x, w = rand((4, 16), 1), rand((12, 16), 2)
    x[1, 3], w[5, 7] = float("nan"), float("inf")
    got, want = F.linear(x.to(OCL), w.to(OCL)).cpu(), F.linear(x, w)
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())


def test_gradients_through_a_decoding_linear(no_fallback):
    x, w, b = rand((8, 64), 1), rand((48, 64), 2), rand((48,), 3)
    xo, wo, bo = (t.to(OCL).requires_grad_() for t in (x, w, b))
    xc, wc, bc = (t.double().requires_grad_() for t in (x, w, b))
    gy = rand((8, 48), 4)
    F.linear(xo, wo, bo).backward(gy.to(OCL))
    F.linear(xc, wc, bc).backward(gy.double())
    for o, c in ((xo, xc), (wo, wc), (bo, bc)):
        referee(o.grad, c.grad, 64)
