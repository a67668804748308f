"""Copies between the host and ocl devices, on one device and across two.

Every test compares against the same operation on the CPU. Copies and views
must be native, so every test runs with the fallback policy 'error'.
"""

import itertools

import pytest
import torch

from conftest import ALL_DTYPES, dtype_id, make_cpu

pytestmark = pytest.mark.usefixtures("no_fallback")

OCL = "ocl"


def assert_same(actual, expected):
    """Exact equality of values, dtype, shape (NaN == NaN)."""
    assert actual.device.type == "cpu"
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_round_trip_exact(dtype):
    a = make_cpu((7, 13), dtype)
    d = a.to(OCL)
    assert d.device.type == "ocl" and d.dtype == dtype and d.shape == a.shape
    assert d.is_contiguous()
    assert_same(d.cpu(), a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
def test_round_trip_special_floats(dtype):
    info = torch.finfo(dtype)
    a = torch.tensor(
        [0.0, -0.0, float("inf"), float("-inf"), float("nan"), info.max, info.min, info.tiny, info.eps, 1.0 / 3], dtype=dtype
    )
    b = a.to(OCL).cpu()
    assert_same(b, a)
    # -0.0 keeps its sign bit
    assert torch.signbit(b[1])


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8], ids=dtype_id)
def test_round_trip_int_extremes(dtype):
    info = torch.iinfo(dtype)
    a = torch.tensor([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    assert_same(a.to(OCL).cpu(), a)


# --------------------------------------------------------------------------- layouts


def _layouts(base):
    """Non-contiguous / offset views of a (8, 12) CPU tensor, by name."""
    return {
        "contiguous": base,
        "transposed": base.t(),
        "step_slice": base[:, ::3],
        "step_both": base[1::2, 2::5],
        "offset": base[3:],
        "narrow": base.narrow(1, 4, 5),
        "permuted3d": base.view(2, 4, 12).permute(2, 0, 1),
        "expanded": base[2:3, :].expand(5, 12),
        "expanded_col": base[:, 1:2].expand(8, 6),
        "negative_view_like_flip": base[:, 4:5].t(),  # (1, 8) with stride (1, 12)
    }


LAYOUT_NAMES = list(_layouts(torch.zeros(8, 12)).keys())


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_upload_non_contiguous_source(dtype, layout):
    base = make_cpu((8, 12), dtype)
    src = _layouts(base)[layout]
    d = src.to(OCL)
    assert d.shape == src.shape
    assert_same(d.cpu(), src.contiguous())


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=dtype_id)
def test_download_non_contiguous_device_source(dtype, layout):
    base = make_cpu((8, 12), dtype)
    dbase = base.to(OCL)
    dsrc = _layouts(dbase)[layout]
    csrc = _layouts(base)[layout]
    assert dsrc.stride() == csrc.stride() and dsrc.storage_offset() == csrc.storage_offset()
    assert_same(dsrc.cpu(), csrc.contiguous())
    # into a non-contiguous CPU destination as well
    nd = csrc.dim()
    cdst = torch.zeros(tuple(csrc.shape)[::-1], dtype=dtype).permute(*reversed(range(nd)))
    cdst.copy_(dsrc)
    assert_same(cdst, csrc)


@pytest.mark.parametrize("dst_layout", ["transposed", "step_slice", "offset", "narrow", "permuted3d"])
@pytest.mark.parametrize("direction", ["h2d", "d2d"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.uint8, torch.bool], ids=dtype_id)
def test_copy_into_non_contiguous_device_destination(dtype, direction, dst_layout):
    cpu_base = torch.zeros(8, 12, dtype=dtype)
    ocl_base = cpu_base.to(OCL)
    cpu_dst = _layouts(cpu_base)[dst_layout]
    ocl_dst = _layouts(ocl_base)[dst_layout]
    src = make_cpu(tuple(cpu_dst.shape), dtype, seed=3)
    cpu_dst.copy_(src)
    ocl_dst.copy_(src if direction == "h2d" else src.to(OCL))
    # the write through the view must land in the base, nothing else touched
    assert_same(ocl_base.cpu(), cpu_base)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.bool], ids=dtype_id)
