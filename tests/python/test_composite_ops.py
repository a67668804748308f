"""im2col/col2im (nn.Unfold/nn.Fold) and weight norm: composed of native ops
on ocl, compared with the CPU, with no CPU fallback allowed."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

DEV = "ocl"


@pytest.fixture(autouse=True)
def no_fallback():
    old = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("error")
    yield
    torch_ocl.set_fallback_policy(old)


CASES = [  # kernel, dilation, padding, stride
    ((3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 3), (2, 1), (0, 2), (2, 1)),
    ((1, 1), (1, 1), (0, 0), (1, 1)),
    ((3, 2), (1, 2), (2, 0), (3, 2)),
]


@pytest.mark.parametrize("k,d,p,s", CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_unfold_fold_match_cpu_with_grad(k, d, p, s, batched):
    shape = (2, 3, 9, 8) if batched else (3, 9, 8)
    x = torch.randn(*shape, requires_grad=True)
    xo = x.detach().to(DEV).requires_grad_()
    u, uo = F.unfold(x, k, d, p, s), F.unfold(xo, k, d, p, s)
    assert torch.equal(uo.cpu(), u)
    assert not uo.detach()._is_view() or uo.data_ptr() != xo.data_ptr()
    f, fo = F.fold(u, (9, 8), k, d, p, s), F.fold(uo, (9, 8), k, d, p, s)
    torch.testing.assert_close(fo.cpu(), f, rtol=0, atol=1e-6)
    gy = torch.randn_like(f)
    (f * gy).sum().backward()
    (fo * gy.to(DEV)).sum().backward()
    torch.testing.assert_close(xo.grad.cpu(), x.grad, rtol=1e-6, atol=1e-6)


def test_unfold_is_not_a_view_of_its_input():
    x = torch.randn(1, 2, 4, 4, device=DEV)
    u = F.unfold(x, 1)
    u.zero_()
    assert x.abs().sum().item() > 0


def test_unfold_fold_errors():
    x = torch.randn(1, 2, 4, 4, device=DEV)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        F.unfold(x, (0, 1))
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.unfold(x, 9)
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(torch.randn(1, 8, 5, device=DEV), (4, 4), 2)


@pytest.mark.parametrize("dim", [0, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_weight_norm_interface_forward_backward(dim, dtype):
    torch.manual_seed(0)
    v = torch.randn(4, 6, 3, dtype=dtype)
    gshape = [1, 1, 1]
    if dim != -1:
        gshape[dim] = v.shape[dim]
    g = torch.randn(*gshape, dtype=dtype)
    ref = torch.float32 if dtype == torch.float16 else dtype  # the CPU has no float16 kernel here
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == torch.float16 else dict(rtol=1e-5, atol=1e-6)
    w, n = torch._weight_norm_interface(v.to(ref), g.to(ref), dim)
    wo, no = torch._weight_norm_interface(v.to(DEV), g.to(DEV), dim)
    assert wo.dtype == dtype and no.dtype == ref and no.shape == g.shape
    torch.testing.assert_close(wo.cpu().to(ref), w, **tol)
    torch.testing.assert_close(no.cpu(), n, **tol)
    vr, gr = v.to(ref).clone().requires_grad_(), g.to(ref).clone().requires_grad_()
    vo, go = v.to(DEV).requires_grad_(), g.to(DEV).requires_grad_()
    gw = torch.randn_like(v)
    (torch._weight_norm(vr, gr, dim) * gw.to(ref)).sum().backward()
    (torch._weight_norm(vo, go, dim) * gw.to(DEV)).sum().backward()
    torch.testing.assert_close(vo.grad.cpu().to(ref), vr.grad, **tol)
    torch.testing.assert_close(go.grad.cpu().to(ref), gr.grad, **tol)


def test_weight_norm_module_trains_like_cpu():
    torch.manual_seed(0)
    conv_c = torch.nn.Conv1d(6, 4, 3)
    conv_o = torch.nn.Conv1d(6, 4, 3)
    conv_o.load_state_dict(conv_c.state_dict())
    conv_o = conv_o.to(DEV)
    mc = torch.nn.utils.parametrizations.weight_norm(conv_c, dim=0)
    mo = torch.nn.utils.parametrizations.weight_norm(conv_o, dim=0)
    x = torch.randn(2, 6, 7)
    yc, yo = mc(x), mo(x.to(DEV))
    torch.testing.assert_close(yo.cpu(), yc, rtol=1e-5, atol=1e-5)
    yc.square().sum().backward()
    yo.square().sum().backward()
    for pc, po in zip(mc.parameters(), mo.parameters()):
        torch.testing.assert_close(po.grad.cpu(), pc.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize("shape,dim,size,step", [((4, 10), 1, 3, 2), ((4, 10), 0, 2, 1), ((5, 6, 7), -1, 7, 3),
                                                 ((), 0, 1, 1), ((3, 8), 1, 2, 5), ((0, 4), 1, 2, 2)])
def test_unfold_backward_matches_cpu(shape, dim, size, step):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    xd, xc = x.to("ocl").requires_grad_(), x.clone().requires_grad_()
    yd, yc = xd.unfold(dim, size, step), xc.unfold(dim, size, step)
    go = torch.randn(yc.shape, generator=g, dtype=torch.float64)
    yd.backward(go.to("ocl"))
    yc.backward(go)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)
