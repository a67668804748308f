"""Data-movement ops on ocl vs the CPU: cat/stack/split/chunk, flip, roll,
repeat/tile, tril/triu, diag/diag_embed, F.pad in every mode and the pad
backward. Everything runs under no_fallback."""

import pytest
import torch
import torch.nn.functional as F

from conftest import ALL_DTYPES, dtype_id, make_cpu

D = "ocl"


def same(a, b, **kw):
    assert a.device.type == "ocl"
    torch.testing.assert_close(a.cpu(), b, equal_nan=True, **kw)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=dtype_id)
def test_moves_all_dtypes(dt, no_fallback):
    x = make_cpu((3, 4, 5), dt)
    xo = x.to(D)
    xs, xos = x.transpose(0, 2)[1:], xo.transpose(0, 2)[1:]  # non-contiguous, offset
    for dim in (0, 1, -1):
        same(torch.cat([xo, xo[:2] if dim == 0 else xo.narrow(dim, 0, 2)], dim),
             torch.cat([x, x[:2] if dim == 0 else x.narrow(dim, 0, 2)], dim))
        same(torch.stack([xo, xo], dim), torch.stack([x, x], dim))
    same(torch.cat([xos, xos], 1), torch.cat([xs, xs], 1))
    for a, b in zip(torch.split(xo, 2, 1), torch.split(x, 2, 1)):
        same(a, b)
    for a, b in zip(xo.chunk(3, -1), x.chunk(3, -1)):
        same(a, b)
    same(xo.flip(0, 2), x.flip(0, 2))
    same(xos.flip(-1), xs.flip(-1))
    same(xo.roll(2, 1), x.roll(2, 1))
    same(xo.roll((-1, 7), (0, 2)), x.roll((-1, 7), (0, 2)))
    same(xos.roll(3), xs.roll(3))
    same(xo.repeat(2, 1, 1, 2), x.repeat(2, 1, 1, 2))
    same(xos.tile((2,)), xs.tile((2,)))
    for k in (-1, 0, 2):
        same(xo.tril(k), x.tril(k))
        same(xos.triu(k), xs.triu(k))
    m = x[0].clone()
    mo = m.to(D)
    mo.triu_(1)
    same(mo, m.triu_(1))
    same(torch.diag(xo[0]), torch.diag(x[0]))
    same(torch.diag(xo[0, 0], 1), torch.diag(x[0, 0], 1))
    same(torch.diag_embed(xo[:, 0], -1), torch.diag_embed(x[:, 0], -1))
    # pads: constant (any dtype), reflect/replicate/circular on float-capable kinds
    same(F.pad(xo, (1, 2, 0, 1), value=1), F.pad(x, (1, 2, 0, 1), value=1))
    same(F.pad(xo, (-1, 2)), F.pad(x, (-1, 2)))
    same(F.pad(xo, (2, 1), mode="circular"), F.pad(x, (2, 1), mode="circular"))
    for mode in ("reflect", "replicate"):
        try:
            ref = F.pad(x, (2, 1, 1, 3), mode=mode)
        except RuntimeError:
            continue  # the CPU has no kernel for this dtype
        same(F.pad(xo, (2, 1, 1, 3), mode=mode), ref)
        same(F.pad(xos, (1, 2), mode=mode), F.pad(xs, (1, 2), mode=mode))


def test_cat_promotion_out_and_empty(no_fallback):
    a = make_cpu((2, 3), torch.int32)
    b = make_cpu((1, 3), torch.float16)
    c = make_cpu((2, 3), torch.bool)
    same(torch.cat([a.to(D), b.to(D), c.to(D)]), torch.cat([a, b, c]))
    e = torch.empty(0)
    same(torch.cat([e.to(D), a.to(D), e.to(D)]), torch.cat([e, a, e]))
    same(torch.cat([a[:, :0].to(D), a.to(D)], 1), torch.cat([a[:, :0], a], 1))
    out = torch.empty(0, dtype=torch.float64, device=D)
    torch.cat([a.to(D), b.to(D)], out=out)
    same(out, torch.cat([a, b]).double())
    with pytest.raises(RuntimeError):
        torch.cat([a.to(D), torch.zeros(2, 4, device=D)])
    with pytest.raises(TypeError):  # as on the CPU (TORCH_CHECK_TYPE)
        torch.cat([a.to(D), b.to(D)], out=torch.empty(0, dtype=torch.int64, device=D))
    with pytest.raises(RuntimeError):
        torch.cat([torch.tensor(1.0, device=D)])
    tr = torch.zeros(3, 0, device=D)
    same(tr.tril(), torch.zeros(3, 0))
    with pytest.raises(RuntimeError):
        torch.zeros(3, device=D).triu()
    out = torch.empty(0, device=D)
    torch.tril(torch.ones(3, 3, device=D), out=out)
    same(out, torch.ones(3, 3).tril())


