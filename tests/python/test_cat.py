"""torch.cat on ocl (adapter/aten/ocl_shape_ops.cpp, runtime/ops/shape.c):
sources of the output's dtype go in one launch per 4, any layout; mixed
dtypes take a copy each. Against the CPU, exactly (cat moves bytes)."""

import pytest
import torch
from conftest import ocl_kernels_run

OCL = "ocl"


def _check(parts, dim):
    ref = torch.cat(parts, dim)
    got = torch.cat([p.to(OCL) for p in parts], dim)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert torch.equal(got.cpu(), ref)


def _odd(t):  # same values, dims stored in reverse order
    return t.permute(*reversed(range(t.dim()))).contiguous().permute(*reversed(range(t.dim())))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
                                   torch.int8, torch.bool, torch.complex64, torch.complex128])
@pytest.mark.parametrize("nsrc", [2, 4, 5, 9])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_layouts_and_dtypes(dtype, nsrc, dim):
    torch.manual_seed(nsrc)
    parts = []
    for i in range(nsrc):
        size = [3, 4, 5]
        size[dim] = i % 3  # empty parts along dim too
        t = (torch.randn(*size) * 10).to(dtype)
        parts.append(_odd(t) if i % 2 else t)
    _check(parts, dim)


def test_cat_views_offsets_and_broadcast_strides():
    base = torch.randn(10, 8)
    _check([base[2:5, 1:7], base[5:9:2, 0:6]], 0)
    _check([base[:, 1:3], base[:, 5:6], base[:, :0]], 1)
    _check([torch.randn(1, 6).expand(3, 6), base[:2, :6]], 0)  # stride 0
    _check([torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last), torch.randn(2, 2, 4, 5)], 1)
    _check([torch.randn(1, 1, 3), torch.randn(1, 1, 3)], 1)  # size-1 dims
    _check([torch.randn(4, 1, 64), torch.randn(4, 1, 64)], 1)


def test_kv_cache_cat_is_one_launch():
    cache = torch.randn(1, 4, 7, 64, device=OCL)
    new = torch.randn(1, 1, 4, 64, device=OCL).transpose(1, 2)  # a projection's view
    out = torch.empty(1, 4, 8, 64, device=OCL)
    torch.cat([cache, new], 2, out=out)
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        torch.cat([cache, new], 2, out=out)
    assert g.commands() == 1
    cache.normal_()
    new.normal_()
    g.replay()
    assert torch.equal(out.cpu(), torch.cat([cache.cpu(), new.cpu()], 2))


def test_cat_into_strided_out_and_mixed_dtypes():
    out = torch.empty(6, 4, device=OCL).t()
    torch.cat([torch.ones(4, 2, device=OCL), torch.zeros(4, 4, device=OCL)], 1, out=out)
    assert torch.equal(out.cpu(), torch.cat([torch.ones(4, 2), torch.zeros(4, 4)], 1))
    _check([torch.randn(2, 3), torch.randint(0, 5, (2, 3)), torch.ones(1, 3, dtype=torch.bool)], 0)
    _check([torch.randn(2, 3, dtype=torch.float16), torch.randn(2, 3, dtype=torch.bfloat16)], 0)


def _kernels(parts, dim):
    o = [p.to(OCL) for p in parts]
    names = ocl_kernels_run(lambda: torch.cat(o, dim))
    return [n for n in names if n.startswith("tocl_shape_cat")]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int8, torch.bool])
def test_contiguous_runs_take_the_vector_kernel(dtype):
    """Sources that are one contiguous run per outer index (runtime/ops/
    shape.c, cat_runs_layout) take tocl_shape_cat_runs: 16 elements per
    work-item, runs of every length (tails of 1..15, runs shorter than 16,
    empty sources), outer dims of 1 and more; equal to the CPU's bytes."""
    torch.manual_seed(0)
    r = lambda *s: (torch.randn(*s) * 10).to(dtype)  # noqa: E731
    cases = [
        ([r(3, 5, 17), r(3, 2, 17), r(3, 0, 17)], 1),   # outer 3, runs of 85 and 34 elements
        ([r(7, 33), r(7, 1), r(7, 15)], 1),             # the axis innermost: runs of 33, 1, 15
        ([r(40), r(3), r(16)], 0),                      # one dim
        ([r(2, 4, 9, 8), r(2, 4, 1, 8)], 2),            # [2, 4] folds into one outer dim
        ([r(1, 4, 44, 64), r(1, 1, 4, 64).transpose(1, 2)], 2),  # a KV cache and a projection's view
    ]
    for parts, dim in cases:
        _check(parts, dim)
        assert _kernels(parts, dim) == ["tocl_shape_cat_runs"], (parts[0].shape, dim)


def test_layouts_that_are_not_runs_keep_the_element_kernel():
    """Built on the device: .to() would copy a non-dense view dense."""
    torch.manual_seed(1)
    cases = [([torch.randn(4, 6, device=OCL).t(), torch.randn(6, 2, device=OCL)], 1),  # strided along the run
             ([torch.randn(1, 6, device=OCL).expand(3, 6), torch.randn(2, 6, device=OCL)], 0),  # rows of stride 0
             ([torch.randn(3, 4, 5, 2, device=OCL)[..., :1], torch.randn(3, 4, 5, 1, device=OCL)], 2)]  # stride 2
    for parts, dim in cases:
        assert torch.equal(torch.cat(parts, dim).cpu(), torch.cat([p.cpu() for p in parts], dim))
        names = ocl_kernels_run(lambda: torch.cat(parts, dim))
        assert [n for n in names if n.startswith("tocl_shape_cat")] == ["tocl_shape_cat"]
    with pytest.MonkeyPatch.context() as mp:  # the switch
        mp.setenv("TORCH_OCL_CAT_RUNS", "0")
        parts = [torch.randn(3, 5), torch.randn(3, 2)]
        _check(parts, 1)
        assert _kernels(parts, 1) == ["tocl_shape_cat"]
