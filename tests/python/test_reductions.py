"""Reductions on ocl against the CPU: every dtype each op supports, dims and
keepdim, all-reduce, empty and 0-dim inputs, strided/expanded/offset views,
out=, errors, NaN handling, determinism, a > 2^24-element sum and gradients."""

import math

import pytest
import torch
import torch_ocl

from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id, make_cpu

OCL = "ocl"


def tol(dt):
    return {
        torch.float16: (2e-3, 2e-2),
        torch.bfloat16: (1.6e-2, 8e-2),
        torch.float32: (1e-5, 1e-4),
        torch.float64: (1e-10, 1e-10),
    }.get(dt, (0, 0))


def check(got, want, rtol=None, atol=None):
    assert got.device.type == OCL
    g = got.cpu()
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    if want.dtype.is_floating_point:
        r, a = tol(want.dtype)
        torch.testing.assert_close(g, want, rtol=rtol or r, atol=atol or a, equal_nan=True)
    else:
        assert torch.equal(g, want), (g, want)


def views(cpu):
    """(name, cpu view, ocl view) triples: contiguous, transposed, offset, expanded."""
    d = cpu.to(OCL)
    out = [("contig", cpu, d)]
    if cpu.dim() >= 2:
        out.append(("transposed", cpu.transpose(0, 1), d.transpose(0, 1)))
        out.append(("offset", cpu[1:, 1:], d[1:, 1:]))
        shape = [-1] * cpu.dim()
        shape[1] = 5
        out.append(("expanded", cpu[:, :1].expand(shape), d[:, :1].expand(shape)))
    return out


SHAPES = [(), (7,), (4, 9), (3, 5, 6), (2, 1, 33, 4)]


def dim_choices(ndim):
    if ndim == 0:
        return [None, 0, -1]
    ch = [None, 0, -1]
    if ndim >= 2:
        ch += [(0, 1), (-1, 0)]
    if ndim >= 3:
        ch += [(0, 2), (1, 2), (0, 1, 2)]
    return ch


def run_sum_like(op, dtypes, full_dtype=torch.float32):
    """Every dtype over a few layouts and dims; full_dtype over every shape, view and dim choice."""
    for dt in dtypes:
        full = dt == full_dtype
        for shape in SHAPES if full else [(), (3, 5, 6)]:
            x = make_cpu(shape, dt, -3, 4)
            vs = views(x) if full else views(x)[:2]
            for name, c, d in vs:
                dims = dim_choices(c.dim()) if full else [None, 1, (0, 2)][: 1 + 2 * (c.dim() > 0)]
                for i, dim in enumerate(dims):
                    for keepdim in (False, True) if full else (bool(i % 2),):
                        if dim is None:
                            want, got = op(c), op(d)
                        else:
                            want, got = op(c, dim, keepdim=keepdim), op(d, dim, keepdim=keepdim)
                        check(got, want)


def test_sum_all_dtypes(no_fallback):
    run_sum_like(torch.sum, ALL_DTYPES)


def test_sum_dtype_arg_and_out(no_fallback):
    x = make_cpu((4, 6), torch.int32)
    d = x.to(OCL)
    check(torch.sum(d, 1, dtype=torch.float64), torch.sum(x, 1, dtype=torch.float64))
    check(torch.sum(d.float(), 0, dtype=torch.int32), torch.sum(x.float(), 0, dtype=torch.int32))
    check(d.sum(dtype=torch.int16), x.sum(dtype=torch.int16))
    o = torch.empty(3, device=OCL, dtype=torch.int64)
    r = torch.sum(d, 1, out=o)
    assert r is o
    check(o, x.sum(1))
    o32 = torch.empty(0, device=OCL, dtype=torch.int32)
    torch.sum(d, 0, out=o32)
    check(o32, torch.sum(x, 0, out=torch.empty(0, dtype=torch.int32)))
    # non-contiguous out
    big = torch.zeros(4, 4, device=OCL, dtype=torch.int64)
    torch.sum(d, 1, out=big[:, 1])
    want = torch.zeros(4, 4, dtype=torch.int64)
    want[:, 1] = x.sum(1)
    check(big, want)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        torch.sum(d, (0, 0))
    with pytest.raises(IndexError):
        torch.sum(d, 2)


