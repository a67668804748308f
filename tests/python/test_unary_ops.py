"""Unary math ops on ocl against the CPU, driven by one table.

Each row is (name, torch function, dtypes, input domain). One test per row
checks every listed dtype forward (contiguous, transposed, offset view, 0-dim,
empty), out=, in-place and, for float32, the gradient. Adding an op is one row.
"""

import math

import pytest
import torch

from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES

OCL = "ocl"
native = pytest.mark.usefixtures("no_fallback")

ALL = ALL_DTYPES
NUM = FLOAT_DTYPES + INT_DTYPES  # no bool
FL = FLOAT_DTYPES

# domains: "any" (-4..4 plus specials), "pos" (0.05..8), "unit" (-0.95..0.95), "ge1" (1..8), "prob" (0.02..0.98)
ROWS = [
    ("neg", torch.neg, NUM, "any"),
    ("abs", torch.abs, NUM, "any"),
    ("sign", torch.sign, ALL, "any"),
    ("sgn", torch.sgn, ALL, "any"),
    ("reciprocal", torch.reciprocal, ALL, "pos"),
    ("sqrt", torch.sqrt, ALL, "pos"),
    ("rsqrt", torch.rsqrt, FL + [torch.int32], "pos"),
    ("square", torch.square, ALL, "any"),
    ("exp", torch.exp, ALL, "any"),
    ("exp2", torch.exp2, ALL, "any"),
    ("expm1", torch.expm1, FL + [torch.int64], "any"),
    ("log", torch.log, ALL, "pos"),
    ("log2", torch.log2, FL + [torch.int32], "pos"),
    ("log10", torch.log10, FL + [torch.int32], "pos"),
    ("log1p", torch.log1p, FL + [torch.int32], "pos"),
    ("sin", torch.sin, ALL, "any"),
    ("cos", torch.cos, FL + [torch.int16], "any"),
    ("tan", torch.tan, FL, "unit"),
    ("asin", torch.asin, FL, "unit"),
    ("acos", torch.acos, FL, "unit"),
    ("atan", torch.atan, FL + [torch.int8], "any"),
    ("sinh", torch.sinh, FL, "any"),
    ("cosh", torch.cosh, FL, "any"),
    ("tanh", torch.tanh, ALL, "any"),
    ("asinh", torch.asinh, FL, "any"),
    ("acosh", torch.acosh, FL, "ge1"),
    ("atanh", torch.atanh, FL, "unit"),
    ("erf", torch.erf, FL + [torch.int32], "any"),
    ("erfc", torch.erfc, FL, "any"),
    ("erfinv", torch.erfinv, FL, "unit"),
    ("lgamma", torch.lgamma, FL, "pos"),
    ("digamma", torch.digamma, FL, "any"),
    ("sigmoid", torch.sigmoid, ALL, "any"),
    # logit: the CPU rounds x / (1 - x) step by step in the 16-bit format; ocl computes in float32 and
    # rounds once, so results near 0.5 (logit near 0) differ by about one 16-bit unit of the operands
    ("logit", torch.logit, FL, "prob", 1e-2),
    ("logit_eps", lambda x, **kw: torch.logit(x, eps=0.1, **kw), FL, "any", 1e-2),
    ("floor", torch.floor, NUM, "any"),
    ("ceil", torch.ceil, NUM, "any"),
    ("round", torch.round, NUM, "any"),
    ("round_dec2", lambda x, **kw: torch.round(x, decimals=2, **kw), FL, "any"),
    ("round_dec-1", lambda x, **kw: torch.round(x * 100, decimals=-1, **kw), [torch.float32, torch.float64], "any"),
    ("trunc", torch.trunc, NUM, "any"),
    ("frac", torch.frac, FL, "any"),
    ("bitwise_not", torch.bitwise_not, INT_DTYPES + [torch.bool], "any"),
    ("nan_to_num", torch.nan_to_num, ALL, "any"),
    ("nan_to_num_args", lambda x, **kw: torch.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-3.0, **kw), FL, "any"),
    ("isnan", torch.isnan, ALL, "any"),
    ("isinf", torch.isinf, ALL, "any"),
    ("isfinite", torch.isfinite, ALL, "any"),
    ("isposinf", torch.isposinf, ALL, "any"),
    ("isneginf", torch.isneginf, ALL, "any"),
    ("signbit", torch.signbit, ALL, "any"),
]

