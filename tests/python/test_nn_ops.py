"""Softmax, normalisation and loss ops on ocl against the CPU: forward values,
gradients through autograd, batch-norm running statistics, error messages.

Kernels: kernels/softmax.cl, norm.cl, loss.cl (runtime/ops/{softmax,norm,loss}.c,
adapter/aten/ocl_{softmax,norm,loss}_ops.cpp)."""

import pytest
import torch
import torch.nn.functional as F

from conftest import FLOAT_DTYPES, dtype_id

DEV = "ocl"


def tol(dt):
    return {
        torch.float16: dict(atol=2e-3, rtol=2e-3),
        torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
        torch.float32: dict(atol=1e-5, rtol=1e-5),
        torch.float64: dict(atol=1e-10, rtol=1e-10),
    }[dt]


def rand(shape, dtype, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def close(actual, expected, dt=None, **kw):
    dt = dt or expected.dtype
    opts = dict(tol(dt)) if dt in FLOAT_DTYPES else {}
    opts.update(kw)
    assert actual.device.type == DEV
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **opts)


def grads(fn, inputs_cpu, seed=1):
    """fn's outputs and gradients on the CPU and on ocl (same upstream gradient)."""
    res = {}
    for dev in ("cpu", DEV):
        ins = [t.detach().to(dev).requires_grad_(t.requires_grad) for t in inputs_cpu]
        out = fn(*ins)
        g = rand(out.shape, out.dtype, seed).to(dev)
        diff = [t for t in ins if t.requires_grad]
        gs = torch.autograd.grad(out, diff, g) if out.numel() else [torch.zeros_like(t) for t in diff]
        res[dev] = (out, gs)
    return res


def check_grads(fn, inputs_cpu, dt, seed=1, scale=1.0):
    r = grads(fn, inputs_cpu, seed)
    o_cpu, g_cpu = r["cpu"]
    o_ocl, g_ocl = r[DEV]
    t = {k: v * scale for k, v in tol(dt).items()}
    close(o_ocl, o_cpu, dt, **t)
    for a, b in zip(g_ocl, g_cpu):
        close(a, b, dt, **t)


# ---------------------------------------------------------------- softmax

SOFTMAX_CASES = [
    ((5, 1), 1),  # rows of length 1
    ((6, 7), -1),  # odd, one work-item per row
    ((3, 1000), 1),  # one work-group per row
    ((2, 5000), -1),
    ((4, 5, 6), 0),  # strided rows
    ((4, 300, 3), 1),
    ((0, 5), 1),  # empty batch
    ((), 0),  # 0-dim
]


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_softmax_log_softmax(dt, no_fallback):
    for shape, dim in SOFTMAX_CASES:
        x = rand(shape, dt)
        # log_softmax's gradient g - exp(y) * sum(g) amplifies a one-ulp difference
        # in a half-precision y by sum(g), which grows with the row length.
        scale = 4.0 if dt in (torch.float16, torch.bfloat16) and x.dim() and x.shape[dim] >= 1000 else 1.0
        for fn in (F.softmax, F.log_softmax):
            check_grads(lambda t: fn(t, dim), [x.requires_grad_()], dt, scale=scale)
    # non-contiguous input, and an offset view
    x = rand((9, 12), dt).t()
    for fn in (F.softmax, F.log_softmax):
        check_grads(lambda t: fn(t, 1), [x.requires_grad_()], dt)
        base = rand((50,), dt)
        close(fn(base.to(DEV)[7:37].view(5, 6), 1), fn(base[7:37].view(5, 6), 1))