def test_sum_empty_and_identities(no_fallback):
    for dt in [torch.float32, torch.int32, torch.bool, torch.float16]:
        x = torch.empty(3, 0, dtype=dt)
        d = x.to(OCL)
        check(d.sum(), x.sum())
        check(d.sum(1), x.sum(1))
        check(d.sum(0), x.sum(0))
        check(d.prod(1), x.prod(1))
        check(torch.amax(d, 0), torch.amax(x, 0))
        check(d.any(1), x.any(1))
        check(d.all(1), x.all(1))
    x = torch.empty(0)
    check(x.to(OCL).mean(), x.mean())
    check(torch.nansum(x.to(OCL)), torch.nansum(x))
    check(torch.logsumexp(torch.empty(2, 0).to(OCL), 1), torch.logsumexp(torch.empty(2, 0), 1))
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.max(x.to(OCL))
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.amax(x.to(OCL))
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        torch.max(torch.empty(2, 0, device=OCL), 1)
    with pytest.raises(IndexError, match="argmax"):
        torch.argmax(x.to(OCL))
    with pytest.raises(RuntimeError, match="aminmax"):
        torch.aminmax(x.to(OCL))
    with pytest.raises(RuntimeError, match="inf norm"):
        torch.linalg.vector_norm(x.to(OCL), float("inf"))


def test_nansum_nanmean_mean_prod(no_fallback):
    for dt in FLOAT_DTYPES:
        x = make_cpu((5, 8), dt, -2, 3)
        x[1, 2] = float("nan")
        x[3, :] = float("nan")
        d = x.to(OCL)
        for dim in [None, 0, 1, (0, 1)]:
            kw = {} if dim is None else {"dim": dim}
            check(torch.nansum(d, **kw), torch.nansum(x, **kw))
            check(torch.mean(d, **kw), torch.mean(x, **kw))
            check(torch.sum(d, **kw), torch.sum(x, **kw))
        check(torch.prod(d, 1), torch.prod(x, 1))
        check(torch.prod(d), torch.prod(x))
    for dt in INT_DTYPES + [torch.bool]:
        x = make_cpu((5, 6), dt, -2, 3)
        d = x.to(OCL)
        check(torch.nansum(d, 1), torch.nansum(x, 1))
        check(torch.prod(d, 0), torch.prod(x, 0))
        check(torch.prod(d), torch.prod(x))
        check(torch.mean(d, 1, dtype=torch.float32), torch.mean(x, 1, dtype=torch.float32))
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            torch.mean(d)
    run_sum_like(torch.mean, [torch.float32, torch.bfloat16])
    o = torch.empty(0, device=OCL)
    x = make_cpu((4, 5), torch.float32)
    torch.mean(x.to(OCL), 1, out=o)
    check(o, x.mean(1))


def test_amax_amin_max_min(no_fallback):
    for dt in ALL_DTYPES:
        x = make_cpu((6, 7, 3), dt, -5, 5)
        for name, c, d in views(x) if dt == torch.float32 else views(x)[1:3]:
            for dim in [0, -1, (0, 1), ()]:
                check(torch.amax(d, dim), torch.amax(c, dim))
                check(torch.amin(d, dim, keepdim=True), torch.amin(c, dim, keepdim=True))
            check(torch.max(d), torch.max(c))
            check(torch.min(d), torch.min(c))
            for dim in [0, 1, -1]:
                for keepdim in (False, True) if dt == torch.float32 else (dim == 1,):
                    gv, gi = torch.max(d, dim, keepdim)
                    wv, wi = torch.max(c, dim, keepdim)
                    check(gv, wv)
                    check(gi, wi)
                    gv, gi = torch.min(d, dim, keepdim)
                    wv, wi = torch.min(c, dim, keepdim)
                    check(gv, wv)
                    check(gi, wi)
                    if dt == torch.bool:
                        continue
                    check(torch.argmax(d, dim, keepdim), torch.argmax(c, dim, keepdim))
                    check(torch.argmin(d, dim, keepdim), torch.argmin(c, dim, keepdim))
            if dt == torch.bool:
                for f in (torch.argmax, torch.argmin):
                    with pytest.raises(RuntimeError, match="does not support bool input"):
                        f(d)
            else:
                check(torch.argmax(d), torch.argmax(c))
                check(torch.argmin(d), torch.argmin(c))
                check(torch.argmax(d, keepdim=True), torch.argmax(c, keepdim=True))
            mn, mx = torch.aminmax(d)
            wmn, wmx = torch.aminmax(c)
            check(mn, wmn)
            check(mx, wmx)
            mn, mx = torch.aminmax(d, dim=1, keepdim=True)
            wmn, wmx = torch.aminmax(c, dim=1, keepdim=True)
            check(mn, wmn)
            check(mx, wmx)
    x0 = torch.tensor(3.5)
    check(torch.max(x0.to(OCL), 0)[1], torch.max(x0, 0)[1])
    check(torch.amax(x0.to(OCL), 0), torch.amax(x0, 0))