INPLACE = {"neg", "abs", "sign", "sgn", "reciprocal", "sqrt", "rsqrt", "square", "exp", "exp2", "expm1", "log", "log2",
           "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "erf", "erfc", "erfinv", "lgamma", "digamma", "sigmoid", "logit", "floor", "ceil", "round",
           "trunc", "frac", "bitwise_not", "nan_to_num"}
NO_OUT = {"isnan", "isinf", "isfinite", "logit_eps", "round_dec-1"}
SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0]


def make(domain, dtype, shape=(6, 7), seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    lo, hi = {"any": (-4, 4), "pos": (0.05, 8), "unit": (-0.95, 0.95), "ge1": (1, 8), "prob": (0.02, 0.98)}[domain]
    if not dtype.is_floating_point:
        lo, hi = (max(lo, 0) if dtype == torch.uint8 else lo), hi
        return torch.randint(math.floor(max(lo, 1 if domain in ("pos", "ge1") else lo)), math.ceil(hi) + 1, shape,
                             generator=g).to(dtype)
    x = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
    if domain == "any":
        x.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=torch.float64)
        x.view(-1)[6:10] = torch.tensor([-2.0, -1.0, 2.5, -2.5], dtype=torch.float64)  # integers and halves
    return x.to(dtype)


def close(actual, expected, dtype, rtol16=None):
    assert actual.device.type == "ocl"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, expected.dtype)
    a = actual.cpu()
    if expected.dtype in (torch.float16, torch.bfloat16):
        # computed in float32 and rounded once; the CPU may round intermediates: one unit of the format
        torch.testing.assert_close(a.float(), expected.float(), equal_nan=True, atol=rtol16 or 1e-5,
                                   rtol=rtol16 or (1e-2 if expected.dtype == torch.bfloat16 else 2e-3))
    else:
        torch.testing.assert_close(a, expected, equal_nan=True)


def same_or_raises(fn, x_cpu, x_ocl):
    try:
        expected = fn(x_cpu)
    except Exception as e:  # noqa: BLE001 - the CPU refuses: ocl must refuse with the same type
        with pytest.raises(type(e)):
            fn(x_ocl)
        return None
    actual = fn(x_ocl)
    return actual, expected


@native
@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_unary(row):
    name, fn, dtypes, domain = row[:4]
    rtol16 = row[4] if len(row) > 4 else None
    layout_dtypes = {torch.float32, next((d for d in dtypes if not d.is_floating_point), torch.float16)}
    for dt in ALL_DTYPES:
        x = make(domain, dt)
        r = same_or_raises(fn, x, x.to(OCL))
        if dt not in dtypes:
            continue
        assert r is not None, f"{name} raised for {dt} on the CPU"
        close(r[0], r[1], dt, rtol16)
        base = x.to(OCL)
        if dt in layout_dtypes:  # layouts: transposed, offset step view, 0-dim, empty
            close(fn(base.t()), fn(x.t()), dt, rtol16)
            close(fn(base[1:, ::2]), fn(x[1:, ::2]), dt, rtol16)
            close(fn(base[2, 3]), fn(x[2, 3]), dt, rtol16)
            close(fn(base[:0]), fn(x[:0]), dt, rtol16)
        if name not in NO_OUT:
            exp = fn(x)
            out = torch.empty(0, dtype=exp.dtype, device=OCL)
            fn(base, out=out)
            close(out, exp, dt, rtol16)
        if name in INPLACE:
            meth = getattr(torch.Tensor, name + "_")
            xc = x.clone()
            try:
                meth(xc)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    meth(x.to(OCL))
                continue
            xo = x.to(OCL)
            ptr = xo.data_ptr()
            meth(xo)
            assert xo.data_ptr() == ptr
            close(xo, xc, dt, rtol16)


