"""Indexing ops on ocl vs the CPU: index_select, gather, scatter*, index_add/
copy/fill, advanced indexing, take/put, masks, nonzero, embedding, one_hot;
out-of-range errors and gradients. Everything runs under no_fallback."""

import pytest
import torch
import torch.nn.functional as F

from conftest import ALL_DTYPES, dtype_id, make_cpu

D = "ocl"


def same(a, b, **kw):
    assert a.device.type == "ocl"
    torch.testing.assert_close(a.cpu(), b, equal_nan=True, **kw)


def raises_like(fn_cpu, fn_ocl):
    """Both raise; same exception type (IndexError vs RuntimeError as the CPU)."""
    with pytest.raises(Exception) as ec:
        fn_cpu()
    with pytest.raises(type(ec.value)) as eo:
        fn_ocl()
    assert type(eo.value) is type(ec.value), (ec.value, eo.value)
    return str(eo.value)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=dtype_id)
def test_gather_select_take_dtypes(dt, no_fallback):
    x = make_cpu((4, 5, 6), dt)
    xo = x.to(D)
    idx = torch.tensor([3, 0, -0, 3, 1])
    for dim in range(3):
        same(xo.index_select(dim, idx.to(D)), x.index_select(dim, idx))
    # non-contiguous / offset source, int32 index
    xs, xos = x.transpose(0, 2)[1:], xo.transpose(0, 2)[1:]
    i32 = torch.tensor([1, 2, 0], dtype=torch.int32)
    same(xos.index_select(1, i32.to(D)), xs.index_select(1, i32))
    g = torch.randint(0, 4, (3, 5, 2))
    same(xo.gather(0, g.to(D)), x.gather(0, g))
    same(xos.gather(2, g[:, :, :1].to(D)), xs.gather(2, g[:, :, :1]))
    same(torch.gather(xo, -1, g.to(D).expand(3, 5, 2)), torch.gather(x, -1, g.expand(3, 5, 2)))
    t = torch.tensor([[0, -1], [7, 99]])
    same(xos.take(t.to(D)), xs.take(t))
    same(xo.take(t.to(D)), x.take(t))
    # advanced indexing: int tensors, negative, broadcast, None/slices mixed, masks
    i0, i1 = torch.tensor([[0], [-1]]), torch.tensor([1, 4, -2])
    same(xo[i0.to(D), i1.to(D)], x[i0, i1])
    same(xo[:, i1.to(D)], x[:, i1])
    same(xo[i0.to(D), :, i1.to(D)], x[i0, :, i1])
    same(xo[1:, None, i1.to(D), ::2], x[1:, None, i1, ::2])
    same(xo[..., torch.tensor([5, 0]).to(D)], x[..., torch.tensor([5, 0])])
    m = make_cpu((4, 5), torch.bool, seed=3)
    same(xo[m.to(D)], x[m])
    same(xo[m.to(D), 2], x[m, 2])
    same(xo.masked_select(m[:, :, None].to(D)), x.masked_select(m[:, :, None]))
    same(torch.nonzero(xo), torch.nonzero(x))
    same(torch.argwhere(xos), torch.argwhere(xs))
    # embedding forward is index_select
    if dt.is_floating_point:
        w, ids = make_cpu((7, 3), dt), torch.tensor([[1, 6], [0, 1]])
        same(F.embedding(ids.to(D), w.to(D)), F.embedding(ids, w))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=dtype_id)
