"""Fractional max pooling (2-D and 3-D) on ocl (adapter/aten/ocl_fractional_pool_ops.cpp):
with the same random samples, output, indices and gradient equal the CPU's
exactly, batched and unbatched, float32 and float64; ties keep the CPU's
(first) index."""

import pytest
import torch
import torch.nn.functional as F

native = pytest.mark.usefixtures("no_fallback")


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,kernel,out", [((2, 3, 11, 13), (3, 2), (5, 6)), ((3, 9, 9), (2, 2), (4, 4)),
                                              ((2, 3, 7, 8, 9), (2, 3, 2), (3, 4, 5)), ((2, 6, 6, 6), (3, 3, 3), (1, 2, 2))])
def test_fractional_max_pool_matches_cpu(dtype, shape, kernel, out):
    g = torch.Generator().manual_seed(0)
    nd = len(kernel)
    x = torch.randn(*shape, generator=g, dtype=dtype)
    n = shape[0] if len(shape) == nd + 2 else 1
    s = torch.rand(n, shape[-nd - 1], nd, generator=g, dtype=dtype)
    f = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    xd, xc = x.to("ocl").requires_grad_(), x.clone().requires_grad_()
    o, i = f(xd, kernel, output_size=out, return_indices=True, _random_samples=s.to("ocl"))
    r, ri = f(xc, kernel, output_size=out, return_indices=True, _random_samples=s)
    assert torch.equal(o.cpu(), r) and torch.equal(i.cpu(), ri)
    gout = torch.randn(r.shape, generator=g, dtype=dtype)
    o.backward(gout.to("ocl"))
    r.backward(gout)
    assert torch.equal(xd.grad.cpu(), xc.grad)


@native
def test_ties_keep_the_first_index():
    x = torch.zeros(1, 1, 6, 6)
    s = torch.full((1, 1, 2), 0.5)
    o, i = F.fractional_max_pool2d(x.to("ocl"), 2, output_size=3, return_indices=True, _random_samples=s.to("ocl"))
    r, ri = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True, _random_samples=s)
    assert torch.equal(i.cpu(), ri)


def test_pool_too_large_raises_as_the_cpu():
    x, s = torch.randn(1, 1, 4, 4), torch.rand(1, 1, 2)
    with pytest.raises(RuntimeError) as cpu:
        F.fractional_max_pool2d(x, 3, output_size=3, _random_samples=s)
    with pytest.raises(RuntimeError) as dev:
        F.fractional_max_pool2d(x.to("ocl"), 3, output_size=3, _random_samples=s.to("ocl"))
    assert str(dev.value) == str(cpu.value)
