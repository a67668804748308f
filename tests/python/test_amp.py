"""Mixed precision on ocl: torch.autocast("ocl") cast policies, the GradScaler
kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_ in
adapter/aten/ocl_amp_ops.cpp) against the CPU, and GradScaler training steps
with finite and non-finite gradients. Every test runs with the CPU fallback off."""

import pytest
import torch
import torch.nn.functional as F

from conftest import dtype_id

DEV = "ocl"
pytestmark = pytest.mark.usefixtures("no_fallback")
LOW = [torch.float16, torch.bfloat16]


def rand(shape, dtype=torch.float32, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


# ---- autocast ----------------------------------------------------------------------------------


def test_autocast_module_api():
    assert torch.amp.is_autocast_available(DEV)
    assert set(torch.ocl.get_amp_supported_dtype()) == {torch.float16, torch.bfloat16}
    assert torch.get_autocast_dtype(DEV) in LOW
    assert not torch.is_autocast_enabled(DEV)
    with torch.autocast(DEV, dtype=torch.bfloat16):
        assert torch.is_autocast_enabled(DEV)
        assert torch.get_autocast_dtype(DEV) == torch.bfloat16
        assert not torch.is_autocast_enabled("cpu")
    assert not torch.is_autocast_enabled(DEV)
    with torch.ocl.amp.autocast(dtype=torch.float16):
        assert torch.is_autocast_enabled(DEV) and torch.get_autocast_dtype(DEV) == torch.float16
    assert isinstance(torch.ocl.amp.GradScaler(), torch.amp.GradScaler)


def test_autocast_unsupported_dtype_warns():
    with pytest.warns(UserWarning, match="not supported"):
        with torch.autocast(DEV, dtype=torch.float64):
            assert not torch.is_autocast_enabled(DEV)


@pytest.mark.parametrize("dtype", LOW, ids=dtype_id)
def test_autocast_lower_precision_ops(dtype):
    x, w, b = rand((4, 8), seed=1).to(DEV), rand((6, 8), seed=2).to(DEV), rand((6,), seed=3).to(DEV)
    with torch.autocast(DEV, dtype=dtype):
        y = F.linear(x, w, b)
        assert y.dtype == dtype
        assert torch.matmul(x, w.t()).dtype == dtype
        assert torch.mm(x, w.t()).dtype == dtype
        assert torch.addmm(b, x, w.t()).dtype == dtype
        assert torch.bmm(x[None], w.t()[None]).dtype == dtype
    # Same value as casting by hand (the GEMM accumulates in float32 either way).
    expect = F.linear(x.to(dtype), w.to(dtype), b.to(dtype))
    torch.testing.assert_close(y.cpu().float(), expect.cpu().float(), atol=1e-2, rtol=1e-2)
    # float64 and integer tensors are not cast.
    with torch.autocast(DEV, dtype=dtype):
        assert torch.mm(x.double(), w.t().double()).dtype == torch.float64


@pytest.mark.parametrize("dtype", LOW, ids=dtype_id)
def test_autocast_fp32_ops(dtype):
    x = rand((4, 8), seed=1).to(DEV)
    t = torch.tensor([1, 0, 3, 7], device=DEV)
    with torch.autocast(DEV, dtype=dtype):
        h = x @ x.t()  # lower precision
        assert h.dtype == dtype
        assert F.softmax(h, dim=-1).dtype == torch.float32
        assert F.log_softmax(h, dim=-1).dtype == torch.float32
        assert F.layer_norm(h, (4,)).dtype == torch.float32
        assert F.mse_loss(h, h.detach() + 1).dtype == torch.float32
        assert F.cross_entropy(F.linear(x, torch.ones(8, 8, device=DEV)), t).dtype == torch.float32
        assert torch.exp(h).dtype == torch.float32
        assert torch.sum(h).dtype == torch.float32
        # promote: mixed inputs run in the widest type
        assert torch.atan2(h, x[:, :4]).dtype == torch.float32
        assert torch.addcmul(h, h, x[:, :4]).dtype == torch.float32
        # unlisted ops keep their input dtype
        assert torch.relu(h).dtype == dtype


@pytest.mark.parametrize("dtype", LOW, ids=dtype_id)
def test_autocast_backward_gives_float32_grads(dtype):
    res = {}
    for dev in ("cpu", DEV):
        lin = torch.nn.Linear(8, 4).to(dev)
        with torch.no_grad():
            lin.weight.copy_(rand((4, 8), seed=5))
            lin.bias.copy_(rand((4,), seed=6))
        x = rand((3, 8), seed=7).to(dev)
        with torch.autocast(dev, dtype=dtype):
            out = lin(x)
            loss = F.mse_loss(out, torch.zeros_like(out))
        loss.backward()
        assert lin.weight.grad.dtype == torch.float32
        res[dev] = (out, loss, lin.weight.grad)
    for a, e in zip(res[DEV], res["cpu"]):
        assert a.dtype == e.dtype
        torch.testing.assert_close(a.cpu().float(), e.float(), atol=3e-2, rtol=3e-2)


# ---- the GradScaler kernels ----------------------------------------------------------------------


def grads_with(dtype, bad):
    g = [rand((5, 7), dtype, seed=1) * 64, rand((9,), dtype, seed=2) * 64, rand((), dtype, seed=3),
         torch.empty(0, dtype=dtype), rand((6, 4), dtype, seed=4).t()]  # the last is not contiguous
    if bad is not None:
        g[1][4] = bad
    return g


@pytest.mark.parametrize("bad", [None, float("inf"), float("-inf"), float("nan")], ids=["finite", "inf", "-inf", "nan"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
def test_non_finite_check_and_unscale(dtype, bad):
    res = {}
    for dev in ("cpu", DEV):
        g = [t.to(dev) for t in grads_with(dtype, bad)]
        found = torch.zeros((), device=dev)
        torch._amp_foreach_non_finite_check_and_unscale_(g, found, torch.tensor(1 / 64, device=dev))
        res[dev] = (found, g)
    assert res[DEV][0].item() == res["cpu"][0].item() == (0.0 if bad is None else 1.0)
    for a, e in zip(res[DEV][1], res["cpu"][1]):
        assert a.dtype == e.dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e, equal_nan=True, atol=0, rtol=0)


def test_non_finite_check_keeps_found_inf():
    found = torch.ones(1, device=DEV)  # set by an earlier call: never reset
    g = [torch.ones(3, device=DEV)]
    torch._amp_foreach_non_finite_check_and_unscale_(g, found, torch.tensor([0.5], device=DEV))
    assert found.item() == 1.0 and g[0].cpu().tolist() == [0.5] * 3
    torch._amp_foreach_non_finite_check_and_unscale_([], found, torch.tensor([0.5], device=DEV))


def test_non_finite_check_errors():
    g = [torch.ones(3, device=DEV)]
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, torch.zeros((), device=DEV, dtype=torch.float64),
                                                         torch.ones((), device=DEV))
    with pytest.raises(RuntimeError, match="inv_scale must be a 1-element tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, torch.zeros((), device=DEV), torch.ones(2, device=DEV))
    with pytest.raises(RuntimeError, match="growth_tracker must be a int tensor"):
        torch._amp_update_scale_(torch.ones((), device=DEV), torch.zeros((), device=DEV),
                                 torch.zeros((), device=DEV), 2.0, 0.5, 2)


@pytest.mark.parametrize("factors", [(2.0, 0.5), (1.7, 0.3)])
def test_update_scale_sequence(factors):
    found_seq = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0]
    res = {}
    for dev in ("cpu", DEV):
        scale = torch.full((1,), 1024.0, device=dev)
        tracker = torch.zeros((1,), dtype=torch.int32, device=dev)
        hist = []
        for f in found_seq:
            torch._amp_update_scale_(scale, tracker, torch.tensor([float(f)], device=dev), *factors, 3)
            hist.append((scale.item(), tracker.item()))
        res[dev] = hist
    if factors == (2.0, 0.5) or torch.ocl.get_device_properties(0).has_fp64:
        assert res[DEV] == res["cpu"]
    else:  # without fp64 the product is rounded in float32 on the device
        for (sa, ta), (se, te) in zip(res[DEV], res["cpu"]):
            assert ta == te and sa == pytest.approx(se, rel=1e-6)


def test_update_scale_does_not_overflow():
    scale = torch.tensor(3e38, device=DEV)
    tracker = torch.zeros((), dtype=torch.int32, device=DEV)
    torch._amp_update_scale_(scale, tracker, torch.zeros((), device=DEV), 2.0, 0.5, 1)
    assert scale.item() == pytest.approx(3e38) and tracker.item() == 0


# ---- GradScaler training steps -------------------------------------------------------------------


OPTS = [
    ("sgd-foreach", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("sgd-fused", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, fused=True)),
    ("adam-single", lambda p: torch.optim.Adam(p, lr=0.01, foreach=False)),
    ("adam-fused", lambda p: torch.optim.Adam(p, lr=0.01, fused=True)),
    ("adamw-fused", lambda p: torch.optim.AdamW(p, lr=0.01, amsgrad=True, fused=True)),
]


def train(dev, make_opt, dtype, bad_steps, steps=5):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(rand(p.shape, seed=10 + i, scale=0.3))
    model.to(dev)
    opt = make_opt(list(model.parameters()))
    scaler = torch.amp.GradScaler(dev, init_scale=2.0**10, growth_interval=2)
    scales = []
    for step in range(steps):
        x, y = rand((4, 8), seed=100 + step).to(dev), rand((4, 2), seed=200 + step).to(dev)
        opt.zero_grad()
        with torch.autocast(dev, dtype=dtype, enabled=dtype is not None):
            loss = F.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        if step in bad_steps:
            with torch.no_grad():
                model[0].weight.grad[0, 0] = bad_steps[step]
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return [p.detach().cpu() for p in model.parameters()], scales


@pytest.mark.parametrize("bad", [{}, {1: float("inf"), 3: float("nan")}], ids=["finite", "non-finite"])
@pytest.mark.parametrize("name,make_opt", OPTS, ids=[n for n, _ in OPTS])
def test_grad_scaler_training(name, make_opt, bad):
    p_cpu, s_cpu = train("cpu", make_opt, None, bad)
    p_ocl, s_ocl = train(DEV, make_opt, None, bad)
    assert s_ocl == s_cpu
    for a, e in zip(p_ocl, p_cpu):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype", LOW, ids=dtype_id)
def test_grad_scaler_with_autocast(dtype):
    # CPU autocast has other cast policies, so this checks the run, the scale
    # bookkeeping and that parameters moved and stayed finite.
    make_opt = OPTS[3][1]
    p0 = [p.clone() for p in train(DEV, make_opt, None, {}, steps=0)[0]]
    p, scales = train(DEV, make_opt, dtype, {2: float("inf")})
    assert scales == [1024.0, 2048.0, 1024.0, 1024.0, 2048.0]
    assert all(torch.isfinite(t).all() for t in p)
    assert any(not torch.equal(a, b) for a, b in zip(p, p0))