GRAD_ROWS = [r for r in ROWS if torch.float32 in r[2] and r[0] not in (
    "sign", "sgn", "floor", "ceil", "round", "round_dec2", "round_dec-1", "trunc", "frac", "bitwise_not", "nan_to_num",
    "nan_to_num_args", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "abs", "erfinv", "logit_eps",
    "digamma")]  # digamma's gradient needs polygamma, which is not a pointwise op of this library


@native
@pytest.mark.parametrize("row", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_unary_grad(row):
    name, fn, _, domain = row[:4]
    x = make(domain, torch.float64, (5, 4), seed=3)
    if domain == "any":
        x = torch.rand(5, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * 6 - 3 + 0.01
    x = x.float()
    xc = x.clone().requires_grad_()
    xo = x.to(OCL).requires_grad_()
    gout = torch.randn(fn(x).shape, generator=torch.Generator().manual_seed(1))
    (gc,) = torch.autograd.grad(fn(xc), xc, gout)
    (go,) = torch.autograd.grad(fn(xo), xo, gout.to(OCL))
    torch.testing.assert_close(go.cpu(), gc, equal_nan=True)


@native
def test_special_values_float64_and_float32():
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, 1e30, float("inf"), float("-inf"), float("nan"), -3.0, 3.5]
    for dt in (torch.float32, torch.float64):
        x = torch.tensor(vals, dtype=dt)
        for fn in (torch.sqrt, torch.exp, torch.log, torch.log1p, torch.tanh, torch.sigmoid, torch.sign, torch.floor,
                   torch.round, torch.frac, torch.erfinv, torch.lgamma, torch.digamma, torch.reciprocal, torch.rsqrt,
                   torch.erf, torch.atan, torch.nan_to_num, torch.signbit, torch.isposinf):
            with torch.no_grad():
                exp = fn(x)
                act = fn(x.to(OCL)).cpu()
            torch.testing.assert_close(act, exp, equal_nan=True, msg=lambda m, f=fn, d=dt: f"{f.__name__} {d}: {m}")


@native
def test_round_half_to_even_and_digamma_poles():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 1e20, -2.0, 0.0, -0.0, -1.0])
    assert torch.equal(torch.round(x.to(OCL)).cpu(), torch.round(x))
    d = torch.digamma(torch.tensor([0.0, -0.0, -1.0, -2.5, 1.0, 10.0, 1e20]).to(OCL)).cpu()
    torch.testing.assert_close(d, torch.digamma(torch.tensor([0.0, -0.0, -1.0, -2.5, 1.0, 10.0, 1e20])), equal_nan=True)
    e = torch.tensor([-1.0, 1.0, 1.5, -1.5, 0.0, 0.999999])
    torch.testing.assert_close(torch.erfinv(e.to(OCL)).cpu(), torch.erfinv(e), equal_nan=True)


@native
def test_integer_edge_cases():
    a = torch.tensor([-128, 127, 0, -1], dtype=torch.int8)
    assert torch.equal(torch.abs(a.to(OCL)).cpu(), torch.abs(a))  # abs(-128) wraps to -128 as on the CPU
    assert torch.equal(torch.neg(a.to(OCL)).cpu(), torch.neg(a))
    assert torch.equal((~a.to(OCL)).cpu(), ~a)
    b = torch.tensor([True, False])
    assert torch.equal((~b.to(OCL)).cpu(), ~b)
    with pytest.raises(RuntimeError, match="Negation"):
        -b.to(OCL)
    with pytest.raises(NotImplementedError):
        torch.frac(torch.ones(3, dtype=torch.int64, device=OCL))
    with pytest.raises(RuntimeError):
        torch.isposinf(torch.ones(3, device=OCL), out=torch.empty(3, device=OCL))  # non-bool out
