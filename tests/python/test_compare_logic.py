"""Comparisons, logical and selection ops on ocl against the CPU: every dtype
pair's promotion, Tensor and Scalar forms, out= with any dtype, in-place
(results stored as 0/1 in self's dtype), where and masked_fill forms."""

import itertools

import pytest
import torch

from conftest import ALL_DTYPES, FLOAT_DTYPES, make_cpu

OCL = "ocl"
native = pytest.mark.usefixtures("no_fallback")

CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
       "logical_and": torch.logical_and, "logical_or": torch.logical_or, "logical_xor": torch.logical_xor}


def small(shape, dt, seed=0):
    return make_cpu(shape, dt, low=-3, high=4, seed=seed)


def check(fn, *args, **kw):
    dev = [a.to(OCL) if isinstance(a, torch.Tensor) else a for a in args]
    try:
        exp = fn(*args, **kw)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            fn(*dev, **kw)
        return
    act = fn(*dev, **kw)
    assert act.device.type == "ocl" and act.dtype == exp.dtype and act.shape == exp.shape
    torch.testing.assert_close(act.cpu(), exp, equal_nan=True, rtol=0, atol=0)


@native
@pytest.mark.parametrize("op", list(CMP))
def test_compare_all_dtype_pairs(op):
    fn = CMP[op]
    # every dtype pair for two ops (promotion is the iterator's, shared by all); a few pairs for the rest
    pairs = list(itertools.product(ALL_DTYPES, ALL_DTYPES)) if op in ("lt", "logical_xor") else [
        (torch.int32, torch.float32), (torch.uint8, torch.int8), (torch.bool, torch.float16), (torch.int64, torch.bfloat16)]
    for da, db in pairs:
        check(fn, small((3, 4), da), small((3, 4), db, seed=1))
    for dt in ALL_DTYPES:
        a = small((3, 4), dt)
        for s in (0, 1, -2, 1.5, True):
            check(fn, a, s) if op in ("eq", "ne", "lt", "le", "gt", "ge") else check(fn, a, torch.tensor(s))
        check(fn, a.t(), small((4, 1), dt, seed=2).t())  # non-contiguous + broadcast
        check(fn, a[:0], a[:0])
        check(lambda x, y: fn(x, y, out=torch.empty(0, dtype=torch.float32, device=x.device)), a, a.flip(0))
        check(lambda x, y: getattr(x, op + "_")(y), a.clone(), small((3, 4), dt, seed=3))


@native
def test_special_float_comparisons():
    vals = [0.0, -0.0, 1.0, float("inf"), float("-inf"), float("nan")]
    a = torch.tensor([x for x in vals for _ in vals])
    b = torch.tensor([y for _ in vals for y in vals])
    for dt in FLOAT_DTYPES:
        for fn in CMP.values():
            check(fn, a.to(dt), b.to(dt))
    check(torch.isclose, a, b)
    check(lambda x, y: torch.isclose(x, y, equal_nan=True), a, b)
    check(torch.isclose, small((5,), torch.int32), small((5,), torch.int32, seed=1))
    check(torch.logical_not, a)
    check(torch.logical_not, small((5,), torch.int8))
    check(lambda x: torch.logical_not(x, out=torch.empty(0, dtype=torch.int16, device=x.device)), a)
    check(lambda x: x.logical_not_(), a.clone())
    check(lambda x, y: x.logical_and_(y), a.clone(), b)


@native
def test_where_forms():
    g = torch.Generator().manual_seed(0)
    cond = torch.rand(4, 5, generator=g) > 0.5
    for da, db in itertools.product(ALL_DTYPES, [torch.float32, torch.int64, torch.bool, torch.float16]):
        check(torch.where, cond, small((4, 5), da), small((4, 5), db, seed=1))
    a = small((4, 5), torch.float32)
    check(torch.where, cond, a, 2.5)
    check(torch.where, cond, 3, a)
    check(torch.where, cond, 1.0, 0.0)
    check(torch.where, cond[:, :1], a.t().contiguous().t(), small((5,), torch.float32))
    check(lambda c, x: x.where(c, torch.tensor(-1.0)), cond, a)
    check(torch.where, small((4, 5), torch.int32), a, a)  # non-bool condition: RuntimeError on both
    out = torch.empty(0, device=OCL)
    torch.where(cond.to(OCL), a.to(OCL), a.to(OCL) * 2, out=out)
    torch.testing.assert_close(out.cpu(), torch.where(cond, a, a * 2))
    # gradient flows through where
    ac, ao = a.clone().requires_grad_(), a.to(OCL).requires_grad_()
    gc = torch.autograd.grad(torch.where(cond, ac * 2, ac), ac, torch.ones(4, 5))[0]
    go = torch.autograd.grad(torch.where(cond.to(OCL), ao * 2, ao), ao, torch.ones(4, 5, device=OCL))[0]
    torch.testing.assert_close(go.cpu(), gc)


@native
def test_masked_fill():
    g = torch.Generator().manual_seed(1)
    mask = torch.rand(4, 5, generator=g) > 0.5
    for dt in ALL_DTYPES:
        a = small((4, 5), dt)
        for v in (0, 2, -1.5, True):
            check(lambda x, m, v=v: x.masked_fill(m, v), a, mask)
        check(lambda x, m: x.masked_fill(m, torch.tensor(3)), a, mask)
        check(lambda x, m: x.masked_fill_(m[:1], 1), a.clone(), mask)  # broadcast mask
        check(lambda x, m: x.t().masked_fill_(m.t(), 1), a.clone(), mask)
    check(lambda x, m: x.masked_fill(m, torch.ones(2)), small((4, 5), torch.float32), mask)  # non-0-dim value
    check(lambda x, m: x.masked_fill(m.int(), 1), small((4, 5), torch.float32), mask)  # non-bool mask