def test_nan_propagation_and_ties(no_fallback):
    x = torch.tensor([[1.0, 5.0, 5.0, float("nan"), 2.0, float("nan")],
                      [3.0, 3.0, -1.0, 3.0, 0.0, -1.0],
                      [float("-inf"), float("-inf"), float("-inf"), float("-inf"), float("-inf"), float("-inf")]])
    d = x.to(OCL)
    for f in (torch.max, torch.min):
        gv, gi = f(d, 1)
        wv, wi = f(x, 1)
        check(gv, wv)
        check(gi, wi)
    check(torch.argmax(d, 1), torch.argmax(x, 1))
    check(torch.argmin(d, 1), torch.argmin(x, 1))
    check(torch.argmax(d), torch.argmax(x))
    check(torch.amax(d, 1), torch.amax(x, 1))
    check(torch.amin(d, 0), torch.amin(x, 0))
    check(torch.max(d), torch.max(x))
    check(torch.logsumexp(d, 1), torch.logsumexp(x, 1))
    # A long row split over several work-groups keeps the first index on ties.
    big = torch.zeros(300000)
    big[123457] = 7
    big[250001] = 7
    check(torch.argmax(big.to(OCL)), torch.argmax(big))
    check(torch.max(big.to(OCL).view(3, 100000), 1)[1], torch.max(big.view(3, 100000), 1)[1])


def test_var_std(no_fallback):
    for dt in FLOAT_DTYPES:
        x = make_cpu((6, 9, 4), dt, -4, 6)
        for name, c, d in views(x) if dt == torch.float32 else views(x)[:2]:
            for dim in [None, 0, 1, (0, 2)]:
                for corr in [0, 1, 2] if dt == torch.float32 else [1]:
                    for keepdim in (False, True) if dt == torch.float32 else (dim == 1,):
                        kw = dict(dim=dim, correction=corr, keepdim=keepdim)
                        check(torch.var(d, **kw), torch.var(c, **kw))
                        check(torch.std(d, **kw), torch.std(c, **kw))
                        gv, gm = torch.var_mean(d, **kw)
                        wv, wm = torch.var_mean(c, **kw)
                        check(gv, wv)
                        check(gm, wm)
                        gs, gm = torch.std_mean(d, **kw)
                        ws, wm = torch.std_mean(c, **kw)
                        check(gs, ws)
                        check(gm, wm)
        check(torch.var(x.to(OCL), 1, unbiased=False), torch.var(x, 1, unbiased=False))
        check(torch.std(x.to(OCL), unbiased=True), torch.std(x, unbiased=True))
    with pytest.warns(UserWarning):
        check(torch.var(torch.ones(1, device=OCL)), torch.var(torch.ones(1)))
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        torch.var(torch.ones(3, dtype=torch.int64, device=OCL))
    # Welford stays accurate with a large mean.
    x = torch.randn(100000, dtype=torch.float64).float() + 1000
    check(torch.var(x.to(OCL)), torch.var(x), rtol=1e-4)
    o = torch.empty(0, device=OCL)
    torch.std(x.to(OCL), 0, out=o)
    check(o, torch.std(x, 0), rtol=1e-4)