def test_softmax_stability_and_specials(no_fallback):
    x = torch.tensor([[1e4, 1e4 - 1, -1e4], [-float("inf"), 0.0, 1.0], [float("nan"), 0.0, 1.0],
                      [-float("inf")] * 3, [float("inf"), 0.0, 1.0]])
    for fn in (torch.softmax, torch.log_softmax):
        close(fn(x.to(DEV), 1), fn(x, 1))
    # out= and the dim wrap of the aten op
    out = torch.empty(5, 3, device=DEV)
    torch._softmax(x.to(DEV), -1, False, out=out)
    close(out, torch._softmax(x, -1, False))
    with pytest.raises(IndexError):
        torch.softmax(x.to(DEV), 2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch._softmax(torch.ones(3, dtype=torch.long, device=DEV), 0, False)


def test_softmax_half_to_float(no_fallback):
    x = rand((4, 33), torch.float16)
    for op in (torch._softmax, torch._log_softmax):
        y = op(x.to(DEV), 1, True)
        assert y.dtype == torch.float32
        close(y, op(x.float(), 1, False), torch.float16)
        # backward to a half grad_input from a float grad_output
        bw = torch._softmax_backward_data if op is torch._softmax else torch._log_softmax_backward_data
        g = rand((4, 33), torch.float32, 3)
        gi = bw(g.to(DEV), y, 1, torch.float16)
        assert gi.dtype == torch.float16
        close(gi, bw(g, y.cpu(), 1, torch.float32).half(), torch.float16)
    with pytest.raises(RuntimeError, match="Half type only"):
        torch._softmax(torch.ones(3, device=DEV), 0, True)


# ---------------------------------------------------------------- layer / group norm


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_layer_norm(dt, no_fallback):
    cases = [((4, 7), (7,)), ((3, 5, 1000), (1000,)), ((2, 3, 4, 5), (4, 5)), ((0, 6), (6,)), ((6, 1), (1,))]
    for shape, ns in cases:
        x = rand(shape, dt).requires_grad_()
        w = rand(ns, dt, 2, 1.0).requires_grad_()
        b = rand(ns, dt, 3, 1.0).requires_grad_()
        # A one-element row has x - mean == 0 exactly, so the true input gradient is 0;
        # the CPU's rounding noise there is amplified by rstd = 1/sqrt(eps) ~ 316.
        scale = 30 if ns == (1,) else 4
        check_grads(lambda x, w, b: F.layer_norm(x, ns, w, b), [x, w, b], dt, scale=scale)
        check_grads(lambda x: F.layer_norm(x, ns), [x], dt, scale=scale)
    # non-contiguous input; mean and rstd of the aten op
    x = rand((8, 6), dt).t()
    check_grads(lambda x: F.layer_norm(x, (8,)), [x.requires_grad_()], dt, scale=4)
    out = torch.native_layer_norm(x.to(DEV), (8,), None, None, 1e-5)
    ref = torch.native_layer_norm(x, (8,), None, None, 1e-5)
    for a, b in zip(out, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        close(a, b, dt, **{k: v * 4 for k, v in tol(dt).items()})
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(x.to(DEV), (5,))


def test_layer_norm_mixed_dtype(no_fallback):
    x = rand((5, 40), torch.bfloat16).requires_grad_()
    w = rand((40,), torch.float32, 2).requires_grad_()
    b = rand((40,), torch.float32, 3).requires_grad_()
    check_grads(lambda x, w, b: F.layer_norm(x, (40,), w, b), [x, w, b], torch.bfloat16)
    out = torch.native_layer_norm(x.detach().to(DEV), (40,), w.detach().to(DEV), b.detach().to(DEV), 1e-5)
    assert [t.dtype for t in out] == [torch.bfloat16, torch.float32, torch.float32]


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_group_norm(dt, no_fallback):
    for shape, groups in [((2, 6, 5, 4), 3), ((3, 4, 7), 4), ((2, 8), 2), ((1, 6, 300), 1)]:
        x = rand(shape, dt).requires_grad_()
        c = shape[1]
        w = rand((c,), dt, 2, 1.0).requires_grad_()
        b = rand((c,), dt, 3, 1.0).requires_grad_()
        check_grads(lambda x, w, b: F.group_norm(x, groups, w, b), [x, w, b], dt, scale=8)
        check_grads(lambda x: F.group_norm(x, groups), [x], dt, scale=8)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(torch.ones(2, 6, 3, device=DEV), 4)


# ---------------------------------------------------------------- batch norm


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_batch_norm(dt, no_fallback):
    # running statistics in float for reduced dtypes, as nn.BatchNorm under autocast-free mixed use
    sdt = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    for shape in [(6, 5, 7), (16, 3), (2, 4, 3, 5)]:
        c = shape[1]
        x = rand(shape, dt).requires_grad_()
        w = rand((c,), sdt, 2, 1.0).requires_grad_()
        b = rand((c,), sdt, 3, 1.0).requires_grad_()
        for training in (True, False):
            rm, rv = rand((c,), sdt, 4, 0.5), rand((c,), sdt, 5).abs() + 0.5
            rms = {"cpu": (rm.clone(), rv.clone()), DEV: (rm.to(DEV), rv.to(DEV))}

            def fn(x, w, b):
                m, v = rms[x.device.type]
                return F.batch_norm(x, m, v, w, b, training, 0.1, 1e-5)

            check_grads(fn, [x, w, b], dt, scale=8)
            # running stats updated (training, twice: once per device in check_grads) exactly as the CPU
            close(rms[DEV][0], rms["cpu"][0], sdt)
            close(rms[DEV][1], rms["cpu"][1], sdt)
        # no running statistics, no affine
        check_grads(lambda x: F.batch_norm(x, None, None, None, None, True), [x], dt, scale=8)


def test_batch_norm_aten_variants(no_fallback):
    x = rand((8, 3, 5), torch.float32)
    w, b = rand((3,), torch.float32, 2), rand((3,), torch.float32, 3)
    rm, rv = torch.zeros(3), torch.ones(3)
    ocl = [t.to(DEV) for t in (x, w, b, rm, rv)]
    # _batch_norm_with_update / batch_norm_backward (the export path)
    out = torch.ops.aten._batch_norm_with_update(*ocl, 0.2, 1e-5)
    ref = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.2, 1e-5)
    for a, r in zip(out[:3], ref[:3]):
        close(a, r)
    close(ocl[3], rm)
    close(ocl[4], rv)
    g = rand((8, 3, 5), torch.float32, 9)
    gb = torch.ops.aten.batch_norm_backward(g.to(DEV), ocl[0], ocl[1], ocl[3], ocl[4], out[1], out[2], True, 1e-5,
                                            [True, True, True], out[3])
    gr = torch.ops.aten.batch_norm_backward(g, x, w, rm, rv, ref[1], ref[2], True, 1e-5, [True, True, True], ref[3])
    for a, r in zip(gb, gr):
        close(a, r, atol=1e-4, rtol=1e-4)
    # _native_batch_norm_legit (+ no_stats) and its no_training composite
    for args in [(True, 0.1, 1e-5), (False, 0.1, 1e-5)]:
        rm2, rv2 = rm.clone(), rv.clone()
        o = torch.ops.aten._native_batch_norm_legit(ocl[0], ocl[1], ocl[2], rm2.to(DEV), rv2.to(DEV), *args)
        r = torch.ops.aten._native_batch_norm_legit(x, w, b, rm2, rv2, *args)
        for a, e in zip(o, r):
            assert a.shape == e.shape
            close(a, e, atol=1e-5, rtol=1e-5)
    o = torch.ops.aten._native_batch_norm_legit.no_stats(ocl[0], ocl[1], ocl[2], True, 0.1, 1e-5)
    r = torch.ops.aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)
    for a, e in zip(o, r):
        close(a, e, atol=1e-5, rtol=1e-5)
    o = torch.ops.aten._native_batch_norm_legit_no_training(ocl[0], ocl[1], ocl[2], ocl[3], ocl[4], 0.1, 1e-5)
    r = torch.ops.aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)
    close(o[0], r[0], atol=1e-5, rtol=1e-5)


