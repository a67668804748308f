"""Convolution on ocl against the CPU: conv1d/2d/3d and conv_transpose1d/2d/3d
with stride, padding (numbers, 'same', 'valid'), dilation, groups, depthwise,
output_padding, odd sizes, batch 1 and > 1, channels_last, every float dtype;
the output and all three gradients, each against a float64 CPU reference
computed from the same (rounded) inputs. Every test runs with the CPU
fallback off (no_fallback), so a silent CPU route fails it.

Kernels: kernels/conv.cl + the GEMM (runtime/ops/conv.c, adapter/aten/ocl_conv_ops.cpp)."""

import pytest
import torch
import torch.nn.functional as F
import torch_ocl

from conftest import FLOAT_DTYPES, dtype_id

DEV = "ocl"
pytestmark = [pytest.mark.usefixtures("no_fallback"),
              pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")]

# relative to the largest reference magnitude: float16/bfloat16 round the
# output (and, for gradients of the input, partial sums) to 11/8 bits
TOL = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 4e-3, torch.bfloat16: 3e-2}

FWD = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
TRANS = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}

# name: (spatial size, batch, in channels, out channels, kernel, kwargs, transposed)
CASES = {
    "1d": ((11,), 2, 3, 4, 3, {}, False),
    "1d_s2_p1_d2": ((13,), 1, 2, 4, 3, dict(stride=2, padding=1, dilation=2), False),
    "1d_same_even": ((10,), 2, 3, 2, 4, dict(padding="same"), False),
    "1d_valid": ((9,), 1, 2, 3, 5, dict(padding="valid"), False),
    "2d": ((7, 9), 2, 3, 4, 3, dict(padding=1), False),
    "2d_b1_mixed_stride": ((9, 8), 1, 2, 3, (3, 2), dict(stride=(2, 1), padding=(1, 0)), False),
    "2d_dilation": ((9, 10), 2, 2, 2, 3, dict(dilation=(2, 3), padding=2), False),
    "2d_same_dilation": ((8, 7), 2, 2, 3, (3, 2), dict(padding="same", dilation=2), False),
    "2d_groups": ((6, 7), 2, 4, 6, 3, dict(groups=2, padding=1), False),
    "2d_depthwise": ((7, 7), 2, 4, 8, 3, dict(groups=4, padding=1, stride=2), False),
    "2d_depthwise_many": ((5, 6), 3, 16, 16, 3, dict(groups=16, padding=1), False),
    # one x channel per group runs direct kernels: a channel multiplier,
    # rows longer than their 64-position chunk, stride and dilation along them
    "2d_depthwise_mult_long": ((3, 70), 2, 3, 6, 3, dict(groups=3, padding=1, stride=(1, 2), dilation=(1, 2)), False),
    "1d_one_channel": ((75,), 2, 1, 4, 5, dict(padding=2), False),
    # depthwise rows wider than 8 with padding, a 5-tap row, dilation
    # across rows only
    "2d_depthwise_vec": ((6, 21), 2, 8, 16, 3, dict(groups=8, padding=1), False),
    "1d_depthwise_vec_k5": ((19,), 2, 4, 4, 5, dict(groups=4, padding=2), False),
    "2d_depthwise_vec_nopad": ((7, 17), 1, 3, 3, (2, 3), dict(groups=3, dilation=(2, 1)), False),
    "2d_1x1": ((5, 6), 2, 5, 3, 1, {}, False),
    "2d_1x1_stride": ((5, 6), 2, 5, 3, 1, dict(stride=2), False),
    "2d_wide": ((12, 12), 2, 16, 24, 3, dict(padding=1), False),  # packed GEMM path
    "3d": ((4, 5, 6), 2, 2, 3, 3, dict(padding=1), False),
    "3d_stride_groups": ((5, 4, 6), 1, 4, 4, (2, 3, 1), dict(stride=2, groups=2), False),
    "t1d": ((7,), 2, 3, 2, 3, dict(stride=2, padding=1, output_padding=1), True),
    "t2d": ((5, 6), 2, 4, 3, 3, dict(stride=2, padding=1, output_padding=1), True),
    "t2d_groups_dilation": ((4, 5), 1, 4, 6, (3, 2),
                            dict(stride=(2, 3), dilation=(1, 2), groups=2, output_padding=(1, 2)), True),
    "t2d_depthwise": ((5, 5), 2, 4, 4, 3, dict(groups=4, stride=2), True),
    "t2d_depthwise_mult_long": ((3, 70), 1, 4, 2, 3, dict(groups=2, stride=(1, 3), padding=1), True),
    "t2d_1x1": ((4, 5), 2, 3, 5, 1, {}, True),
    "t3d": ((3, 4, 5), 1, 2, 3, 2, dict(stride=2, output_padding=1), True),
}
# the other dtypes run a subset that still touches every path
SUBSET = ["1d_same_even", "2d", "2d_depthwise", "2d_depthwise_mult_long", "2d_depthwise_vec", "2d_1x1", "2d_wide",
          "3d", "t2d", "t2d_1x1"]


