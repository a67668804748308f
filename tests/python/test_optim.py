"""torch.optim on ocl against the CPU: the fused kernels (_fused_adam_,
_fused_adamw_, _fused_sgd_, _fused_adagrad_, adapter/aten/ocl_optim_ops.cpp)
called directly and through the optimizers, the foreach and single-tensor
paths, and gradient clipping. Every test runs with the CPU fallback off."""

import pytest
import torch

from conftest import dtype_id

DEV = "ocl"
pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPES = [(7, 5), (33,), ()]  # a matrix, a vector that is not a multiple of any vector width, a scalar


def tol(dt):
    return {
        torch.float16: dict(atol=3e-3, rtol=3e-3),
        torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
        torch.float32: dict(atol=2e-5, rtol=2e-5),
        torch.float64: dict(atol=1e-10, rtol=1e-10),
    }[dt]


def rand(shape, dtype, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def close(actual, expected, dt):
    assert actual.device.type == DEV
    torch.testing.assert_close(actual.cpu().double(), expected.double(), equal_nan=True, **tol(dt))


def run_steps(opt_cls, kw, dtype, device, steps=5):
    """Parameters after `steps` optimizer steps with deterministic gradients."""
    params = [rand(s, dtype, seed=i).to(device).requires_grad_() for i, s in enumerate(SHAPES)]
    opt = opt_cls(params, **kw)
    for step in range(steps):
        for i, p in enumerate(params):
            p.grad = rand(p.shape, dtype, seed=100 * step + i, scale=0.5).to(device)
        opt.step()
    return params, opt


def compare_optimizer(opt_cls, kw, dtype=torch.float32, steps=5):
    cpu, cpu_opt = run_steps(opt_cls, kw, dtype, "cpu", steps)
    ocl, ocl_opt = run_steps(opt_cls, kw, dtype, DEV, steps)
    for a, e in zip(ocl, cpu):
        close(a.detach(), e.detach(), dtype)
    for a, e in zip(ocl, cpu):  # optimizer state (momentum buffers, moments, steps)
        sa, se = ocl_opt.state[a], cpu_opt.state[e]
        assert sa.keys() == se.keys()
        for k in se:
            if isinstance(se[k], torch.Tensor):  # "step" stays on the CPU unless fused or capturable
                dt = dtype if se[k].dtype == dtype else se[k].dtype
                torch.testing.assert_close(sa[k].cpu().double(), se[k].double(), **tol(dt))


ADAM_FLAGS = [
    dict(),
    dict(amsgrad=True),
    dict(maximize=True, weight_decay=0.1),
    dict(amsgrad=True, maximize=True, weight_decay=0.05, betas=(0.6, 0.95)),  # 1 - beta1 >= 0.5: other lerp side
]


def flag_id(kw):
    return "-".join(f"{k}={v}" for k, v in kw.items()) or "default"


# ---- fused optimizers (one generated kernel per parameter) -------------------------------------


@pytest.mark.parametrize("kw", ADAM_FLAGS, ids=flag_id)
@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW], ids=lambda c: c.__name__)
def test_fused_adam_flags(cls, kw):
    compare_optimizer(cls, dict(lr=0.01, fused=True, **kw))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW], ids=lambda c: c.__name__)
def test_fused_adam_dtypes(cls, dtype):
    compare_optimizer(cls, dict(lr=0.01, fused=True, amsgrad=True, weight_decay=0.1), dtype)


@pytest.mark.parametrize("lr_device", ["cpu", DEV])
@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW], ids=lambda c: c.__name__)
def test_fused_adam_tensor_lr(cls, lr_device):
    # A CPU lr is a kernel argument; a device lr is read by the kernel.
    cpu, _ = run_steps(cls, dict(lr=torch.tensor(0.01), fused=True, weight_decay=0.1), torch.float32, "cpu")
    ocl, _ = run_steps(
        cls, dict(lr=torch.tensor(0.01, device=lr_device), fused=True, weight_decay=0.1), torch.float32, DEV
    )
    for a, e in zip(ocl, cpu):
        close(a.detach(), e.detach(), torch.float32)


