"""add / sub / mul / div on ocl against the CPU: values, dtypes, shapes and errors.

Everything these tests touch is native (binary ops, copies, fill, views, .item()),
so they run with the fallback policy 'error', except the few marked otherwise.
"""

import itertools
import warnings

import pytest
import torch

from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id, make_cpu

OCL = "ocl"
OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
INPLACE = {"add": torch.Tensor.add_, "sub": torch.Tensor.sub_, "mul": torch.Tensor.mul_, "div": torch.Tensor.div_}
OPERATORS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}

native = pytest.mark.usefixtures("no_fallback")


def small(shape, dtype, seed=0):
    """Values small enough that no int8 product overflows; uint8 non-negative."""
    return make_cpu(shape, dtype, low=-10, high=11, seed=seed)


def divisor(shape, dtype, seed=1):
    """Non-zero divisors (division by zero has its own test)."""
    t = small(shape, dtype, seed)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=torch.bool)
    return torch.where(t == 0, torch.ones((), dtype=dtype), t)


def to_ocl(x):
    return x.to(OCL) if isinstance(x, torch.Tensor) else x


def assert_match(actual, expected):
    assert isinstance(actual, torch.Tensor)
    assert actual.device.type == "ocl", actual.device
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True)


def check(fn, *args, **kwargs):
    """Run fn on CPU args and on the same args moved to ocl: same result, or the same error type."""
    cpu_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    ocl_args = [to_ocl(a) for a in args]
    try:
        expected = fn(*cpu_args, **kwargs)
    except Exception as e:  # the CPU refuses: ocl must refuse too
        with pytest.raises(type(e)):
            fn(*ocl_args, **kwargs)
        return None
    actual = fn(*ocl_args, **kwargs)
    assert_match(actual, expected)
    return actual


# --------------------------------------------------------------------------- tensor op tensor


@native
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_tensor_tensor(op, dtype):
    a = small((5, 7), dtype)
    b = divisor((5, 7), dtype) if op == "div" else small((5, 7), dtype, seed=1)
    check(OPS[op], a, b)
    check(OPERATORS[op], a, b)


@native
@pytest.mark.parametrize("dtype", INT_DTYPES + [torch.bool], ids=dtype_id)
def test_integer_division_is_true_division(dtype):
    a = small((40,), dtype)
    b = divisor((40,), dtype)
    out = check(torch.div, a, b)
    assert out.dtype == torch.get_default_dtype()
    assert torch.div(torch.tensor([7, -7], dtype=torch.int64).to(OCL), 2).cpu().tolist() == [3.5, -3.5]


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.uint8],
                         ids=dtype_id)
def test_division_by_zero(dtype):
    a = torch.tensor([1, 0, 3, 0, 2], dtype=dtype)
    if dtype.is_signed:
        a = torch.tensor([1, 0, -3, 0, 2], dtype=dtype)
    b = torch.tensor([0, 0, 0, 1, 0], dtype=dtype)
    check(torch.div, a, b)


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_special_float_values(op, dtype):
    vals = [0.0, -0.0, 1.0, -2.5, float("inf"), float("-inf"), float("nan")]
    a = torch.tensor([x for x in vals for _ in vals], dtype=dtype)
    b = torch.tensor([y for _ in vals for y in vals], dtype=dtype)
    check(OPS[op], a, b)


@native
def test_uint8_wraps_around_like_cpu():
    a = torch.tensor([200, 250, 3, 0, 255], dtype=torch.uint8)
    b = torch.tensor([100, 10, 5, 1, 255], dtype=torch.uint8)
    for op in ("add", "sub", "mul"):
        check(OPS[op], a, b)


@native
def test_bool_arithmetic_semantics():
    a = torch.tensor([True, True, False, False])
    b = torch.tensor([True, False, True, False])
    assert check(torch.add, a, b).dtype == torch.bool  # logical or
    assert check(torch.mul, a, b).dtype == torch.bool  # logical and
    check(torch.add, a, b, alpha=True)


# --------------------------------------------------------------------------- Python scalars


SCALARS = [2, -3, 2.5, True, 0]