def _cat_out_error(f, dev, ins, out_dt):
    out = torch.empty(0, dtype=out_dt, device=dev)
    with pytest.raises(Exception) as info:
        f([t.to(dev) for t in ins], out=out)
    return info.type, str(info.value)


@pytest.mark.parametrize("name", ["cat", "_chunk_cat", "column_stack", "hstack", "vstack", "dstack", "stack"])
def test_cat_out_dtype_cannot_cast(name, no_fallback):
    # issue 23: an out of a lower dtype category raised RuntimeError on ocl,
    # TypeError on the CPU
    if name == "_chunk_cat":
        def f(ts, out):
            return torch._chunk_cat(ts, dim=0, num_chunks=2, out=out)
    else:
        f = getattr(torch, name)
    x = make_cpu((2, 3), torch.float32)
    i = make_cpu((2, 3), torch.int64)
    for ins, out_dt in [([x, x], torch.int64), ([x, i], torch.int32), ([i, i], torch.bool), ([x, x], torch.bool)]:
        want = _cat_out_error(f, "cpu", ins, out_dt)
        # _chunk_cat refuses mixed input dtypes first (RuntimeError)
        assert want[0] is TypeError or (name == "_chunk_cat" and ins[0].dtype != ins[1].dtype)
        assert _cat_out_error(f, D, ins, out_dt) == want
    # castable outs still work, converting
    for ins, out_dt in [([x, x], torch.float64), ([i, x], torch.float16), ([i, i], torch.float32)]:
        if name == "_chunk_cat" and ins[0].dtype != ins[1].dtype:
            continue
        out = torch.empty(0, dtype=out_dt, device=D)
        f([t.to(D) for t in ins], out=out)
        ref = torch.empty(0, dtype=out_dt)
        f(ins, out=ref)
        same(out, ref, atol=0, rtol=0)


def _pad_check(x, pad, mode, nc_grad=False, out_format=None):
    """F.pad forward and backward on ocl against the CPU; half types
    against a float32 CPU reference for the gradient (the CPU rounds each
    partial sum to 16 bits, ocl once)."""
    half = x.dtype in (torch.float16, torch.bfloat16)
    xc = x.clone().requires_grad_()
    yc = F.pad(xc, pad, mode=mode)
    xo = x.to(D)
    if out_format is not None:
        xo = xo.contiguous(memory_format=out_format)
    xo.requires_grad_()
    yo = F.pad(xo, pad, mode=mode)
    same(yo.detach(), yc.detach(), atol=0, rtol=0)  # a pure move
    if nc_grad:  # a strided grad_output
        g = make_cpu(tuple(yc.shape[:-1]) + (yc.shape[-1] * 2,), x.dtype, seed=5)[..., ::2]
    else:
        g = make_cpu(tuple(yc.shape), x.dtype, seed=5)
    if half:
        xf = x.float().requires_grad_()
        (gc,) = torch.autograd.grad(F.pad(xf, pad, mode=mode), xf, g.float())
        gc = gc.to(x.dtype)
    else:
        (gc,) = torch.autograd.grad(yc, xc, g)
    (go,) = torch.autograd.grad(yo, xo, g.to(D))
    same(go, gc, **(dict(atol=1e-2, rtol=1e-2) if half else dict(atol=0, rtol=0)))


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pads_negative(dt, mode, no_fallback):
    # issue 23: negative pads (cropping) are legal for reflect and replicate;
    # the backward refused them ("pads (-2, 1) do not fit")
    pairs = [(-2, 1), (1, -2), (-1, -2), (0, -3), (-3, 0), (-5, 4), (3, -1)]
    sizes = (8, 7, 6)
    for k in (1, 2, 3):
        shape = (2, 3) + sizes[:k]
        x = make_cpu(shape, dt)
        xs = make_cpu(shape[:-1] + (shape[-1] * 2,), dt)[..., 1::2]  # strided input
        for l, r in pairs:
            _pad_check(x, (l, r) * k, mode)  # the same pads on every dim
            for j in range(k):  # negative pads on one dim, positive elsewhere
                pad = [1, 2] * k
                pad[2 * j], pad[2 * j + 1] = l, r
                _pad_check(xs, tuple(pad), mode, nc_grad=(j == 0))
    # unbatched, channels_last, an empty batch
    _pad_check(make_cpu((3, 8), dt), (-2, 1), mode)
    _pad_check(make_cpu((2, 3, 5, 6), dt), (-1, 2, 2, -3), mode, out_format=torch.channels_last)
    _pad_check(make_cpu((2, 3, 4, 5, 6), dt), (-1, 2, 2, -3, -2, -1), mode, out_format=torch.channels_last_3d)
    _pad_check(make_cpu((0, 3, 8), dt), (-2, 1), mode)
    # crops down to one element, far-reaching mixed pads
    for pad in [(-7, 0), (-4, -3), (-14, 7)] + ([(-10, 10), (8, -3)] if mode == "replicate" else []):
        _pad_check(make_cpu((2, 3, 8), dt), pad, mode)
    # what the CPU refuses, ocl refuses (RuntimeError both)
    bad = [((2, 3, 8), (-4, -4)), ((2, 3, 8), (-9, 0)), ((2, 0, 5, 6), (-1, 2, 2, -3)),
           ((0, 5, 6), (-1, 2, 2, -3)), ((2, 3, 0, 6), (-1, 2, 2, -3))]
    if mode == "reflect":
        bad += [((2, 3, 8), (-10, 10)), ((2, 3, 8), (8, -3)), ((2, 3, 1), (-1, 1))]
    for shape, pad in bad:
        with pytest.raises(RuntimeError):
            F.pad(torch.zeros(shape, dtype=dt), pad, mode=mode)
        with pytest.raises(RuntimeError):
            F.pad(torch.zeros(shape, dtype=dt, device=D), pad, mode=mode)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=dtype_id)