def test_batch_norm_module_training_steps(no_fallback):
    torch.manual_seed(0)
    m_cpu = torch.nn.BatchNorm2d(4)
    m_ocl = torch.nn.BatchNorm2d(4).to(DEV)
    for step in range(3):
        x = rand((5, 4, 3, 3), torch.float32, step)
        close(m_ocl(x.to(DEV)), m_cpu(x), atol=1e-5, rtol=1e-5)
    close(m_ocl.running_mean, m_cpu.running_mean)
    close(m_ocl.running_var, m_cpu.running_var)
    assert int(m_ocl.num_batches_tracked) == 3
    m_cpu.eval(), m_ocl.eval()
    x = rand((2, 4, 3, 3), torch.float32, 7)
    close(m_ocl(x.to(DEV)), m_cpu(x), atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------- losses


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=dtype_id)
def test_pointwise_losses(dt, no_fallback):
    x = rand((6, 7), dt, 0, 1.0)
    y = rand((6, 7), dt, 1, 1.0)
    p = torch.rand(6, 7, generator=torch.Generator().manual_seed(2), dtype=torch.float64).clamp(0.02, 0.98).to(dt)
    tgt = torch.rand(6, 7, generator=torch.Generator().manual_seed(3), dtype=torch.float64).to(dt)
    w = (torch.rand(7, generator=torch.Generator().manual_seed(4), dtype=torch.float64) + 0.5).to(dt)
    for red in ("none", "mean", "sum"):
        s = 4 if red != "none" else 1
        check_grads(lambda a, b: F.mse_loss(a, b, reduction=red), [x.requires_grad_(), y], dt, scale=s)
        for beta in (0.5, 1.0):
            check_grads(lambda a, b: F.smooth_l1_loss(a, b, reduction=red, beta=beta), [x, y], dt, scale=s)
        check_grads(lambda a, b: F.huber_loss(a, b, reduction=red, delta=0.7), [x, y], dt, scale=s)
        check_grads(lambda a, b: F.binary_cross_entropy(a, b, reduction=red), [p.requires_grad_(), tgt], dt,
                    scale=4 * s)
        check_grads(lambda a, b, c: F.binary_cross_entropy(a, b, weight=c, reduction=red), [p, tgt, w], dt,
                    scale=4 * s)
    # non-contiguous operands and an empty input
    check_grads(lambda a, b: F.mse_loss(a, b), [x.t().detach().requires_grad_(), y.t()], dt, scale=4)
    e = torch.empty(0, 3, dtype=dt)
    for red in ("none", "sum"):
        close(F.mse_loss(e.to(DEV), e.to(DEV), reduction=red), F.mse_loss(e, e, reduction=red))