@native
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_tensor_python_scalar(op, dtype, scalar):
    a = small((4, 6), dtype)
    check(OPS[op], a, scalar)
    check(OPERATORS[op], a, scalar)
    check(lambda t, s: getattr(t, op)(s), a, scalar)


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8, torch.bfloat16], ids=dtype_id)
def test_reflected_python_scalar_native(dtype):
    a = small((4, 6), dtype)
    check(lambda t: 3 + t, a)
    check(lambda t: 2.5 * t, a)
    check(lambda t: True + t, a)


@pytest.mark.usefixtures("fallback_warn")
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=dtype_id)
def test_reflected_python_scalar_sub_div(dtype):
    # rsub / reciprocal may use the CPU fallback; only correctness is checked here.
    a = divisor((4, 6), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda t: 3 - t, a)
        check(lambda t: 2.5 - t, a)
        check(lambda t: 6 / t, a)


@native
def test_large_python_scalars():
    a = torch.tensor([1, 2, 3], dtype=torch.int64)
    check(torch.add, a, 2**40)
    check(torch.mul, a, -(2**33))
    f = torch.tensor([1.0, 2.0])
    check(torch.mul, f, 1e300)  # overflows float32 to inf on both
    check(torch.add, torch.tensor([1.0], dtype=torch.float64), 1e300)


# --------------------------------------------------------------------------- 0-dim tensor operands


@native
@pytest.mark.parametrize("where", ["ocl", "cpu"])
@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.int32, torch.float64), (torch.float16, torch.float32),
                                    (torch.int8, torch.int64), (torch.uint8, torch.int8), (torch.bool, torch.int32),
                                    (torch.bfloat16, torch.float64), (torch.float32, torch.int64)],
                         ids=lambda d: dtype_id(d))
@pytest.mark.parametrize("op", list(OPS))
def test_zero_dim_operand(op, dtypes, where):
    t_dt, s_dt = dtypes
    a = small((3, 4), t_dt)
    s = torch.tensor(3, dtype=s_dt) if s_dt != torch.bool else torch.tensor(True)
    s_dev = s.to(OCL) if where == "ocl" else s  # a CPU 0-dim tensor is allowed with ocl tensors
    for fn in (lambda x, y: OPS[op](x, y), lambda x, y: OPS[op](y, x)):
        try:
            expected = fn(a, s)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                fn(a.to(OCL), s_dev)
            continue
        actual = fn(a.to(OCL), s_dev)
        assert_match(actual, expected)


@native
@pytest.mark.parametrize("op", list(OPS))
def test_zero_dim_with_zero_dim(op):
    for a, b in [(torch.tensor(3.5), torch.tensor(2)), (torch.tensor(6, dtype=torch.int16), torch.tensor(4, dtype=torch.int8)),
                 (torch.tensor(1.5, dtype=torch.float16), torch.tensor(2.0, dtype=torch.bfloat16))]:
        r = check(OPS[op], a, b)
        assert r.dim() == 0
        assert r.item() == OPS[op](a, b).item()
    # ocl 0-dim with CPU 0-dim: the result lives on ocl
    r = torch.add(torch.tensor(2.0).to(OCL), torch.tensor(3.0))
    assert r.device.type == "ocl" and r.item() == 5.0


@native
def test_cpu_zero_dim_first_operand_gives_ocl_result():
    s = torch.tensor(10.0)
    a = torch.arange(4.0)
    for op in OPS:
        r = OPS[op](s, a.to(OCL) + 1)
        assert_match(r, OPS[op](s, a + 1))


def test_non_scalar_cpu_operand_raises():
    a = torch.ones(3, device=OCL)
    with pytest.raises(RuntimeError, match="device"):
        torch.add(a, torch.ones(3))
    with pytest.raises(RuntimeError, match="device"):
        torch.mul(torch.ones(3), a)
    with pytest.raises(RuntimeError, match="device"):
        a.add_(torch.ones(3))


def test_cross_device_operands_raise(two_devices):
    d0, d1 = two_devices
    with pytest.raises(RuntimeError, match="device"):
        torch.ones(3, device=d0) + torch.ones(3, device=d1)
    with pytest.raises(RuntimeError, match="device"):
        torch.add(torch.ones(3, device=d0), torch.ones(3, device=d0), out=torch.empty(3, device=d1))


