"""Ops real models use that compose from native kernels, against the CPU.

max_unpool1d/2d/3d (pool family, a scatter), index_reduce (scatter family),
nonzero_static and combinations (index/mask family), channel_shuffle (shape
family), renorm (norms), cdist / pdist and the margin losses (composites of
native ops): each runs with the CPU fallback set to raise, on contiguous,
non-contiguous, batched, 0-dim and empty inputs where the op takes them,
with gradients where the op has a derivative, and refuses bad input with
the CPU's error.
"""

import pytest
import torch
import torch.nn.functional as F

native = pytest.mark.usefixtures("no_fallback")


def _ocl(*ts):
    return [t.to("ocl") if isinstance(t, torch.Tensor) else t for t in ts]


def _grads(fn, *inputs):
    """Gradients of sum(fn(inputs) * w) for the floating inputs, on ocl and on the CPU."""
    out = []
    for dev in ("cpu", "ocl"):
        xs = [t.detach().to(dev).requires_grad_(t.is_floating_point()) for t in inputs]
        y = fn(*xs)
        w = torch.linspace(0.5, 1.5, y.numel(), dtype=y.dtype).reshape(y.shape).to(dev)
        out.append(torch.autograd.grad((y * w).sum(), [x for x in xs if x.requires_grad]))
    return out


@native
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool(n):
    pool = [F.max_pool1d, F.max_pool2d, F.max_pool3d][n - 1]
    unpool = [F.max_unpool1d, F.max_unpool2d, F.max_unpool3d][n - 1]
    x = torch.randn(2, 3, *([7] * n), dtype=torch.float64)
    y, idx = pool(x, 3, stride=2, return_indices=True)
    for yy, ii in ((y, idx), (y[0], idx[0])):  # batched and unbatched
        expect = unpool(yy, ii, 3, stride=2, output_size=x.shape[-n:])
        got = unpool(*_ocl(yy, ii), 3, stride=2, output_size=x.shape[-n:])
        torch.testing.assert_close(got.cpu(), expect)
    # non-contiguous input and indices
    yt, it = y.transpose(0, 1), idx.transpose(0, 1)
    torch.testing.assert_close(unpool(*_ocl(yt, it), 3, stride=2).cpu(), unpool(yt, it, 3, stride=2))
    (gc,), (go,) = _grads(lambda v: unpool(v, idx.to(v.device), 3, stride=2), y)
    torch.testing.assert_close(go.cpu(), gc)
    with pytest.raises(RuntimeError, match="int64"):
        unpool(*_ocl(y, idx.int()), 3, stride=2)


@native
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    self_ = torch.randn(5, 4, dtype=torch.float64)
    src = torch.randn(4, 6, dtype=torch.float64).t()  # non-contiguous (6, 4)
    index = torch.tensor([0, 4, 2, 0, 4, 4])
    expect = self_.index_reduce(0, index, src, reduce, include_self=include_self)
    got = self_.to("ocl").index_reduce(0, index.to("ocl"), src.to("ocl"), reduce, include_self=include_self)
    torch.testing.assert_close(got.cpu(), expect)
    # along dim 1, in place, integers (the mean floors)
    si = torch.randint(-9, 9, (3, 5))
    srci = torch.randint(-9, 9, (3, 4))
    idx1 = torch.tensor([1, 1, 3, 0])
    expect = si.clone().index_reduce_(1, idx1, srci, reduce, include_self=include_self)
    got = si.to("ocl")
    got.index_reduce_(1, idx1.to("ocl"), srci.to("ocl"), reduce, include_self=include_self)
    torch.testing.assert_close(got.cpu(), expect)
    # 0-dim self and source, empty index
    s0, v0 = torch.tensor(2.0), torch.tensor(3.0)
    torch.testing.assert_close(s0.to("ocl").index_reduce(0, torch.tensor([0], device="ocl"), v0.to("ocl"), reduce,
                                                          include_self=include_self).cpu(),
                               s0.index_reduce(0, torch.tensor([0]), v0, reduce, include_self=include_self))
    e = self_.to("ocl").index_reduce(0, torch.empty(0, dtype=torch.long, device="ocl"),
                                     torch.empty(0, 4, dtype=torch.float64, device="ocl"), reduce)
    torch.testing.assert_close(e.cpu(), self_)
    if reduce in ("prod", "mean"):
        (gc, gsc), (go, gso) = _grads(lambda a, b: a.index_reduce(0, index.to(a.device), b, reduce,
                                                                  include_self=include_self), self_, src)
        torch.testing.assert_close(go.cpu(), gc)
        torch.testing.assert_close(gso.cpu(), gsc)
    with pytest.raises(RuntimeError, match="reduce"):
        self_.to("ocl").index_reduce(0, index.to("ocl"), src.to("ocl"), "sum")


@native
def test_nonzero_static_and_combinations():
    x = torch.tensor([[0, 1, 0], [2, 0, 3]])
    for size, fill in ((2, -1), (3, -1), (6, 7), (0, -1)):
        got = torch.nonzero_static(x.to("ocl"), size=size, fill_value=fill)
        torch.testing.assert_close(got.cpu(), torch.nonzero_static(x, size=size, fill_value=fill))
    torch.testing.assert_close(torch.nonzero_static(x.to("ocl").t(), size=5).cpu(), torch.nonzero_static(x.t(), size=5))
    torch.testing.assert_close(torch.nonzero_static(torch.tensor(3, device="ocl"), size=2).cpu(),
                               torch.nonzero_static(torch.tensor(3), size=2))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.nonzero_static(x.to("ocl"), size=-1)
    v = torch.tensor([3.0, 1.0, 4.0, 1.5])
    for r in (1, 2, 3):
        for wr in (False, True):
            torch.testing.assert_close(torch.combinations(v.to("ocl"), r, with_replacement=wr).cpu(),
                                       torch.combinations(v, r, with_replacement=wr))