def test_non_contiguous_to_non_contiguous_d2d(dtype):
    a = make_cpu((6, 10), dtype)
    cpu_dst = torch.zeros(10, 12, dtype=dtype)
    ocl_dst = cpu_dst.to(OCL)
    cpu_dst[:, 1::2].t().copy_(a)
    # src: transposed layout on the device; dst: strided, transposed view on the device
    ocl_src = a.t().contiguous().to(OCL).t()  # (6, 10) with strides (1, 6)
    assert not ocl_src.is_contiguous()
    ocl_dst[:, 1::2].t().copy_(ocl_src)
    assert_same(ocl_dst.cpu(), cpu_dst)


# --------------------------------------------------------------------------- storage offsets


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8, torch.float16], ids=dtype_id)
def test_storage_offsets(dtype):
    a = make_cpu((20,), dtype)
    d = a.to(OCL)
    for cpu_v, ocl_v in [
        (a[3:], d[3:]),
        (a.narrow(0, 5, 7), d.narrow(0, 5, 7)),
        (a[17:], d[17:]),
        (a[19:20], d[19:20]),
        (a[1::3], d[1::3]),
    ]:
        assert ocl_v.storage_offset() == cpu_v.storage_offset()
        assert_same(ocl_v.cpu(), cpu_v.contiguous())
        assert_same(ocl_v.clone().cpu(), cpu_v)
    # write at an offset: only the targeted elements change
    c = a.clone()
    c[5:9].copy_(torch.arange(4).to(dtype))
    d[5:9].copy_(torch.arange(4).to(dtype).to(OCL))
    assert_same(d.cpu(), c)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=dtype_id)
def test_h2d_from_offset_cpu_source(dtype):
    a = make_cpu((50,), dtype)
    assert_same(a[7:31].to(OCL).cpu(), a[7:31])
    assert_same(a[7:31:4].to(OCL).cpu(), a[7:31:4])


# --------------------------------------------------------------------------- dtype conversion on the device


def _conv_source(dt1, dt2):
    # float -> uint8 of negative values is implementation-defined in C; avoid it.
    low = 0 if (dt1.is_floating_point and dt2 == torch.uint8) else -50
    return make_cpu((5, 11), dt1, low=low, high=100, seed=7)


@pytest.mark.parametrize(
    "dt1,dt2",
    list(itertools.product(ALL_DTYPES, ALL_DTYPES)),
    ids=[f"{dtype_id(a)}->{dtype_id(b)}" for a, b in itertools.product(ALL_DTYPES, ALL_DTYPES)],
)
def test_d2d_dtype_conversion(dt1, dt2):
    a = _conv_source(dt1, dt2)
    d = a.to(OCL)
    out = d.to(dt2)
    assert out.device == d.device
    assert out.dtype == dt2
    assert_same(out.cpu(), a.to(dt2))


@pytest.mark.parametrize("dt1,dt2", [(torch.float32, torch.float16), (torch.int64, torch.float32), (torch.float64, torch.int8),
                                     (torch.bool, torch.bfloat16), (torch.uint8, torch.int64), (torch.float16, torch.bool)],
                         ids=lambda d: dtype_id(d))
def test_dtype_conversion_non_contiguous(dt1, dt2):
    base = _conv_source(dt1, dt2)
    a = base.t()[1:, ::2]
    d = base.to(OCL).t()[1:, ::2]
    assert_same(d.to(dt2).cpu(), a.to(dt2))
    # into a non-contiguous destination of another dtype
    cdst = torch.zeros(20, 20, dtype=dt2)
    ddst = cdst.to(OCL)
    cdst[2:2 + a.shape[0], 1::5][:, : a.shape[1]].copy_(a)
    ddst[2:2 + a.shape[0], 1::5][:, : a.shape[1]].copy_(d)
    assert_same(ddst.cpu(), cdst)


@pytest.mark.parametrize("dt1,dt2", [(torch.float32, torch.float16), (torch.float32, torch.bfloat16),
                                     (torch.float64, torch.float32), (torch.float64, torch.bfloat16)],
                         ids=lambda d: dtype_id(d))
def test_float_narrowing_rounds_to_nearest_even(dt1, dt2):
    # values that sit exactly between / near two representable values of the narrow type
    n = 4096
    g = torch.Generator().manual_seed(1)
    a = (torch.randn(n, generator=g, dtype=torch.float64) * 100).to(dt1)
    ties = torch.tensor([1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8, 257.0, 259.0, 2049.0, 2051.0,
                         65520.0, 65519.0, 1e-8, -1e-8, 3e38 if dt1 == torch.float32 else 1e300], dtype=dt1)
    a = torch.cat([a, ties, -ties])
    assert_same(a.to(OCL).to(dt2).cpu(), a.to(dt2))


