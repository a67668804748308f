"""The CPU GEMM reading A in place (kernels/gemm.cl, tocl_gemm_cpu_ad): float
storage, A's rows contiguous along k. Against a float64 referee, forced on
every row stride (TORCH_OCL_GEMM_ADIRECT=force) and off (=0): rows not a
multiple of the register block (the last block reads row M - 1 again and
stores nothing for it), depth not a multiple of the K block, batches and a
broadcast batch, row slices (row stride > K), offset views, the epilogue
(bias, beta, activation) and float64; and that the products it is meant for
reach it and the others do not."""

import pytest
import torch

from conftest import ocl_kernels_run

OCL = "ocl"
F = torch.nn.functional
pytestmark = pytest.mark.usefixtures("no_fallback")


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def referee(got, want64, k, dtype=torch.float32):
    tol = (2e-6 if dtype == torch.float32 else 1e-13) * max(1.0, k ** 0.5) * 4
    torch.testing.assert_close(got.cpu().double(), want64, rtol=tol, atol=tol)


def gemm_kernels(fn):
    return {n for n in ocl_kernels_run(fn) if n.startswith("tocl_gemm")}


ROUTES = ["force", "0"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("m,n,k", [(65, 70, 33), (129, 257, 300), (200, 96, 1030), (1023, 129, 257)])
def test_linear(route, m, n, k, monkeypatch):
    monkeypatch.setenv("TORCH_OCL_GEMM_ADIRECT", route)
    x, w, b = rand((m, k), 1), rand((n, k), 2), rand((n,), 3)
    referee(F.linear(x.to(OCL), w.to(OCL), b.to(OCL)), F.linear(x.double(), w.double(), b.double()), k)


@pytest.mark.parametrize("route", ROUTES)
def test_views_batches_and_epilogue(route, monkeypatch):
    monkeypatch.setenv("TORCH_OCL_GEMM_ADIRECT", route)
    # a row slice of a wider matrix at an offset: row stride 300 > k = 257
    big = rand((150, 300), 4)
    a = big[7:140, 20:277]
    b = rand((257, 90), 5)
    referee(a.to(OCL) @ b.to(OCL), a.double() @ b.double(), 257)
    ao = big.to(OCL)[7:140, 20:277]
    referee(ao @ b.to(OCL), a.double() @ b.double(), 257)
    # batched and broadcast-batch A
    a3, b3 = rand((3, 70, 45), 6), rand((3, 45, 66), 7)
    referee(a3.to(OCL) @ b3.to(OCL), a3.double() @ b3.double(), 45)
    a2 = rand((70, 45), 8)
    referee(a2.to(OCL) @ b3.to(OCL), a2.double() @ b3.double(), 45)
    # beta * D + A @ B, and a fused activation through addmm + relu
    d = rand((70, 66), 9)
    got = torch.addmm(d.to(OCL), a2.to(OCL), b3[0].to(OCL), beta=0.5, alpha=2.0)
    referee(got, torch.addmm(d.double(), a2.double(), b3[0].double(), beta=0.5, alpha=2.0), 45)
    # float64
    x, w = rand((67, 131), 10, torch.float64), rand((93, 131), 11, torch.float64)
    referee(F.linear(x.to(OCL), w.to(OCL)), F.linear(x, w), 131, torch.float64)


def test_products_that_read_a_in_place(monkeypatch):
    monkeypatch.delenv("TORCH_OCL_GEMM_ADIRECT", raising=False)
    x, w = rand((256, 384), 12).to(OCL), rand((256, 384), 13).to(OCL)
    assert "tocl_gemm_cpu_ad" in gemm_kernels(lambda: F.linear(x, w))  # row stride 1536 bytes
    # rows 4 KiB apart share L1 sets: in place for N <= 1024, packed past it
    x2, w2 = rand((256, 1024), 14).to(OCL), rand((1032, 1024), 15).to(OCL)
    assert "tocl_gemm_cpu_ad" in gemm_kernels(lambda: F.linear(x2, w2[:1024]))
    names = gemm_kernels(lambda: F.linear(x2, w2))
    assert "tocl_gemm_cpu" in names and "tocl_gemm_cpu_ad" not in names
    # A stored by columns (x^T @ y): packed
    names = gemm_kernels(lambda: x.t() @ w)
    assert "tocl_gemm_cpu_ad" not in names
    # 16-bit storage: packed (A is read as float)
    xb, wb = x.bfloat16(), w.bfloat16()
    assert "tocl_gemm_cpu_ad" not in gemm_kernels(lambda: F.linear(xb, wb))
    monkeypatch.setenv("TORCH_OCL_GEMM_ADIRECT", "0")
    assert "tocl_gemm_cpu_ad" not in gemm_kernels(lambda: F.linear(x, w))
