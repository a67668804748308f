"""Factories on ocl, differential against the CPU: arange, linspace, logspace,
full, eye, zeros/ones/empty_like, torch.tensor(data), tril/triu_indices.

All run under the no_fallback fixture, so a CPU fallback fails the test.
"""

import warnings

import pytest
import torch

from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id

pytestmark = pytest.mark.usefixtures("no_fallback")

OCL = "ocl"
NUM_DTYPES = [d for d in ALL_DTYPES if d != torch.bool]


def close(ocl, cpu, dtype, ulps=1, absolute=False):
    """Equal for integers; within `ulps` units in the last place for floats
    (the CPU's vectorised loops round some values differently). absolute:
    ulps of the largest magnitude (arange's rounding is relative to it)."""
    ocl = ocl.cpu()
    assert ocl.dtype == cpu.dtype and ocl.shape == cpu.shape, (ocl.dtype, cpu.dtype, ocl.shape, cpu.shape)
    if not dtype.is_floating_point:
        assert torch.equal(ocl, cpu), (ocl, cpu)
        return
    a, b = ocl.double(), cpu.double()
    mag = b.abs().clamp_min(b.abs().max().item() if absolute and b.numel() else torch.finfo(dtype).tiny)
    tol = torch.finfo(dtype).eps * mag * ulps
    assert ((a - b).abs() <= tol).all(), (a[(a - b).abs() > tol], b[(a - b).abs() > tol])


@pytest.mark.parametrize("dtype", NUM_DTYPES, ids=dtype_id)
def test_arange_matches_cpu(dtype):
    cases = [(0, 10, 1), (3, 50, 7), (10, -5, -2), (0, 1, 1)]
    if dtype.is_floating_point:
        cases += [(0, 1, 0.1), (-1.5, 2.25, 0.25), (0, 3, 0.3), (1, 2.0, 1 / 3)]
    if dtype not in (torch.int8, torch.uint8):
        cases += [(-100, 100, 3)]
    if dtype in (torch.uint8,):
        cases = [c for c in cases if min(c[0], c[1]) >= 0]
    for start, end, step in cases:
        c = torch.arange(start, end, step, dtype=dtype)
        o = torch.arange(start, end, step, dtype=dtype, device=OCL)
        assert o.device.type == "ocl"
        close(o, c, dtype, absolute=True)
    close(torch.arange(17, dtype=dtype, device=OCL), torch.arange(17, dtype=dtype), dtype)


def test_arange_default_dtypes_and_sizes():
    for args in [(5,), (2.5,), (0, 5, 0.5), (1, 4), (0, 0.9, 0.3), (0.0, 1.0, 0.1), (-1, 1, 0.2)]:
        c = torch.arange(*args)
        o = torch.arange(*args, device=OCL)
        assert o.dtype == c.dtype and o.shape == c.shape, args
        close(o, c, c.dtype, absolute=True)
    # float step rounding decides the size exactly as on the CPU
    for start, end, step in [(0, 1, 0.1), (1, 1.3, 0.1), (0, 0.6, 0.2), (-0.3, 0.3, 0.1)]:
        assert torch.arange(start, end, step, device=OCL).numel() == torch.arange(start, end, step).numel()
    big = torch.arange(2**40, 2**40 + 1000, 3, dtype=torch.int64)
    close(torch.arange(2**40, 2**40 + 1000, 3, dtype=torch.int64, device=OCL), big, torch.int64)
    assert torch.arange(0, device=OCL).numel() == 0