def test_h2d_with_dtype_conversion():
    a = make_cpu((4, 9), torch.float64)
    # .to(device, dtype) with a CPU source
    assert_same(a.to(OCL, torch.float16).cpu(), a.to(torch.float16))
    assert_same(a.to(OCL, torch.int32).cpu(), a.to(torch.int32))
    # copy_ between dtypes across the host boundary, both directions
    dst = torch.empty(4, 9, dtype=torch.bfloat16, device=OCL)
    dst.copy_(a)
    assert_same(dst.cpu(), a.to(torch.bfloat16))
    back = torch.empty(4, 9, dtype=torch.float32)
    back.copy_(a.to(OCL))
    assert_same(back, a.to(torch.float32))


# --------------------------------------------------------------------------- broadcasting copy


@pytest.mark.parametrize("src_dev", ["cpu", "ocl"])
@pytest.mark.parametrize("dtype,src_dtype", [(torch.float32, torch.float32), (torch.int32, torch.int32),
                                             (torch.float32, torch.float16), (torch.int64, torch.uint8),
                                             (torch.bool, torch.bool), (torch.bfloat16, torch.float64)],
                         ids=lambda d: dtype_id(d))
def test_broadcasting_copy(dtype, src_dtype, src_dev):
    m, n = 6, 9
    src = make_cpu((1, n), src_dtype, low=0)
    cpu_dst = torch.zeros(m, n, dtype=dtype)
    cpu_dst.copy_(src)
    ocl_dst = torch.zeros(m, n, dtype=dtype, device=OCL)
    ocl_dst.copy_(src.to(src_dev))
    assert_same(ocl_dst.cpu(), cpu_dst)
    # (n,) -> (m, n), (m, 1) -> (m, n) and 0-dim -> (m, n)
    for s in [src.view(n), make_cpu((m, 1), src_dtype, low=0, seed=5), torch.tensor(3, dtype=src_dtype)]:
        cpu_dst.copy_(s)
        ocl_dst.copy_(s.to(src_dev))
        assert_same(ocl_dst.cpu(), cpu_dst)


def test_broadcasting_copy_into_transposed_destination():
    src = torch.arange(7.0).view(1, 7)
    cpu_dst = torch.zeros(7, 5).t()
    ocl_dst = torch.zeros(7, 5, device=OCL).t()
    cpu_dst.copy_(src)
    ocl_dst.copy_(src.to(OCL))
    assert_same(ocl_dst.cpu(), cpu_dst)


def test_broadcast_copy_shape_mismatch_raises():
    dst = torch.zeros(4, 5, device=OCL)
    with pytest.raises(RuntimeError):
        torch.zeros(4, 5).copy_(torch.zeros(3, 5))  # CPU reference raises too
    with pytest.raises(RuntimeError):
        dst.copy_(torch.zeros(3, 5, device=OCL))
    with pytest.raises(RuntimeError):
        dst.copy_(torch.zeros(3, 5))


# --------------------------------------------------------------------------- two devices


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=dtype_id)
def test_cross_device_copy(two_devices, dtype):
    d0, d1 = two_devices
    a = make_cpu((33, 17), dtype, low=0)
    x0 = a.to(d0)
    x1 = x0.to(d1)
    assert x1.device == d1
    assert x0.device == d0
    assert_same(x1.cpu(), a)
    # back again, non-contiguous source on ocl:1 into a non-contiguous destination on ocl:0
    dst0 = torch.zeros(17, 40, dtype=dtype, device=d0)
    cdst = torch.zeros(17, 40, dtype=dtype)
    dst0[:, 3:36].copy_(x1.t())
    cdst[:, 3:36].copy_(a.t())
    assert_same(dst0.cpu(), cdst)
    assert_same(x1.cpu(), a)  # source untouched


def test_cross_device_copy_with_dtype_conversion_and_broadcast(two_devices):
    d0, d1 = two_devices
    a = make_cpu((1, 12), torch.float64, low=0)
    dst1 = torch.zeros(5, 12, dtype=torch.float16, device=d1)
    dst1.copy_(a.to(d0))
    expected = torch.zeros(5, 12, dtype=torch.float16)
    expected.copy_(a)
    assert_same(dst1.cpu(), expected)
    b = make_cpu((8, 8), torch.int32)
    assert_same(b.to(d1).to(d0, torch.float32).cpu(), b.float())


