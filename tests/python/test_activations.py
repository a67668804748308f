"""Activations and the backward kernels autograd uses for them, on ocl
against the CPU. One row per activation: (name, function, dtypes); each row
checks forward for every float dtype (and refusals for others), non-contiguous
input, out=/in-place forms where they exist, and the float32 gradient."""

import pytest
import torch
import torch.nn.functional as F

from conftest import ALL_DTYPES, FLOAT_DTYPES

OCL = "ocl"
native = pytest.mark.usefixtures("no_fallback")

ROWS = [
    ("relu", F.relu),
    ("relu6", F.relu6),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2)),
    ("rrelu_eval", lambda x: F.rrelu(x, 0.1, 0.3, training=False)),
    ("elu", lambda x: F.elu(x, 1.3)),
    ("selu", F.selu),
    ("celu", lambda x: F.celu(x, 0.7)),
    ("gelu", F.gelu),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    ("silu", F.silu),
    ("mish", F.mish),
    ("hardtanh", lambda x: F.hardtanh(x, -1.5, 2.0)),
    ("hardsigmoid", F.hardsigmoid),
    ("hardswish", F.hardswish),
    ("softplus", lambda x: F.softplus(x, beta=2, threshold=3)),
    ("softshrink", lambda x: F.softshrink(x, 0.7)),
    ("hardshrink", lambda x: F.hardshrink(x, 0.7)),
    ("tanhshrink", F.tanhshrink),
    ("threshold", lambda x: F.threshold(x, 0.5, -2.0)),
    ("glu", lambda x: F.glu(x, -1)),
    ("logsigmoid", F.logsigmoid),
    ("sigmoid", torch.sigmoid),
    ("tanh", torch.tanh),
    ("prelu", lambda x: F.prelu(x, torch.tensor([0.25, -0.1, 0.5, 0.3, 0.2, 0.1], device=x.device, dtype=x.dtype))),
    ("logit", lambda x: torch.logit(torch.sigmoid(x), eps=0.05)),
]


def inputs(dt, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(5, 6, generator=g) * 3
    x[0, :4] = torch.tensor([0.0, -3.0, 3.0, 0.7])  # kinks and thresholds
    return x.to(dt) if dt.is_floating_point or dt == torch.bool else (x * 2).to(dt)


def close(a, e):
    assert a.device.type == "ocl" and a.dtype == e.dtype and a.shape == e.shape
    if e.dtype in (torch.float16, torch.bfloat16):
        torch.testing.assert_close(a.cpu().float(), e.float(), equal_nan=True, atol=2e-3,
                                   rtol=2e-2 if e.dtype == torch.bfloat16 else 4e-3)
    else:
        torch.testing.assert_close(a.cpu(), e, equal_nan=True)


@native
@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_activation(row):
    name, fn = row
    for dt in ALL_DTYPES:
        x = inputs(dt)
        try:
            exp = fn(x)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                fn(x.to(OCL))
            continue
        close(fn(x.to(OCL)), exp)
        if dt in (torch.float32, torch.float64):
            close(fn(x.to(OCL).t().contiguous().t()[:, 1:5] if name != "prelu" else x.to(OCL).t().contiguous().t()),
                  fn(x[:, 1:5] if name != "prelu" else x))
    # gradient in float32 and float64
    for dt in (torch.float32, torch.float64):
        x = inputs(dt, seed=1)
        xc, xo = x.clone().requires_grad_(), x.to(OCL).requires_grad_()
        yc, yo = fn(xc), fn(xo)
        gy = torch.randn(yc.shape, generator=torch.Generator().manual_seed(2), dtype=dt)
        (gc,) = torch.autograd.grad(yc, xc, gy)
        (go,) = torch.autograd.grad(yo, xo, gy.to(OCL))
        torch.testing.assert_close(go.cpu(), gc, equal_nan=True)


@native
def test_inplace_and_out_forms():
    x = inputs(torch.float32)
    for name, fn in [("relu_", lambda t: t.relu_()), ("leaky", lambda t: F.leaky_relu_(t, 0.1)),
                     ("elu_", lambda t: F.elu_(t)), ("hardtanh_", lambda t: F.hardtanh_(t, -1, 1)),
                     ("silu", lambda t: F.silu(t, inplace=True)), ("mish", lambda t: F.mish(t, inplace=True)),
                     ("hardsigmoid", lambda t: F.hardsigmoid(t, inplace=True)),
                     ("hardswish", lambda t: F.hardswish(t, inplace=True)), ("threshold_", lambda t: F.threshold_(t, 0.1, 9.0)),
                     ("gelu_", lambda t: torch._C._nn.gelu_(t)), ("selu", lambda t: F.selu(t, inplace=True))]:
        xc, xo = x.clone(), x.to(OCL)
        ptr = xo.data_ptr()
        fn(xc)
        fn(xo)
        assert xo.data_ptr() == ptr, name
        close(xo, xc)
    out = torch.empty(0, device=OCL)
    torch._C._nn.softplus(x.to(OCL), 1, 20, out=out)
    close(out, F.softplus(x))
    torch._C._nn.glu(x.to(OCL), 1, out=out)
    close(out, F.glu(x, 1))


@native
@pytest.mark.parametrize("inplace", [False, True])
def test_relu6_corners(inplace):
    """ReLU6 at exactly 0 and 6 (and NaN), as MobileNetV2 uses it: in place
    after batch norm, so the backward sees the clamped output. The gradient
    is 0 at both corners on the CPU; ocl must agree element for element."""
    x = torch.tensor([-1.0, -0.0, 0.0, 1e-7, 3.0, 6.0 - 4e-7, 6.0, 6.0 + 5e-7, 7.0, float("nan")])
    w = torch.arange(1.0, 11.0)
    res = []
    for dev in ("cpu", OCL):
        a = x.to(dev).requires_grad_()
        y = F.relu6(a * 1.0, inplace=inplace)
        (g,) = torch.autograd.grad(y, a, w.to(dev))
        res.append((y.detach().cpu(), g.cpu()))
    torch.testing.assert_close(res[1][0], res[0][0], rtol=0, atol=0, equal_nan=True)
    assert torch.equal(res[1][1], res[0][1])
    for lo, hi in ((0.0, 6.0), (-1.0, 1.0)):
        expect = torch.ops.aten.hardtanh_backward(w, x, lo, hi)
        assert torch.equal(torch.ops.aten.hardtanh_backward(w.to(OCL), x.to(OCL), lo, hi).cpu(), expect)


@native
def test_errors_like_cpu():
    x = inputs(torch.float32).to(OCL)
    for fn in (lambda t: F.glu(t[:, :5], 1), lambda t: F.gelu(t, approximate="bad"), lambda t: F.softshrink(t, -1.0),
               lambda t: F.relu(t > 0)):
        with pytest.raises(Exception) as cpu_err:
            fn(x.cpu())
        with pytest.raises(cpu_err.type):
            fn(x)


@native
def test_rrelu_training_uses_device_rng():
    x = inputs(torch.float32).to(OCL)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    xc, yc = x.cpu(), y.cpu()
    pos = xc >= 0
    assert torch.equal(yc[pos], xc[pos])
    ratio = yc[~pos] / xc[~pos]
    assert bool(((ratio >= 0.1 - 1e-6) & (ratio <= 0.3 + 1e-6)).all())
