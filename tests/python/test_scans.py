"""Scans on ocl against the CPU: cumsum, cumprod, cummax, cummin and
logcumsumexp for every dtype the CPU supports, every dim, strided and
offset views, 0-dim and empty inputs, out= and in-place forms, long rows
(chunked scan), ties/NaN index rules, determinism and gradients."""

import pytest
import torch
import torch_ocl

from conftest import ALL_DTYPES, FLOAT_DTYPES, make_cpu

OCL = "ocl"


def check(got, want, rtol=None, atol=None):
    g = got.cpu()
    assert got.device.type == OCL
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, want.dtype, g.shape, want.shape)
    if want.dtype.is_floating_point:
        r, a = {torch.float16: (2e-3, 2e-2), torch.bfloat16: (1.6e-2, 1e-1),
                torch.float32: (1e-5, 1e-4), torch.float64: (1e-10, 1e-10)}[want.dtype]
        torch.testing.assert_close(g, want, rtol=rtol or r, atol=atol or a, equal_nan=True)
    else:
        assert torch.equal(g, want), (g, want)


def cases(dt):
    x = make_cpu((4, 6, 5), dt, -2, 3)
    d = x.to(OCL)
    yield x, d
    yield x.transpose(0, 2), d.transpose(0, 2)
    yield x[1:, 2:, 1:], d[1:, 2:, 1:]
    yield x[:, :1].expand(-1, 3, -1), d[:, :1].expand(-1, 3, -1)


def test_cumsum_cumprod_all_dtypes(no_fallback):
    for dt in ALL_DTYPES:
        for c, d in cases(dt):
            for dim in range(c.dim()):
                check(torch.cumsum(d, dim), torch.cumsum(c, dim))
                check(torch.cumprod(d, -dim - 1), torch.cumprod(c, -dim - 1))
        x0 = make_cpu((), dt)
        check(torch.cumsum(x0.to(OCL), 0), torch.cumsum(x0, 0))
        e = torch.empty(3, 0, dtype=dt)
        check(torch.cumsum(e.to(OCL), 1), torch.cumsum(e, 1))
    x = make_cpu((3, 7), torch.int32)
    d = x.to(OCL)
    check(torch.cumsum(d, 1, dtype=torch.float64), torch.cumsum(x, 1, dtype=torch.float64))
    check(torch.cumsum(d, 1, dtype=torch.int8), torch.cumsum(x, 1, dtype=torch.int8))
    o = torch.empty(0, dtype=torch.int64, device=OCL)
    r = torch.cumsum(d, 0, out=o)
    assert r is o
    check(o, torch.cumsum(x, 0))
    y = make_cpu((3, 7), torch.float32)
    yo = y.to(OCL)
    yo.cumsum_(1)
    check(yo, y.clone().cumsum_(1))
    yo = y.to(OCL)
    yo.t().cumprod_(0)
    check(yo, y.clone().t().cumprod_(0).t())
    with pytest.raises(IndexError):
        torch.cumsum(d, 2)


def test_cummax_cummin(no_fallback):
    for dt in ALL_DTYPES:
        for c, d in cases(dt):
            for dim in range(c.dim()):
                gv, gi = torch.cummax(d, dim)
                wv, wi = torch.cummax(c, dim)
                check(gv, wv)
                check(gi, wi)
                gv, gi = torch.cummin(d, dim)
                wv, wi = torch.cummin(c, dim)
                check(gv, wv)
                check(gi, wi)
    x = torch.tensor([1.0, 3.0, 3.0, float("nan"), 5.0, float("nan"), 2.0, -1.0])
    for f in (torch.cummax, torch.cummin):
        gv, gi = f(x.to(OCL), 0)
        wv, wi = f(x, 0)
        check(gv, wv)
        check(gi, wi)
    x0 = torch.tensor(2.5)
    gv, gi = torch.cummax(x0.to(OCL), 0)
    wv, wi = torch.cummax(x0, 0)
    check(gv, wv)
    check(gi, wi)


def test_logcumsumexp(no_fallback):
    for dt in FLOAT_DTYPES:
        for c, d in cases(dt):
            for dim in range(c.dim()):
                check(torch.logcumsumexp(d, dim), torch.logcumsumexp(c, dim))
    x = torch.tensor([float("-inf"), float("-inf"), 1.0, float("inf"), 2.0, float("inf"), float("nan"), 0.0])
    check(torch.logcumsumexp(x.to(OCL), 0), torch.logcumsumexp(x, 0))
    o = torch.empty(0, device=OCL)
    torch.logcumsumexp(x.to(OCL), 0, out=o)
    check(o, torch.logcumsumexp(x, 0))


def test_long_rows_chunked(no_fallback):
    n = 1 << 20
    x = (torch.rand(n, generator=torch.Generator().manual_seed(3)) * 4 - 2)
    d = x.to(OCL)
    want = torch.cumsum(x.double(), 0).float()
    got = torch.cumsum(d, 0)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=2e-2)
    assert torch.equal(got.cpu(), torch.cumsum(d, 0).cpu())  # deterministic
    xi = torch.randint(-5, 6, (2, 300001), generator=torch.Generator().manual_seed(4))
    check(torch.cumsum(xi.to(OCL), 1), torch.cumsum(xi, 1))
    gv, gi = torch.cummax(xi.to(OCL), 1)
    wv, wi = torch.cummax(xi, 1)
    check(gv, wv)
    check(gi, wi)
    xl = x[:200000].view(2, -1)
    check(torch.logcumsumexp(xl.to(OCL), 1), torch.logcumsumexp(xl, 1), rtol=1e-4, atol=1e-4)


def test_scan_gradients(fallback_warn):
    torch_ocl.reset_fallback_stats()
    x = make_cpu((3, 5), torch.float32, 1, 4) / 2 + 0.25
    fns = [lambda t: torch.cumsum(t, 1), lambda t: torch.cumprod(t, 1), lambda t: torch.logcumsumexp(t, 0),
           lambda t: torch.cummax(t, 1)[0]]
    for f in fns:
        xo = x.to(OCL).requires_grad_()
        xc = x.clone().requires_grad_()
        go = torch.autograd.grad(f(xo).sum(), xo)[0]
        gc = torch.autograd.grad(f(xc).sum(), xc)[0]
        torch.testing.assert_close(go.cpu(), gc, rtol=1e-4, atol=1e-4)
    mine = {"cumsum", "cumprod", "_cummax_helper", "_cummin_helper", "_logcumsumexp", "cumsum_", "cumprod_"}
    fell = [k for k in torch_ocl.fallback_stats() if k.split("::")[-1].split(".")[0] in mine]
    assert not fell, f"scans fell back to the CPU: {fell}"
