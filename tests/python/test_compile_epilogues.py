"""GEMM epilogues from compiled graphs (python/torch_ocl/compile/epilogues.py):
relu(addmm) becomes one _addmm_activation, bit for bit eager's values,
forward and backward, 2-D and 3-D inputs; what does not match is left alone."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl

OCL = "ocl"


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shape", [(5, 12), (2, 3, 12), (1, 1, 12)])
def test_relu_of_linear_is_one_gemm_and_equals_eager(shape, dtype):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 7)).to(OCL, dtype)
    x = torch.randn(*shape, device=OCL, dtype=dtype)
    with torch.no_grad():
        ref = m(x)
        got = torch.compile(m, backend="ocl")(x)
    assert torch.equal(got.cpu(), ref.cpu())
    assert torch_ocl.compile_stats()["gemm_epilogues"] == 1


def test_training_gradients_equal_eager():
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    x = torch.randn(6, 8, device=OCL)
    F.cross_entropy(me(x), torch.arange(6, device=OCL) % 3).backward()
    F.cross_entropy(torch.compile(mc, backend="ocl")(x), torch.arange(6, device=OCL) % 3).backward()
    for pe, pc in zip(me.parameters(), mc.parameters()):
        torch.testing.assert_close(pc.grad.cpu(), pe.grad.cpu(), rtol=1e-6, atol=1e-7)
    assert torch_ocl.compile_stats()["gemm_epilogues"] == 2


def test_left_alone_when_the_product_is_used_elsewhere():
    lin = nn.Linear(4, 4).to(OCL)

    def f(x):
        y = lin(x)
        return torch.relu(y) + y  # the product has two users

    x = torch.randn(3, 4, device=OCL)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(f, backend="ocl")(x).cpu(), f(x).cpu())
    assert torch_ocl.compile_stats()["gemm_epilogues"] == 0
