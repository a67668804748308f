"""Thin products (a side under 8) on CPU devices (runtime/ops/gemm.c
gemm_run): past the small volume they take the packed GEMM like any other,
or, with at most 16 rows and B's rows contiguous along n, the rows kernel
(tocl_gemm_rows: 16 columns per work-item, B read in place; the last partial
vector of columns on a scalar loop, up to 2 rows past its blocks of 8 one
at a time). The direct kernel, one element per
work-item reading B down its columns, measured 2-30x slower there (a batch-4
VGG classifier's input gradient: 2.56 s against 85 ms). Against a float64
referee, for each thin side and row counts around the rows kernel's blocks
of 8, transposed and offset operands, batches, the epilogue (addmm's bias
and beta), float64 and 16-bit storage; both routes (TORCH_OCL_GEMM_ROWS=0);
and which kernel each reaches."""

import pytest
import torch

from conftest import dtype_id, ocl_kernels_run

OCL = "ocl"
pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPES = [(4, 300, 700), (700, 4, 300), (300, 700, 4), (1, 513, 257), (257, 1, 513), (513, 257, 1), (7, 7, 2000),
          (9, 40, 33), (16, 100, 48), (13, 1, 31), (3, 20, 17), (16, 64, 16), (10, 50, 40), (2, 30, 20)]
TOL = {torch.float32: 2e-6, torch.float64: 1e-13, torch.bfloat16: 8e-3, torch.float16: 1e-3}


def rand(shape, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def check(got, want64, k, dtype):
    tol = TOL[dtype] * max(1.0, k ** 0.5) * 4
    scale = max(1.0, want64.abs().max().item())
    torch.testing.assert_close(got.cpu().double(), want64, rtol=tol, atol=tol * scale)


def on_cpu_device():
    import torch_ocl

    return torch_ocl._C._device_props(0)["type"] == "cpu"


@pytest.mark.parametrize("rows", ["1", "0"], ids=["rows", "packed"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_mm(m, k, n, ta, tb, dtype, rows, monkeypatch):
    monkeypatch.setenv("TORCH_OCL_GEMM_ROWS", rows)
    a, b = rand((k, m) if ta else (m, k), 1, dtype), rand((n, k) if tb else (k, n), 2, dtype)
    a, b = (a.t() if ta else a), (b.t() if tb else b)
    want = a.double() @ b.double()
    got = torch.mm(a.to(OCL) if not ta else a.t().to(OCL).t(), b.to(OCL) if not tb else b.t().to(OCL).t())
    check(got, want, k, dtype)


@pytest.mark.parametrize("m,k,n", SHAPES[:3] + SHAPES[7:9])
def test_addmm_bmm_views(m, k, n):
    dt = torch.float32
    base_a, b, bias = rand((m + 2, k + 3), 3, dt), rand((3, k, n), 4, dt), rand((n,), 5, dt)
    a = base_a[1:m + 1, 2:k + 2]  # offset view with a row stride past k
    want = 0.5 * bias.double() + 2.0 * a.double() @ b[1].double()
    got = torch.addmm(bias.to(OCL), base_a.to(OCL)[1:m + 1, 2:k + 2], b.to(OCL)[1], beta=0.5, alpha=2.0)
    check(got, want, k, dt)
    ab = rand((3, m, k), 6, dt)
    check(torch.bmm(ab.to(OCL), b.to(OCL)), ab.double() @ b.double(), k, dt)
    # a broadcast batch (stride 0) on one side
    check(torch.matmul(a.to(OCL), b.to(OCL)), a.double() @ b.double(), k, dt)


def test_route(monkeypatch):
    a, b = torch.randn(4, 300, device=OCL), torch.randn(300, 700, device=OCL)
    names = set(ocl_kernels_run(lambda: torch.mm(a, b)))
    if on_cpu_device():
        assert names & {"tocl_gemm_rows", "tocl_gemm_direct"} == {"tocl_gemm_rows"}, names
    monkeypatch.setenv("TORCH_OCL_GEMM_ROWS", "0")
    names = set(ocl_kernels_run(lambda: torch.mm(a, b)))
    if on_cpu_device():
        assert "tocl_gemm_direct" not in names and any(n.startswith("tocl_gemm_cpu") for n in names), names
    monkeypatch.delenv("TORCH_OCL_GEMM_ROWS")
    # the small volume (at most 32^3) stays on the direct kernel: one launch, no packing
    s, t = torch.randn(6, 10, device=OCL), torch.randn(10, 6, device=OCL)
    names = set(ocl_kernels_run(lambda: torch.mm(s, t)))
    assert "tocl_gemm_direct" in names and "tocl_gemm_pack" not in names, names