@native
def test_channel_shuffle():
    x = torch.randn(2, 6, 3, 4)
    for t in (x, x.contiguous(memory_format=torch.channels_last), x[:, :, 1:], torch.randn(3, 6, 5)):
        got = F.channel_shuffle(t.to("ocl"), 3)
        expect = F.channel_shuffle(t, 3)
        torch.testing.assert_close(got.cpu(), expect)
        assert got.is_contiguous(memory_format=torch.channels_last) == expect.is_contiguous(
            memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="divisible"):
        F.channel_shuffle(x.to("ocl"), 4)


@native
def test_renorm():
    x = torch.randn(4, 5, 3, dtype=torch.float64) * 3
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.5), (3.5, -1, 0.5), (float("inf"), 2, 1.0)):
        torch.testing.assert_close(torch.renorm(x.to("ocl"), p, dim, maxnorm).cpu(), torch.renorm(x, p, dim, maxnorm))
    y = x.clone().to("ocl").transpose(0, 2)
    y.renorm_(2, 1, 0.7)
    torch.testing.assert_close(y.cpu(), x.transpose(0, 2).renorm(2, 1, 0.7))
    h = x.float().half()
    torch.testing.assert_close(torch.renorm(h.to("ocl"), 2, 0, 1.0).cpu(), torch.renorm(h, 2, 0, 1.0))
    (gc,), (go,) = _grads(lambda v: torch.renorm(v, 2, 0, 1.0), x)
    torch.testing.assert_close(go.cpu(), gc)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        torch.renorm(x.to("ocl"), 0, 0, 1.0)


@native
@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_pdist(p):
    a = torch.randn(2, 1, 5, 4, dtype=torch.float64)
    b = torch.randn(3, 6, 4, dtype=torch.float64)
    b[0, 0] = a[0, 0, 0]  # a zero distance: its gradient is 0
    torch.testing.assert_close(torch.cdist(*_ocl(a, b), p=p).cpu(), torch.cdist(a, b, p=p))
    big1, big2 = torch.randn(30, 3, dtype=torch.float64), torch.randn(27, 3, dtype=torch.float64)
    torch.testing.assert_close(torch.cdist(*_ocl(big1, big2), p=p).cpu(), torch.cdist(big1, big2, p=p))
    torch.testing.assert_close(torch.cdist(*_ocl(a[..., :0, :], b), p=p).cpu(), torch.cdist(a[..., :0, :], b, p=p))
    if p != 0:
        (ga, gb), (oa, ob) = _grads(lambda u, v: torch.cdist(u, v, p=p), a, b)
        torch.testing.assert_close(oa.cpu(), ga)
        torch.testing.assert_close(ob.cpu(), gb)
    x = torch.randn(6, 3, dtype=torch.float64)
    x[4] = x[1]
    torch.testing.assert_close(F.pdist(x.to("ocl"), p=p).cpu(), F.pdist(x, p=p))
    assert F.pdist(x[:1].to("ocl"), p=p).shape == (0,)
    if p != 0:
        (gc,), (go,) = _grads(lambda v: F.pdist(v, p=p), x)
        torch.testing.assert_close(go.cpu(), gc)
    with pytest.raises(RuntimeError, match="same number of columns"):
        torch.cdist(*_ocl(a, b[..., :3]))


@native
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses(reduction):
    x = torch.randn(5, 4, dtype=torch.float64)
    t = torch.tensor([0, 3, 1, 1, 2])
    w = torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64)
    for p, weight, margin in ((1, None, 1.0), (2, w, 0.7)):
        def f(u, tt=t, weight=weight):
            return F.multi_margin_loss(u, tt.to(u.device), p=p, margin=margin,
                                       weight=None if weight is None else weight.to(u.device), reduction=reduction)
        torch.testing.assert_close(f(x.to("ocl")).cpu(), f(x))
        torch.testing.assert_close(f(x[0].to("ocl"), t[0]).cpu(), f(x[0], t[0]))  # one sample, 1-D
        (gc,), (go,) = _grads(f, x)
        torch.testing.assert_close(go.cpu(), gc)
    mt = torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 2], [2, 2, 1, 0], [-1, 0, 0, 0]])

    def g(u, tt=mt):
        return F.multilabel_margin_loss(u, tt.to(u.device), reduction=reduction)
    torch.testing.assert_close(g(x.to("ocl")).cpu(), g(x))
    torch.testing.assert_close(g(x.t()[:, :4].to("ocl"), mt[:4]).cpu(), g(x.t()[:, :4], mt[:4]))  # non-contiguous
    torch.testing.assert_close(g(x[1].to("ocl"), mt[1]).cpu(), g(x[1], mt[1]))
    (gc,), (go,) = _grads(g, x)
    torch.testing.assert_close(go.cpu(), gc)
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multi_margin_loss(x.to("ocl"), t[:3].to("ocl"))
    with pytest.raises(RuntimeError, match="out of range"):
        F.multi_margin_loss(x.to("ocl"), torch.tensor([0, 9, 1, 1, 2], device="ocl"))