def test_scatter_family_dtypes(dt, no_fallback):
    x = make_cpu((4, 6), dt)
    src = make_cpu((3, 6), dt, seed=1)
    idx = torch.tensor([[0, 1, 2, 3, 0, 1], [3, 3, 3, 0, 0, 1], [1, 1, 1, 1, 1, 1]])
    xo, so, io = x.to(D), src.to(D), idx.to(D)
    uniq = torch.tensor([[0, 1, 2, 3, 0, 1], [3, 2, 1, 0, 2, 3]])
    same(xo.scatter(0, uniq.to(D), so[:2]), x.scatter(0, uniq, src[:2]))
    same(xo.scatter(1, uniq[:, :4].to(D), 1), x.scatter(1, uniq[:, :4], 1))
    same(xo.scatter_add(0, io, so), x.scatter_add(0, idx, src))
    tol = dict(atol=1e-2, rtol=1e-2) if dt in (torch.float16, torch.bfloat16) else {}
    for red in ["sum", "prod", "amax", "amin"] + (["mean"] if dt != torch.bool else []):
        for inc in (True, False):
            same(xo.scatter_reduce(0, io, so, red, include_self=inc), x.scatter_reduce(0, idx, src, red, include_self=inc), **tol)
    if dt != torch.bool:
        for red in ("add", "multiply"):
            same(xo.scatter(0, io, so, reduce=red), x.scatter(0, idx, src, reduce=red), **tol)
    ii = torch.tensor([2, 0, 2])
    if dt != torch.bool:
        same(xo.index_add(0, ii.to(D), so), x.index_add(0, ii, src))
        same(xo.index_add(1, ii.to(D), xo[:, :3].t().contiguous().t()), x.index_add(1, ii, x[:, :3]))
    same(xo.index_copy(0, torch.tensor([3, 0, 1]).to(D), so), x.index_copy(0, torch.tensor([3, 0, 1]), src))
    same(xo.index_fill(1, torch.tensor([0, -1]).to(D), 1), x.index_fill(1, torch.tensor([0, -1]), 1))
    same(xo.index_fill(0, torch.tensor(2).to(D), torch.tensor(0)), x.index_fill(0, torch.tensor(2), torch.tensor(0)))
    # index_put / put with and without accumulate, masks, broadcast values
    v = make_cpu((3,), dt, seed=2)
    ip = (torch.tensor([0, 3, 0]), torch.tensor([1, -1, 1]))
    a = x.clone().index_put_(ip, v, accumulate=True)
    b = xo.clone().index_put_(tuple(i.to(D) for i in ip), v.to(D), accumulate=True)
    same(b, a)
    uip = (torch.tensor([0, 3, 1]), torch.tensor([1, -1, 1]))
    same(xo.clone().index_put_(tuple(i.to(D) for i in uip), v.to(D)), x.clone().index_put_(uip, v))
    m = make_cpu((4, 6), torch.bool, seed=5)
    c, co = x.clone(), xo.clone()
    c[m] = v[0]
    co[m.to(D)] = v[0].to(D)
    same(co, c)
    c[1, torch.tensor([2, 2, 5])] = v
    co[1, torch.tensor([2, 2, 5]).to(D)] = v.to(D)
    same(co, c)
    pidx = torch.tensor([5, -1, 5, 0])
    if dt != torch.bool:
        same(xo.clone().put_(pidx.to(D), so[0, :4], accumulate=True), x.clone().put_(pidx, src[0, :4], accumulate=True))
    same(xo.clone().put_(torch.tensor([5, -1]).to(D), so[0, :2]), x.clone().put_(torch.tensor([5, -1]), src[0, :2]))
    big = make_cpu((5, 6), dt, seed=8)
    same(xo.clone().masked_scatter_(m.to(D), big.to(D)), x.clone().masked_scatter_(m, big))
    same(xo.clone().masked_scatter_(m[0].to(D), big.to(D)), x.clone().masked_scatter_(m[0], big))