@native
def test_ops_on_second_device(two_devices):
    _, d1 = two_devices
    a, b = small((6, 5), torch.float32), small((6, 5), torch.float32, seed=2)
    for op in OPS:
        r = OPS[op](a.to(d1), b.to(d1))
        assert r.device == d1
        torch.testing.assert_close(r.cpu(), OPS[op](a, b))
    x = a.to(d1)
    x.mul_(3).add_(b.to(d1), alpha=2)
    torch.testing.assert_close(x.cpu(), a * 3 + 2 * b)


# --------------------------------------------------------------------------- broadcasting


SHAPE_PAIRS = [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5, 1, 3), (1, 6, 1)), ((1,), (3, 3)), ((4, 1), ()),
               ((0, 3), (1, 3)), ((2, 1, 0), (2, 5, 1)), ((7,), (7,))]


@native
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("op", list(OPS))
def test_broadcasting(op, shapes):
    sa, sb = shapes
    for dt in (torch.float32, torch.int32):
        a = small(sa, dt)
        b = divisor(sb, dt) if op == "div" else small(sb, dt, seed=1)
        check(OPS[op], a, b)
        check(OPS[op], b, a)


@native
def test_broadcasting_mismatch_raises():
    check(torch.add, torch.ones(3, 4), torch.ones(5))


# --------------------------------------------------------------------------- type promotion


PAIR_IDS = [f"{dtype_id(a)}-{dtype_id(b)}" for a, b in itertools.product(ALL_DTYPES, ALL_DTYPES)]


@native
@pytest.mark.parametrize("dt1,dt2", list(itertools.product(ALL_DTYPES, ALL_DTYPES)), ids=PAIR_IDS)
@pytest.mark.parametrize("op", ["add", "div"])
def test_type_promotion_all_pairs(op, dt1, dt2):
    a = small((3, 5), dt1)
    b = divisor((3, 5), dt2) if op == "div" else small((3, 5), dt2, seed=1)
    r = check(OPS[op], a, b)
    assert r.dtype == OPS[op](a, b).dtype


NAMED_PAIRS = [(torch.int32, torch.float32), (torch.int64, torch.float16), (torch.bool, torch.int32), (torch.bool, torch.uint8),
               (torch.float16, torch.float32), (torch.float16, torch.bfloat16), (torch.bfloat16, torch.int64),
               (torch.bfloat16, torch.int8), (torch.uint8, torch.int8), (torch.int8, torch.int16), (torch.float64, torch.int8),
               (torch.uint8, torch.bool), (torch.float32, torch.float64)]


@native
@pytest.mark.parametrize("dt1,dt2", NAMED_PAIRS, ids=[f"{dtype_id(a)}-{dtype_id(b)}" for a, b in NAMED_PAIRS])
@pytest.mark.parametrize("op", ["sub", "mul"])
def test_type_promotion_named_pairs(op, dt1, dt2):
    a = small((3, 5), dt1)
    b = small((3, 5), dt2, seed=1)
    check(OPS[op], a, b)
    check(OPS[op], b, a)


@native
def test_promotion_examples():
    assert check(torch.add, torch.ones(2, dtype=torch.uint8), torch.ones(2, dtype=torch.int8)).dtype == torch.int16
    assert check(torch.add, torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.bfloat16)).dtype == torch.float32
    assert check(torch.add, torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.int64)).dtype == torch.bfloat16
    assert check(torch.add, torch.ones(2, dtype=torch.int32), 2.5).dtype == torch.float32
    assert check(torch.add, torch.ones(2, dtype=torch.int32), torch.tensor(2.5, dtype=torch.float64)).dtype == torch.float64
    assert check(torch.add, torch.ones(2, dtype=torch.float16), torch.tensor(2.5, dtype=torch.float64)).dtype == torch.float16
    assert check(torch.add, torch.ones(2, dtype=torch.int8), torch.tensor(1000)).dtype == torch.int8


