"""Position embeddings from compiled graphs (python/torch_ocl/compile/positions.py):
embedding(weight, arange(start, end)) becomes a slice of the weight checked
on the host: eager's values bit for bit, forward and backward, for every
start of one compiled graph; eager's IndexError out of range; lookups a
slice cannot stand for are left alone."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl

OCL = "ocl"

pytestmark = pytest.mark.usefixtures("fresh_dynamo")


class Positions(nn.Module):
    def __init__(self, n=12, d=8, **kw):
        super().__init__()
        self.tok = nn.Embedding(20, d)
        self.pos = nn.Embedding(n, d, **kw)
        self.out = nn.Linear(d, 5)

    def forward(self, idx, start: int):
        t = idx.shape[-1]
        return self.out(self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_position_lookup_is_a_slice_and_equals_eager(dtype):
    torch.manual_seed(0)
    m = Positions().to(OCL, dtype)
    step = torch.compile(m, backend="ocl", dynamic=True)
    with torch.no_grad():
        for start, t in ((0, 4), (3, 1), (5, 7), (11, 1), (0, 12)):
            idx = torch.randint(0, 20, (2, t), device=OCL)
            assert torch.equal(step(idx, start).cpu(), m(idx, start).cpu()), (start, t)
    assert torch_ocl.compile_stats()["position_slices"] >= 1


@pytest.mark.parametrize("start, t", [(12, 1), (9, 4), (-1, 2)])
def test_out_of_range_raises_as_eager_does(start, t):
    m = Positions().to(OCL)
    step = torch.compile(m, backend="ocl", dynamic=True)
    with torch.no_grad():
        step(torch.zeros(1, 2, dtype=torch.long, device=OCL), 0)
        idx = torch.zeros(1, t, dtype=torch.long, device=OCL)
        with pytest.raises(IndexError, match="index out of range in self"):
            m(idx, start)
        with pytest.raises(IndexError, match="index out of range in self"):
            step(idx, start)
    assert torch_ocl.compile_stats()["position_slices"] >= 1


def test_training_gradients_equal_eager():
    torch.manual_seed(0)
    base = Positions()
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    step = torch.compile(mc, backend="ocl", dynamic=True)
    for start, t in ((2, 5), (0, 3)):
        idx = torch.randint(0, 20, (3, t), device=OCL)
        F.cross_entropy(me(idx, start).flatten(0, 1), idx.flatten() % 5).backward()
        F.cross_entropy(step(idx, start).flatten(0, 1), idx.flatten() % 5).backward()
    for (name, pe), pc in zip(me.named_parameters(), mc.parameters()):
        torch.testing.assert_close(pc.grad.cpu(), pe.grad.cpu(), rtol=1e-6, atol=1e-7, msg=name)
    assert torch_ocl.compile_stats()["position_slices"] >= 1


def test_left_alone_where_a_slice_differs():
    torch.manual_seed(0)
    w = torch.randn(12, 4, device=OCL)

    def returned(start: int):  # the lookup is an output: a caller may write into it
        return F.embedding(torch.arange(start, start + 3, device=OCL), w)

    def strided(start: int):
        return F.embedding(torch.arange(start, start + 6, 2, device=OCL), w) * 2

    def padded(start: int):  # padding_idx changes the backward
        return F.embedding(torch.arange(start, start + 3, device=OCL), w, padding_idx=0) * 2

    with torch.no_grad():
        for f in (returned, strided, padded):
            torch.testing.assert_close(torch.compile(f, backend="ocl")(2).cpu(), f(2).cpu(), rtol=0, atol=0)
    assert torch_ocl.compile_stats()["position_slices"] == 0
    out = torch.compile(returned, backend="ocl")(1)
    out.zero_()
    assert w.abs().sum().item() > 0  # not a view of the weight