def test_arange_out_resize_and_strided():
    out = torch.empty(0, device=OCL)
    torch.arange(0, 7, out=out)
    close(out, torch.arange(0, 7, dtype=torch.float32), torch.float32)
    out = torch.empty(3, device=OCL, dtype=torch.int32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.arange(0, 10, 2, out=out)
    assert any("does not match the computed number of elements" in str(x.message) for x in w)
    close(out, torch.arange(0, 10, 2, dtype=torch.int32), torch.int32)
    # a strided out of the right size keeps its strides
    base = torch.zeros(10, device=OCL)
    view = base[::2]
    torch.arange(1, 6, out=view)
    assert torch.equal(base.cpu(), torch.tensor([1.0, 0, 2, 0, 3, 0, 4, 0, 5, 0]))


def test_arange_errors_like_cpu():
    for args, msg in [((0, 10, -1), "upper bound and lower bound inconsistent with step sign"),
                      ((10, 0, 1), "upper bound and lower bound inconsistent with step sign"),
                      ((0, 10, 0), "step must be nonzero"),
                      ((0, float("inf")), "unsupported range")]:
        for dev in ("cpu", OCL):
            with pytest.raises(RuntimeError, match=msg):
                torch.arange(*args, device=dev)
    for dev in ("cpu", OCL):
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            torch.arange(3, dtype=torch.bool, device=dev)


@pytest.mark.parametrize("dtype", NUM_DTYPES, ids=dtype_id)
def test_linspace_matches_cpu(dtype):
    cases = [(0, 10, 7), (-3, 4, 9), (0, 1, 2), (5, 5, 4), (2, 100, 33), (0, 1, 1), (3, 9, 0)]
    if dtype.is_floating_point:
        cases += [(-1.5, 2.25, 50), (0.1, 0.7, 1001), (10, -10, 17), (1e-3, 3.0, 255)]
    if dtype == torch.uint8:
        cases = [c for c in cases if min(c[0], c[1]) >= 0]
    for start, end, steps in cases:
        c = torch.linspace(start, end, steps, dtype=dtype)
        o = torch.linspace(start, end, steps, dtype=dtype, device=OCL)
        # the CPU computes each value with one scalar formula: exact match expected
        close(o, c, dtype, ulps=0)
    # a strided out with the right numel keeps its shape (as on the CPU); a wrong size is resized
    out, cout = torch.empty(3, 4, device=OCL, dtype=dtype).t(), torch.empty(3, 4, dtype=dtype).t()
    torch.linspace(0, 11, 12, dtype=dtype, out=out)
    torch.linspace(0, 11, 12, dtype=dtype, out=cout)
    close(out, cout, dtype, ulps=0)
    out = torch.empty(2, device=OCL, dtype=dtype)
    torch.linspace(0, 11, 12, dtype=dtype, out=out)
    close(out, torch.linspace(0, 11, 12, dtype=dtype), dtype, ulps=0)


@pytest.mark.parametrize("dtype", NUM_DTYPES, ids=dtype_id)
def test_logspace_matches_cpu(dtype):
    cases = [(0, 3, 4, 10.0), (0, 1, 5, 2.0), (1, 2, 1, 10.0), (0, 2, 0, 10.0)]
    if dtype.is_floating_point:
        cases += [(-2, 2, 41, 10.0), (0.5, 3.5, 17, 3.0), (-1, 1, 100, 2.0)]
    if dtype in (torch.int32, torch.int64, torch.float32, torch.float64):
        cases += [(0, 9, 10, 10.0)]
    for start, end, steps, base in cases:
        c = torch.logspace(start, end, steps, base=base, dtype=dtype)
        o = torch.logspace(start, end, steps, base=base, dtype=dtype, device=OCL)
        close(o, c, dtype, ulps=4)  # the device's pow may differ from glibc's in the last bits


def test_linspace_logspace_errors_like_cpu():
    for dev in ("cpu", OCL):
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            torch.linspace(0, 1, -1, device=dev)
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            torch.logspace(0, 1, -1, device=dev)
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            torch.linspace(0, 1, 5, dtype=torch.bool, device=dev)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_full_eye_zeros_ones_like(dtype):
    v = True if dtype == torch.bool else (3.5 if dtype.is_floating_point else 7)
    assert torch.equal(torch.full((3, 4), v, dtype=dtype, device=OCL).cpu(), torch.full((3, 4), v, dtype=dtype))
    assert torch.equal(torch.full((), v, dtype=dtype, device=OCL).cpu(), torch.full((), v, dtype=dtype))
    for n, m in [(4, None), (3, 5), (5, 2), (0, 3), (1, 1)]:
        c = torch.eye(n, dtype=dtype) if m is None else torch.eye(n, m, dtype=dtype)
        o = torch.eye(n, dtype=dtype, device=OCL) if m is None else torch.eye(n, m, dtype=dtype, device=OCL)
        assert torch.equal(o.cpu(), c), (n, m)
    out = torch.full((6, 8), 9, dtype=dtype, device=OCL)[::2, ::2]  # strided out, right size
    torch.eye(3, 4, dtype=dtype, out=out)
    assert torch.equal(out.cpu(), torch.eye(3, 4, dtype=dtype))
    x = torch.empty(2, 3, dtype=dtype, device=OCL)
    assert torch.equal(torch.zeros_like(x).cpu(), torch.zeros(2, 3, dtype=dtype))
    assert torch.equal(torch.ones_like(x).cpu(), torch.ones(2, 3, dtype=dtype))
    assert torch.equal(torch.zeros(2, 0, 3, dtype=dtype, device=OCL).cpu(), torch.zeros(2, 0, 3, dtype=dtype))
    assert torch.equal(torch.ones(5, dtype=dtype, device=OCL).cpu(), torch.ones(5, dtype=dtype))
    e = torch.empty_like(x)
    assert e.device.type == "ocl" and e.shape == x.shape and e.dtype == dtype
    assert torch.equal(x.new_zeros(4).cpu(), torch.zeros(4, dtype=dtype))
    assert torch.equal(x.new_ones((2, 2)).cpu(), torch.ones(2, 2, dtype=dtype))
    assert torch.equal(torch.full_like(x, v).cpu(), torch.full((2, 3), v, dtype=dtype))


def test_eye_errors_like_cpu():
    for dev in ("cpu", OCL):
        with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
            torch.eye(-1, device=dev)
        with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
            torch.eye(2, -2, device=dev)


def test_tensor_from_python_data():
    for data, dtype in [([1, 2, 3], None), ([[1.5, 2.5], [3.5, -4.0]], None), ([True, False], None),
                        ([1, 2, 300], torch.int16), ([0.1, 0.2], torch.float64), ([[1, 2], [3, 4]], torch.bfloat16),
                        (3.25, None), ([], None), ([[1, 2]], torch.uint8), ([1, -2], torch.int8),
                        ([1.5, 2.0], torch.float16)]:
        c = torch.tensor(data, dtype=dtype)
        o = torch.tensor(data, dtype=dtype, device=OCL)
        assert o.device.type == "ocl"
        assert o.dtype == c.dtype and torch.equal(o.cpu(), c), data
    o = torch.as_tensor([1, 2, 3], device=OCL)
    assert torch.equal(o.cpu(), torch.tensor([1, 2, 3]))


@pytest.mark.parametrize("upper", [False, True], ids=["tril", "triu"])
def test_tri_indices_match_cpu(upper):
    fn = torch.triu_indices if upper else torch.tril_indices
    cases = [(3, 3, 0), (4, 6, 1), (6, 4, -2), (5, 5, -10), (5, 5, 10), (0, 3, 0), (3, 0, 0), (1, 1, 0),
             (7, 3, 2), (3, 7, -1), (40, 31, 5), (31, 40, -7)]
    for row, col, off in cases:
        for dtype in (torch.int64, torch.int32):
            c = fn(row, col, off, dtype=dtype)
            o = fn(row, col, off, dtype=dtype, device=OCL)
            assert o.dtype == dtype and torch.equal(o.cpu(), c), (row, col, off, dtype)
    for dev in ("cpu", OCL):
        with pytest.raises(RuntimeError, match="row must be non-negative, got-1"):
            fn(-1, 3, device=dev)
        with pytest.raises(RuntimeError, match="col must be non-negative"):
            fn(3, -1, device=dev)
        with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
            fn(3, 3, dtype=torch.float32, device=dev)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=dtype_id)
