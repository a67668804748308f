"""Resampling on ocl against the CPU: nearest and nearest-exact 1d/2d/3d,
linear, bilinear, bicubic and trilinear with align_corners both ways, sizes
or scale factors (recomputed or not), up and down; values and gradients,
dtypes, channels_last, non-contiguous inputs, out= variants and errors.
Every test runs with the no_fallback fixture."""

import pytest
import torch
import torch.nn.functional as F
from conftest import FLOAT_DTYPES, dtype_id
from test_pool import compare, rand

pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPES = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (1, 2, 3, 5, 4)}
SIZES = {1: [(13,), (3,), (14,)], 2: [(11, 9), (3, 4), (10, 14)], 3: [(5, 7, 3), (6, 10, 8)]}
SCALES = [2.0, 0.5, 1.7, 3.0]
LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}


def interp(mode, align=None, **kw):
    return lambda t: F.interpolate(t, mode=mode, align_corners=align, **kw)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest(n, mode):
    x = rand(SHAPES[n])
    for size in SIZES[n]:
        compare(interp(mode, size=size), x)
    for sf in SCALES:
        compare(interp(mode, scale_factor=sf), x)
        compare(interp(mode, scale_factor=sf, recompute_scale_factor=True), x)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("align", [False, True])
def test_linear(n, align):
    x = rand(SHAPES[n])
    for size in SIZES[n]:
        compare(interp(LINEAR[n], align, size=size), x)
    for sf in SCALES:
        compare(interp(LINEAR[n], align, scale_factor=sf), x)
    compare(interp(LINEAR[n], align, scale_factor=1.3, recompute_scale_factor=True), x)


@pytest.mark.parametrize("align", [False, True])
def test_bicubic(align):
    x = rand(SHAPES[2])
    for size in SIZES[2] + [(1, 1), (5, 7)]:
        compare(interp("bicubic", align, size=size), x)
    for sf in SCALES:
        compare(interp("bicubic", align, scale_factor=sf), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
def test_dtypes(dtype, mode):
    align = None if mode.startswith("nearest") else False
    compare(interp(mode, align, size=(9, 11)), rand((2, 3, 4, 6)), dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
def test_dtypes_1d_3d(dtype):
    compare(interp("linear", True, scale_factor=2.5), rand((2, 3, 6)), dtype)
    compare(interp("trilinear", False, size=(4, 7, 5)), rand((1, 2, 3, 4, 3)), dtype)
    compare(interp("nearest", size=(4, 7, 5)), rand((1, 2, 3, 4, 3)), dtype)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_channels_last(mode):
    align = None if mode == "nearest" else True
    fn = interp(mode, align, size=(9, 10))
    compare(fn, rand((2, 3, 5, 6)), prep=lambda t: t.contiguous(memory_format=torch.channels_last))
    x = rand((2, 3, 5, 6)).contiguous(memory_format=torch.channels_last)
    assert fn(x.to("ocl")).is_contiguous(memory_format=torch.channels_last) == fn(x).is_contiguous(
        memory_format=torch.channels_last
    )


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "trilinear"])
def test_non_contiguous(mode):
    if mode == "trilinear":
        compare(interp(mode, False, size=(3, 5, 6)), rand((2, 5, 4, 3, 6)), prep=lambda t: t.transpose(2, 4)[:, ::2])
    else:
        compare(interp(mode, None if mode == "nearest" else False, size=(7, 9)), rand((3, 2, 6, 8)),
                prep=lambda t: t.transpose(0, 1)[..., 1:])


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_storage_offset(mode):
    compare(interp(mode, None if mode == "nearest" else False, size=(7, 9)), rand((3, 2, 4, 5)),
            prep=lambda t: t[1:])


def test_empty_batch():
    compare(interp("bilinear", False, size=(4, 5)), rand((0, 3, 2, 2)))
    compare(interp("nearest", size=(4, 5)), rand((0, 3, 2, 2)))


def test_out_variants():
    x = rand((2, 3, 4, 5)).to("ocl")
    out = torch.empty(0, device="ocl")
    torch.ops.aten.upsample_bilinear2d.out(x, [7, 8], True, None, None, out=out)
    torch.testing.assert_close(out.cpu(), F.interpolate(x.cpu(), size=(7, 8), mode="bilinear", align_corners=True))
    out = torch.empty(0, device="ocl")
    torch.ops.aten.upsample_nearest2d.out(x, [7, 8], None, None, out=out)
    torch.testing.assert_close(out.cpu(), F.interpolate(x.cpu(), size=(7, 8), mode="nearest"))
    g = rand((2, 3, 7, 8)).to("ocl")
    gi = torch.empty(0, device="ocl")
    torch.ops.aten.upsample_bicubic2d_backward.grad_input(g, [7, 8], [2, 3, 4, 5], False, None, None, grad_input=gi)
    ref = torch.ops.aten.upsample_bicubic2d_backward(g.cpu(), [7, 8], [2, 3, 4, 5], False, None, None)
    torch.testing.assert_close(gi.cpu(), ref)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: torch.ops.aten.upsample_bilinear2d(t, [0, 4], False, None, None),
        lambda t: torch.ops.aten.upsample_nearest2d(t, [3], None, None),
        lambda t: torch.ops.aten.upsample_bilinear2d_backward(t, [4, 4], [1, 2, 3, 3], False, None, None),
        lambda t: torch.ops.aten.upsample_linear1d(t, [4], False, None),  # 4-D input for a 1-d op
    ],
)
def test_errors_match_cpu(call):
    x = rand((1, 2, 3, 3))
    with pytest.raises(RuntimeError):
        call(x)
    with pytest.raises(RuntimeError):
        call(x.to("ocl"))


def test_backward_is_deterministic():
    x = rand((1, 4, 9, 7)).to("ocl").requires_grad_()
    g = rand((1, 4, 20, 17)).to("ocl")
    f = interp("bicubic", False, size=(20, 17))
    (a,) = torch.autograd.grad(f(x), x, g)
    (b,) = torch.autograd.grad(f(x), x, g)
    assert torch.equal(a.cpu(), b.cpu())
