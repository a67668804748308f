"""F.ctc_loss on ocl (adapter/aten/ocl_ctc_loss_ops.cpp) against the CPU:
padded and concatenated targets, lengths as lists and as tensors, repeated
labels (which forbid the skip), empty targets, sequences shorter than the
batch's longest, zero_infinity on an impossible alignment, every
reduction; loss and gradient of the log-probabilities in float64 and
float32."""

import pytest
import torch
import torch.nn.functional as F

native = pytest.mark.usefixtures("no_fallback")


def case(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    T, N, C = 12, 4, 6
    lp = torch.randn(T, N, C, generator=g, dtype=dtype).log_softmax(2)
    targets = torch.tensor([[1, 2, 2, 3], [4, 4, 4, 0], [5, 1, 0, 0], [0, 0, 0, 0]])
    targets[targets == 0] = 1  # padding past each length is never read
    in_len, tg_len = [12, 9, 7, 5], [4, 3, 2, 0]
    return lp, targets, in_len, tg_len


@native
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "tensor-lengths"])
def test_ctc_loss_matches_cpu(dtype, reduction, layout):
    lp, targets, in_len, tg_len = case(dtype)
    if layout == "concatenated":
        targets = torch.cat([targets[b, :n] for b, n in enumerate(tg_len)])
    il, tl = (torch.tensor(in_len), torch.tensor(tg_len)) if layout == "tensor-lengths" else (in_len, tg_len)
    dev = lambda t: t.to("ocl") if isinstance(t, torch.Tensor) else t  # noqa: E731
    x, xc = lp.to("ocl").requires_grad_(), lp.clone().requires_grad_()
    out = F.ctc_loss(x, dev(targets), dev(il), dev(tl), blank=0, reduction=reduction)
    ref = F.ctc_loss(xc, targets, il, tl, blank=0, reduction=reduction)
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.float32 else {}
    torch.testing.assert_close(out.cpu(), ref, **tol)
    out.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), xc.grad, **tol)


@native
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(zero_infinity):
    # three labels with a repeat need at least four frames; two cannot align
    lp = torch.randn(2, 1, 5, dtype=torch.float64).log_softmax(2)
    targets, il, tl = torch.tensor([[2, 2, 3]]), [2], [3]
    x, xc = lp.to("ocl").requires_grad_(), lp.clone().requires_grad_()
    out = F.ctc_loss(x, targets.to("ocl"), il, tl, reduction="sum", zero_infinity=zero_infinity)
    ref = F.ctc_loss(xc, targets, il, tl, reduction="sum", zero_infinity=zero_infinity)
    torch.testing.assert_close(out.cpu(), ref)
    if zero_infinity:
        out.backward()
        ref.backward()
        torch.testing.assert_close(x.grad.cpu(), xc.grad)


def test_bad_blank_raises_as_the_cpu():
    lp, targets, in_len, tg_len = case(torch.float64)
    with pytest.raises(RuntimeError) as cpu:
        F.ctc_loss(lp, targets, in_len, tg_len, blank=9)
    with pytest.raises(RuntimeError) as dev:
        F.ctc_loss(lp.to("ocl"), targets.to("ocl"), in_len, tg_len, blank=9)
    assert str(dev.value) == str(cpu.value)
