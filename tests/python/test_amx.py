"""bfloat16 products and convolutions on Intel's AMX tiles (runtime/ops/gemm_amx.c,
runtime/ops/conv_amx.c): a PoCL CPU device on a host with AMX-BF16 runs them
there, every other device on the float32 kernels. Either way the numbers are
checked against a float64 referee: every edge of the 32 x 32 blocks and 32-deep
k tiles, transposed, strided and batched operands, the GEMM's epilogue
(alpha, beta, bias), NaN and infinity, and convolutions with channel counts
off the tiles, dilation, strides, 1-d, 3-d and no bias, forward and all
gradients. On a
host with AMX the tests also check that the tile kernels ran (and that
TORCH_OCL_AMX=0 turns them off), so the route cannot silently go away."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import ocl_kernels_run
from test_conv import run as conv_run

OCL = "ocl"
pytestmark = pytest.mark.usefixtures("no_fallback")


def host_has_amx():
    """A PoCL CPU device on a Linux x86 host whose CPU reports AMX-BF16."""
    props = torch_ocl._C._device_props(0)
    if props["type"] != "cpu" or "PoCL" not in props["platform_version"]:
        return False
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return False
    return "amx_bf16" in flags and "amx_tile" in flags


AMX = host_has_amx()


def bf16(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(torch.bfloat16)


def check_product(out, a, b, extra=None, what=""):
    """out (bfloat16) against the float64 product of the same bfloat16 inputs:
    products are exact in float32, so the error is the float32 sums' (at most
    K * 2^-23 of sum |a||b|) plus one bfloat16 rounding (2^-8 relative)."""
    ref = a.double() @ b.double()
    mag = a.double().abs() @ b.double().abs()
    if extra is not None:
        ref = ref + extra
        mag = mag + extra.abs()
    k = a.shape[-1]
    tol = ref.abs() * 2.0 ** -8 + mag * (k * 2.0 ** -23) + 1e-30
    err = (out.cpu().double() - ref).abs()
    bad = err > tol
    assert not bad.any(), f"{what}: {int(bad.sum())} of {bad.numel()} off, worst {(err - tol).max().item():.3g}"


SHAPES = [(40, 48, 70), (33, 65, 31), (128, 96, 200), (257, 129, 100), (16, 1024, 64), (64, 64, 2048)]


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_mm(m, n, k):
    a, b = bf16((m, k), 1), bf16((k, n), 2)
    check_product(a.to(OCL) @ b.to(OCL), a, b, what="mm")


@pytest.mark.parametrize("layout", ["a_t", "b_t", "both_t", "a_strided", "offset"])
def test_mm_layouts(layout):
    m, n, k = 70, 90, 130
    a, b = bf16((m, k), 3), bf16((k, n), 4)
    ao, bo = a.to(OCL), b.to(OCL)
    if layout in ("a_t", "both_t"):
        ao = a.t().contiguous().to(OCL).t()
    if layout in ("b_t", "both_t"):  # x @ W^T of a linear layer
        bo = b.t().contiguous().to(OCL).t()
    if layout == "a_strided":  # every other row of a wider matrix
        wide = torch.zeros(2 * m, k + 5, dtype=torch.bfloat16)
        wide[::2, 3:3 + k] = a
        ao = wide.to(OCL)[::2, 3:3 + k]
    if layout == "offset":
        ao = torch.cat([bf16((7, k), 9), a]).to(OCL)[7:]
    check_product(ao @ bo, a, b, what=layout)


def test_bmm_and_broadcast():
    a, b = bf16((3, 50, 70), 5), bf16((3, 70, 40), 6)
    check_product(torch.bmm(a.to(OCL), b.to(OCL)), a, b, what="bmm")
    w = bf16((70, 40), 7)  # one weight for every batch item
    check_product(a.to(OCL) @ w.to(OCL), a, w, what="matmul 3-d @ 2-d")
    bt = b.transpose(1, 2).contiguous().to(OCL).transpose(1, 2)
    check_product(torch.bmm(a.to(OCL), bt), a, b, what="bmm, B transposed")


def test_epilogue():
    a, b, c = bf16((60, 90), 8), bf16((90, 50), 9), bf16((60, 50), 10)
    bias = bf16((50,), 11)
    out = torch.addmm(c.to(OCL), a.to(OCL), b.to(OCL), beta=0.5, alpha=2.0)
    # alpha scales the exact products: the bound of 2 * (a @ b) + c / 2
    check_product(out, a * 2, b, extra=c.double() * 0.5, what="addmm")
    lin = F.linear(a.to(OCL), b.t().contiguous().to(OCL), bias.to(OCL))
    check_product(lin, a, b, extra=bias.double(), what="linear")
    base = bf16((3, 20, 30), 12)
    x, y = bf16((3, 20, 64), 13), bf16((3, 64, 30), 14)
    out = torch.baddbmm(base.to(OCL), x.to(OCL), y.to(OCL), beta=1.0, alpha=1.0)
    check_product(out, x, y, extra=base.double(), what="baddbmm")


def test_nan_and_inf():
    a, b = bf16((40, 64), 15), bf16((64, 48), 16)
    a[3, 5] = float("nan")
    a[7, 0] = float("inf")
    b[0, 9] = float("-inf")
    out = (a.to(OCL) @ b.to(OCL)).cpu()
    ref = a.float() @ b.float()
    assert torch.equal(out.isnan(), ref.bfloat16().isnan())
    assert torch.equal(out.isinf(), ref.bfloat16().isinf())
    fin = ref.isfinite()
    torch.testing.assert_close(out.float()[fin], ref[fin], rtol=2 ** -7, atol=1e-2)


def test_route():
    a, b = bf16((256, 256), 17), bf16((256, 256), 18)
    names = ocl_kernels_run(lambda: a.to(OCL) @ b.to(OCL))
    if AMX:
        assert "tocl_gemm_amx" in names, names
    else:
        assert "tocl_gemm_amx" not in names, names
    # float32 never goes there
    names = ocl_kernels_run(lambda: a.float().to(OCL) @ b.float().to(OCL))
    assert "tocl_gemm_amx" not in names, names


@pytest.mark.skipif(not AMX, reason="the tile route runs only on a host with AMX")
def test_a_read_in_place(monkeypatch):
    """A with rows along k and M, K multiples of 32 is read by the tile loads
    in place (one pack launch, B's); TORCH_OCL_AMX_ADIRECT=0 packs it too.
    Same numbers either way."""
    a, b = bf16((96, 128), 30), bf16((128, 80), 31)
    wide = torch.zeros(96, 160, dtype=torch.bfloat16)
    wide[:, 16:144] = a
    ao = wide.to(OCL)[:, 16:144]  # rows 160 apart, at an offset
    got = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("TORCH_OCL_AMX_ADIRECT", mode)
        names = ocl_kernels_run(lambda: got.__setitem__(mode, (ao @ b.to(OCL)).cpu()))
        assert names.count("tocl_gemm_amx_pack") == (1 if mode == "1" else 2), names
    assert torch.equal(got["1"], got["0"])
    check_product(got["1"], a, b, what="A in place")


def test_switch_off():
    """TORCH_OCL_AMX=0 (read once per process): float32 kernels, same numbers."""
    code = (
        "import torch, torch_ocl\n"
        "from conftest import ocl_kernels_run\n"
        "a = torch.randn(256, 256).bfloat16(); b = torch.randn(256, 256).bfloat16()\n"
        "names = ocl_kernels_run(lambda: a.to('ocl') @ b.to('ocl'))\n"
        "assert 'tocl_gemm_amx' not in names, names\n"
        "assert 'tocl_gemm_cpu' in names, names\n"
        "x = torch.randn(2, 8, 9, 9).bfloat16(); w = torch.randn(8, 8, 3, 3).bfloat16()\n"
        "names = ocl_kernels_run(lambda: torch.nn.functional.conv2d(x.to('ocl'), w.to('ocl'), padding=1))\n"
        "assert 'conv_amx' not in names, names\n"
        "print('ok')\n"
    )
    env = dict(os.environ, TORCH_OCL_AMX="0")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=here, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


# name: (spatial size, batch, in channels, out channels, kernel, kwargs, transposed), as test_conv.CASES
CONV = {
    "out_5": ((9, 11), 2, 16, 5, 3, dict(padding=1), False),
    "channel_edges": ((7, 37), 1, 33, 40, 3, dict(padding=1), False),
    "dilation": ((10, 9), 2, 64, 17, (3, 2), dict(padding=(2, 1), dilation=(2, 1)), False),
    "valid_k5": ((12, 13), 3, 24, 36, 5, {}, False),
    "wide_rows": ((3, 70), 1, 16, 32, 3, dict(padding=1), False),
    "1d": ((45,), 2, 70, 36, 5, dict(padding=2), False),
    "3d": ((4, 5, 6), 2, 16, 8, 3, dict(padding=1), False),
    # strided forwards and weight gradients read phase planes (the input
    # gradient keeps the float32 route there)
    "stride2": ((11, 12), 2, 16, 12, 3, dict(stride=2, padding=1), False),
    "7x7_s2": ((20, 23), 1, 16, 16, 7, dict(stride=2, padding=3), False),
    "stride_dilation": ((13, 14), 1, 20, 40, 3, dict(stride=(2, 3), dilation=2, padding=2), False),
    "1d_stride3": ((40,), 2, 34, 33, 4, dict(stride=3, padding=1), False),
    "3d_stride2": ((6, 7, 8), 1, 16, 8, 3, dict(stride=2, padding=1), False),
}


@pytest.mark.parametrize("name", list(CONV))
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_conv(name, bias):
    size, n, cin, cout, k, kw, _ = CONV[name]
    nd = len(size)
    k = (k,) * nd if isinstance(k, int) else k
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    x, w = bf16((n, cin) + size, 20, 0.5), bf16((cout, cin) + k, 21, 0.2)
    b = bf16((cout,), 22) if bias else None
    names = ocl_kernels_run(lambda: conv_run(fn, x, w, b, kw, torch.bfloat16))
    for kernel in ("conv_amx", "conv_amx_wg"):
        assert (kernel in names) == AMX, (kernel, names)


@pytest.mark.parametrize("case", ["groups", "1x1_stride2", "3_channels"])
def test_conv_other_shapes_stay_off_the_tiles(case):
    """Groups keep the float32 implicit GEMM, and so does a source of fewer
    than 16 channels (padded to a 32-channel tile it would multiply 10x the
    products: ResNet's RGB stem); a 1x1 kernel is a product (the GEMM's
    tiles take it), never the convolution kernels."""
    cin, k, kw = {"groups": (16, 3, dict(groups=2, padding=1)), "1x1_stride2": (16, 1, dict(stride=2)),
                  "3_channels": (3, 7, dict(stride=2, padding=3))}[case]
    x, w = bf16((2, cin, 11, 11), 23), bf16((8, cin // kw.get("groups", 1), k, k), 24)
    names = ocl_kernels_run(lambda: conv_run(F.conv2d, x, w, None, kw, torch.bfloat16))
    assert "conv_amx" not in names and "conv_amx_wg" not in names, names


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
@pytest.mark.parametrize("name", ["channel_edges", "stride2", "1d_stride3"])
def test_conv_rounded_once(name, chunked, monkeypatch):
    """Inputs on a grid of 1/8 make every product and float32 sum exact, so
    the output, the input gradient and the weight gradient must each be the
    float64 result rounded once to bfloat16 (within half an ulp), also when
    a small workspace cuts the batch into chunks (the weight gradient then
    adds the chunks' float sums before its one rounding)."""
    if chunked:
        monkeypatch.setenv("TORCH_OCL_CONV_WORKSPACE", "600")
    size, n, cin, cout, k, kw, _ = CONV[name]
    nd = len(size)
    k = (k,) * nd if isinstance(k, int) else k
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    g = torch.Generator().manual_seed(5)
    grid = lambda *s: (torch.randint(-8, 8, s, generator=g).double() / 8).to(torch.bfloat16)  # noqa: E731
    x, w = grid(n + 1, cin, *size), grid(cout, cin, *k)
    xd, wd = x.double().requires_grad_(), w.double().requires_grad_()
    ref = fn(xd, wd, **kw)
    gy = grid(*ref.shape)
    ref_gx, ref_gw = torch.autograd.grad(ref, (xd, wd), gy.double())
    xo, wo = x.to(OCL).requires_grad_(), w.to(OCL).requires_grad_()
    out = fn(xo, wo, **kw)
    gx, gw = torch.autograd.grad(out, (xo, wo), gy.to(OCL))
    for what, got, want in (("output", out, ref), ("grad_input", gx, ref_gx), ("grad_weight", gw, ref_gw)):
        err = (got.detach().cpu().double() - want.detach()).abs()
        assert (err <= want.detach().abs() * 2.0 ** -8).all(), f"{what}: worst {err.max().item():.3g}"


def test_conv_channels_last():
    x, w = bf16((2, 32, 9, 10), 25), bf16((24, 32, 3, 3), 26)
    out, _ = conv_run(F.conv2d, x, w, bf16((24,), 27), dict(padding=1), torch.bfloat16,
                      memory_format=torch.channels_last)
    assert out.is_contiguous(memory_format=torch.channels_last)


_TILE_KERNEL = r'''
__attribute__((target("amx-tile,amx-bf16")))
static void body(__global float *o) {
    uchar cfg[64];
    for (int i = 0; i < 64; i++) cfg[i] = 0;
    cfg[0] = 1;
    for (int t = 0; t < 8; t++) { cfg[16 + 2 * t] = 64; cfg[48 + t] = 16; }
    __builtin_ia32_tile_loadconfig(cfg);
    __builtin_ia32_tilezero(0);
    __builtin_ia32_tilestored64(0, (void *)(size_t)o, 64);
    __builtin_ia32_tilerelease();
}
__kernel void z(__global float *o) { body(o); }
'''


@pytest.mark.skipif(not AMX, reason="the tile builtins run only on a host with AMX")
def test_custom_kernel_with_tile_builtins_first():
    """A custom kernel calling the tile builtins before any bfloat16 product
    (so before the runtime asked Linux for the tiles) runs instead of
    killing the process with SIGILL: compile_kernel asks first."""
    code = (
        "import sys, torch, torch_ocl\n"
        "lib = torch_ocl.compile_kernel(sys.stdin.read())\n"
        "o = torch.ones(256, device='ocl')\n"
        "lib.z(o, threads=1, group_size=1)\n"
        "assert o.sum().item() == 0, o.sum().item()\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], input=_TILE_KERNEL, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stderr[-3000:])
