"""The op table's float32 exp, expm1, tanh, erf, erfc, log and log1p
(runtime/codegen/ir_special.c, FASTMATH) over the whole float range.

They replace PoCL's builtins, which do not vectorise (erf 47 ms for 1M
floats against 0.9 ms), so they are checked here element by element: 2^20
random bit patterns (every exponent, denormals, huge values, NaN payloads),
dense sweeps of the ranges where each function changes method, and every
special value, through the ops themselves (generated tocl_ew kernels),
against float64 on the CPU. Bound: 2 ulp of the float32 result (measured
maxima over 2^24 patterns: exp 0.97, expm1 1.43, erf 0.94, erfc 1.97, log
1.18, log1p 1.66, tanh 1.49). NaN, infinities and the sign of zero must be exact.
float16 and bfloat16 compute in float32 and round once, so they must round
to the CPU's value or a neighbour of it.
"""

import pytest
import torch

native = pytest.mark.usefixtures("no_fallback")

FUNCS = {
    "exp": torch.exp,
    "expm1": torch.expm1,
    "erf": torch.erf,
    "erfc": torch.erfc,
    "log": torch.log,
    "log1p": torch.log1p,
    "tanh": torch.tanh,
}
ULP_BOUND = 2.0

SPECIAL = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38,
           1.17549435e-38, 3.4028235e38, -3.4028235e38, 1e-30, -1e-30, 2.98e-8, -2.98e-8, 1e-8, -1e-8,
           88.72283172607421875, 88.7228393554687, 89.0, -87.33654, -103.97, -104.0, -150.0, -17.33, -20.0,
           1.0, -1.0, 0.5, -0.5, 0.49999997, 2.0, -2.0, 3.9, 4.0, 4.1, 0.99999994, 1.0000001, -0.99999994,
           -1.0000001, 9.0, 10.05, 10.06, 10.1, 10.2, -10.06, 0.6931472, -0.6931472, 0.3465736, -0.3465736,
           -1.0 + 2.0 ** -24, -0.9999999, 2.0 ** 24, 2.0 ** 25, 0.625, 0.62499994, -0.625, 9.01, 9.02, -9.02,
           19.1, 2.9802322e-08]


def inputs():
    g = torch.Generator().manual_seed(1)
    bits = torch.randint(-2 ** 31, 2 ** 31, (1 << 20,), dtype=torch.int64, generator=g).to(torch.int32)
    dense = [torch.linspace(-12, 12, 1 << 18), torch.linspace(-110, 90, 1 << 16), torch.linspace(-1, 1, 1 << 16),
             torch.linspace(0.4, 4.2, 1 << 16), torch.linspace(-1, -0.5, 1 << 14), torch.linspace(9, 10.2, 1 << 14)]
    return torch.cat([bits.view(torch.float32), torch.tensor(SPECIAL)] + dense)


def ulp_errors(y, ref64):
    """|y - ref| in ulps of ref rounded to float32; inf where the class is wrong."""
    y = y.double()
    rf = ref64.float()
    a = rf.abs().clamp(max=torch.finfo(torch.float32).max)
    ulp = (torch.nextafter(a, torch.tensor(float("inf"))) - a).double()
    ulp = torch.where(a == torch.finfo(torch.float32).max, torch.tensor(2.0 ** 104, dtype=torch.float64), ulp)
    finite = torch.isfinite(rf)
    e = torch.where(finite, (y - ref64).abs() / ulp, torch.zeros_like(y))
    e = torch.where(finite & ~torch.isfinite(y), torch.full_like(y, float("inf")), e)
    wrong = (torch.isnan(y) != torch.isnan(ref64)) | (~finite & ~torch.isnan(rf) & (y != rf.double()))
    wrong |= (rf == 0) & (y == 0) & (torch.signbit(y) != torch.signbit(rf))
    return torch.where(wrong, torch.full_like(e, float("inf")), e)


@native
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_fastmath_float32_ulp(name):
    f = FUNCS[name]
    x = inputs()
    ref = f(x.double())
    y = f(x.to("ocl")).cpu()
    e = ulp_errors(y, ref)
    i = int(torch.argmax(e))
    assert float(e[i]) <= ULP_BOUND, (
        f"{name}({float(x[i])!r}) = {float(y[i])!r}, float64 {float(ref[i])!r}: {float(e[i]):.3f} ulp")


@native
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_fastmath_narrow(name, dtype):
    f = FUNCS[name]
    x = inputs().to(dtype)
    ref = f(x.double()).to(dtype)
    y = f(x.to("ocl")).cpu()
    both_nan = torch.isnan(y) & torch.isnan(ref)
    close = (y == ref) | both_nan
    # one step of the narrow format: float32 results within 2 ulp may round either way
    up = torch.nextafter(ref, torch.tensor(float("inf"), dtype=dtype))
    down = torch.nextafter(ref, torch.tensor(-float("inf"), dtype=dtype))
    ok = close | (y == up) | (y == down)
    bad = torch.nonzero(~ok)
    assert bad.numel() == 0, [(float(x[j]), float(y[j]), float(ref[j])) for j in bad[:5, 0].tolist()]


@native
def test_fastmath_composites_float32():
    """Formulas built on them (gelu, sigmoid, silu, their gradients) stay at the CPU's accuracy."""
    # no infinities: the CPU's gelu(inf) is NaN (ocl, before and after, inf)
    x = torch.cat([torch.linspace(-20, 20, 1 << 16), torch.tensor([0.0, -0.0, float("nan")])])
    for fn in (torch.nn.functional.gelu, torch.sigmoid, torch.nn.functional.silu, torch.nn.functional.logsigmoid,
               torch.nn.functional.softplus, torch.nn.functional.mish):
        torch.testing.assert_close(fn(x.to("ocl")).cpu(), fn(x), equal_nan=True, msg=lambda m: f"{fn}: {m}")
    for fn in (torch.nn.functional.gelu, torch.sigmoid, torch.nn.functional.silu):
        xc = x[:-3].clone().requires_grad_()
        xo = x[:-3].to("ocl").requires_grad_()
        fn(xc).sum().backward()
        fn(xo).sum().backward()
        torch.testing.assert_close(xo.grad.cpu(), xc.grad, msg=lambda m: f"{fn} backward: {m}")