# --------------------------------------------------------------------------- alpha


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int32,
                                   torch.int64, torch.uint8], ids=dtype_id)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha(op, dtype):
    a, b = small((4, 5), dtype), small((4, 5), dtype, seed=1)
    check(OPS[op], a, b, alpha=2)
    check(OPS[op], a, b, alpha=-3)
    check(OPS[op], a, 3, alpha=2)
    check(lambda x, y: INPLACE[op](x, y, alpha=2), a, b)
    if dtype.is_floating_point:
        check(OPS[op], a, b, alpha=0.5)
        check(OPS[op], a, 1.5, alpha=-0.25)
        check(lambda x, y: INPLACE[op](x, y, alpha=1.5), a, b)


@native
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8], ids=dtype_id)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_float_alpha_with_int_tensors_raises(op, dtype):
    a, b = small((3,), dtype).to(OCL), small((3,), dtype, seed=1).to(OCL)
    with pytest.raises(RuntimeError, match="alpha"):
        torch.add(a.cpu(), b.cpu(), alpha=1.5) if op == "add" else torch.sub(a.cpu(), b.cpu(), alpha=1.5)
    with pytest.raises(RuntimeError, match="alpha"):
        OPS[op](a, b, alpha=1.5)
    with pytest.raises(RuntimeError, match="alpha"):
        INPLACE[op](a, b, alpha=1.5)
    with pytest.raises(RuntimeError, match="alpha"):
        OPS[op](a, b, alpha=0.5, out=torch.empty(3, dtype=dtype, device=OCL))


@native
def test_alpha_int_with_float_tensor_and_mixed():
    check(torch.add, small((4,), torch.int32), small((4,), torch.float32), alpha=2.5)  # result is float: allowed
    check(torch.add, small((4,), torch.float16), small((4,), torch.int64), alpha=3)
    check(torch.add, torch.tensor([True, False]), torch.tensor([True, True]), alpha=True)
    check(torch.add, small((4,), torch.int32), small((4,), torch.int32), alpha=True)  # CPU raises: bool alpha


# --------------------------------------------------------------------------- in-place


@native
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_same_dtype(op, dtype):
    a = small((4, 6), dtype)
    b = divisor((4, 6), dtype) if op == "div" else small((4, 6), dtype, seed=1)
    a_ocl = a.to(OCL)
    ptr = a_ocl.data_ptr()
    try:
        INPLACE[op](a.clone(), b)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            INPLACE[op](a_ocl, b.to(OCL))
        return
    r = INPLACE[op](a_ocl, b.to(OCL))
    assert r is a_ocl and a_ocl.data_ptr() == ptr
    assert_match(a_ocl, INPLACE[op](a.clone(), b))


@native
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_python_operators(op):
    a = small((3, 4), torch.float32)
    b = divisor((3, 4), torch.float32)
    x_c, x_o = a.clone(), a.to(OCL)
    ptr = x_o.data_ptr()
    for rhs in (b, 2, 0.5):
        if op == "add":
            x_c += rhs
            x_o += to_ocl(rhs)
        elif op == "sub":
            x_c -= rhs
            x_o -= to_ocl(rhs)
        elif op == "mul":
            x_c *= rhs
            x_o *= to_ocl(rhs)
        else:
            x_c /= rhs
            x_o /= to_ocl(rhs)
    assert x_o.data_ptr() == ptr
    assert_match(x_o, x_c)


@native
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int8], ids=dtype_id)
def test_inplace_int_with_float_result_raises(dtype):
    a = small((4,), dtype).to(OCL)
    before = a.cpu()
    for fn in (lambda x: x.add_(1.5), lambda x: x.mul_(0.5), lambda x: x.sub_(torch.ones(4, device=x.device)),
               lambda x: x.div_(2), lambda x: x.div_(x), lambda x: x.__iadd__(2.5)):
        with pytest.raises(RuntimeError, match="can't be cast"):
            fn(a.cpu())  # CPU reference raises
        with pytest.raises(RuntimeError, match="can't be cast"):
            fn(a)
    torch.testing.assert_close(a.cpu(), before, rtol=0, atol=0)  # nothing written


