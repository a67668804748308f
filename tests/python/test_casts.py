"""Casts between every pair of dtypes on ocl against the CPU: float -> int
truncation toward zero, bool conversions (NaN is true), float16/bfloat16
round to nearest even, and out-of-range values where the CPU is defined."""

import itertools

import pytest
import torch

from conftest import ALL_DTYPES, dtype_id

OCL = "ocl"
native = pytest.mark.usefixtures("no_fallback")

# Values every dtype can hold exactly before the cast, chosen to exercise
# truncation (-2.5 -> -2), rounding of 16-bit floats and bool conversion.
BASE = [0.0, 1.0, -1.0, 2.5, -2.5, 3.75, -7.875, 100.0, -100.0, 0.125, 127.0, -128.0, 0.0078125]


def source(dt):
    if dt == torch.bool:
        return torch.tensor([True, False, True, True, False])
    vals = torch.tensor(BASE, dtype=torch.float64)
    if dt == torch.uint8:
        vals = vals.abs()
    return vals.to(dt)


@native
@pytest.mark.parametrize("src", ALL_DTYPES, ids=dtype_id)
def test_cast_every_pair(src):
    x = source(src)
    xo = x.to(OCL)
    for dst in ALL_DTYPES:
        exp = x.to(dst)
        act = xo.to(dst)
        assert act.dtype == dst and act.device.type == "ocl"
        assert torch.equal(act.cpu(), exp), (src, dst, act.cpu(), exp)
        # strided source and a cast into an existing tensor (copy_)
        assert torch.equal(xo[::2].to(dst).cpu(), x[::2].to(dst))
        out = torch.empty(x.shape, dtype=dst, device=OCL)
        out.copy_(xo)
        assert torch.equal(out.cpu(), exp)


@native
def test_float_specials():
    vals = [float("nan"), float("inf"), float("-inf"), -0.0, 65504.0, 65520.0, 1e-8, 3.4e38, 1e39, 2.0**-24, 2.0**-25,
            1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8]
    x64 = torch.tensor(vals, dtype=torch.float64)
    for src, dst in itertools.product((torch.float64, torch.float32, torch.float16, torch.bfloat16), repeat=2):
        x = x64.to(src)
        torch.testing.assert_close(x.to(OCL).to(dst).cpu(), x.to(dst), equal_nan=True, rtol=0, atol=0)
    for src in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        x = x64.to(src)
        assert torch.equal(x.to(OCL).to(torch.bool).cpu(), x.to(torch.bool))  # NaN -> True, -0.0 -> False


@native
def test_float_to_int_truncates_in_range():
    x = torch.tensor([-3.99, -3.5, -0.5, 0.5, 3.5, 3.99, 126.9, -127.9, 1e9, -1e9])
    for dst in (torch.int32, torch.int64):
        assert torch.equal(x.to(OCL).to(dst).cpu(), x.to(dst))
    assert torch.equal(x[:8].to(OCL).to(torch.int8).cpu(), x[:8].to(torch.int8))
    assert torch.equal(x[3:7].to(OCL).to(torch.uint8).cpu(), x[3:7].to(torch.uint8))


@native
def test_integer_wraparound_between_ints():
    x = torch.tensor([300, -300, 2**31 + 5, -(2**40) - 1, 255, 128, -129], dtype=torch.int64)
    for dst in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.bool, torch.float32, torch.float16,
                torch.bfloat16, torch.float64):
        assert torch.equal(x.to(OCL).to(dst).cpu(), x.to(dst)), dst


@native
def test_large_int64_to_float_rounds_like_cpu():
    x = torch.tensor([2**53 + 1, 2**62 + 3, -(2**63), 2**24 + 1, 16777217], dtype=torch.int64)
    for dst in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        assert torch.equal(x.to(OCL).to(dst).cpu(), x.to(dst)), dst