def test_pads_and_backward(dt, no_fallback):
    # values reach ~400: 0.5 is below one 16-bit ulp there (sums of cancelling terms)
    tol = dict(atol=0.5, rtol=2e-2) if dt in (torch.float16, torch.bfloat16) else {}
    cases = [((2, 3, 7), (3, 2)), ((2, 3, 5, 6), (2, 1, 0, 3)), ((1, 2, 4, 5, 3), (1, 2, 2, 0, 1, 1)),
             ((3, 6), (0, 5))]
    for shape, pad in cases:
        x = make_cpu(shape, dt)
        for mode in ("reflect", "replicate", "circular", "constant"):
            if mode == "reflect" and max(pad) >= min(shape[-len(pad) // 2:]):
                continue
            try:
                xc = x.clone().requires_grad_()
                yc = F.pad(xc, pad, mode=mode)
            except (RuntimeError, NotImplementedError):
                continue  # the CPU lacks this dtype/mode combination
            xo = x.to(D).requires_grad_()
            yo = F.pad(xo, pad, mode=mode)
            same(yo.detach(), yc.detach(), **tol)
            g = make_cpu(tuple(yc.shape), dt, seed=3)
            if dt in (torch.float16, torch.bfloat16):
                # the CPU rounds every partial sum to 16 bits; ocl sums in
                # float32 and rounds once: compare with a float32 reference
                xf = x.float().requires_grad_()
                (gc,) = torch.autograd.grad(F.pad(xf, pad, mode=mode), xf, g.float())
                gc = gc.to(dt)
            else:
                (gc,) = torch.autograd.grad(yc, xc, g)
            (go,) = torch.autograd.grad(yo, xo, g.to(D))
            same(go, gc, **tol)
    with pytest.raises(RuntimeError):
        F.pad(torch.zeros(1, 2, 3, device=D, dtype=dt), (3, 0), mode="reflect")


def test_shape_gradients(no_fallback):
    x = make_cpu((3, 4, 5), torch.float32)
    fns = [
        lambda t: torch.cat([t, t[:1] * 2], 0),
        lambda t: torch.stack([t, t], 1),
        lambda t: t.flip(1, 2),
        lambda t: t.roll(2, -1),
        lambda t: t.tril(1),
        lambda t: t.repeat(1, 2, 1),
        lambda t: torch.diag_embed(t[0]),
        lambda t: torch.diag(t[0, 0]),
    ]
    for k, f in enumerate(fns):
        xc = x.clone().requires_grad_()
        xo = x.to(D).requires_grad_()
        yc, yo = f(xc), f(xo)
        same(yo.detach(), yc.detach())
        g = make_cpu(tuple(yc.shape), torch.float32, seed=k)
        (gc,) = torch.autograd.grad(yc, xc, g)
        (go,) = torch.autograd.grad(yo, xo, g.to(D))
        same(go, gc)