@native
def test_inplace_allowed_downcasts():
    check(lambda x, y: x.add_(y), small((4,), torch.float16), small((4,), torch.float32))
    check(lambda x, y: x.add_(y), small((4,), torch.float32), small((4,), torch.int64))
    check(lambda x, y: x.mul_(y), small((4,), torch.int8), small((4,), torch.int64))
    check(lambda x, y: x.add_(y), small((4,), torch.int32), small((4,), torch.bool))
    check(lambda x, y: x.add_(y), small((4,), torch.bool), small((4,), torch.int32))  # CPU raises


@native
def test_inplace_broadcast_that_changes_shape_raises():
    a = torch.ones(3, device=OCL)
    b = torch.ones(2, 3, device=OCL)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.ones(3).add_(torch.ones(2, 3))
    for fn in (torch.Tensor.add_, torch.Tensor.sub_, torch.Tensor.mul_, torch.Tensor.div_):
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            fn(a, b)
    torch.testing.assert_close(a.cpu(), torch.ones(3))
    # broadcasting the other operand is fine
    c = torch.ones(2, 3, device=OCL)
    c.add_(torch.arange(3.0).to(OCL))
    torch.testing.assert_close(c.cpu(), torch.ones(2, 3) + torch.arange(3.0))


@native
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_non_contiguous_self(op):
    base = small((6, 8), torch.float32)
    b = divisor((4, 3), torch.float32)
    c, o = base.clone(), base.to(OCL)
    INPLACE[op](c.t()[2:6, ::2], b)
    INPLACE[op](o.t()[2:6, ::2], b.to(OCL))
    assert_match(o, c)  # only the view's elements changed


@native
def test_inplace_with_self_as_other():
    check(lambda x: x.add_(x), small((5,), torch.float32))
    check(lambda x: x.mul_(x.t()), small((4, 4), torch.int32))  # same memory, other strides: CPU raises


@native
def test_inplace_partial_overlap_raises_like_cpu():
    check(lambda x: x[1:].add_(x[:-1]), torch.arange(10.0))


# --------------------------------------------------------------------------- out=


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_out_correct_size(op, dtype):
    a = small((4, 5), dtype)
    b = divisor((4, 5), dtype) if op == "div" else small((4, 5), dtype, seed=1)
    res_dt = OPS[op](a, b).dtype if not (op == "sub" and dtype == torch.bool) else torch.bool
    out_o = torch.empty(4, 5, dtype=res_dt, device=OCL)
    ptr = out_o.data_ptr()
    out_c = torch.empty(4, 5, dtype=res_dt)
    try:
        OPS[op](a, b, out=out_c)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            OPS[op](a.to(OCL), b.to(OCL), out=out_o)
        return
    r = OPS[op](a.to(OCL), b.to(OCL), out=out_o)
    assert r is out_o and out_o.data_ptr() == ptr
    assert_match(out_o, out_c)