def test_cross_device_to_preserves_current_device(two_devices):
    d0, d1 = two_devices
    before = torch.ocl.current_device()
    x = torch.arange(10.0).to(d1)
    with torch.ocl.device(1):
        y = x.to(d0)
        assert torch.ocl.current_device() == 1
    assert y.device == d0
    assert torch.ocl.current_device() == before
    assert_same(y.cpu(), torch.arange(10.0))


# --------------------------------------------------------------------------- pinned memory, non_blocking


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=dtype_id)
def test_non_blocking_from_pinned(dtype):
    a = make_cpu((64, 33), dtype, low=0)
    p = torch.empty(a.shape, dtype=dtype, pin_memory=True)
    assert p.is_pinned()
    p.copy_(a)
    p2 = a.pin_memory()
    assert p2.is_pinned()
    d = p.to(OCL, non_blocking=True)
    d2 = torch.empty_like(a, device=OCL)
    d2.copy_(p2, non_blocking=True)
    torch.ocl.synchronize()
    assert_same(d.cpu(), a)
    assert_same(d2.cpu(), a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16], ids=dtype_id)
def test_non_blocking_to_pinned_host(dtype):
    a = make_cpu((128, 7), dtype)
    d = a.to(OCL)
    h = torch.empty(a.shape, dtype=dtype, pin_memory=True)
    h.copy_(d, non_blocking=True)
    torch.ocl.synchronize()
    assert_same(h, a)
    h2 = d.to("cpu", non_blocking=True)
    torch.ocl.synchronize()
    assert_same(h2, a)


def test_non_blocking_from_unpinned_is_still_correct():
    a = torch.randn(1000, generator=torch.Generator().manual_seed(2))
    expected = a.clone()
    d = a.to(OCL, non_blocking=True)
    a.zero_()  # pageable sources must be consumed before to() returns
    torch.ocl.synchronize()
    assert_same(d.cpu(), expected)


def test_pinned_source_reuse_after_sync():
    p = torch.arange(4096, dtype=torch.float32).pin_memory()
    d = p.to(OCL, non_blocking=True)
    torch.ocl.synchronize()
    p.fill_(-1)
    assert_same(d.cpu(), torch.arange(4096, dtype=torch.float32))


# --------------------------------------------------------------------------- edge shapes


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_zero_dim(dtype):
    a = make_cpu((), dtype, low=1)
    d = a.to(OCL)
    assert d.dim() == 0 and d.shape == torch.Size([])
    assert_same(d.cpu(), a)
    assert d.item() == a.item()
    dst = torch.empty((), dtype=dtype, device=OCL)
    dst.copy_(d)
    assert_same(dst.cpu(), a)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 5)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.bool], ids=dtype_id)
def test_empty(dtype, shape):
    a = torch.empty(shape, dtype=dtype)
    d = a.to(OCL)
    assert d.shape == a.shape and d.numel() == 0
    assert_same(d.cpu(), a)
    assert_same(d.to(torch.float64).cpu(), a.to(torch.float64))
    dst = torch.empty(shape, dtype=dtype, device=OCL)
    dst.copy_(d)
    dst.copy_(a)
    assert_same(dst.cpu(), a)


def test_large_tensor():
    n = 4 * 1024 * 1024
    a = torch.randn(n, generator=torch.Generator().manual_seed(0))
    d = a.to(OCL)
    assert_same(d.cpu(), a)
    # device-side conversion and strided readback over the full size
    assert_same(d.to(torch.float16).cpu(), a.to(torch.float16))
    assert_same(d[1::2].cpu(), a[1::2])
    assert d[n - 1].item() == a[n - 1].item()


# --------------------------------------------------------------------------- copy helpers


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=dtype_id)
def test_clone_contiguous_and_new_tensors(dtype):
    a = make_cpu((5, 6), dtype)
    d = a.to(OCL)
    assert_same(d.t().contiguous().cpu(), a.t().contiguous())
    assert d.t().contiguous().is_contiguous()
    assert_same(d.t().clone().cpu(), a.t().clone())
    c = d.clone()
    c.fill_(1)
    assert_same(d.cpu(), a)  # clone does not alias
    assert_same(torch.empty_like(d).copy_(d).cpu(), a)
    assert_same(d.new_empty((5, 6)).copy_(a).cpu(), a)