def test_rand_factories_are_native(dtype):
    """rand/randn/randint with generator= compose empty + uniform_/normal_/random_."""
    g = torch.Generator(device=OCL).manual_seed(3)
    if dtype.is_floating_point:
        a = torch.rand(100, dtype=dtype, device=OCL, generator=g).cpu()
        assert a.dtype == dtype and (a >= 0).all() and (a < 1).all()
        b = torch.randn(2, 50, dtype=dtype, device=OCL, generator=g).cpu()
        assert b.shape == (2, 50) and torch.isfinite(b).all()
        g.manual_seed(3)
        assert torch.equal(torch.rand(100, dtype=dtype, device=OCL, generator=g).cpu(), a)
        assert torch.equal(torch.randn(2, 50, dtype=dtype, device=OCL, generator=g).cpu(), b)
        assert torch.rand_like(torch.empty(3, dtype=dtype, device=OCL)).device.type == "ocl"
        assert torch.randn_like(torch.empty(3, dtype=dtype, device=OCL)).device.type == "ocl"
    c = torch.randint(2, 9, (1000,), dtype=dtype, device=OCL, generator=g).cpu()
    assert c.dtype == dtype and (c >= 2).all() and (c < 9).all() and c.unique().numel() == 7
    d = torch.randint(5, (300,), device=OCL).cpu()
    assert d.dtype == torch.int64 and (d >= 0).all() and (d < 5).all()
    e = torch.randint_like(torch.empty(50, dtype=dtype, device=OCL), 3, 6).cpu()
    assert (e >= 3).all() and (e < 6).all()