@native
@pytest.mark.parametrize("op", list(OPS))
def test_out_empty_is_resized_without_warning(op):
    a, b = small((3, 4), torch.float32), divisor((3, 4), torch.float32)
    out = torch.empty(0, device=OCL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OPS[op](a.to(OCL), b.to(OCL), out=out)
    assert_match(out, OPS[op](a, b))
    assert out.is_contiguous()


@native
@pytest.mark.parametrize("op", list(OPS))
def test_out_wrong_size_is_resized_with_cpu_warning(op):
    a, b = small((3, 4), torch.float32), divisor((3, 4), torch.float32)
    out_c = torch.empty(5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        OPS[op](a, b, out=out_c)
    cpu_warned = any("resized" in str(x.message) for x in w)
    out_o = torch.empty(5, device=OCL)
    if cpu_warned:
        with pytest.warns(UserWarning, match="resized"):
            OPS[op](a.to(OCL), b.to(OCL), out=out_o)
    else:
        OPS[op](a.to(OCL), b.to(OCL), out=out_o)
    assert_match(out_o, out_c)
    # bigger than needed, too
    out_o = torch.empty(100, device=OCL)
    with pytest.warns(UserWarning, match="resized") if cpu_warned else warnings.catch_warnings():
        OPS[op](a.to(OCL), b.to(OCL), out=out_o)
    assert_match(out_o, OPS[op](a, b))


@native
@pytest.mark.parametrize("op", list(OPS))
def test_out_non_contiguous_and_offset(op):
    a, b = small((4, 5), torch.float32), divisor((4, 5), torch.float32)
    # transposed out keeps its strides (same as CPU)
    oc = torch.zeros(5, 4).t()
    oo = torch.zeros(5, 4, device=OCL).t()
    OPS[op](a, b, out=oc)
    OPS[op](a.to(OCL), b.to(OCL), out=oo)
    assert oo.stride() == oc.stride()
    assert_match(oo, oc)
    # out at a storage offset inside a bigger buffer: neighbours untouched
    big_c, big_o = torch.full((30,), -7.0), torch.full((30,), -7.0, device=OCL)
    OPS[op](a, b, out=big_c[5:25].view(4, 5))
    OPS[op](a.to(OCL), b.to(OCL), out=big_o[5:25].view(4, 5))
    assert_match(big_o, big_c)


@native
def test_out_dtype_rules():
    i = small((4,), torch.int32)
    j = divisor((4,), torch.int32)
    check(lambda x, y: torch.add(x, y, out=torch.empty(4, dtype=torch.float64, device=x.device)), i, j)  # upcast ok
    check(lambda x, y: torch.div(x, y, out=torch.empty(4, dtype=torch.int32, device=x.device)), i, j)  # float->int: raises
    check(lambda x, y: torch.add(x, y, out=torch.empty(4, dtype=torch.float16, device=x.device)), i, small((4,), torch.float32))
    check(lambda x, y: torch.mul(x, y, out=torch.empty(4, dtype=torch.bool, device=x.device)), i, j)  # int->bool: raises


def test_out_on_wrong_device_raises():
    a = torch.ones(3, device=OCL)
    with pytest.raises(RuntimeError):
        torch.add(a, a, out=torch.empty(3))


@native
@pytest.mark.parametrize("op", list(OPS))
def test_out_aliasing_input(op):
    a, b = small((6,), torch.float32), divisor((6,), torch.float32)
    check(lambda x, y: OPS[op](x, y, out=x), a, b)
    check(lambda x, y: OPS[op](x, y, out=y), a, b)


# --------------------------------------------------------------------------- layouts of inputs


LAYOUTS = {
    "transposed": lambda t: t.t(),
    "step": lambda t: t[::2, 1::2],
    "offset": lambda t: t[2:, 3:],
    "expanded": lambda t: t[1:2].expand(4, t.shape[1]),
    "permuted_view": lambda t: t.view(2, 4, 5).permute(2, 1, 0)[0],
}


@native
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_non_contiguous_inputs(op, dtype, layout):
    base_a = small((8, 5), dtype)
    base_b = divisor((8, 5), dtype) if op == "div" else small((8, 5), dtype, seed=1)
    f = LAYOUTS[layout]
    a, b = f(base_a), f(base_b)
    expected = OPS[op](a, b)
    actual = OPS[op](f(base_a.to(OCL)), f(base_b.to(OCL)))
    assert_match(actual, expected)
    # mixed: one contiguous one not
    actual = OPS[op](f(base_a.to(OCL)), b.contiguous().to(OCL))
    assert_match(actual, expected)


# --------------------------------------------------------------------------- empty tensors


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=dtype_id)
@pytest.mark.parametrize("op", list(OPS))
def test_empty_tensors(op, dtype):
    e = torch.empty(0, 3, dtype=dtype)
    check(OPS[op], e, e)
    check(OPS[op], e, torch.ones(3, dtype=dtype))
    check(OPS[op], e, 2)
    check(lambda x, y: INPLACE[op](x, y), e, e)
    out_dt = torch.get_default_dtype() if op == "div" else dtype
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "An output with one or more elements was resized")
        check(lambda x, y: OPS[op](x, y, out=torch.empty(5, device=x.device, dtype=out_dt)), e, e)


# --------------------------------------------------------------------------- bool subtraction


