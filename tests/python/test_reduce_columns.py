"""Column reductions (kernel tocl_redc, runtime/codegen/render_reduce.c): the
innermost kept dim contiguous in every input, reduced dims outside it, as
x.sum(0) or a bias gradient. Every dtype against a float64 (or exact integer)
referee, odd sizes (a kept dim off the 8/16-lane blocks, R = 1, empty),
several kept and reduced dims, keepdim, offset / strided / channels_last views,
the kinds (sum, mean, prod, amax/amin, norms, nansum, count_nonzero, integer
sums, var/std/var_mean, argmax/argmin with ties and NaN, logsumexp; any/all
stay on tocl_red), the split of a long reduced range, determinism, agreement with TORCH_OCL_RED_COLUMN=0, and that
the shapes it is meant for reach it."""

import os

import pytest
import torch

from conftest import ocl_kernels_run

OCL = "ocl"
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def tol(dt, n):
    # float32 accumulation of n terms (half types accumulate in float32,
    # then round once to their own precision)
    base = {torch.float64: 1e-12, torch.float32: 2e-6}.get(dt, 0)
    rel = {torch.float16: 1e-3, torch.bfloat16: 8e-3}.get(dt, 0)
    return rel + base * max(1.0, n ** 0.5) * 4


def referee(got, want64, dt, n):
    assert got.device.type == OCL and got.dtype == dt, (got.device, got.dtype)
    t = tol(dt, n)
    torch.testing.assert_close(got.cpu().double(), want64.to(dt).double(), rtol=t, atol=t, equal_nan=True)


def red_kernels(fn):
    return {n.split("(")[0] for n in ocl_kernels_run(fn) if n.startswith("tocl_red")}


cpu_device = torch.ocl.get_device_name(0).lower().find("cpu") >= 0 or "pthread" in torch.ocl.get_device_name(0).lower()

# (shape, dims): kept innermost dim contiguous; off-block widths; R = 1
CASES = [
    ((1024, 1024), 0),
    ((37, 16), 0),
    ((5, 17), 0),
    ((300, 33), 0),
    ((1, 40), 0),
    ((3, 129), 0),
    ((8, 12, 50), (0, 1)),
    ((6, 7, 24), 1),
    ((4, 5, 6, 40), (0, 2)),
    ((3, 9, 5, 31), (1, 2)),
    ((2000, 16), 0),  # few blocks, long range: split with partials
    ((20000, 19), 0),
    ((3, 4, 5, 6, 7, 16), (0, 2, 4)),
]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dims", CASES, ids=str)
def test_sum_mean_against_float64(shape, dims, dt, no_fallback):
    x = rand(shape, 1, dt)
    xd = x.double()
    n = xd.numel() // max(1, xd.sum(dims).numel())
    xo = x.to(OCL)
    for keep in (False, True):
        referee(xo.sum(dims, keepdim=keep), xd.sum(dims, keepdim=keep), dt, n)
        referee(xo.mean(dims, keepdim=keep), xd.mean(dims, keepdim=keep), dt, n)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_other_kinds(dt, no_fallback):
    x = rand((77, 3, 40), 2, dt)
    x[5, 1, 7] = float("nan")
    xd, xo = x.double(), x.to(OCL)
    for f in (lambda t: t.amax((0, 1)), lambda t: t.amin(0), lambda t: t.nansum(0), lambda t: t.norm(dim=0),
              lambda t: t.norm(p=3, dim=(0, 1)), lambda t: t.abs().sum(0), lambda t: t.var(0),
              lambda t: (t * t + 1).sum((0, 1))):
        referee(f(xo), f(xd), dt, 231)
    # products of values near 1, so the product stays in range
    y = (1 + rand((50, 33), 3) / 64).to(dt)
    referee(y.to(OCL).prod(0), y.double().prod(0), dt, 200)
    assert torch.equal(x.to(OCL).count_nonzero(0).cpu(), x.count_nonzero(0))


@pytest.mark.parametrize("dt", [torch.int32, torch.int64, torch.int16, torch.uint8, torch.bool], ids=str)
def test_integers(dt, no_fallback):
    x = torch.randint(0, 2 if dt == torch.bool else 100, (123, 2, 35), generator=torch.Generator().manual_seed(4)).to(dt)
    xo = x.to(OCL)
    for f in (lambda t: t.sum(0), lambda t: t.sum((0, 1)), lambda t: t.amax(0), lambda t: t.amin((0, 1)),
              lambda t: t.any(0), lambda t: t.all(0)):
        if dt != torch.bool and f(x).dtype == torch.bool:
            pass
        assert torch.equal(f(xo).cpu(), f(x)), f


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_views(dt, no_fallback):
    base = rand((64, 8, 30, 30), 5, dt)
    views = [
        ("channels_last", base.to(memory_format=torch.channels_last), (0, 2, 3)),
        ("channels_last_keep_w", base.to(memory_format=torch.channels_last).permute(0, 2, 3, 1), (0, 1, 2)),
        ("offset", base.reshape(-1, 240)[3:, 5:], 0),
        ("row_stride", base.reshape(-1, 240)[::3, 16:200], 0),
        ("transposed", base.reshape(240, -1).t(), 1),  # kept dim not contiguous: tocl_red
        ("expanded", base[:, :1, 0, :].expand(64, 5, 30), (0, 1)),
    ]
    for name, v, dims in views:
        n = v.numel() // max(1, v.sum(dims).numel())
        vo = base.to(OCL)
        # the same view of the ocl copy
        vo = {"channels_last": lambda: base.to(OCL).to(memory_format=torch.channels_last),
              "channels_last_keep_w": lambda: base.to(OCL).to(memory_format=torch.channels_last).permute(0, 2, 3, 1),
              "offset": lambda: base.to(OCL).reshape(-1, 240)[3:, 5:],
              "row_stride": lambda: base.to(OCL).reshape(-1, 240)[::3, 16:200],
              "transposed": lambda: base.to(OCL).reshape(240, -1).t(),
              "expanded": lambda: base.to(OCL)[:, :1, 0, :].expand(64, 5, 30)}[name]()
        assert vo.stride() == v.stride(), name
        referee(vo.sum(dims), v.double().sum(dims), dt, n)
        referee(vo.mean(dims, keepdim=True), v.double().mean(dims, keepdim=True), dt, n)