def test_in_place_out_views_and_empty(no_fallback):
    x = make_cpu((5, 4), torch.float32)
    xo = x.to(D)
    # in-place into a non-contiguous view with an offset
    base, baseo = torch.zeros(6, 8), torch.zeros(6, 8, device=D)
    idx = torch.tensor([[0, 1, 2, 3], [4, 0, 1, 2]])
    base[1:, ::2].scatter_add_(0, idx, x[:2])
    baseo[1:, ::2].scatter_add_(0, idx.to(D), xo[:2])
    same(baseo, base)
    base.t()[1:5].index_add_(1, torch.tensor([0, 5, 5]), x[:3].t(), alpha=2)
    baseo.t()[1:5].index_add_(1, torch.tensor([0, 5, 5]).to(D), xo[:3].t(), alpha=2)
    same(baseo, base)
    # out= forms
    out = torch.empty(0, device=D)
    torch.index_select(xo, 1, torch.tensor([3, 3]).to(D), out=out)
    same(out, x.index_select(1, torch.tensor([3, 3])))
    out = torch.empty(0, device=D)
    torch.gather(xo, 1, (idx.t()[:, :2] % 4).to(D), out=out)
    same(out, torch.gather(x, 1, idx.t()[:, :2] % 4))
    out = torch.empty(0, device=D)
    torch.take(xo, torch.tensor([1, 2]).to(D), out=out)
    same(out, torch.take(x, torch.tensor([1, 2])))
    mk = make_cpu((5, 1), torch.bool, seed=2)
    out = torch.empty(0, device=D)
    torch.masked_select(xo, mk.to(D), out=out)
    same(out, torch.masked_select(x, mk))
    lo = torch.empty(0, dtype=torch.long, device=D)
    torch.nonzero(xo, out=lo)
    same(lo, torch.nonzero(x))
    out = torch.empty(0, device=D)
    torch.scatter_reduce(xo, 0, idx.to(D), xo, "amax", out=out)
    same(out, torch.scatter_reduce(x, 0, idx, x, "amax"))
    # empty and 0-dim
    e = torch.empty(0, dtype=torch.long)
    same(xo.index_select(0, e.to(D)), x.index_select(0, e))
    same(xo[e.to(D)], x[e])
    same(torch.nonzero(torch.zeros(3, 0, device=D)), torch.nonzero(torch.zeros(3, 0)))
    same(torch.nonzero(torch.zeros(3, 2, device=D)), torch.nonzero(torch.zeros(3, 2)))
    same(torch.nonzero(torch.tensor(2.0, device=D)), torch.nonzero(torch.tensor(2.0)))
    s = torch.tensor(3.5)
    same(s.to(D).index_select(0, torch.tensor([0]).to(D)), s.index_select(0, torch.tensor([0])))
    same(s.to(D).gather(0, torch.tensor(0).to(D)), s.gather(0, torch.tensor(0)))
    same(xo.take(torch.tensor(7).to(D)), x.take(torch.tensor(7)))
    same(xo.scatter_add(0, e.view(0, 1).to(D), xo), x.scatter_add(0, e.view(0, 1), x))
    # expanded index and source
    ie = torch.tensor([[1], [0]]).expand(2, 4)
    same(xo.gather(0, ie.to(D)), x.gather(0, ie))
    same(xo.scatter_add(0, ie.to(D), torch.ones(1, 1, device=D).expand(2, 4)), x.scatter_add(0, ie, torch.ones(1, 1).expand(2, 4)))


def test_out_of_range_errors(no_fallback):
    x = torch.arange(20.0).view(4, 5)
    xo = x.to(D)

    def both(f):
        return raises_like(lambda: f(x, torch.device("cpu")), lambda: f(xo, torch.device(D)))

    T = lambda v, dev: torch.tensor(v, device=dev)  # noqa: E731
    both(lambda t, d: t.index_select(0, T([0, 7], d)))
    both(lambda t, d: t.index_select(1, T([0, 5], d)))
    both(lambda t, d: t.index_select(0, T([-1], d)))
    assert "5" in both(lambda t, d: t.gather(1, T([[0, 5]], d)))
    both(lambda t, d: t.gather(1, T([[0, -1]], d)))
    assert "-6" in both(lambda t, d: t[:, T([0, -6], d)])
    both(lambda t, d: t[T([4], d)])
    both(lambda t, d: t.clone().index_put_((T([9], d),), T(1.0, d)))
    both(lambda t, d: t.clone().index_put_((T([9], d),), T(1.0, d), accumulate=True))
    both(lambda t, d: t.clone().scatter_(1, T([[0, 5]], d), 1.0))
    both(lambda t, d: t.clone().scatter_add_(1, T([[0, 5]], d), t))
    both(lambda t, d: t.clone().scatter_reduce_(0, T([[4]], d), t, "sum"))
    both(lambda t, d: t.clone().index_add_(1, T([0, 5], d), t[:, :2]))
    both(lambda t, d: t.clone().index_copy_(1, T([0, -1], d), t[:, :2]))
    both(lambda t, d: t.clone().index_fill_(1, T([0, -6], d), 1.0))
    assert "20" in both(lambda t, d: t.take(T([20], d)))
    both(lambda t, d: t.take(T([-21], d)))
    both(lambda t, d: t.clone().put_(T([20], d), T([1.0], d)))
    both(lambda t, d: F.embedding(T([5], d), t))
    both(lambda t, d: F.one_hot(T([5], d), 3))
    both(lambda t, d: F.one_hot(T([-1], d), 3))
    pos = x > 0
    both(lambda t, d: t.clone().masked_scatter_(pos.to(d), torch.zeros(3, device=d)))
    both(lambda t, d: t[T([True, False], d)])
    # nothing was written by the failed in-place ops
    same(xo, x)


