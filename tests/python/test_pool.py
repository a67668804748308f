"""Pooling on ocl against the CPU: max pool 1d/2d/3d (values, indices,
gradients) over a grid of kernel sizes, strides, paddings, dilations and
ceil_mode; avg pool 2d/3d with count_include_pad and divisor_override;
adaptive avg/max 2d/3d; dtypes, odd sizes, channels_last, non-contiguous
and empty inputs, out= variants and argument errors. Every test runs with
the no_fallback fixture, so a CPU fallback fails it."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from conftest import FLOAT_DTYPES, dtype_id

pytestmark = pytest.mark.usefixtures("no_fallback")

TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (2e-2, 2e-2),
}


def rand(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def compare(fn, x, dtype=torch.float32, grad=True, prep=None, seed=1):
    """fn on the CPU and on ocl; outputs (and indices) and the input gradient
    for one random grad_output must agree. prep turns the CPU input into the
    layout to test (e.g. channels_last or a strided view) on both devices."""
    atol, rtol = TOL[dtype]
    xo = x.to(dtype).to("ocl")
    # float16/bfloat16: the reference is float32 on the same (rounded)
    # values, rounded once at the end, as the device computes
    ref_dt = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    xc = x.to(dtype).to(ref_dt)
    if prep:
        xc, xo = prep(xc), prep(xo)
    xc = xc.detach().requires_grad_(grad)
    xo = xo.detach().requires_grad_(grad)
    yc, yo = fn(xc), fn(xo)
    if not isinstance(yc, tuple):
        yc, yo = (yc,), (yo,)
    assert yo[0].device.type == "ocl" and yo[0].dtype == dtype
    torch.testing.assert_close(yo[0].cpu(), yc[0].detach().to(dtype), atol=atol, rtol=rtol)
    for a, b in zip(yc[1:], yo[1:]):
        assert torch.equal(b.cpu(), a), "indices differ"
    if not grad or yc[0].numel() == 0:
        return
    g = rand(yc[0].shape, dtype, seed=seed)
    (gc,) = torch.autograd.grad(yc[0], xc, g.to(ref_dt))
    (go,) = torch.autograd.grad(yo[0], xo, g.to("ocl"))
    torch.testing.assert_close(go.cpu(), gc.to(dtype), atol=atol * 4, rtol=rtol * 4)


def valid(k, p, d=1):
    return p <= ((k - 1) * d + 1) // 2


# ---------------------------------------------------------------- max pool

GRID2 = [
    (k, s, p, d, c)
    for k, s, p, d, c in itertools.product([1, 2, 3], [1, 2], [0, 1], [1, 2], [False, True])
    if valid(k, p, d)
]


@pytest.mark.parametrize("k,s,p,d,ceil", GRID2)
def test_max_pool2d_grid(k, s, p, d, ceil):
    x = rand((2, 3, 9, 11))
    compare(lambda t: F.max_pool2d(t, k, s, p, d, ceil_mode=ceil, return_indices=True), x)


def test_max_pool2d_rect_and_unbatched():
    x = rand((3, 10, 7))
    compare(lambda t: F.max_pool2d(t, (3, 2), (2, 1), (1, 0), (1, 2), return_indices=True), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_max_pool2d_dtypes(dtype):
    x = rand((2, 4, 8, 9))
    compare(lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True, return_indices=True), x, dtype)


@pytest.mark.parametrize("k,s,p,d,ceil", [(3, 2, 1, 1, False), (2, 1, 0, 2, True), (4, 3, 2, 1, True)])
def test_max_pool1d(k, s, p, d, ceil):
    x = rand((2, 3, 17))
    compare(lambda t: F.max_pool1d(t, k, s, p, d, ceil_mode=ceil, return_indices=True), x)
    compare(lambda t: F.max_pool1d(t, k, s, p, d, ceil_mode=ceil), x)


@pytest.mark.parametrize(
    "k,s,p,d,ceil", [(2, 2, 0, 1, False), (3, 2, 1, 1, True), ((2, 3, 2), (1, 2, 1), (1, 1, 0), (2, 1, 1), False)]
)
def test_max_pool3d(k, s, p, d, ceil):
    x = rand((2, 2, 5, 7, 6))
    compare(lambda t: F.max_pool3d(t, k, s, p, d, ceil_mode=ceil, return_indices=True), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
def test_max_pool3d_dtypes(dtype):
    compare(lambda t: F.max_pool3d(t, 2, return_indices=True), rand((1, 2, 4, 5, 6)), dtype)


def test_max_pool_nan_and_inf():
    x = rand((1, 2, 6, 6))
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, 2:4, 2:4] = float("-inf")
    x[0, 1, 0, 0] = float("inf")
    yc, ic = F.max_pool2d(x, 2, return_indices=True)
    yo, io = F.max_pool2d(x.to("ocl"), 2, return_indices=True)
    torch.testing.assert_close(yo.cpu(), yc, equal_nan=True)
    assert torch.equal(io.cpu(), ic)


# ---------------------------------------------------------------- avg pool

AVG2 = [
    (k, s, p, c, cip, div)
    for k, s, p, c, cip, div in itertools.product([2, 3], [1, 2], [0, 1], [False, True], [False, True], [None, 3])
    if valid(k, p)
]


@pytest.mark.parametrize("k,s,p,ceil,cip,div", AVG2)
def test_avg_pool2d_grid(k, s, p, ceil, cip, div):
    x = rand((2, 3, 7, 10))
    compare(lambda t: F.avg_pool2d(t, k, s, p, ceil, cip, div), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_avg_pool_dtypes(dtype):
    compare(lambda t: F.avg_pool2d(t, 3, 2, 1, True, False), rand((2, 3, 9, 8)), dtype)
    compare(lambda t: F.avg_pool1d(t, 3, 2, 1), rand((2, 3, 11)), dtype)


@pytest.mark.parametrize("k,s,p,ceil,cip,div", [(2, 2, 0, False, True, None), (3, 2, 1, True, False, None),
                                                ((3, 2, 2), (2, 1, 2), (1, 0, 1), True, True, 4)])
def test_avg_pool3d(k, s, p, ceil, cip, div):
    compare(lambda t: F.avg_pool3d(t, k, s, p, ceil, cip, div), rand((2, 2, 5, 6, 7)))


# ---------------------------------------------------------------- adaptive

@pytest.mark.parametrize("osz", [(1, 1), (3, 4), (7, 5), (11, 13), (None, 2)])
def test_adaptive_2d(osz):
    x = rand((2, 3, 7, 9))
    compare(lambda t: F.adaptive_avg_pool2d(t, osz), x)
    compare(lambda t: F.adaptive_max_pool2d(t, osz, return_indices=True), x)


@pytest.mark.parametrize("osz", [(1, 1, 1), (2, 3, 4), (5, 7, 3)])
def test_adaptive_3d(osz):
    x = rand((2, 2, 4, 6, 5))
    compare(lambda t: F.adaptive_avg_pool3d(t, osz), x)
    compare(lambda t: F.adaptive_max_pool3d(t, osz, return_indices=True), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
def test_adaptive_dtypes(dtype):
    x = rand((2, 3, 7, 9))
    compare(lambda t: F.adaptive_avg_pool2d(t, (3, 5)), x, dtype)
    compare(lambda t: F.adaptive_max_pool2d(t, (4, 4), return_indices=True), x, dtype)
    compare(lambda t: F.adaptive_avg_pool1d(t, 4), rand((2, 3, 10)), dtype)


# ---------------------------------------------------------------- layouts

LAYOUT_OPS = {
    "max2d": lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True),
    "avg2d": lambda t: F.avg_pool2d(t, 2, 2, 1, count_include_pad=False),
    "adavg": lambda t: F.adaptive_avg_pool2d(t, (3, 4)),
    "admax": lambda t: F.adaptive_max_pool2d(t, (3, 4), return_indices=True),
}


@pytest.mark.parametrize("op", LAYOUT_OPS, ids=str)
def test_channels_last(op):
    fn = LAYOUT_OPS[op]
    compare(fn, rand((2, 5, 8, 9)), prep=lambda t: t.contiguous(memory_format=torch.channels_last))
    x = rand((2, 5, 8, 9)).contiguous(memory_format=torch.channels_last).to("ocl")
    y = fn(x)
    y = y[0] if isinstance(y, tuple) else y
    ref = fn(x.cpu())
    ref = ref[0] if isinstance(ref, tuple) else ref
    assert y.is_contiguous(memory_format=torch.channels_last) == ref.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("op", LAYOUT_OPS, ids=str)
def test_non_contiguous(op):
    compare(LAYOUT_OPS[op], rand((2, 9, 10, 5)), prep=lambda t: t.transpose(1, 3)[:, 1:, ::2])


@pytest.mark.parametrize("op", LAYOUT_OPS, ids=str)
def test_storage_offset(op):
    compare(LAYOUT_OPS[op], rand((3, 4, 7, 6)), prep=lambda t: t[1:])


def test_channels_last_3d():
    compare(lambda t: F.max_pool3d(t, 2, return_indices=True), rand((2, 3, 4, 6, 5)),
            prep=lambda t: t.contiguous(memory_format=torch.channels_last_3d))


def test_empty_batch():
    x = rand((0, 3, 6, 6))
    compare(lambda t: F.max_pool2d(t, 2, return_indices=True), x)
    compare(lambda t: F.avg_pool2d(t, 2), x)
    compare(lambda t: F.adaptive_avg_pool2d(t, 3), x)


def test_out_variants():
    x = rand((2, 3, 8, 8)).to("ocl")
    out = torch.empty(0, device="ocl")
    torch.ops.aten.avg_pool2d.out(x, [2, 2], [2, 2], [0, 0], False, True, None, out=out)
    torch.testing.assert_close(out.cpu(), F.avg_pool2d(x.cpu(), 2))
    o, i = torch.empty(0, device="ocl"), torch.empty(0, dtype=torch.long, device="ocl")
    torch.ops.aten.max_pool2d_with_indices.out(x, [3, 3], [2, 2], [1, 1], [1, 1], False, out=o, indices=i)
    rc, ri = F.max_pool2d(x.cpu(), 3, 2, 1, return_indices=True)
    torch.testing.assert_close(o.cpu(), rc)
    assert torch.equal(i.cpu(), ri)
    o = torch.empty(0, device="ocl")
    torch.ops.aten.adaptive_avg_pool3d.out(x[None], [2, 3, 3], out=o)
    torch.testing.assert_close(o.cpu(), F.adaptive_avg_pool3d(x.cpu()[None], (2, 3, 3)))


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize(
    "call",
    [
        lambda t: F.max_pool2d(t, 2, padding=2),  # padding above half the kernel
        lambda t: F.max_pool2d(t, 0),
        lambda t: F.max_pool2d(t, 2, stride=0),
        lambda t: F.max_pool2d(t, 9),  # output would be empty
        lambda t: F.avg_pool2d(t, 2, divisor_override=0),
        lambda t: F.max_pool2d(t[0, 0], 2),  # 2-D input
        lambda t: F.adaptive_max_pool2d(t[:, :, :0], 2),
        lambda t: F.max_pool3d(t, 2),  # 4-D input is unbatched 3d: fine on CPU too? compared below
    ],
)
def test_errors_match_cpu(call):
    x = rand((1, 2, 5, 5))
    try:
        ref = call(x)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            call(x.to("ocl"))
        return
    out = call(x.to("ocl"))
    torch.testing.assert_close(out.cpu(), ref)


def test_integer_input_is_a_counted_cpu_route():
    import torch_ocl

    x = torch.arange(2 * 3 * 6 * 6).reshape(2, 3, 6, 6)
    with pytest.raises(NotImplementedError, match="TORCH_OCL_FALLBACK"):
        F.max_pool2d(x.to("ocl"), 2)
    torch_ocl.set_fallback_policy("silent")
    try:
        y = F.max_pool2d(x.to("ocl"), 2)
    finally:
        torch_ocl.set_fallback_policy("error")
    assert torch.equal(y.cpu(), F.max_pool2d(x, 2))
    assert torch_ocl.fallback_stats() == {"max_pool2d_with_indices": 2}
    torch_ocl.reset_fallback_stats()


# ------------------------------------------- CPU devices: row / plane kernels
# Fixed-window max and avg pooling on CPU devices run a work-item per output
# row forward and a per-plane scatter backward in the CPU's order (see
# docs/design.md, "Pooling on CPU devices"); these cases aim at that path:
# many planes, ties, NaN / -inf, overlapping and gapped windows, and
# bitwise-equal gradients where the CPU sums in the same order.

FAST = [  # (kernel, stride, padding, dilation, ceil_mode)
    (3, 2, 1, 1, False),  # ResNet's stem pool: overlapping windows
    (3, 1, 1, 1, False),  # heavy overlap
    (2, 3, 0, 1, False),  # stride > kernel: gaps get zero gradient
    (3, 2, 1, 1, True),
    (2, 2, 1, 2, True),
    ((3, 2), (2, 1), (1, 0), (1, 1), False),
]


def _ties(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 3, shape, generator=g).to(dtype)


@pytest.mark.parametrize("k,s,p,d,ceil", FAST)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
def test_fast_max_pool2d_ties_bitwise(k, s, p, d, ceil, dtype):
    # integer values: many ties, so the index picks the CPU's first maximum;
    # gradients add in output order on both sides, so they are equal bitwise
    x = _ties((3, 5, 23, 31), dtype)
    xc, xo = x.clone().requires_grad_(), x.to("ocl").requires_grad_()
    yc, ic = F.max_pool2d(xc, k, s, p, d, ceil_mode=ceil, return_indices=True)
    yo, io = F.max_pool2d(xo, k, s, p, d, ceil_mode=ceil, return_indices=True)
    assert torch.equal(yo.cpu(), yc.detach()) and torch.equal(io.cpu(), ic)
    g = rand(yc.shape, dtype, seed=3)
    (gc,) = torch.autograd.grad(yc, xc, g)
    (go,) = torch.autograd.grad(yo, xo, g.to("ocl"), retain_graph=True)
    assert torch.equal(go.cpu(), gc)
    (go2,) = torch.autograd.grad(yo, xo, g.to("ocl"))
    assert torch.equal(go2.cpu(), go.cpu()), "backward is not deterministic"


@pytest.mark.parametrize("k,s,p,ceil,cip,div", [(3, 2, 1, False, True, None), (3, 1, 1, True, False, None),
                                                (2, 3, 0, False, True, None), (3, 2, 1, True, False, 5)])
def test_fast_avg_pool2d_bitwise_float64(k, s, p, ceil, cip, div):
    x = rand((2, 6, 19, 24), torch.float64)
    xc, xo = x.clone().requires_grad_(), x.to("ocl").requires_grad_()
    f = lambda t: F.avg_pool2d(t, k, s, p, ceil, cip, div)
    yc, yo = f(xc), f(xo)
    torch.testing.assert_close(yo.cpu(), yc.detach(), atol=1e-12, rtol=1e-12)
    g = rand(yc.shape, torch.float64, seed=4)
    (gc,) = torch.autograd.grad(yc, xc, g)
    (go,) = torch.autograd.grad(yo, xo, g.to("ocl"))
    torch.testing.assert_close(go.cpu(), gc, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("k,s,p,d,ceil", FAST)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_fast_max_pool2d_dtypes(k, s, p, d, ceil, dtype):
    compare(lambda t: F.max_pool2d(t, k, s, p, d, ceil_mode=ceil, return_indices=True), rand((2, 8, 17, 13)), dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_fast_avg_pool2d_dtypes(dtype):
    compare(lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False), rand((2, 8, 17, 13)), dtype)


def test_fast_max_pool_nan_and_inf_overlapping():
    x = rand((2, 4, 9, 10))
    x[0, 0, 1, 1] = x[0, 0, 1, 2] = x[0, 0, 2, 1] = float("nan")  # several NaNs: the CPU keeps the last
    x[0, 1, :5, :5] = float("-inf")  # windows of -inf only: the first tap's index
    x[1, 2, 4, 4] = float("inf")
    x[1, 3] = float("nan")
    for k, s, p in [(3, 2, 1), (3, 1, 1), (2, 2, 0)]:
        yc, ic = F.max_pool2d(x, k, s, p, return_indices=True)
        yo, io = F.max_pool2d(x.to("ocl"), k, s, p, return_indices=True)
        torch.testing.assert_close(yo.cpu(), yc, equal_nan=True)
        assert torch.equal(io.cpu(), ic)


@pytest.mark.parametrize("shape", [(1, 1, 12, 15), (1, 7, 12, 15), (7, 12, 15), (1, 3, 1, 40)])
def test_fast_batch_one_and_thin(shape):
    x = rand(shape)
    compare(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True), x)
    compare(lambda t: F.avg_pool2d(t, (1, 3), (1, 2), (0, 1)), x)


def test_fast_channels_last_and_strided():
    x = rand((2, 8, 15, 14))
    cl = lambda t: t.contiguous(memory_format=torch.channels_last)
    compare(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True), x, prep=cl)
    compare(lambda t: F.avg_pool2d(t, 3, 2, 1), x, prep=cl)
    compare(lambda t: F.max_pool2d(t, 3, 1, 1, return_indices=True), x, prep=lambda t: t[:, ::2, 1:, ::2])


def test_fast_pool1d_and_3d():
    compare(lambda t: F.max_pool1d(t, 3, 2, 1, return_indices=True), rand((2, 6, 33)))
    compare(lambda t: F.avg_pool1d(t, 4, 3, 2, ceil_mode=True), rand((2, 6, 33)))
    compare(lambda t: F.max_pool3d(t, 3, 2, 1, return_indices=True), rand((2, 4, 7, 9, 8)))
    compare(lambda t: F.avg_pool3d(t, 3, (1, 2, 2), 1, count_include_pad=False), rand((2, 4, 7, 9, 8)))
    compare(lambda t: F.max_pool3d(t, 2, 1, 0, 2, ceil_mode=True, return_indices=True), rand((2, 4, 7, 9, 8)))


def test_fast_gradcheck_float64():
    x = rand((2, 3, 7, 8), torch.float64).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(lambda t: F.max_pool2d(t, 3, 2, 1), (x,))
    assert torch.autograd.gradcheck(lambda t: F.avg_pool2d(t, 3, 2, 1, count_include_pad=False), (x,))
    assert torch.autograd.gradcheck(lambda t: F.avg_pool3d(t, 2, 1, 1), (x.unsqueeze(0),))
