"""The CPU fallback keeps layout and aliasing: every op without an ocl kernel
runs on CPU replicas with the same sizes, strides and shared storage, so
layout-dependent CPU code gives the same answer as on the device. linalg_det's
backward asks whether A is contiguous: it ran through the fallback before
linear algebra had ocl kernels, and its layouts stay covered here natively.
Reference: the CPU, same layouts."""

import pytest
import torch
import torch_ocl
from cpu_only_ops import angle


@pytest.fixture(autouse=True)
def silent_fallback():
    old = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("silent")
    yield
    torch_ocl.set_fallback_policy(old)


def strided_copy(a, device):
    """a as a view with column stride 2 and storage offset 1 of a larger buffer on device."""
    b = torch.zeros(a.shape[0], 2 * a.shape[1] + 1, device=device)
    b[:, 1::2] = a.to(device)
    return b[:, 1::2]


@pytest.mark.parametrize("fn", [torch.linalg.det, lambda x: torch.linalg.slogdet(x)[1], torch.logdet,
                                lambda x: torch.linalg.inv(x).sum()])
@pytest.mark.parametrize("layout", ["strided", "transposed", "contiguous"])
def test_linalg_grad_matches_cpu_for_every_layout(fn, layout):
    torch.manual_seed(0)
    a = torch.randn(5, 5)
    a = a @ a.t() + torch.eye(5)  # positive definite: logdet is defined
    if layout == "strided":
        x, y = strided_copy(a, "ocl"), strided_copy(a, "cpu")
    elif layout == "transposed":
        x, y = a.t().contiguous().to("ocl").t(), a.t().contiguous().t()
    else:
        x, y = a.to("ocl"), a.clone()
    x.requires_grad_()
    y.requires_grad_()
    fn(x).backward()
    fn(y).backward()
    # native now (kernels/linalg.cl): equal to the CPU's up to float32 rounding of the LU
    scale = y.grad.abs().max().item()
    torch.testing.assert_close(x.grad.cpu(), y.grad, atol=1e-6 * scale, rtol=1e-4)


def test_replica_keeps_strides_and_offset():
    # an op that returns its input's strides: a fallback result's layout
    base = torch.arange(60.0).reshape(6, 10) - 29.5  # angle: 0 or pi by sign
    dev = base.to("ocl")
    for view in (lambda t: t[1:, 2::3], lambda t: t.t()[3:], lambda t: t[:, 4]):
        torch.testing.assert_close(angle(view(dev)).cpu(), torch.angle(view(base)))


def test_inplace_on_view_writes_only_the_view():
    base = torch.randn(4, 6)
    dev = base.to("ocl")
    # cpu_only_ops.angle has no ocl kernel; its out= form writes into a view
    torch.angle(base[:, ::2].clone(), out=base[:, 1::2])
    angle(dev[:, ::2].clone(), out=dev[:, 1::2])
    torch.testing.assert_close(dev.cpu(), base)


def test_out_aliasing_an_input():
    a = torch.randn(3, 4)
    d = a.to("ocl")
    torch.angle(a, out=a)
    angle(d, out=d)
    torch.testing.assert_close(d.cpu(), a)


def test_out_resized_with_warning_and_cpu_strides():
    a = torch.randn(5, 5)
    d = a.to("ocl")
    out = torch.empty(2, device="ocl")
    with pytest.warns(UserWarning, match="resized"):
        angle(d, out=out)
    torch.testing.assert_close(out.cpu(), torch.angle(a))
    # an empty out takes the strides the CPU kernel asks for (LU: column-major)
    lu, piv = torch.empty(0, device="ocl"), torch.empty(0, dtype=torch.int32, device="ocl")
    torch.linalg.lu_factor(d, out=(lu, piv))
    lu_c, piv_c = torch.linalg.lu_factor(a)
    assert lu.stride() == lu_c.stride()
    torch.testing.assert_close(lu.cpu(), lu_c)
    torch.testing.assert_close(piv.cpu(), piv_c)


def test_fallback_refuses_a_cpu_out():
    d = torch.randn(3, device="ocl")
    out = torch.zeros(3)
    with pytest.raises(RuntimeError, match="Expected out tensor to have device ocl:0, but got cpu"):
        angle(d, out=out)
    assert torch.equal(out, torch.zeros(3))