def rand(shape, dtype, seed):
    # multiples of 1/8 in [-1, 1): exact in every dtype
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-8, 8, shape, generator=g).double() / 8).to(dtype)


def make_inputs(case, dtype, bias=True):
    size, n, cin, cout, k, kw, transposed = case
    nd = len(size)
    k = (k,) * nd if isinstance(k, int) else k
    groups = kw.get("groups", 1)
    wshape = (cin, cout // groups) + k if transposed else (cout, cin // groups) + k
    x = rand((n, cin) + size, dtype, 1)
    w = rand(wshape, dtype, 2)
    b = rand((cout,), dtype, 3) if bias else None
    fn = TRANS[nd] if transposed else FWD[nd]
    return fn, x, w, b, kw


def check(actual, ref, dtype, what):
    assert actual.device.type == DEV, what
    scale = max(ref.abs().max().item(), 1.0)
    tol = TOL[dtype] * scale
    torch.testing.assert_close(actual.cpu().double(), ref, atol=tol, rtol=TOL[dtype], msg=lambda m: f"{what}: {m}")


def run(fn, x, w, b, kw, dtype, memory_format=None, seed=4):
    """fn on ocl (x in memory_format) vs float64 on the CPU: output and all gradients."""
    leaves = [x, w] + ([b] if b is not None else [])
    ref_leaves = [t.double().requires_grad_() for t in leaves]
    ref = fn(*ref_leaves[:2], ref_leaves[2] if b is not None else None, **kw)
    go = rand(ref.shape, dtype, seed)
    ref_grads = torch.autograd.grad(ref, ref_leaves, go.double())

    dev = [t.to(DEV) for t in leaves]
    if memory_format is not None:
        dev[0] = dev[0].contiguous(memory_format=memory_format)
    dev = [t.requires_grad_() for t in dev]
    out = fn(*dev[:2], dev[2] if b is not None else None, **kw)
    assert out.dtype == dtype
    grads = torch.autograd.grad(out, dev, go.to(DEV))
    check(out, ref.detach(), dtype, "output")
    for name, g, r in zip(["grad_input", "grad_weight", "grad_bias"], grads, ref_grads):
        check(g, r, dtype, name)
    return out, grads


@pytest.mark.parametrize("name", list(CASES))
def test_conv_float32(name):
    fn, x, w, b, kw = make_inputs(CASES[name], torch.float32)
    run(fn, x, w, b, kw, torch.float32)


@pytest.mark.parametrize("dtype", [d for d in FLOAT_DTYPES if d != torch.float32], ids=dtype_id)
@pytest.mark.parametrize("name", SUBSET)
def test_conv_dtypes(name, dtype):
    fn, x, w, b, kw = make_inputs(CASES[name], dtype)
    run(fn, x, w, b, kw, dtype)


@pytest.mark.parametrize("name,fmt", [("2d", torch.channels_last), ("2d_depthwise", torch.channels_last),
                                      ("t2d", torch.channels_last), ("3d", torch.channels_last_3d)])
def test_channels_last(name, fmt):
    fn, x, w, b, kw = make_inputs(CASES[name], torch.float32)
    out, grads = run(fn, x, w, b, kw, torch.float32, memory_format=fmt)
    # the output keeps the input's layout, as on the CPU
    assert out.is_contiguous(memory_format=fmt)


def test_no_bias_and_partial_gradients():
    fn, x, w, _, kw = make_inputs(CASES["2d_groups"], torch.float32, bias=False)
    run(fn, x, w, None, kw, torch.float32)
    # only the weight needs a gradient: grad_input is not computed
    xd, wd = x.to(DEV), w.to(DEV).requires_grad_()
    (gw,) = torch.autograd.grad(fn(xd, wd, **kw).sum(), [wd])
    wr = w.double().requires_grad_()
    (gw_ref,) = torch.autograd.grad(fn(x.double(), wr, **kw).sum(), [wr])
    check(gw, gw_ref, torch.float32, "grad_weight")


def test_unbatched_and_views():
    w = rand((4, 3, 3, 3), torch.float32, 2)
    x = rand((3, 8, 9), torch.float32, 1)  # unbatched conv2d input
    torch.testing.assert_close(F.conv2d(x.to(DEV), w.to(DEV), padding=1).cpu(), F.conv2d(x, w, padding=1))
    big = rand((2, 6, 10, 11), torch.float32, 5)
    view = big[:, 1:4, 1:, ::2]  # offset, non-contiguous
    torch.testing.assert_close(F.conv2d(view.to(DEV)[:, :, :, :], w.to(DEV)).cpu(), F.conv2d(view, w))
    dv = big.to(DEV)[:, 1:4, 1:, ::2]
    torch.testing.assert_close(F.conv2d(dv, w.to(DEV), stride=2).cpu(), F.conv2d(view, w, stride=2))


def test_empty_batch():
    w = rand((4, 3, 3, 3), torch.float32, 2).to(DEV).requires_grad_()
    x = torch.zeros(0, 3, 5, 5, device=DEV, requires_grad=True)
    out = F.conv2d(x, w, padding=1)
    assert out.shape == (0, 4, 5, 5)
    gx, gw = torch.autograd.grad(out.sum(), [x, w])
    assert gx.shape == x.shape
    assert gw.abs().sum().item() == 0


def test_module_training_step():
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.ConvTranspose2d(8, 2, 2, stride=2)).double()
    dev = [p.detach().to(DEV).float().requires_grad_() for p in cpu.parameters()]
    x = rand((2, 3, 6, 6), torch.float32, 7)
    ref = cpu(x.double()).square().sum()
    ref.backward()

    def f(xx, p):
        h = F.relu(F.conv2d(xx, p[0], p[1], padding=1))
        return F.conv_transpose2d(h, p[2], p[3], stride=2).square().sum()

    loss = f(x.to(DEV), dev)
    grads = torch.autograd.grad(loss, dev)
    torch.testing.assert_close(loss.cpu().double(), ref.detach(), rtol=1e-5, atol=1e-4)
    for g, p in zip(grads, cpu.parameters()):
        torch.testing.assert_close(g.cpu().double(), p.grad, rtol=1e-4, atol=1e-4)


