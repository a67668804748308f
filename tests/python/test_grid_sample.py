"""grid_sample and affine_grid on ocl against the CPU: every interpolation
mode x padding mode x align_corners in 2-d (bilinear, nearest, bicubic) and
3-d (trilinear, nearest), values and the gradients of input and grid;
float32/float64/float16/bfloat16, non-contiguous and channels_last operands,
empty batches and channels, grid points far outside [-1, 1], the backward's
output_mask, out= variants and argument errors. Every test runs with the
no_fallback fixture, so a CPU fallback fails it."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from conftest import FLOAT_DTYPES, dtype_id

pytestmark = pytest.mark.usefixtures("no_fallback")

TOL = {
    torch.float32: (2e-5, 2e-5),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (2e-3, 4e-3),
    torch.bfloat16: (2e-2, 2e-2),
}
PADDINGS = ["zeros", "border", "reflection"]


def rand(shape, seed=0, lo=None, hi=None):
    g = torch.Generator().manual_seed(seed)
    if lo is None:
        return torch.randn(shape, generator=g)
    return torch.rand(shape, generator=g) * (hi - lo) + lo


def grid_of(n, sizes, seed=1, lo=-1.3, hi=1.3):
    """Random grid points, some outside [-1, 1]."""
    return rand((n, *sizes, len(sizes)), seed, lo, hi)


def check(x, grid, dtype=torch.float32, prep_x=None, prep_g=None, grad=True, seed=2, **kw):
    """grid_sample on the CPU and on ocl; the output and, for one random
    grad_output, the gradients of input and grid must agree. prep_* turn
    the leaves into the layout under test on both devices. float16/bfloat16:
    the reference is float32 on the same rounded values, rounded once at the
    end, as the device computes."""
    atol, rtol = TOL[dtype]
    ref_dt = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    xc = x.to(dtype).to(ref_dt).requires_grad_(grad)
    gc = grid.to(dtype).to(ref_dt).requires_grad_(grad)
    xo = x.to(dtype).to("ocl").requires_grad_(grad)
    go = grid.to(dtype).to("ocl").requires_grad_(grad)
    px, pg = prep_x or (lambda t: t), prep_g or (lambda t: t)
    yc = F.grid_sample(px(xc), pg(gc), **kw)
    yo = F.grid_sample(px(xo), pg(go), **kw)
    assert yo.device.type == "ocl" and yo.dtype == dtype
    torch.testing.assert_close(yo.cpu(), yc.detach().to(dtype), atol=atol, rtol=rtol)
    if not grad or yc.numel() == 0:
        return
    w = rand(yc.shape, seed).to(dtype)
    dxc, dgc = torch.autograd.grad(yc, (xc, gc), w.to(ref_dt))
    dxo, dgo = torch.autograd.grad(yo, (xo, go), w.to("ocl"))
    torch.testing.assert_close(dxo.cpu(), dxc.to(dtype), atol=atol * 4, rtol=rtol * 4)
    # grid gradients are sums over channels scaled by size / 2
    torch.testing.assert_close(dgo.cpu(), dgc.to(dtype), atol=atol * 20, rtol=rtol * 4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_2d(mode, padding, align):
    check(rand((2, 3, 5, 7)), grid_of(2, (4, 6)), mode=mode, padding_mode=padding, align_corners=align)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_3d(mode, padding, align):
    check(rand((2, 2, 3, 4, 5)), grid_of(2, (3, 2, 4)), mode=mode, padding_mode=padding, align_corners=align)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_dtypes(dtype):
    for mode, padding in [("bilinear", "zeros"), ("nearest", "border"), ("bicubic", "reflection")]:
        check(rand((2, 3, 6, 5)), grid_of(2, (5, 4)), dtype, mode=mode, padding_mode=padding, align_corners=False)
    check(rand((1, 3, 3, 4, 5)), grid_of(1, (2, 3, 4)), dtype, mode="bilinear", padding_mode="reflection",
          align_corners=True)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_non_contiguous(mode):
    kw = dict(mode=mode, padding_mode="border", align_corners=False)
    # input: channels_last and a strided slice; grid: coordinates as a strided view
    check(rand((2, 3, 5, 7)), grid_of(2, (4, 6)), prep_x=lambda t: t.contiguous(memory_format=torch.channels_last),
          **kw)
    check(rand((2, 3, 10, 7)), grid_of(2, (6, 4)), prep_x=lambda t: t[:, :, ::2], prep_g=lambda t: t.transpose(1, 2),
          **kw)
    check(rand((2, 3, 5, 7)), rand((2, 4, 2, 6), 3, -1.2, 1.2),
          prep_g=lambda t: t.permute(0, 1, 3, 2), **kw)
    if mode != "bicubic":
        check(rand((2, 4, 3, 4, 5)), grid_of(2, (2, 3, 4)), prep_x=lambda t: t[:, ::2].transpose(2, 4), **kw)


def test_non_contiguous_grad_output():
    x, g = rand((2, 3, 5, 7)), grid_of(2, (4, 6))
    w = rand((2, 3, 6, 4), 5).transpose(2, 3)
    res = []
    for dev in ("cpu", "ocl"):
        xd, gd = x.to(dev).requires_grad_(), g.to(dev).requires_grad_()
        y = F.grid_sample(xd, gd, align_corners=True)
        res.append([t.cpu() for t in torch.autograd.grad(y, (xd, gd), w.to(dev))])
    for a, b in zip(*res):
        torch.testing.assert_close(b, a, atol=1e-4, rtol=1e-4)


def test_second_device(two_devices):
    x, g = rand((2, 3, 5, 7)), grid_of(2, (4, 6))
    xd, gd = x.to(two_devices[1]).requires_grad_(), g.to(two_devices[1]).requires_grad_()
    y = F.grid_sample(xd, gd, mode="bicubic", align_corners=False)
    y.sum().backward()
    assert y.device == two_devices[1] and xd.grad.device == two_devices[1]
    xc, gc = x.clone().requires_grad_(), g.clone().requires_grad_()
    yc = F.grid_sample(xc, gc, mode="bicubic", align_corners=False)
    yc.sum().backward()
    torch.testing.assert_close(y.cpu(), yc.detach(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(gd.grad.cpu(), gc.grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_far_outside(padding, mode):
    """Points many image sizes away (several reflections) and the exact corners."""
    for align in (False, True):
        kw = dict(mode=mode, padding_mode=padding, align_corners=align)
        check(rand((1, 2, 4, 5)), grid_of(1, (7, 9), lo=-40, hi=40), **kw)
        corners = torch.tensor([-1.0, 0.0, 1.0])
        g = torch.stack(torch.meshgrid(corners, corners, indexing="xy"), -1)[None]
        check(rand((1, 2, 4, 5)), g, **kw)
    check(rand((1, 2, 1, 1)), grid_of(1, (3, 3), lo=-3, hi=3), **kw)  # one-pixel image


def test_empty():
    for mode in ("bilinear", "bicubic"):
        check(rand((0, 3, 4, 5)), grid_of(0, (3, 2)), mode=mode, align_corners=False)
        check(rand((2, 3, 4, 5)), grid_of(2, (0, 2)), mode=mode, align_corners=False)
        check(rand((2, 0, 4, 5)), grid_of(2, (3, 2)), mode=mode, align_corners=False)
    check(rand((0, 2, 3, 4, 5)), grid_of(0, (1, 3, 2)), align_corners=False)
    # empty outputs still have gradients: grad_input all zeros (no grid
    # points), grad_grid all zeros (no channels)
    for n, xs, gs in ((2, (2, 3, 4, 5), (0, 2)), (2, (2, 0, 4, 5), (3, 2)), (3, (1, 0, 2, 3, 4), (2, 1, 3))):
        op = getattr(torch.ops.aten, f"grid_sampler_{n}d_backward")
        x, g = rand(xs) + 1, grid_of(xs[0], gs)
        w = torch.ones(xs[0], xs[1], *gs)
        for mode in (0, 2) if n == 2 else (0, 1):
            exp = op(w, x, g, mode, 0, False, [True, True])
            got = op(w.to("ocl"), x.to("ocl"), g.to("ocl"), mode, 0, False, [True, True])
            for a, b in zip(exp, got):
                assert torch.equal(b.cpu(), a) and (a == 0).all()


def test_output_mask_and_out():
    x, g, w = rand((2, 3, 5, 7)), grid_of(2, (4, 6)), rand((2, 3, 4, 6), 5)
    op = torch.ops.aten.grid_sampler_2d_backward
    for mask in ([True, True], [False, True], [True, False]):
        dxc, dgc = op(w, x, g, 0, 2, False, mask)
        dxo, dgo = op(w.to("ocl"), x.to("ocl"), g.to("ocl"), 0, 2, False, mask)
        assert (dxo is None) == (dxc is None)
        if dxc is not None:
            torch.testing.assert_close(dxo.cpu(), dxc, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(dgo.cpu(), dgc, atol=1e-4, rtol=1e-4)
    # out=: a wrongly sized and a non-contiguous destination
    out = torch.empty(3, device="ocl")
    torch.ops.aten.grid_sampler_2d.out(x.to("ocl"), g.to("ocl"), 1, 0, True, out=out)
    torch.testing.assert_close(out.cpu(), torch.ops.aten.grid_sampler_2d(x, g, 1, 0, True))
    gi = torch.empty(2, 3, 7, 5, device="ocl").transpose(2, 3)
    gg = torch.empty(2, 4, 6, 2, device="ocl")
    torch.ops.aten.grid_sampler_2d_backward.out(w.to("ocl"), x.to("ocl"), g.to("ocl"), 0, 1, True, [True, True],
                                                 out0=gi, out1=gg)
    dxc, dgc = op(w, x, g, 0, 1, True, [True, True])
    torch.testing.assert_close(gi.cpu(), dxc, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(gg.cpu(), dgc, atol=1e-4, rtol=1e-4)


def test_errors():
    x, g = rand((1, 2, 3, 4)).to("ocl"), grid_of(1, (2, 2)).to("ocl")
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, torch.zeros(2, 2, 2, 2, device="ocl"), align_corners=False)
    with pytest.raises(RuntimeError, match="size 2 in last dimension"):
        F.grid_sample(x, torch.zeros(1, 2, 2, 3, device="ocl"), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic"):
        F.grid_sample(rand((1, 1, 2, 2, 2)).to("ocl"), torch.zeros(1, 1, 1, 1, 3, device="ocl"), mode="bicubic",
                      align_corners=False)
    with pytest.raises(RuntimeError, match="non-empty spatial"):
        F.grid_sample(torch.zeros(1, 2, 0, 4, device="ocl"), g, align_corners=False)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.ops.aten.grid_sampler_2d(x, g.double(), 0, 0, False)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch.ops.aten.grid_sampler_2d(x.long(), g.long(), 0, 0, False)
    with pytest.raises(ValueError, match="grad_output"):
        torch.ops.aten.grid_sampler_2d_backward(torch.zeros(1, 2, 3, 3, device="ocl"), x, g, 0, 0, False,
                                                [True, True])


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    """affine_grid is native (it decomposes), and a spatial transformer's
    step (theta -> grid -> sample) gives the CPU's gradients."""
    theta = torch.tensor([[[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.2, 0.4, 0.3], [-0.5, 0.8, 0.0]]])
    theta3 = torch.tensor([[[0.9, -0.3, 0.1, 0.2], [0.2, 1.1, -0.2, 0.0], [0.1, 0.0, 0.8, 0.3]]])
    for th, size in ((theta, (2, 3, 5, 7)), (theta3, (1, 2, 3, 4, 5))):
        x = rand(size)
        res = []
        for dev in ("cpu", "ocl"):
            t, xd = th.to(dev).requires_grad_(), x.to(dev).requires_grad_()
            grid = F.affine_grid(t, list(size), align_corners=align)
            y = F.grid_sample(xd, grid, padding_mode="border", align_corners=align)
            loss = (y * y).sum()
            res.append([v.detach().cpu() for v in (grid, y, *torch.autograd.grad(loss, (t, xd)))])
        for a, b in zip(*res):
            torch.testing.assert_close(b, a, atol=1e-4, rtol=1e-4)