SGD_FLAGS = [
    dict(),
    dict(momentum=0.9),
    dict(momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(momentum=0.5, dampening=0.3, maximize=True),
]


@pytest.mark.parametrize("kw", SGD_FLAGS, ids=flag_id)
def test_fused_sgd_flags(kw):
    compare_optimizer(torch.optim.SGD, dict(lr=0.1, fused=True, **kw))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
def test_fused_sgd_dtypes(dtype):
    compare_optimizer(torch.optim.SGD, dict(lr=0.1, fused=True, momentum=0.9), dtype)


def test_fused_sgd_tensor_lr():
    compare_optimizer(torch.optim.SGD, dict(lr=torch.tensor(0.1), fused=True, momentum=0.9))


@pytest.mark.parametrize(
    "kw", [dict(), dict(lr_decay=0.1, weight_decay=0.05, maximize=True), dict(lr=torch.tensor(0.2))], ids=flag_id
)
def test_fused_adagrad(kw):
    compare_optimizer(torch.optim.Adagrad, dict(dict(lr=0.1, fused=True), **kw))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
def test_fused_adagrad_dtypes(dtype):
    compare_optimizer(torch.optim.Adagrad, dict(lr=0.1, fused=True), dtype)


# ---- the kernels called directly: grad_scale, found_inf, grad write-back ------------------------


def adam_lists(dtype, device, amsgrad):
    n = len(SHAPES)
    params = [rand(s, dtype, seed=i) for i, s in enumerate(SHAPES)]
    grads = [rand(s, dtype, seed=10 + i) * 1024 for i, s in enumerate(SHAPES)]  # scaled by grad_scale 1024
    m = [rand(s, dtype, seed=20 + i, scale=0.1) for i, s in enumerate(SHAPES)]
    v = [rand(s, dtype, seed=30 + i, scale=0.1).abs() for i, s in enumerate(SHAPES)]
    vmax = [x * 1.5 if i % 2 else x * 0.5 for i, x in enumerate(v)] if amsgrad else []
    steps = [torch.tensor(float(3 + i)) for i in range(n)]
    return [[t.to(device) for t in lst] for lst in (params, grads, m, v, vmax, steps)]


@pytest.mark.parametrize("found", [0.0, 1.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("op", ["_fused_adam_", "_fused_adamw_"])
def test_fused_adam_kernel_grad_scale(op, dtype, found):
    fn = getattr(torch, op)
    kw = dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=True, maximize=True)
    res = {}
    for dev in ("cpu", DEV):
        lists = adam_lists(dtype, dev, amsgrad=True)
        before = [[t.clone() for t in lst] for lst in lists]
        scale = torch.tensor(1024.0, device=dev)
        found_inf = torch.tensor(found, device=dev)
        fn(*lists, **kw, grad_scale=scale, found_inf=found_inf)
        res[dev] = lists
        if found == 1.0:  # a skipped step leaves every tensor as it was, the grads scaled
            for lst, old in zip(lists, before):
                for a, e in zip(lst, old):
                    assert torch.equal(a.cpu(), e.cpu())
    for lst_a, lst_e in zip(res[DEV], res["cpu"]):
        for a, e in zip(lst_a, lst_e):
            close(a, e, dtype if e.dtype == dtype else e.dtype)


@pytest.mark.parametrize("found", [0.0, 1.0])
@pytest.mark.parametrize("first", [True, False])
def test_fused_sgd_kernel_grad_scale(first, found):
    res = {}
    for dev in ("cpu", DEV):
        params = [rand(s, torch.float32, seed=i).to(dev) for i, s in enumerate(SHAPES)]
        grads = [(rand(s, torch.float32, seed=10 + i) * 8).to(dev) for i, s in enumerate(SHAPES)]
        bufs = [rand(s, torch.float32, seed=20 + i).to(dev) for i, s in enumerate(SHAPES)]
        torch._fused_sgd_(
            params, grads, bufs, weight_decay=0.01, momentum=0.9, lr=torch.tensor(0.1, device=dev),
            dampening=0.1, nesterov=True, maximize=False, is_first_step=first,
            grad_scale=torch.tensor(8.0, device=dev), found_inf=torch.tensor(found, device=dev),
        )
        res[dev] = params + grads + bufs
    for a, e in zip(res[DEV], res["cpu"]):
        close(a, e, torch.float32)


@pytest.mark.parametrize("op", ["_fused_adamw_", "_fused_adagrad_"])
def test_fused_kernel_strided_and_empty(op):
    """A transposed and an offset param view with dense grads, and an empty param. The CPU kernel
    assumes dense params, so the reference runs on dense copies."""
    res = {}
    for dev in ("cpu", DEV):
        bases = [rand((9, 7), torch.float32, seed=1).to(dev), rand((6, 8), torch.float32, seed=2).to(dev)]
        params = [bases[0].t(), bases[1][2:5, 1:], torch.zeros(0, device=dev)]
        if dev == "cpu":
            params = [p.contiguous() for p in params]
        grads = [rand(p.shape, torch.float32, seed=10 + i).to(dev) for i, p in enumerate(params)]
        state = [rand(p.shape, torch.float32, seed=20 + i).abs().to(dev) for i, p in enumerate(params)]
        steps = [torch.tensor(2.0, device=dev) for _ in params]
        if op == "_fused_adamw_":
            m = [rand(p.shape, torch.float32, seed=30 + i).to(dev) for i, p in enumerate(params)]
            torch._fused_adamw_(params, grads, m, state, [], steps, lr=0.01, beta1=0.9, beta2=0.999,
                                weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=False)
        else:
            m = []
            torch._fused_adagrad_(params, grads, state, steps, lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                  eps=1e-10, maximize=False)
        res[dev] = params + state + m
    assert not res[DEV][0].is_contiguous() and res[DEV][1].storage_offset() == 17
    for a, e in zip(res[DEV], res["cpu"]):
        close(a, e, torch.float32)


def test_fused_errors():
    p = [torch.zeros(3, device=DEV)]
    g = [torch.zeros(3, device=DEV)]
    with pytest.raises(RuntimeError, match="momentum_buffer_list"):
        torch._fused_sgd_(p, g, [], weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0,
                          nesterov=False, maximize=False, is_first_step=True)
    with pytest.raises(RuntimeError, match="dtype"):
        torch._fused_sgd_(p, [torch.zeros(3, device=DEV, dtype=torch.float16)], [], weight_decay=0.0,
                          momentum=0.0, lr=0.1, dampening=0.0, nesterov=False, maximize=False, is_first_step=True)
    with pytest.raises(RuntimeError, match="grads"):
        torch._fused_adam_(p, [], [], [], [], [], lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8,
                           amsgrad=False, maximize=False)


# ---- foreach and single-tensor paths (pointwise ops that must stay on the device) ---------------

OPTIMIZERS = [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (torch.optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (torch.optim.AdamW, dict(lr=0.01, maximize=True)),
    (torch.optim.RMSprop, dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.01)),
]


@pytest.mark.parametrize("foreach", [None, False], ids=["default", "single"])
@pytest.mark.parametrize("cls,kw", OPTIMIZERS, ids=[c.__name__ for c, _ in OPTIMIZERS])
def test_optimizer_paths(cls, kw, foreach):
    compare_optimizer(cls, dict(kw, foreach=foreach))


def test_foreach_is_the_default():
    from torch.optim.optimizer import _default_to_fused_or_foreach

    p = [torch.zeros(2, device=DEV)]
    assert _default_to_fused_or_foreach(p, differentiable=False, use_fused=False) == (False, True)


# ---- gradient clipping ---------------------------------------------------------------------------


@pytest.mark.parametrize("foreach", [None, False], ids=["default", "single"])
@pytest.mark.parametrize("norm_type", [2.0, float("inf"), 1.0])
def test_clip_grad_norm(norm_type, foreach):
    res = {}
    for dev in ("cpu", DEV):
        params = [rand(s, torch.float32, seed=i).to(dev).requires_grad_() for i, s in enumerate(SHAPES)]
        for i, p in enumerate(params):
            p.grad = rand(p.shape, torch.float32, seed=50 + i, scale=3.0).to(dev)
        total = torch.nn.utils.clip_grad_norm_(params, max_norm=1.0, norm_type=norm_type, foreach=foreach)
        assert total.device.type == dev
        res[dev] = (total, [p.grad for p in params])
    close(res[DEV][0], res["cpu"][0], torch.float32)
    for a, e in zip(res[DEV][1], res["cpu"][1]):
        close(a, e, torch.float32)


@pytest.mark.parametrize("foreach", [None, False], ids=["default", "single"])
def test_clip_grad_value(foreach):
    res = {}
    for dev in ("cpu", DEV):
        params = [rand(s, torch.float32, seed=i).to(dev).requires_grad_() for i, s in enumerate(SHAPES)]
        for i, p in enumerate(params):
            p.grad = rand(p.shape, torch.float32, seed=50 + i, scale=3.0).to(dev)
        torch.nn.utils.clip_grad_value_(params, clip_value=0.5, foreach=foreach)
        res[dev] = [p.grad for p in params]
    for a, e in zip(res[DEV], res["cpu"]):
        close(a, e, torch.float32)