def test_to_same_device_same_dtype_is_noop():
    d = torch.arange(5.0).to(OCL)
    assert d.to(OCL) is d
    assert d.to("ocl:0", torch.float32) is d
    c = d.to(OCL, copy=True)
    assert c is not d and c.data_ptr() != d.data_ptr()
    assert_same(c.cpu(), d.cpu())


def test_self_copy():
    a = torch.arange(20.0)
    d = a.to(OCL)
    d.copy_(d)
    assert_same(d.cpu(), a)
    d.copy_(d.view(4, 5).view(20))  # another view of the same data
    assert_same(d.cpu(), a)


@pytest.mark.parametrize("direction", ["right", "left"])
def test_partially_overlapping_copy_raises_like_cpu(direction):
    # CPU (TensorIterator's memory-overlap check) refuses a copy whose source and
    # destination partially overlap; the result would depend on the kernel's order.
    a = torch.arange(20.0)
    d = a.to(OCL)
    dst_c, src_c = (a[1:], a[:-1]) if direction == "right" else (a[:-1], a[1:])
    dst_d, src_d = (d[1:], d[:-1]) if direction == "right" else (d[:-1], d[1:])
    with pytest.raises(RuntimeError, match="memory location"):
        dst_c.copy_(src_c)
    with pytest.raises(RuntimeError, match="memory location"):
        dst_d.copy_(src_d)


def test_copy_into_internally_overlapping_destination_raises_like_cpu():
    src = torch.arange(15.0).view(3, 5)
    with pytest.raises(RuntimeError):
        torch.zeros(1, 5).expand(3, 5).copy_(src)
    dst = torch.zeros(1, 5, device=OCL)
    with pytest.raises(RuntimeError):
        dst.expand(3, 5).copy_(src.to(OCL))
    with pytest.raises(RuntimeError):
        dst.expand(3, 5).copy_(src)  # host -> device too
    assert (dst.cpu() == 0).all()


# --------------------------------------------------------------------------- conversion corner cases (well defined on the CPU)


@pytest.mark.parametrize("dt2", [torch.int8, torch.uint8, torch.int16, torch.int32], ids=dtype_id)
@pytest.mark.parametrize("dt1", [torch.int64, torch.int32, torch.int16, torch.uint8], ids=dtype_id)
def test_integer_narrowing_wraps_like_cpu(dt1, dt2):
    # integer -> narrower integer keeps the low bits (two's complement), on the CPU and CUDA alike
    info = torch.iinfo(dt1)
    vals = [0, 1, -1, 127, 128, 200, 255, 256, 300, -129, -200, 40000, -40000, 2**31 - 1, -(2**31), 2**40 + 5]
    vals = [v for v in vals if info.min <= v <= info.max]
    a = torch.tensor(vals, dtype=dt1)
    assert_same(a.to(OCL).to(dt2).cpu(), a.to(dt2))


def test_large_int64_conversions_round_like_cpu():
    a = torch.tensor([2**24 + 1, 2**53 + 1, -(2**53) - 3, 2**62 + 2**40 + 1, 2**63 - 1, -(2**63), 123456789012345],
                     dtype=torch.int64)
    for dt in (torch.float32, torch.float64, torch.bfloat16):
        assert_same(a.to(OCL).to(dt).cpu(), a.to(dt))
    b = torch.tensor([2**53 + 2, -(2**60), 2**62, 1e15 + 0.5], dtype=torch.float64)
    assert_same(b.to(OCL).to(torch.int64).cpu(), b.to(torch.int64))


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=dtype_id)
def test_float_to_bool(dt):
    tiny = torch.finfo(dt).tiny
    a = torch.tensor([0.0, -0.0, 1.0, -2.5, float("nan"), float("inf"), float("-inf"), 0.5, tiny], dtype=dt)
    a = torch.cat([a, a[-1:] / 4])  # a subnormal: non-zero, so True
    assert_same(a.to(OCL).to(torch.bool).cpu(), a.to(torch.bool))


@pytest.mark.parametrize("dt1,dt2", [(torch.float32, torch.float64), (torch.float16, torch.float32), (torch.float16, torch.float64),
                                     (torch.bfloat16, torch.float32), (torch.float64, torch.float32), (torch.float32, torch.float16),
                                     (torch.float32, torch.bfloat16)], ids=lambda d: dtype_id(d))