def test_loss_errors(no_fallback):
    p = torch.tensor([0.5, 1.5], device=DEV)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(p, torch.zeros(2, device=DEV))
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(p, p, beta=-1.0)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(p, p, delta=0.0)


def nll_inputs(shape, dt, c, seed=0, ignore=None):
    x = F.log_softmax(rand(shape, torch.float64, seed), 1).to(dt)
    tshape = (shape[0],) + tuple(shape[2:])
    t = torch.randint(0, c, tshape, generator=torch.Generator().manual_seed(seed + 1))
    if ignore is not None:
        t.view(-1)[::3] = ignore
    return x, t


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_nll_and_cross_entropy(dt, no_fallback):
    c = 5
    w = (torch.rand(c, generator=torch.Generator().manual_seed(9), dtype=torch.float64) + 0.5).to(dt)
    for shape in [(7, c), (3, c, 4), (2, c, 3, 4), (2, c, 2, 3, 2)]:
        for red in ("none", "mean", "sum"):
            for ii, weight in [(-100, None), (2, w), (-100, w)]:
                x, t = nll_inputs(shape, dt, c, ignore=ii if ii >= 0 else None)
                args = [x.requires_grad_(), t] + ([weight] if weight is not None else [])
                check_grads(lambda a, b, *ww: F.nll_loss(a, b, ww[0] if ww else None, ignore_index=ii, reduction=red),
                            args, dt, scale=4)
                check_grads(lambda a, b, *ww: F.cross_entropy(a, b, ww[0] if ww else None, ignore_index=ii,
                                                              reduction=red), args, dt, scale=4)
    # unbatched input [C] with a 0-dim target
    x, _ = nll_inputs((1, c), dt, c)
    check_grads(lambda a: F.nll_loss(a, torch.tensor(3, device=a.device)), [x[0].detach().requires_grad_()], dt)


def test_cross_entropy_composites(no_fallback):
    """cross_entropy with probabilities and label smoothing composes from
    log_softmax and pointwise/reduction ops of other op families."""
    c = 6
    x = rand((8, c), torch.float32).requires_grad_()
    t = torch.randint(0, c, (8,), generator=torch.Generator().manual_seed(1))
    probs = torch.softmax(rand((8, c), torch.float32, 2), 1)
    w = torch.rand(c, generator=torch.Generator().manual_seed(3)) + 0.5
    for red in ("none", "mean", "sum"):
        check_grads(lambda a, b: F.cross_entropy(a, b, reduction=red), [x, probs], torch.float32, scale=4)
        check_grads(lambda a, b, ww: F.cross_entropy(a, b, ww, reduction=red, label_smoothing=0.1),
                    [x, probs, w], torch.float32, scale=4)
        check_grads(lambda a, b, ww: F.cross_entropy(a, b, ww, reduction=red, label_smoothing=0.2, ignore_index=1),
                    [x, t, w], torch.float32, scale=4)


def test_nll_errors(no_fallback):
    x = torch.zeros(3, 4, device=DEV)
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(x, torch.tensor([0, 4, 1], device=DEV))
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(x, torch.tensor([0, -1, 1], device=DEV))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.nll_loss(x, torch.tensor([0, 1, 1], device=DEV), weight=torch.ones(3, device=DEV))
    with pytest.raises((RuntimeError, ValueError)):
        F.nll_loss(x, torch.tensor([0, 1], device=DEV))


