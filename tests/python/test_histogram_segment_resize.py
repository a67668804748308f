"""histogram / histogramdd, segment_reduce and antialiased bilinear resize on
ocl (composed from native ops: adapter/aten/ocl_histogram_ops.cpp,
ocl_segment_reduce_ops.cpp, ocl_resample_aa_ops.cpp) against the CPU, with
gradients where PyTorch defines them."""

import pytest
import torch
import torch.nn.functional as F

native = pytest.mark.usefixtures("no_fallback")


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histogram(dtype):
    g = torch.Generator().manual_seed(0)
    clean = torch.randn(1000, generator=g, dtype=dtype)
    x = clean.clone()
    x[::97] = float("nan")  # NaNs are never counted; with no range the CPU refuses them (below)
    w = torch.rand(1000, generator=g, dtype=dtype)
    for kw in (dict(bins=10), dict(bins=7, range=(-1.0, 1.5)), dict(bins=5, weight=w, density=True)):
        xs = x if "range" in kw else clean
        h, e = torch.histogram(xs.to("ocl"), **{k: (v.to("ocl") if isinstance(v, torch.Tensor) else v)
                                               for k, v in kw.items()})
        hc, ec = torch.histogram(xs, **kw)
        torch.testing.assert_close(e.cpu(), ec)
        torch.testing.assert_close(h.cpu(), hc)
    edges = torch.tensor([-2.0, -0.5, 0.0, 0.25, 3.0], dtype=dtype)
    h, e = torch.histogram(x.to("ocl"), edges.to("ocl"))
    hc, ec = torch.histogram(x, edges)
    torch.testing.assert_close(h.cpu(), hc)
    # values on the rightmost edge count in the last bin; a constant input widens its range
    h, e = torch.histogram(torch.full((5,), 3.0, dtype=dtype, device="ocl"), bins=4)
    hc, ec = torch.histogram(torch.full((5,), 3.0, dtype=dtype), bins=4)
    torch.testing.assert_close((h.cpu(), e.cpu()), (hc, ec))


@native
def test_histogramdd():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(300, 3, generator=g)
    w = torch.rand(300, generator=g)
    for kw in (dict(bins=[3, 4, 5]), dict(bins=[2, 2, 2], range=[-1.0, 1.0, -2.0, 2.0, 0.0, 1.0], weight=w),
               dict(bins=[4, 3, 2], density=True)):
        r = torch.histogramdd(x.to("ocl"), **{k: (v.to("ocl") if isinstance(v, torch.Tensor) else v)
                                             for k, v in kw.items()})
        rc = torch.histogramdd(x, **kw)
        torch.testing.assert_close(r.hist.cpu(), rc.hist)
        for a, b in zip(r.bin_edges, rc.bin_edges):
            torch.testing.assert_close(a.cpu(), b)


def test_histogram_errors_match_the_cpu():
    x = torch.randn(10)
    nan = torch.tensor([0.0, float("nan")])
    for x, kw in ((x, dict(bins=-1)), (x, dict(bins=3, range=(1.0, 0.0))), (x, dict(bins=3, weight=torch.ones(4))),
                  (nan, dict(bins=3))):
        with pytest.raises(RuntimeError) as cpu:
            torch.histogram(x, **kw)
        with pytest.raises(RuntimeError) as dev:
            torch.histogram(x.to("ocl"), **{k: (v.to("ocl") if isinstance(v, torch.Tensor) else v)
                                            for k, v in kw.items()})
        assert type(dev.value) is type(cpu.value)
        if "range" in kw or kw.get("bins", 0) == 3 and "weight" not in kw:
            assert str(dev.value) == str(cpu.value)


@native
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_reduce(reduce, initial):
    g = torch.Generator().manual_seed(2)
    data = torch.randn(2, 9, 3, generator=g, dtype=torch.float64)
    data[0, 4, 1] = 0.0  # prod's gradient through a zero
    lengths = torch.tensor([[2, 0, 4, 3], [1, 5, 0, 3]])
    for kw in (dict(lengths=lengths), dict(offsets=torch.cat([torch.zeros(2, 1, dtype=torch.long),
                                                              lengths.cumsum(-1)], -1))):
        x = data.to("ocl").requires_grad_()
        y = data.clone().requires_grad_()
        out = torch.segment_reduce(x, reduce, axis=1, initial=initial, **{k: v.to("ocl") for k, v in kw.items()})
        ref = torch.segment_reduce(y, reduce, axis=1, initial=initial, **kw)
        torch.testing.assert_close(out.cpu(), ref, equal_nan=True)
        gout = torch.randn(ref.shape, generator=g, dtype=torch.float64)
        finite = torch.isfinite(ref)  # empty max/min segments are -inf/inf: no gradient through them
        (out * torch.where(finite, gout, 0).to("ocl")).nan_to_num(0).sum().backward()
        (ref * torch.where(finite, gout, 0)).nan_to_num(0).sum().backward()
        torch.testing.assert_close(x.grad.cpu(), y.grad, equal_nan=True)


def test_segment_reduce_checks_lengths_as_the_cpu():
    data = torch.randn(5)
    for lengths in (torch.tensor([2, 2]), torch.tensor([6, -1])):
        with pytest.raises(RuntimeError) as cpu:
            torch.segment_reduce(data, "sum", lengths=lengths)
        with pytest.raises(RuntimeError) as dev:
            torch.segment_reduce(data.to("ocl"), "sum", lengths=lengths.to("ocl"))
        assert str(dev.value) == str(cpu.value)


@native
@pytest.mark.parametrize("size,align", [((5, 7), False), ((20, 30), False), ((3, 11), True), ((16, 16), False)])
def test_antialiased_bilinear(size, align):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 16, 16, generator=g)
    xo = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    out = F.interpolate(xo, size=size, mode="bilinear", antialias=True, align_corners=align)
    ref = F.interpolate(xc, size=size, mode="bilinear", antialias=True, align_corners=align)
    torch.testing.assert_close(out.cpu(), ref, atol=1e-5, rtol=1e-5)
    gout = torch.randn(ref.shape, generator=g)
    out.backward(gout.to("ocl"))
    ref.backward(gout)
    torch.testing.assert_close(xo.grad.cpu(), xc.grad, atol=1e-5, rtol=1e-5)
    # channels_last and scale factors
    cl = x.to(memory_format=torch.channels_last)
    out = F.interpolate(cl.to("ocl"), scale_factor=0.3, mode="bilinear", antialias=True)
    torch.testing.assert_close(out.cpu(), F.interpolate(cl, scale_factor=0.3, mode="bilinear", antialias=True),
                               atol=1e-5, rtol=1e-5)


def test_antialiased_uint8_runs_through_the_fallback_exactly():
    x = torch.randint(0, 256, (1, 3, 16, 16), dtype=torch.uint8)
    out = F.interpolate(x.to("ocl"), size=(5, 7), mode="bilinear", antialias=True)
    assert torch.equal(out.cpu(), F.interpolate(x, size=(5, 7), mode="bilinear", antialias=True))