def test_subnormals_survive_conversion(dt1, dt2):
    # flushing denormals to zero would differ from the CPU
    info = torch.finfo(dt1)
    a = torch.tensor([info.tiny, info.tiny / 2, info.tiny / 8, -info.tiny / 4, info.tiny * 0.75], dtype=torch.float64).to(dt1)
    assert_same(a.to(OCL).cpu(), a)
    assert_same(a.to(OCL).to(dt2).cpu(), a.to(dt2))
    if dt2 in (torch.float16, torch.float32, torch.bfloat16):
        d = torch.finfo(dt2).tiny
        b = torch.tensor([d / 2, d / 4, -d / 8, d * 0.75], dtype=torch.float64).to(dt1)
        assert_same(b.to(OCL).to(dt2).cpu(), b.to(dt2))


def test_nan_payload_and_sign_in_conversion():
    a = torch.tensor([float("nan"), -float("nan"), float("inf"), -float("inf"), -0.0])
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        r = a.to(OCL).to(dt).cpu()
        e = a.to(dt)
        assert_same(r, e)
        assert torch.equal(torch.signbit(r[2:]), torch.signbit(e[2:]))


# --------------------------------------------------------------------------- ordering with queued work


def test_cross_device_copy_sees_queued_work(two_devices):
    # read-after-write: work queued on ocl:0 must be done before ocl:1 reads
    d0, d1 = two_devices
    n = 1 << 22
    a = torch.randn(n, generator=torch.Generator().manual_seed(5))
    x0 = a.to(d0)
    for _ in range(3):
        x0.mul_(2).add_(1)  # queued on ocl:0, not waited for
    y1 = x0.to(d1)
    expected = a.clone()
    for _ in range(3):
        expected.mul_(2).add_(1)
    assert_same(y1.cpu(), expected)


@pytest.mark.parametrize("cast", [None, torch.float64], ids=["same_dtype", "cast"])
def test_cross_device_copy_source_written_afterwards(two_devices, cast):
    # write-after-read: work queued on ocl:0 after the copy must not change what ocl:1 reads
    d0, d1 = two_devices
    n = 1 << 22
    a = torch.randn(n, generator=torch.Generator().manual_seed(5))
    x0 = a.to(d0)
    torch.ocl.synchronize(d0)
    y1 = x0.to(d1) if cast is None else x0.to(d1, cast)
    x0.zero_()  # ordered after the copy in program order
    assert_same(y1.cpu(), a if cast is None else a.to(cast))


def test_cross_device_copy_source_freed_afterwards(two_devices):
    # the source block may be reused on ocl:0 only after ocl:1 has read it
    d0, d1 = two_devices
    n = 1 << 22
    a = torch.randn(n, generator=torch.Generator().manual_seed(6))
    x0 = a.to(d0)
    torch.ocl.synchronize(d0)
    y1 = x0.to(d1)
    del x0
    w = torch.empty(n, device=d0)
    w.fill_(7.0)
    assert_same(y1.cpu(), a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16], ids=dtype_id)
def test_cross_device_non_blocking(two_devices, dtype):
    d0, d1 = two_devices
    a = make_cpu((257, 31), dtype)
    y = a.to(d0).to(d1, non_blocking=True)
    z = torch.empty(31, 257, dtype=dtype, device=d0).t()
    z.copy_(y, non_blocking=True)
    torch.ocl.synchronize(d0)
    torch.ocl.synchronize(d1)
    assert_same(y.cpu(), a)
    assert_same(z.cpu(), a)


def test_download_sees_queued_work():
    a = torch.randn(1 << 20, generator=torch.Generator().manual_seed(6))
    d = a.to(OCL)
    d.mul_(3)
    h = torch.empty(1 << 20, pin_memory=True)
    h.copy_(d, non_blocking=True)
    d.fill_(0)  # queued after the copy: the copy must read the multiplied values
    torch.ocl.synchronize()
    assert_same(h, a * 3)


def test_pinned_source_freed_during_non_blocking_copy():
    # the pinned block must not be handed out again while the copy may still read it
    n = 1 << 22
    a = torch.randn(n, generator=torch.Generator().manual_seed(8))
    d = torch.empty(n, device=OCL)
    p = a.pin_memory()
    d.copy_(p, non_blocking=True)
    del p
    q = torch.empty(n, pin_memory=True)
    q.fill_(-1.0)
    torch.ocl.synchronize()
    assert_same(d.cpu(), a)