def refereed(fn, xs, x_ocl, params, g, dt):
    """fn's output and gradients (input and params) on ocl no further from a
    float64 referee than twice the CPU's own error (plus atol): 16-bit
    gradients amplify an ulp of the output, and summed ones (layer norm's
    dw, db) are where the CPU itself is least accurate."""
    def run(x, dev, dtype):
        ins = [t.to(dev, dtype).requires_grad_() for t in (x, *params)]
        y = fn(*ins)
        gs = torch.autograd.grad(y, ins, g.to(dev, dtype))
        return [t.detach().cpu().double() for t in (y, *gs)]
    ref, cpu, got = run(xs, "cpu", torch.float64), run(xs, "cpu", dt), run(x_ocl, DEV, dt)
    for k, (r, c, o) in enumerate(zip(ref, cpu, got)):
        err_c, err_o = (c - r).abs().max().item(), (o - r).abs().max().item()
        assert err_o <= 2 * err_c + tol(dt)["atol"], (k, err_o, err_c)


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_rows_at_odd_offsets(dt, no_fallback):
    # on CPU devices contiguous rows are walked 8 elements at a time
    # (NN_VEC): rows that start at any element offset, lengths around the
    # vector width (a tail or none), and enough rows for layer norm's
    # chunked weight gradient (>= 64)
    for n in (7, 8, 9, 16, 37):
        for off in (1, 3):
            rows = 70
            base = rand((rows * n + off,), dt, seed=n)
            x, x_ocl = base[off:].view(rows, n), base.to(DEV)[off:].view(rows, n)
            g = rand((rows, n), dt, seed=1)
            for fn in (F.softmax, F.log_softmax):
                refereed(lambda t: fn(t, 1), x, x_ocl, [], g, dt)
            w, b = rand((n,), dt, seed=2), rand((n,), dt, seed=3)
            refereed(lambda t, w, b: F.layer_norm(t, (n,), w, b), x, x_ocl, [w, b], g, dt)


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_batch_norm_runs(dt, no_fallback):
    # on CPU devices batch norm is a channel per work-item walking the N
    # runs of HW contiguous elements 8 at a time, with cascaded two-pass
    # sums (TOCL_NN_RUNS): long channels, odd HW (tails), HW 1, N 1, channel
    # counts 1 / 3 / 1000, channels_last and non-contiguous inputs, against
    # a float64 referee; running statistics as the CPU's
    sdt = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    shapes = [(4, 3, 37, 29), (1, 1000, 7), (2, 1, 3001), (3000, 3), (2, 4, 1), (1, 3, 2), (16, 2, 64, 65)]
    if dt == torch.float32:
        shapes.append((4, 2, 512, 512))  # 1M elements per channel
    for shape in shapes:
        c = shape[1]
        # an offset mean tests the two-pass statistics; 16-bit saved means
        # (as the CPU's) are rounded, which over 133K elements moves dw by
        # 2 bf16 ulps on the old path and this one alike: a smaller offset
        x = rand(shape, dt, seed=len(shape)) + (3 if dt in (torch.float32, torch.float64) else 0.25)
        g = rand(shape, dt, seed=7)
        w, b = rand((c,), sdt, 2, 1.0), rand((c,), sdt, 3, 1.0)
        rm, rv = rand((c,), sdt, 4, 0.5), rand((c,), sdt, 5).abs() + 0.5
        refereed(lambda t, w, b: F.batch_norm(t, None, None, w, b, True, 0.1, 1e-5), x, x.to(DEV), [w, b], g, dt)
        refereed(lambda t: F.batch_norm(t, None, None, None, None, True), x, x.to(DEV), [], g, dt)
        # eval: given running statistics
        def ev(t, w, b):
            st = t.dtype if t.dtype == torch.float64 else sdt
            return F.batch_norm(t, rm.to(t.device, st), rv.to(t.device, st), w.to(st), b.to(st), False)
        refereed(ev, x, x.to(DEV), [w, b], g, dt)
        # running statistics (unbiased variance) as the CPU's
        rms = {"cpu": (rm.clone(), rv.clone()), DEV: (rm.to(DEV), rv.to(DEV))}
        for dev in ("cpu", DEV):
            F.batch_norm(x.to(dev), *rms[dev], w.to(dev), b.to(dev), True, 0.1, 1e-5)
        close(rms[DEV][0], rms["cpu"][0], sdt)
        close(rms[DEV][1], rms["cpu"][1], sdt)
        if len(shape) == 4:
            xcl = x.to(DEV).to(memory_format=torch.channels_last)
            refereed(lambda t, w, b: F.batch_norm(t, None, None, w, b, True), x, xcl, [w, b], g, dt)
            # non-contiguous on ocl (the CPU's own strided path rounds
            # differently, so its error is taken on the contiguous copy,
            # which is what the adapter hands the kernel)
            xt = x.transpose(2, 3)
            refereed(lambda t, w, b: F.batch_norm(t, None, None, w, b, True), xt.contiguous(), xt.to(DEV), [w, b],
                     g.transpose(2, 3).contiguous(), dt)