def test_one_hot_embedding_backward(no_fallback):
    t = torch.tensor([[0, 3], [2, 2]])
    same(F.one_hot(t.to(D)), F.one_hot(t))
    same(F.one_hot(t.to(D), 6), F.one_hot(t, 6))
    w = make_cpu((6, 4), torch.float32)
    ids = torch.tensor([[1, 5, 1], [0, 1, 5]])
    g = make_cpu((2, 3, 4), torch.float32, seed=4)
    for pad in (None, 1):
        for freq in (False, True):
            wc = w.clone().requires_grad_()
            wo = w.to(D).requires_grad_()
            (gc,) = torch.autograd.grad(F.embedding(ids, wc, padding_idx=pad, scale_grad_by_freq=freq), wc, g)
            (go,) = torch.autograd.grad(F.embedding(ids.to(D), wo, padding_idx=pad, scale_grad_by_freq=freq), wo, g.to(D))
            same(go, gc)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.bfloat16], ids=dtype_id)
def test_index_gradients(dt, no_fallback):
    x = make_cpu((5, 6), dt)
    tol = dict(atol=2e-2, rtol=2e-2) if dt == torch.bfloat16 else {}
    idx = torch.tensor([4, 0, 4, 2])
    gidx = torch.tensor([[0, 5, 5], [1, 1, 0]])
    m = make_cpu((5, 6), torch.bool, seed=7)
    fns = [
        lambda t, d: t.index_select(1, idx.to(d)),
        lambda t, d: t.gather(1, gidx.to(d)),
        lambda t, d: t[idx.to(d)],
        lambda t, d: t[idx.to(d)[:, None], idx.to(d)[None, :3]],
        lambda t, d: t[m.to(d)],
        lambda t, d: t.take(gidx.to(d)),
        lambda t, d: t.scatter_add(0, (gidx % 5).to(d), t[:2, :3] * 2),
        lambda t, d: t.scatter(1, (gidx % 3).to(d), t[:2, 3:]),
        lambda t, d: t.index_add(0, idx[:2].to(d), t[:2] * 3),
    ]
    for k, f in enumerate(fns):
        xc = x.clone().requires_grad_()
        xo = x.to(D).requires_grad_()
        yc, yo = f(xc, "cpu"), f(xo, D)
        same(yo.detach(), yc.detach(), **tol)
        g = make_cpu(tuple(yc.shape), dt, seed=k)
        (gc,) = torch.autograd.grad(yc, xc, g)
        (go,) = torch.autograd.grad(yo, xo, g.to(D))
        same(go, gc, **tol)


def test_accumulate_is_deterministic(no_fallback):
    n = 4000
    idx = torch.randint(0, 7, (n,), generator=torch.Generator().manual_seed(0))
    v = torch.randn(n, generator=torch.Generator().manual_seed(1))
    io, vo = idx.to(D), v.to(D)
    r1 = torch.zeros(7, device=D).index_put_((io,), vo, accumulate=True).cpu()
    r2 = torch.zeros(7, device=D).index_put_((io,), vo, accumulate=True).cpu()
    assert torch.equal(r1, r2)
    # sequential in index order, as the CPU: bit-exact float32 sums
    assert torch.equal(r1, torch.zeros(7).index_put_((idx,), v, accumulate=True))
    assert torch.equal(torch.zeros(7, device=D).scatter_add(0, io, vo).cpu(), torch.zeros(7).scatter_add(0, idx, v))
