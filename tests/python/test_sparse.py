"""Sparse tensors (COO, CSR, CSC, BSR, BSC) on ocl: made by Tensor.to or
to_sparse, moved back by .cpu(), their parts read on ocl, and their ops run
on the CPU through the counted fallback (no ocl kernels for these layouts
yet)."""

import warnings

import pytest
import torch
import torch_ocl

OCL = "ocl"


@pytest.fixture(autouse=True)
def silent_fallback():
    old = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("silent")
    torch_ocl.reset_fallback_stats()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        yield
    torch_ocl.set_fallback_policy(old)


def _sparse(layout, shape=(6, 8), blocksize=None):
    g = torch.Generator().manual_seed(0)
    d = torch.randn(shape, generator=g)
    d[torch.rand(shape, generator=g) < 0.5] = 0
    return d.to_sparse(layout=layout, blocksize=blocksize)


@pytest.mark.parametrize("layout,blocksize", [(torch.sparse_csr, None), (torch.sparse_csc, None),
                                              (torch.sparse_bsr, (2, 2)), (torch.sparse_bsc, (2, 4))])
def test_round_trip_and_parts(layout, blocksize):
    s = _sparse(layout, blocksize=blocksize)
    o = s.to(OCL)
    assert o.device.type == "ocl" and o.layout == layout and o._nnz() == s._nnz()
    assert o.values().device.type == "ocl"
    torch.testing.assert_close(o.values().cpu(), s.values(), rtol=0, atol=0)
    back = o.cpu()
    assert back.layout == layout
    torch.testing.assert_close(back.to_dense(), s.to_dense(), rtol=0, atol=0)
    assert not torch_ocl.fallback_stats()  # moving and reading parts are not fallbacks


def test_sampled_addmm_and_mm_reduce_match_cpu():
    a = _sparse(torch.sparse_csr, (5, 7))
    m1, m2 = torch.randn(5, 3), torch.randn(3, 7)
    got = torch.sparse.sampled_addmm(a.to(OCL), m1.to(OCL), m2.to(OCL), beta=0.5, alpha=2.0)
    assert got.device.type == "ocl" and got.layout == torch.sparse_csr
    want = torch.sparse.sampled_addmm(a, m1, m2, beta=0.5, alpha=2.0)
    torch.testing.assert_close(got.cpu().to_dense(), want.to_dense())
    x, y = _sparse(torch.sparse_csr, (4, 6)), torch.randn(6, 3)
    for reduce in ("sum", "mean", "amax", "amin"):
        got = torch.sparse.mm(x.to(OCL), y.to(OCL), reduce)
        assert got.device.type == "ocl"
        torch.testing.assert_close(got.cpu(), torch.sparse.mm(x, y, reduce))
    stats = torch_ocl.fallback_stats()
    assert stats["aten::sparse_sampled_addmm"] == 1 and stats["aten::_sparse_mm_reduce_impl"] == 4


def test_policy_error_forbids_and_writes_land_in_the_ocl_tensor():
    o = _sparse(torch.sparse_csr).to(OCL)
    torch_ocl.set_fallback_policy("error")
    with pytest.raises(NotImplementedError, match="TORCH_OCL_FALLBACK=error"):
        torch.sparse.mm(o, torch.randn(8, 2, device=OCL), "sum")
    torch.testing.assert_close(o.cpu().to_dense(), _sparse(torch.sparse_csr).to_dense(), rtol=0, atol=0)
    torch_ocl.set_fallback_policy("silent")
    # in place
    ret = o.zero_()
    assert ret is o and o.device.type == "ocl"
    torch.testing.assert_close(o.cpu().to_dense(), torch.zeros(6, 8), rtol=0, atol=0)
    # out=, into a sparse ocl tensor of another sparsity pattern
    a = _sparse(torch.sparse_csr, (5, 7))
    m1, m2 = torch.randn(5, 3), torch.randn(3, 7)
    out = _sparse(torch.sparse_csr, (5, 7)).to(OCL)
    torch.sparse.sampled_addmm(a.to(OCL), m1.to(OCL), m2.to(OCL), out=out)
    torch.testing.assert_close(out.cpu().to_dense(), torch.sparse.sampled_addmm(a, m1, m2).to_dense())
    # an out= on the CPU is refused naming the device, as dense ops do
    with pytest.raises(RuntimeError, match="device"):
        torch.sparse.sampled_addmm(a.to(OCL), m1.to(OCL), m2.to(OCL), out=a.clone())


def test_coo_round_trip_to_sparse_and_ops():
    d = torch.tensor([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]])
    s = d.to_sparse()
    o = s.to(OCL)
    assert o.layout == torch.sparse_coo and o.device.type == "ocl"
    assert o._indices().device.type == "ocl" and o._values().device.type == "ocl" and o._nnz() == 3
    torch.testing.assert_close(o.cpu().to_dense(), d, rtol=0, atol=0)
    assert not torch_ocl.fallback_stats()
    # to_sparse of a dense ocl tensor (through the fallback), in both forms
    for got in (d.to(OCL).to_sparse(), d.to(OCL).to_sparse(1)):
        assert got.layout == torch.sparse_coo and got.device.type == "ocl"
        torch.testing.assert_close(got.cpu().to_dense(), d, rtol=0, atol=0)
    y = torch.randn(3, 4)
    torch.testing.assert_close(torch.sparse.mm(o, y.to(OCL)).cpu(), torch.sparse.mm(s, y))
    torch.testing.assert_close((o + o).cpu().to_dense(), 2 * d)