def test_norms(no_fallback):
    for dt in FLOAT_DTYPES:
        x = make_cpu((5, 7), dt, -3, 4)
        for name, c, d in views(x)[:2] if dt == torch.float32 else views(x)[1:2]:
            for ord in [0, 1, 2, 3, 0.5, -1.5, float("inf"), float("-inf")]:
                for dim in [None, 0, -1] if dt == torch.float32 else [1]:
                    want = torch.linalg.vector_norm(c, ord, dim)
                    got = torch.linalg.vector_norm(d, ord, dim)
                    check(got, want, rtol=1e-2 if dt in (torch.float16, torch.bfloat16) else 1e-4)
            check(torch.norm(d), torch.norm(c))
            check(torch.norm(d, 1, dim=1, keepdim=True), torch.norm(c, 1, dim=1, keepdim=True))
            check(torch.linalg.vector_norm(d, 2, dtype=torch.float64), torch.linalg.vector_norm(c, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.linalg.vector_norm(torch.ones(3, dtype=torch.int64, device=OCL))


def test_logsumexp(no_fallback):
    for dt in FLOAT_DTYPES:
        x = make_cpu((4, 50), dt, -30, 60) * 4
        d = x.to(OCL)
        for dim in [0, 1, (0, 1)]:
            check(torch.logsumexp(d, dim), torch.logsumexp(x, dim))
            check(torch.logsumexp(d, dim, keepdim=True), torch.logsumexp(x, dim, keepdim=True))
    x = torch.tensor([[1000.0, 1000.0], [float("inf"), 1.0], [float("inf"), float("inf")],
                      [float("-inf"), float("-inf")], [float("nan"), 1.0]])
    check(torch.logsumexp(x.to(OCL), 1), torch.logsumexp(x, 1))
    xi = torch.arange(6).reshape(2, 3)
    check(torch.logsumexp(xi.to(OCL), 1), torch.logsumexp(xi, 1))


def test_any_all_count_nonzero(no_fallback):
    for dt in ALL_DTYPES:
        x = make_cpu((4, 6, 3), dt, -1, 2)
        if dt not in (torch.float32, torch.uint8):  # one kernel each: the layouts are dtype-independent
            c, d = x.transpose(0, 1), x.to(OCL).transpose(0, 1)
            check(torch.any(d), torch.any(c))
            check(torch.all(d, 1), torch.all(c, 1))
            check(torch.count_nonzero(d, 1), torch.count_nonzero(c, 1))
            continue
        for name, c, d in views(x):
            check(torch.any(d), torch.any(c))
            check(torch.all(d), torch.all(c))
            for dim in [0, 1, -1]:
                check(torch.any(d, dim), torch.any(c, dim))
                check(torch.all(d, dim, keepdim=True), torch.all(c, dim, keepdim=True))
            check(torch.any(d, (0, 1)), torch.any(c, (0, 1)))
            check(torch.all(d, dim=()), torch.all(c, dim=()))
            check(torch.count_nonzero(d), torch.count_nonzero(c))
            check(torch.count_nonzero(d, (0, 1)), torch.count_nonzero(c, (0, 1)))
    n = torch.tensor([float("nan"), 0.0])
    check(torch.any(n.to(OCL)), torch.any(n))
    check(torch.all(n.to(OCL)[:1]), torch.all(n[:1]))
    o = torch.empty(0, dtype=torch.bool, device=OCL)
    torch.all(torch.ones(3, 2, device=OCL), 1, out=o)
    check(o, torch.ones(3, dtype=torch.bool))
    with pytest.raises(RuntimeError, match="all only supports bool tensor for result"):
        torch.all(torch.ones(3, device=OCL), out=torch.empty((), device=OCL))


def test_equal_allclose(no_fallback):
    a = make_cpu((5, 6), torch.float32)
    d = a.to(OCL)
    assert torch.equal(d, d.clone())
    assert torch.equal(d.t(), a.t().contiguous().to(OCL))
    e = d.clone()
    e[4, 5] += 1
    assert not torch.equal(d, e)
    assert not torch.equal(d, d[:, :5])
    assert torch.equal(torch.empty(0, device=OCL), torch.empty(0, device=OCL))
    n = torch.tensor([1.0, float("nan")], device=OCL)
    assert torch.equal(n, n.clone()) == torch.equal(n.cpu(), n.cpu().clone())
    assert torch.equal(d.long(), a.long().to(OCL))
    assert torch.equal(torch.ones(3, device=OCL), torch.ones(3, dtype=torch.long, device=OCL))


def test_large_sum_accuracy_and_determinism(no_fallback):
    n = (1 << 24) + 12345
    x = torch.rand(n, generator=torch.Generator().manual_seed(1)) + 0.5
    d = x.to(OCL)
    want = x.double().sum().item()
    got1 = d.sum()
    got2 = d.sum()
    assert abs(got1.item() - want) / want < 1e-5
    assert torch.equal(got1.cpu(), got2.cpu())
    m = d[: (1 << 24)].view(64, -1)
    check(m.sum(1), x[: (1 << 24)].view(64, -1).double().sum(1).float(), rtol=1e-5)
    assert torch.equal(m.sum(0).cpu(), m.sum(0).cpu())
    check(d.mean(), x.double().mean().float(), rtol=1e-5)


def test_gradients(fallback_warn):
    torch_ocl.reset_fallback_stats()
    x = make_cpu((4, 5), torch.float32, -3, 4) + 0.25
    xo = x.to(OCL).requires_grad_()
    xc = x.clone().requires_grad_()
    fns = [
        lambda t: t.sum(1),
        lambda t: t.mean(),
        lambda t: t.sum((0, 1), keepdim=True),
        lambda t: torch.logsumexp(t, 1),
        lambda t: t.var(1),
        lambda t: t.std(0),
        lambda t: torch.linalg.vector_norm(t, 2, 1),
        lambda t: t.amax(1),
        lambda t: t.max(1)[0],
        lambda t: t.prod(1),
        lambda t: torch.nansum(t, 0),
    ]
    for f in fns:
        go = torch.autograd.grad(f(xo).sum(), xo)[0]
        gc = torch.autograd.grad(f(xc).sum(), xc)[0]
        torch.testing.assert_close(go.cpu(), gc, rtol=1e-4, atol=1e-4)
    stats = torch_ocl.fallback_stats()
    mine = {"sum", "mean", "prod", "amax", "amin", "max", "min", "var", "std", "logsumexp", "nansum",
            "linalg_vector_norm", "var_mean", "std_mean", "norm", "argmax", "argmin", "any", "all"}
    fell = [k for k in stats if k.split("::")[-1].split(".")[0] in mine]
    assert not fell, f"reductions fell back to the CPU: {fell}"