def first_line_of_error(fn, *args):
    # the message only: a kept traceback would hold the device tensors in a
    # reference cycle until some later garbage collection
    try:
        fn(*args)
    except RuntimeError as e:
        return str(e).split("\n")[0]
    raise AssertionError("no error raised")


def test_errors_match_cpu():
    x, w = torch.zeros(1, 3, 5, 5), torch.zeros(4, 2, 3, 3)
    for fn in (lambda t, u: F.conv2d(t, u), lambda t, u: F.conv2d(t, u[:, :, :1, :1], padding=-1),
               lambda t, u: F.conv2d(t, u[:, :2].contiguous(), stride=0)):
        assert first_line_of_error(fn, x, w)[:40] == first_line_of_error(fn, x.to(DEV), w.to(DEV))[:40]
    w3 = torch.zeros(4, 3, 3, 3)
    assert "should be the same" in first_line_of_error(F.conv2d, x.to(DEV), w3.double().to(DEV))
    # int64 convolution runs on the CPU as the CPU has it: test_fallback.py, dtype routes


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("name", ["2d", "2d_wide", "2d_1x1", "t2d", "3d_stride_groups"])
def test_chunked_workspace(name, dtype, monkeypatch):
    # a workspace of a few hundred bytes: the column matrix is built a batch
    # item or two at a time and the weight gradient accumulates over chunks
    monkeypatch.setenv("TORCH_OCL_CONV_WORKSPACE", "600")
    size, _, cin, cout, k, kw, transposed = CASES[name]
    fn, x, w, b, kw = make_inputs((size, 5, cin, cout, k, kw, transposed), dtype)
    run(fn, x, w, b, kw, dtype)