def test_overloads_registered():
    """The four 2-d and four 3-d overloads have ocl kernels (the out= and
    backward forms are also exercised above)."""
    regs = set(torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1"))
    for n, suffix in itertools.product((2, 3), ("", ".out", "_backward", "_backward.out")):
        assert f"aten::grid_sampler_{n}d{suffix}" in regs


def strided_like(t):
    """t's values in a non-contiguous layout (every other element of a
    buffer twice as wide in the last dim), as OpInfo's noncontiguous_like."""
    out = torch.empty(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)[..., ::2]
    return out.copy_(t)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("padding", PADDINGS)
def test_3d_matches_cpu_bits(dtype, padding):
    """Issue 23: grid_sampler_3d's gradients were up to 5.7e-5 off the CPU
    in float32 (OpInfo's non-contiguous samples, tolerance 1e-5): grad_input
    was summed with atomics in whatever order work-items came, and fma
    contraction rounded the weights and sums differently. 3-d now follows
    the CPU's order of operations: the same bits, contiguous or not."""
    x = rand((4, 5, 6, 7, 8), 7, -9, 9).to(dtype)
    g = grid_of(4, (9, 8, 7), seed=8).to(dtype)
    w = rand((4, 5, 9, 8, 7), 9, -9, 9).to(dtype)
    layouts = [
        ("cpu", lambda t: t),
        ("ocl", lambda t: t),
        ("ocl", strided_like),
        ("ocl", lambda t: t.contiguous(memory_format=torch.channels_last_3d) if t.dim() == 5 else t),
    ]
    for mode, align in itertools.product(("bilinear", "nearest"), (False, True)):
        res = []
        for dev, lay in layouts:
            xd, gd = lay(x.to(dev)).requires_grad_(), lay(g.to(dev)).requires_grad_()
            y = F.grid_sample(xd, gd, mode=mode, padding_mode=padding, align_corners=align)
            dx, dg = torch.autograd.grad(y, (xd, gd), lay(w.to(dev)))
            res.append([t.detach().cpu() for t in (y, dx, dg)])
        for r in res[1:]:
            for a, b in zip(res[0], r):
                torch.testing.assert_close(b, a, atol=0, rtol=0)


def test_3d_opinfo_sample_backward():
    """The OpInfo sample that failed (input [20, 11, 12, 13, 14], grid
    [20, 23, 22, 21, 3], bilinear, border): ~40 grid points add into each
    grad_input element. With fewer than 4 (batch, channel) planes per
    compute unit (16 on a GPU) the backward takes the atomic scatter
    instead (sums in any order)."""
    props = torch.ocl.get_device_properties(0)
    exact = 20 * 11 >= (4 if props.type == "cpu" else 16) * props.compute_units
    tol = dict(atol=0, rtol=0) if exact else dict(atol=2e-4, rtol=1e-5)
    x = rand((20, 11, 12, 13, 14), 3, -9, 9)
    g = rand((20, 23, 22, 21, 3), 4, -1, 1)
    w = rand((20, 11, 23, 22, 21), 5)
    op = torch.ops.aten.grid_sampler_3d_backward
    exp = op(w, x, g, 0, 1, False, [True, True])
    for lay in (lambda t: t, strided_like):
        got = op(lay(w.to("ocl")), lay(x.to("ocl")), lay(g.to("ocl")), 0, 1, False, [True, True])
        for a, b in zip(exp, got):
            torch.testing.assert_close(b.cpu(), a, **tol)