@native
def test_sub_bool_raises_like_cpu():
    a = torch.tensor([True, False, True])
    b = torch.tensor([False, False, True])
    for fn in (lambda x, y: x - y, lambda x, y: torch.sub(x, y), lambda x, y: x.sub_(y),
               lambda x, y: x - 1, lambda x, y: x - True, lambda x, y: torch.sub(x, y, out=torch.empty_like(x))):
        with pytest.raises(RuntimeError, match="Subtraction"):
            fn(a.clone(), b)
        with pytest.raises(RuntimeError, match="Subtraction"):
            fn(a.to(OCL), b.to(OCL))
    # a bool tensor with a non-bool tensor is fine
    check(torch.sub, a, torch.tensor([1, 2, 3]))


# --------------------------------------------------------------------------- larger sizes


@native
@pytest.mark.parametrize("op", list(OPS))
def test_large(op):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(1 << 20, generator=g)
    b = torch.randn(1 << 20, generator=g) + 3
    assert_match(OPS[op](a.to(OCL), b.to(OCL)), OPS[op](a, b))


# --------------------------------------------------------------------------- exactness


@native
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_float_results_are_exactly_rounded(op, dtype):
    # one IEEE rounding in the op (or in float32 and once more to the storage type, as the CPU does)
    g = torch.Generator().manual_seed(4)
    a = (torch.randn(4096, generator=g, dtype=torch.float64) * 1000).to(dtype)
    b = (torch.randn(4096, generator=g, dtype=torch.float64) * 1000).to(dtype)
    r = OPS[op](a.to(OCL), b.to(OCL)).cpu()
    torch.testing.assert_close(r, OPS[op](a, b), rtol=0, atol=0)


@native
def test_float64_uses_double_scalars():
    a = torch.tensor([1.0, 2.0, 3.0, 1e-3], dtype=torch.float64)
    for op in OPS:
        for s in (0.1, 1 / 3, 1e-300, 2.0**60 + 1):
            torch.testing.assert_close(OPS[op](a.to(OCL), s).cpu(), OPS[op](a, s), rtol=0, atol=0)
    torch.testing.assert_close(torch.add(a.to(OCL), a.to(OCL), alpha=0.1).cpu(), torch.add(a, a, alpha=0.1), rtol=0, atol=1e-16)


@native
def test_int64_arithmetic_is_exact():
    a = torch.tensor([2**53 + 1, 2**62 + 3, -(2**62) - 7, 2**40 + 1, 9007199254740993], dtype=torch.int64)
    b = torch.tensor([1, 1, 3, 2**20 + 1, -1], dtype=torch.int64)
    for op in ("add", "sub"):
        assert torch.equal(OPS[op](a.to(OCL), b.to(OCL)).cpu(), OPS[op](a, b))
        assert torch.equal(OPS[op](a.to(OCL), 2**53 + 1).cpu(), OPS[op](a, 2**53 + 1))
        assert torch.equal(OPS[op](a.to(OCL), b.to(OCL), alpha=2**30 + 1).cpu(), OPS[op](a, b, alpha=2**30 + 1))
    assert torch.equal(torch.mul(a[3:].to(OCL), b[3:].to(OCL)).cpu(), torch.mul(a[3:], b[3:]))
    assert torch.equal(torch.mul(a[:2].to(OCL), 1).cpu(), a[:2])
    assert torch.equal(torch.div(a.to(OCL), b.to(OCL)).cpu(), torch.div(a, b))  # float32 true division


@native
def test_int32_and_int16_wrap_free_paths_match():
    a = torch.tensor([2**30, -(2**30), 2**31 - 1, 12345], dtype=torch.int32)
    assert torch.equal((a.to(OCL) - 1).cpu(), a - 1)
    assert torch.equal(torch.add(a.to(OCL), 1, alpha=-1).cpu(), a - 1)
    h = torch.tensor([30000, -30000, 123], dtype=torch.int16)
    assert torch.equal((h.to(OCL) + torch.tensor(2**20).to(OCL)).cpu(), h + torch.tensor(2**20))  # stays int16 (wraps)