# significand bits: an element rounded once from an exact sum is within half
# an ulp, |err| <= |ref| * 2**-bits
BITS = {torch.float16: 11, torch.bfloat16: 8}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_16bit_input_gradient_rounded_once(dtype, chunked, monkeypatch):
    # transposed convolution and the input gradient sum overlapping taps in
    # col2im: with the GEMM's columns already rounded to 16 bits each output
    # would be rounded twice (up to about one ulp off, where the CPU is half)
    if chunked:
        monkeypatch.setenv("TORCH_OCL_CONV_WORKSPACE", "2000")
    torch.manual_seed(3)
    checks = [(F.conv_transpose2d, (2, 8, 9, 9), (8, 4, 3, 3), dict(stride=2, padding=1)),
              (F.conv_transpose3d, (1, 6, 5, 4, 5), (6, 2, 3, 3, 3), dict(stride=2)),
              (F.conv_transpose2d, (2, 4, 7, 7), (4, 3, 3, 3), dict(groups=2, dilation=2)),
              (F.conv_transpose1d, (2, 8, 9), (8, 3, 5), dict(stride=3))]
    for fn, xs, ws, kw in checks:
        x, w = torch.randn(xs).to(dtype), torch.randn(ws).to(dtype)
        ref = fn(x.double(), w.double(), **kw)
        out = fn(x.to(DEV), w.to(DEV), **kw).cpu().double()
        bound = ref.abs() * 2.0 ** -BITS[dtype] + 1e-5 * ref.abs().max()
        assert ((out - ref).abs() <= bound).all(), (fn.__name__, (out - ref).abs().max())
    # the input gradient of a strided convolution takes the same route
    x = torch.randn(2, 6, 11, 11).to(dtype)
    w = torch.randn(5, 6, 3, 3).to(dtype)
    gy = torch.randn(2, 5, 6, 6).to(dtype)
    ref = torch.nn.grad.conv2d_input(x.shape, w.double(), gy.double(), stride=2, padding=1)
    out = torch.nn.grad.conv2d_input(x.shape, w.to(DEV), gy.to(DEV), stride=2, padding=1).cpu().double()
    assert ((out - ref).abs() <= ref.abs() * 2.0 ** -BITS[dtype] + 1e-5 * ref.abs().max()).all()