def test_empty_and_out(no_fallback):
    x = torch.empty((0, 40)).to(OCL)
    assert torch.equal(x.sum(0).cpu(), torch.zeros(40))
    assert x.mean(0).cpu().isnan().all()
    assert torch.equal(x.amax(1).cpu(), torch.empty(0))
    y = rand((100, 48), 6)
    out = torch.empty(48, device=OCL)
    torch.sum(y.to(OCL), 0, out=out)
    referee(out, y.double().sum(0), torch.float32, 100)
    big = torch.empty((2, 100), device=OCL)[:, ::2]  # a strided output
    torch.sum(y.to(OCL).reshape(2, 50, 48)[:, :, :], 1, out=big[:, :48].contiguous())


@pytest.mark.parametrize("shape,dims", [((1024, 1024), 0), ((20000, 19), 0), ((8, 128, 1024), (0, 1))], ids=str)
def test_deterministic_and_matches_tocl_red(shape, dims, no_fallback):
    x = rand(shape, 7).to(OCL)
    a, b = x.sum(dims).cpu(), x.sum(dims).cpu()
    assert torch.equal(a, b)
    os.environ["TORCH_OCL_RED_COLUMN"] = "0"
    try:
        c = x.sum(dims).cpu()
    finally:
        del os.environ["TORCH_OCL_RED_COLUMN"]
    # both within a few float32 roundings of the sum of magnitudes of the
    # float64 sum (they add in different orders, so they need not be equal)
    xd = x.cpu().double()
    ref, mag = xd.sum(dims), xd.abs().sum(dims)
    for got in (a, c):
        assert ((got.double() - ref).abs() <= 8 * 2.0 ** -24 * mag).all()


@pytest.mark.skipif(not cpu_device, reason="the column kernel is for CPU devices")
def test_column_shapes_reach_the_kernel(no_fallback):
    x = rand((256, 768), 8).to(OCL)
    assert any(k.startswith("tocl_redc") for k in red_kernels(lambda: x.sum(0)))
    assert any(k.startswith("tocl_redc") for k in red_kernels(lambda: x.half().sum(0)))
    assert not any(k.startswith("tocl_redc") for k in red_kernels(lambda: x.sum(1)))
    assert any(k.startswith("tocl_redc") for k in red_kernels(lambda: x.var(0)))
    assert any(k.startswith("tocl_redc") for k in red_kernels(lambda: x.argmax(0)))
    # bool accumulators (any / all) stay on tocl_red
    assert not any(k.startswith("tocl_redc") for k in red_kernels(lambda: x.bool().any(0)))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dims", [((4, 6, 37, 29), (0, 2, 3)), ((3, 2053), 1), ((2, 5, 1030), (0, 2)),
                                        ((7,), 0), ((5, 3), 1)], ids=str)
def test_contiguous_runs_half_types(shape, dims, dt, no_fallback):
    # tocl_red's vectorised run sum, which float16/bfloat16 inputs now take
    # too: runs off the 8-element vectors, and an offset (unaligned) start
    x = rand((shape[0] + 1,) + tuple(shape[1:]), 9, dt)
    for v in (x[:-1], x[1:]):
        n = v.numel() // max(1, v.double().sum(dims).numel())
        referee(v.to(OCL).sum(dims), v.double().sum(dims), dt, n)
        vo = x.to(OCL)[1:] if v.data_ptr() != x.data_ptr() else x.to(OCL)[:-1]
        referee(vo.mean(dims), v.double().mean(dims), dt, n)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dims", [((77, 3, 40), (0, 1)), ((5000, 17), 0), ((3, 33), 0), ((1, 16), 0),
                                        ((6, 4, 5, 32), (0, 2))], ids=str)
def test_state_kinds(shape, dims, dt, no_fallback):
    # Welford, arg and log-sum-exp states, also split over the reduced range
    # ((5000, 17): one block, partial states combined by a second launch)
    x = rand(shape, 10, dt)
    xd, xo = x.double(), x.to(OCL)
    n = xd.numel() // max(1, xd.sum(dims).numel())
    referee(xo.var(dims), xd.var(dims), dt, n)
    referee(xo.std(dims, correction=0, keepdim=True), xd.std(dims, correction=0, keepdim=True), dt, n)
    v, m = torch.var_mean(xo, dims)
    vd, md = torch.var_mean(xd, dims)
    referee(v, vd, dt, n)
    referee(m, md, dt, n)
    referee(torch.logsumexp(xo, dims), torch.logsumexp(xd, dims), dt, n)
    if isinstance(dims, int):
        # ties (rounded values) take the first index, a NaN wins
        r = (x * 2).round().to(dt)
        r[min(2, shape[0] - 1), -1] = float("nan")
        for f in (torch.argmax, torch.argmin):
            assert torch.equal(f(r.to(OCL), dims).cpu(), f(r, dims)), f
        mx, ix = torch.max(r.to(OCL), dims)
        assert torch.equal(ix.cpu(), torch.max(r, dims).indices)
        torch.testing.assert_close(mx.cpu(), torch.max(r, dims).values, equal_nan=True)
