"""View ops on ocl: same shapes/strides/offsets as the CPU, writes land in the base.

Views must be native (never the CPU fallback: a fallback view would alias a CPU
copy and writes would be lost), so every test runs with the fallback policy 'error'.
"""

import pytest
import torch

from conftest import ALL_DTYPES, dtype_id, make_cpu

pytestmark = pytest.mark.usefixtures("no_fallback")

OCL = "ocl"


def assert_same(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


def assert_same_view(ocl_view, cpu_view):
    assert ocl_view.device.type == "ocl"
    assert ocl_view.shape == cpu_view.shape
    assert ocl_view.stride() == cpu_view.stride()
    assert ocl_view.storage_offset() == cpu_view.storage_offset()
    assert ocl_view.dtype == cpu_view.dtype
    assert_same(ocl_view, cpu_view)


def _write_expand_copy(x):
    # arange is not native: build the row on the CPU and copy it over
    row = torch.arange(6).to(x.dtype).to(x.device)
    x[1:3].copy_(row.view(1, 6).expand(2, 6))


def _write_unbind(x):
    for i, r in enumerate(x.unbind(0)):
        r.fill_(i)


def _write_setitem(x):
    x[1] = 5
    x[:, 2] = torch.arange(4).to(x.dtype).to(x.device)
    x[2:, 4:] = 7


# name -> in-place write through a view of a (4, 6) base. Each must give the same base as on the CPU.
WRITES = {
    "slice_fill": lambda x: x[2:5].fill_(1),
    "slice_step_fill": lambda x: x[:, 1::2].fill_(1),
    "t_add": lambda x: x.t().add_(1),
    "view_mul": lambda x: x.view(3, 8).mul_(2),
    "view_flat_mul": lambda x: x.view(-1)[5:17].mul_(3),
    "reshape_view_sub": lambda x: x.reshape(2, 12).sub_(1),
    "unfold_fill": lambda x: x.unfold(1, 2, 2)[:, :, 1].fill_(9),  # non-overlapping windows
    "unfold_mul": lambda x: x.unfold(0, 2, 2).mul_(2),
    "diagonal_zero": lambda x: x.diagonal().zero_(),
    "diagonal_offset_fill": lambda x: x.diagonal(offset=2).fill_(3),
    "diagonal_neg_offset_fill": lambda x: x.diagonal(offset=-1).fill_(3),
    "expand_copy": _write_expand_copy,
    "as_strided_fill": lambda x: x.as_strided((2, 2), (7, 2), 1).fill_(8),
    "as_strided_add": lambda x: torch.as_strided(x, (3,), (5,), 3).add_(4),
    "select_fill": lambda x: x.select(1, 2).fill_(3),
    "select_neg_fill": lambda x: x.select(0, -1).fill_(2),
    "narrow_add": lambda x: x.narrow(0, 1, 2).add_(10),
    "narrow_dim1_zero": lambda x: x.narrow(1, 3, 2).zero_(),
    "unbind": _write_unbind,
    "split_mul": lambda x: x.split(2, dim=1)[1].mul_(-1),
    "split_sizes_fill": lambda x: x.split([1, 3], dim=0)[1].fill_(6),
    "chunk_fill": lambda x: x.chunk(3, dim=1)[2].fill_(4),
    "tensor_split_fill": lambda x: x.tensor_split(3, dim=0)[1].fill_(4),
    "squeeze_unsqueeze": lambda x: x.unsqueeze(0).unsqueeze(2).squeeze(0)[1].fill_(5),
    "view_squeeze_add": lambda x: x.view(1, 4, 1, 6).squeeze().add_(1),
    "squeeze_dim_add": lambda x: x[1:2].squeeze(0).add_(2),
    "permute_fill": lambda x: x.view(2, 2, 6).permute(2, 0, 1)[1].fill_(4),
    "permute_add": lambda x: x.view(2, 2, 6).permute(1, 2, 0).add_(1),
    "movedim_fill": lambda x: x.view(2, 2, 6).movedim(2, 0)[3:].fill_(2),
    "transpose_slice_fill": lambda x: x.transpose(0, 1)[2:4, 1:3].fill_(7),
    "mT_zero": lambda x: x.mT[0].zero_(),
    "detach_add": lambda x: x.detach().add_(1),
    "alias_mul": lambda x: torch.ops.aten.alias(x).mul_(3),
    "flatten_unflatten_fill": lambda x: x.flatten().unflatten(0, (3, 8))[1].fill_(1),
    "view_as_fill": lambda x: x.view_as(torch.empty(24, device=x.device))[::5].fill_(2),
    "unsqueeze_slice_fill": lambda x: x[0].unsqueeze(0)[:, 2:4].fill_(0),
    "setitem": _write_setitem,
    "view_of_view_of_view": lambda x: x[1:, 1:].t()[1:][:, ::2].fill_(9),
    "iadd_slice": lambda x: x[..., 1::2].__iadd__(1),
}

WRITE_DTYPES = [torch.float32, torch.float16, torch.int64, torch.uint8]


@pytest.mark.parametrize("name", list(WRITES))
@pytest.mark.parametrize("dtype", WRITE_DTYPES, ids=dtype_id)
def test_write_through_view_is_visible_in_base(dtype, name):
    base_cpu = make_cpu((4, 6), dtype, low=0, high=20)
    base_ocl = base_cpu.to(OCL)
    ptr = base_ocl.data_ptr()
    WRITES[name](base_cpu)
    WRITES[name](base_ocl)
    assert base_ocl.data_ptr() == ptr  # written in place, not replaced
    assert_same(base_ocl, base_cpu)


@pytest.mark.parametrize("dtype", [torch.bool, torch.bfloat16, torch.float64, torch.int8], ids=dtype_id)
def test_fill_through_views_other_dtypes(dtype):
    base_cpu = make_cpu((4, 6), dtype, low=0, high=20)
    base_ocl = base_cpu.to(OCL)
    for f in (WRITES["slice_step_fill"], WRITES["diagonal_zero"], WRITES["select_fill"], WRITES["permute_fill"],
              WRITES["unbind"], WRITES["as_strided_fill"]):
        f(base_cpu)
        f(base_ocl)
        assert_same(base_ocl, base_cpu)


# --------------------------------------------------------------------------- views themselves

# name -> view of a (4, 6) base (read only)
VIEWS = {
    "slice": lambda x: x[1:3],
    "slice_step": lambda x: x[::2, 1::3],
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(1, 0),
    "permute3": lambda x: x.view(2, 2, 6).permute(2, 0, 1),
    "view": lambda x: x.view(8, 3),
    "view_flat": lambda x: x.view(-1),
    "expand": lambda x: x[1:2].expand(5, 6),
    "expand_new_dims": lambda x: x[2].expand(3, 2, 6),
    "squeeze": lambda x: x[1:2].squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "select": lambda x: x.select(1, 4),
    "narrow": lambda x: x.narrow(1, 2, 3),
    "unfold_overlap": lambda x: x.unfold(1, 3, 1),
    "unfold_step": lambda x: x.unfold(0, 2, 1),
    "diagonal": lambda x: x.diagonal(1),
    "as_strided_overlap": lambda x: x.as_strided((3, 3), (1, 1), 2),
    "alias": lambda x: torch.ops.aten.alias(x),
    "detach": lambda x: x.detach(),
    "unbind_last": lambda x: x.unbind(1)[-1],
    "split_last": lambda x: x.split(4, dim=1)[-1],
    "real_on_real_dtype": lambda x: x.view(6, 4)[:, 1:].t(),
}


@pytest.mark.parametrize("name", list(VIEWS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.bool], ids=dtype_id)
def test_view_metadata_and_values_match_cpu(dtype, name):
    base_cpu = make_cpu((4, 6), dtype)
    base_ocl = base_cpu.to(OCL)
    v_ocl = VIEWS[name](base_ocl)
    v_cpu = VIEWS[name](base_cpu)
    assert_same_view(v_ocl, v_cpu)
    assert v_ocl.untyped_storage().data_ptr() == base_ocl.untyped_storage().data_ptr()
    assert v_ocl._is_view() == v_cpu._is_view()


def test_views_of_offset_base():
    big_cpu = make_cpu((50,), torch.float32)
    big_ocl = big_cpu.to(OCL)
    base_cpu, base_ocl = big_cpu[2:26].view(4, 6), big_ocl[2:26].view(4, 6)
    for name, f in VIEWS.items():
        assert_same_view(f(base_ocl), f(base_cpu))


# --------------------------------------------------------------------------- data_ptr arithmetic


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_data_ptr_arithmetic(dtype):
    x = torch.zeros(10, 7, dtype=dtype, device=OCL)
    es = x.element_size()
    assert es == torch.empty(0, dtype=dtype).element_size()
    p = x.data_ptr()
    assert p != 0
    assert x.untyped_storage().data_ptr() == p
    assert x.untyped_storage().nbytes() == 70 * es
    flat = x.view(-1)
    assert flat[1:].data_ptr() == p + es
    assert flat[1:].storage_offset() == 1
    assert x[3:].data_ptr() == p + 3 * 7 * es
    assert x[3:].storage_offset() == 21
    assert x[:, 2:].data_ptr() == p + 2 * es
    assert x.narrow(1, 5, 2).storage_offset() == 5
    assert x[2, 3].data_ptr() == p + (2 * 7 + 3) * es
    assert x.t()[4:].data_ptr() == p + 4 * es
    assert x.diagonal(1).data_ptr() == p + es
    assert x.as_strided((2,), (1,), 11).data_ptr() == p + 11 * es
    # views of views accumulate offsets
    assert x[3:][1:, 2:].storage_offset() == 4 * 7 + 2
    assert x[3:][1:, 2:].data_ptr() == p + (4 * 7 + 2) * es


def test_data_ptr_distinct_allocations_do_not_overlap():
    a = torch.empty(1000, device=OCL)
    b = torch.empty(1000, device=OCL)
    pa, pb = a.data_ptr(), b.data_ptr()
    assert pa + 4000 <= pb or pb + 4000 <= pa


def test_write_via_offset_view_lands_at_right_address():
    x = torch.zeros(16, device=OCL)
    v = x[5:]
    v[0] = 1.0
    v[10] = 2.0
    expected = torch.zeros(16)
    expected[5] = 1.0
    expected[15] = 2.0
    assert_same(x, expected)


# --------------------------------------------------------------------------- set_ / resize_ (native)


def test_set_shares_storage():
    x = torch.arange(12.0).to(OCL)
    y = torch.empty(0, device=OCL)
    y.set_(x.untyped_storage(), 2, (2, 3), (3, 1))
    assert y.data_ptr() == x.data_ptr() + 2 * 4
    assert_same(y, torch.arange(12.0)[2:8].view(2, 3))
    y.fill_(-1)
    expected = torch.arange(12.0)
    expected[2:8] = -1
    assert_same(x, expected)
    z = torch.empty(0, device=OCL).set_(x)
    assert z.data_ptr() == x.data_ptr() and z.shape == x.shape


def test_resize_keeps_prefix():
    x = torch.arange(6.0).to(OCL)
    x.resize_(2, 3)
    assert_same(x, torch.arange(6.0).view(2, 3))
    x.resize_(10)
    assert x.shape == (10,)
    assert_same(x[:6], torch.arange(6.0))
    x.resize_(0)
    assert x.numel() == 0


# --------------------------------------------------------------------------- errors the CPU raises


def test_invalid_views_raise_like_cpu():
    cpu = torch.zeros(4, 6)
    ocl = cpu.to(OCL)
    for f in (
        lambda x: x.t().view(24),  # incompatible strides
        lambda x: x.view(5, 5),
        lambda x: x.select(0, 4),
        lambda x: x.narrow(1, 4, 3),
        lambda x: x.expand(3, 6),
        lambda x: x.unfold(1, 7, 1),
        lambda x: x.as_strided((2,), (1,), -1),
    ):
        with pytest.raises((RuntimeError, IndexError)):
            f(cpu)
        with pytest.raises((RuntimeError, IndexError)):
            f(ocl)


def test_inplace_on_overlapping_view_raises_like_cpu():
    cpu = torch.zeros(1, 6)
    ocl = cpu.to(OCL)
    with pytest.raises(RuntimeError, match="memory location"):
        cpu.expand(3, 6).add_(1)
    with pytest.raises(RuntimeError, match="memory location"):
        ocl.expand(3, 6).add_(1)