# Stride-1 convolutions with one group run the implicit GEMM on CPU devices
# (kernels/conv.cl conv_ig: the B operand read from a padded float copy of
# x, or of y for the input gradient, no column matrix): grids that span
# several tiles and K blocks (C * kvol > 256), output channels not a multiple
# of the register block, even kernels, padding 0 or wider than the kernel
# (input gradient then takes the column route), dilation, 1-d and 3-d,
# batch 1, views and channels_last.
IG_CASES = {
    "2d_big_grid": ((37, 41), 2, 5, 11, 3, dict(padding=1), False),
    "2d_k_blocks": ((9, 10), 1, 40, 9, 3, dict(padding=1), False),
    "2d_even_nopad": ((8, 11), 3, 3, 17, (2, 4), {}, False),
    "2d_dilation_pad": ((13, 12), 2, 4, 5, 3, dict(padding=(3, 1), dilation=(2, 3)), False),
    "2d_pad_wider_than_kernel": ((6, 7), 2, 3, 4, 3, dict(padding=3), False),
    "1d_long": ((300,), 1, 6, 7, 5, dict(padding=2), False),
    "3d": ((5, 6, 7), 2, 3, 4, 3, dict(padding=1), False),
    "2d_7x7": ((17, 15), 1, 3, 8, 7, dict(padding=3), False),
    "t2d_stride1": ((6, 9), 2, 5, 3, 3, dict(padding=1), True),
    # strided forwards on phase planes (implicit GEMM): odd sizes, a 7x7
    # stem, stride 3, an even kernel, stride in one dim only, 1-d and 3-d
    "2d_s2_odd": ((9, 11), 2, 5, 7, 3, dict(stride=2, padding=1), False),
    "2d_s2_stem": ((15, 13), 1, 3, 8, 7, dict(stride=2, padding=3), False),
    "2d_s3": ((10, 11), 2, 3, 4, 3, dict(stride=3), False),
    "2d_s2_k4": ((9, 8), 2, 2, 3, 4, dict(stride=2, padding=2), False),
    "2d_s2_rows_dilated_cols": ((9, 12), 1, 3, 4, 3, dict(stride=(2, 1), dilation=(1, 2), padding=1), False),
    "1d_s2_k5": ((17,), 2, 4, 3, 5, dict(stride=2, padding=2), False),
    "3d_s2": ((5, 6, 7), 1, 2, 3, 3, dict(stride=2, padding=1), False),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("name", list(IG_CASES))
def test_implicit_gemm(name, dtype):
    fn, x, w, b, kw = make_inputs(IG_CASES[name], dtype)
    run(fn, x, w, b, kw, dtype)


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_implicit_gemm_layouts(chunked, monkeypatch):
    if chunked:
        monkeypatch.setenv("TORCH_OCL_CONV_WORKSPACE", "3000")
    fn, x, w, b, kw = make_inputs(((12, 13), 3, 6, 10, 3, dict(padding=1), False), torch.float32)
    run(fn, x, w, b, kw, torch.float32, memory_format=torch.channels_last)
    # a strided view of a larger input, and no bias
    big = rand((3, 8, 14, 26), torch.float32, 5)
    run(fn, big[:, 1:7, 1:13, ::2], w, None, kw, torch.float32)
    # the strided forward's phase planes, chunked and channels_last
    fn, x, w, b, kw = make_inputs(((13, 12), 3, 6, 10, 3, dict(stride=2, padding=1), False), torch.float32)
    run(fn, x, w, b, kw, torch.float32, memory_format=torch.channels_last)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
def test_16bit_implicit_gemm_rounded_once(dtype):
    # stride 1: the input gradient and the transposed convolution sum every
    # tap of an element in float inside the implicit GEMM, then round once
    torch.manual_seed(5)
    x, w = torch.randn(2, 8, 9, 10).to(dtype), torch.randn(8, 6, 3, 3).to(dtype)
    ref = F.conv_transpose2d(x.double(), w.double(), padding=1)
    out = F.conv_transpose2d(x.to(DEV), w.to(DEV), padding=1).cpu().double()
    assert ((out - ref).abs() <= ref.abs() * 2.0 ** -BITS[dtype] + 1e-5 * ref.abs().max()).all()
    w2, gy = torch.randn(5, 6, 3, 3).to(dtype), torch.randn(2, 5, 11, 11).to(dtype)
    ref = torch.nn.grad.conv2d_input((2, 6, 11, 11), w2.double(), gy.double(), padding=1)
    out = torch.nn.grad.conv2d_input((2, 6, 11, 11), w2.to(DEV), gy.to(DEV), padding=1).cpu().double()
    assert ((out - ref).abs() <= ref.abs() * 2.0 ** -BITS[dtype] + 1e-5 * ref.abs().max()).all()


# The weight gradient on CPU devices (one group, 16/32-bit storage) is an
# implicit product too (kernels/conv.cl conv_wg: taps read from a padded
# float copy of x, or float32 x in place without padding, times dy
# transposed; float partial sums per depth split, added in a fixed order
# and rounded once). Channel counts off the register block (rows of 8 taps,
# columns of 32 channels) and over one tile (64 taps, 128 channels), odd
# sizes, batch 1, padding 0/1/2, stride, dilation, 1x1 with and without
# stride, the 7x7 stride-2 stem, 1-d and 3-d.
WG_CASES = {
    "2d_odd_channels": ((7, 9), 2, 5, 11, 3, dict(padding=1), False),
    "2d_b1_pad2": ((9, 8), 1, 3, 33, 3, dict(padding=2), False),
    "2d_nopad": ((8, 11), 3, 3, 17, (2, 4), {}, False),
    "2d_many_taps_channels": ((6, 7), 2, 9, 150, 3, dict(padding=1), False),
    "2d_stride2": ((11, 10), 2, 6, 7, 3, dict(stride=2, padding=1), False),
    "2d_stride_dilation": ((13, 12), 2, 4, 5, 3, dict(stride=(2, 3), padding=(3, 1), dilation=(2, 3)), False),
    "2d_1x1": ((5, 7), 3, 13, 9, 1, {}, False),
    "2d_1x1_stride2": ((9, 7), 2, 5, 6, 1, dict(stride=2), False),
    "2d_stem_7x7_s2": ((23, 21), 2, 3, 8, 7, dict(stride=2, padding=3), False),
    "1d": ((41,), 2, 3, 5, 5, dict(padding=2), False),
    "3d": ((4, 5, 6), 2, 3, 4, 3, dict(padding=1, stride=(1, 2, 1)), False),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("name", list(WG_CASES))
def test_implicit_weight_gradient(name, dtype):
    fn, x, w, b, kw = make_inputs(WG_CASES[name], dtype)
    run(fn, x, w, b, kw, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_implicit_weight_gradient_layouts(chunked, dtype, monkeypatch):
    # chunks of a batch item or two add into the same partial sums
    if chunked:
        monkeypatch.setenv("TORCH_OCL_CONV_WORKSPACE", "3000")
    for kw in (dict(padding=1), {}, dict(stride=2, padding=1)):
        fn, x, w, b, kw = make_inputs(((12, 13), 5, 6, 10, 3, kw, False), dtype)
        run(fn, x, w, b, kw, dtype, memory_format=torch.channels_last)
    # a strided view of a larger input (no padding: float32 read in place), no bias
    big = rand((3, 8, 14, 26), dtype, 5)
    run(F.conv2d, big[:, 1:7, 1:13, ::2], rand((4, 6, 3, 3), dtype, 6), None, {}, dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
def test_16bit_weight_gradient_rounded_once(dtype):
    # every weight element is one float sum over batch and positions,
    # rounded once: within half an ulp of the exact value
    torch.manual_seed(7)
    for xs, ws, kw in [((3, 6, 11, 11), (5, 6, 3, 3), dict(padding=1)), ((2, 3, 15, 15), (4, 3, 7, 7),
                                                                          dict(stride=2, padding=3))]:
        x, w = torch.randn(xs).to(dtype), torch.randn(ws).to(dtype)
        gy = torch.randn(F.conv2d(x.float(), w.float(), **kw).shape).to(dtype)
        ref = torch.nn.grad.conv2d_weight(x.double(), ws, gy.double(), **kw)
        out = torch.nn.grad.conv2d_weight(x.to(DEV), ws, gy.to(DEV), **kw).cpu().double()
        assert ((out - ref).abs() <= ref.abs() * 2.0 ** -BITS[dtype] + 1e-5 * ref.abs().max()).all()


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(stride=2, padding=3), dict(stride=(3, 2))],
                         ids=["s2p1", "s2p3", "s3x2"])
def test_strided_phase_planes_match_column_route(monkeypatch, kw):
    # the strided forward on phase planes and the im2col route
    # (TORCH_OCL_CONV_PHASES=0) agree to float rounding, both near float64
    torch.manual_seed(9)
    x, w, b = torch.randn(2, 6, 23, 19), torch.randn(10, 6, 7 if kw.get("padding") == 3 else 3, 3), torch.randn(10)
    ref = F.conv2d(x.double(), w.double(), b.double(), **kw)
    outs = []
    for route in ("1", "0"):
        monkeypatch.setenv("TORCH_OCL_CONV_PHASES", route)
        outs.append(F.conv2d(x.to(DEV), w.to(DEV), b.to(DEV), **kw).cpu())
    for out in outs:
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)


def test_weight_gradient_deterministic_and_matches_column_route(monkeypatch):
    # the split partial sums are added in a fixed order: bitwise repeatable;
    # and the column route (TORCH_OCL_CONV_WGRAD=0) agrees to float rounding
    torch.manual_seed(8)
    x, gy = torch.randn(4, 16, 20, 20), torch.randn(4, 24, 20, 20)
    grads = [torch.nn.grad.conv2d_weight(x.to(DEV), (24, 16, 3, 3), gy.to(DEV), padding=1).cpu() for _ in range(2)]
    assert torch.equal(grads[0], grads[1])
    monkeypatch.setenv("TORCH_OCL_CONV_WGRAD", "0")
    col = torch.nn.grad.conv2d_weight(x.to(DEV), (24, 16, 3, 3), gy.to(DEV), padding=1).cpu()
    torch.testing.assert_close(grads[0], col, rtol=1e-5, atol=1e-4)

# 1x1 convolutions with stride 1, no padding and more output than input
# channels (float32, CPU devices): the weight gradient is one GEMM per batch
# item over x and dy in place, added in batch order (runtime/ops/conv.c
# pointwise_wgrad); TORCH_OCL_CONV_WGRAD_GEMM=0 keeps conv_wg
POINTWISE = {
    "widen": ((7, 9), 3, 5, 12),    # as a bottleneck's expansion
    "1d": ((23,), 4, 3, 6),
    "3d": ((3, 4, 5), 2, 3, 4),
    "b1": ((16, 16), 1, 8, 16),
}


@pytest.mark.parametrize("name", list(POINTWISE))
@pytest.mark.parametrize("fmt", [None, "channels_last"])
def test_pointwise_weight_gradient(name, fmt, monkeypatch):
    from conftest import ocl_kernels_run

    size, n, cin, cout = POINTWISE[name]
    if fmt and len(size) != 2:
        pytest.skip("channels_last is 2-d")
    fn, x, w, b, kw = make_inputs((size, n, cin, cout, 1, {}, False), torch.float32)
    mf = torch.channels_last if fmt else None
    cpu = torch_ocl._C._device_props(0)["type"] == "cpu"
    names = ocl_kernels_run(lambda: run(fn, x, w, b, kw, torch.float32, memory_format=mf))
    assert not cpu or "conv_wg" not in names, names
    # fewer output than input channels stay on conv_wg
    names = ocl_kernels_run(lambda: run(*make_inputs((size, n, cout, cin, 1, {}, False), torch.float32),
                                        torch.float32, memory_format=mf))
    assert not cpu or "conv_wg" in names, names
    monkeypatch.setenv("TORCH_OCL_CONV_WGRAD_GEMM", "0")  # conv_wg, against the same float64 reference
    names = ocl_kernels_run(lambda: run(fn, x, w, b, kw, torch.float32, memory_format=mf))
    assert not cpu or "conv_wg" in names, names


# Depthwise 2-d, stride 1 (conv_dw2d*: kernel size compiled in, DW_R = 7
# output rows per work-item, weight-gradient blocks of up to 16 rows,
# column tiles of up to 64): odd sizes, batch 1, padding 0/1/2 and larger
# than the kernel, 5x5 and 7x1, channel multipliers 2 and 4 (the input
# gradient's unrolled sum) and 5 (past it: the generic kernel), planes
# taller than a row block and wider than a column tile; stride 2 stays on
# the generic kernel.
DW_CASES = {
    "odd": ((9, 11), 2, 5, 5, 3, dict(groups=5, padding=1)),
    "b1_pad0": ((13, 7), 1, 4, 4, 3, dict(groups=4)),
    "pad2_k3": ((6, 5), 2, 3, 3, 3, dict(groups=3, padding=2)),
    "k5_pad2": ((15, 14), 2, 4, 4, 5, dict(groups=4, padding=2)),
    "k7x1": ((10, 9), 1, 2, 2, (7, 1), dict(groups=2, padding=(3, 0))),
    "mult2": ((8, 10), 2, 3, 6, 3, dict(groups=3, padding=1)),
    "mult4": ((7, 6), 1, 2, 8, 3, dict(groups=2, padding=1)),
    "mult5": ((6, 7), 1, 2, 10, 3, dict(groups=2, padding=1)),
    "tall_wide": ((37, 75), 2, 2, 2, 3, dict(groups=2, padding=1)),
    "stride2": ((11, 12), 2, 4, 4, 3, dict(groups=4, padding=1, stride=2)),
    "1d": ((29,), 2, 3, 3, 3, dict(groups=3, padding=1)),
}


def dw_inputs(name, dtype):
    size, n, cin, cout, k, kw = DW_CASES[name]
    return make_inputs((size, n, cin, cout, k, kw, False), dtype)


@pytest.mark.parametrize("name", list(DW_CASES))
def test_depthwise_float32(name):
    run(*dw_inputs(name, torch.float32), torch.float32)


@pytest.mark.parametrize("dtype", [d for d in FLOAT_DTYPES if d != torch.float32], ids=dtype_id)
@pytest.mark.parametrize("name", ["odd", "k5_pad2", "mult2"])
def test_depthwise_dtypes(name, dtype):
    run(*dw_inputs(name, dtype), dtype)


@pytest.mark.parametrize("name", ["odd", "mult2"])
def test_depthwise_channels_last(name):
    out, _ = run(*dw_inputs(name, torch.float32), torch.float32, memory_format=torch.channels_last)
    assert out.is_contiguous(memory_format=torch.channels_last)


def test_depthwise_non_contiguous():
    x = rand((2, 4, 9, 16), torch.float32, 1)
    w = rand((4, 1, 3, 3), torch.float32, 2)
    xo = x.to(DEV)[:, :, :, ::2]  # strided columns
    assert not xo.is_contiguous()
    ref = F.conv2d(x[:, :, :, ::2].double(), w.double(), padding=1, groups=4)
    check(F.conv2d(xo, w.to(DEV), padding=1, groups=4), ref, torch.float32, "output")


def test_depthwise_empty_batch():
    x = torch.zeros(0, 4, 7, 7, device=DEV, requires_grad=True)
    w = rand((4, 1, 3, 3), torch.float32, 2).to(DEV).requires_grad_()
    y = F.conv2d(x, w, padding=1, groups=4)
    assert y.shape == (0, 4, 7, 7)
    gx, gw = torch.autograd.grad(y, (x, w), torch.zeros_like(y))
    assert gx.shape == x.shape and gw.cpu().abs().max().item() == 0


@pytest.mark.parametrize("name", ["odd", "k5_pad2", "mult2"])
def test_depthwise_routes_agree(name, monkeypatch):
    """conv_dw2d* against the generic depthwise kernels (TORCH_OCL_CONV_DW2D=0)."""
    fn, x, w, b, kw = dw_inputs(name, torch.float32)
    outs = []
    for route in ("1", "0"):
        monkeypatch.setenv("TORCH_OCL_CONV_DW2D", route)
        outs.append(run(fn, x, w, b, kw, torch.float32))
    (y1, g1), (y0, g0) = outs
    torch.testing.assert_close(y1.cpu(), y0.cpu(), atol=1e-5, rtol=1e-5)
    for a, c in zip(g1, g0):
        torch.testing.assert_close(a.cpu(), c.cpu(), atol=1e-5, rtol=1e-5)


# The input gradient's column route with few output positions (L < 128, one
# group) makes one product over the batch, col [Kg, n, L] = w^T @ yT, rather
# than one per batch item (runtime/ops/conv.c tocl_conv_backward_data, fold);
# TORCH_OCL_CONV_FOLD=0 keeps the per-item products. Transposed convolutions
# take the same route forward (with bias). Both against float64, whole and in
# workspace chunks.
FOLD_CASES = {
    "2d_s2": ((4, 4), 3, 6, 10, 3, dict(stride=2, padding=1), False),  # as ResNet-18's layer4.0.conv1 at 64x64
    "2d_1x1_s2": ((4, 5), 2, 5, 7, 1, dict(stride=2), False),
    "1d_s3_d2": ((17,), 2, 3, 4, 3, dict(stride=3, dilation=2), False),
    "3d_s2": ((3, 4, 5), 2, 3, 4, 2, dict(stride=2, padding=1), False),
    "t2d_bias": ((3, 4), 2, 4, 3, 3, dict(stride=2, padding=1, output_padding=1), True),
    "2d_groups": ((5, 5), 2, 4, 6, 3, dict(stride=2, groups=2), False),  # not folded
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("fold", ["1", "0"], ids=["fold", "per_item"])
@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
@pytest.mark.parametrize("name", list(FOLD_CASES))
def test_input_gradient_fold(name, chunked, fold, dtype, monkeypatch):
    monkeypatch.setenv("TORCH_OCL_CONV_FOLD", fold)
    if chunked:
        monkeypatch.setenv("TORCH_OCL_CONV_WORKSPACE", "3000")
    run(*make_inputs(FOLD_CASES[name], dtype), dtype)


def test_input_gradient_fold_route(monkeypatch):
    # folded, the gradient's columns are transposed to [cy, n, L] first (one
    # conv_im2col with a 1x1 window) for one product; per item there is none
    from conftest import ocl_kernels_run

    x, w = torch.randn(4, 32, 4, 4, device=DEV), torch.randn(64, 32, 3, 3, device=DEV)
    gy = torch.randn(4, 64, 2, 2, device=DEV)
    counts = {}
    for fold in ("1", "0"):
        monkeypatch.setenv("TORCH_OCL_CONV_FOLD", fold)
        names = ocl_kernels_run(lambda: torch.nn.grad.conv2d_input(x.shape, w, gy, stride=2, padding=1))
        assert "conv_col2im" in names, names
        counts[fold] = names.count("conv_im2col")
    assert counts == {"1": 1, "0": 0}, counts
