"""The out= contract every aten out= overload keeps on ocl, native kernels and
composites alike (adapter/fallback.cpp wraps each one but the TensorIterator
kernels registered with TOCL_ITER_OUT, which tests/python/test_out_checks.py
holds to the contract schema by schema): an out on another
device (the CPU, or ocl:1 for ocl:0 inputs) raises before anything is written
or resized; a non-contiguous out (gapped, transposed, channels-last) gets the
values with its strides and storage kept and nothing outside the view
written; the dtype rules of the CPU (which out dtypes are refused, with which
exception, and which dtype the result is computed in). Also resize_ of a
tensor that already has the size (it keeps its strides), mode(out=), addr_ on
a broadcasting self, and silu_backward's functional form."""

import warnings

import pytest
import torch
import torch_ocl  # noqa: F401

O = "ocl"
F = torch.nn.functional


def _x(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


# ---- an out on another device -------------------------------------------------

# name -> f(device of the inputs, out): ops whose native kernel touched the out
# (resized it, copied self into it) or reached the runtime before the device
# was checked, or checked the device type but not the index.
WRONG_DEVICE_CASES = {
    "mm": lambda d, out: torch.mm(torch.ones(3, 3, device=d), torch.ones(3, 3, device=d), out=out),
    "addmm": lambda d, out: torch.addmm(torch.zeros(3, 3, device=d), torch.ones(3, 3, device=d),
                                        torch.ones(3, 3, device=d), out=out),
    "bucketize": lambda d, out: torch.bucketize(torch.arange(3.0, device=d), torch.arange(5.0, device=d),
                                                out=out),
    "cumsum": lambda d, out: torch.cumsum(torch.ones(3, device=d), 0, out=out),
    "index_add": lambda d, out: torch.index_add(torch.ones(3, device=d), 0, torch.tensor([0, 1], device=d),
                                                torch.ones(2, device=d), out=out),
    "scatter": lambda d, out: torch.scatter(torch.ones(3, device=d), 0, torch.tensor([0, 1], device=d),
                                            torch.ones(2, device=d), out=out),
    "gather": lambda d, out: torch.gather(torch.ones(3, device=d), 0, torch.tensor([0, 1, 2], device=d), out=out),
    "tril": lambda d, out: torch.tril(torch.ones(3, 3, device=d), out=out),
    "topk": lambda d, out: torch.topk(torch.arange(3.0, device=d), 3, out=(out, torch.empty(0, dtype=torch.long,
                                                                                           device=d))),
    "kthvalue": lambda d, out: torch.kthvalue(torch.arange(3.0, device=d), 1, out=(out, torch.empty(
        0, dtype=torch.long, device=d))),
    "normal": lambda d, out: torch.normal(torch.zeros(3, device=d), torch.ones(3, device=d), out=out),
    "where": lambda d, out: torch.where(torch.ones(3, dtype=torch.bool, device=d), torch.ones(3, device=d),
                                        torch.zeros(3, device=d), out=out),
    "softmax": lambda d, out: torch.softmax(torch.ones(3, device=d), 0, out=out),
}
_LONG_OUT = {"bucketize"}


def _out_for(name, size, device):
    return torch.full((size,), 7, dtype=torch.long if name in _LONG_OUT else torch.float32, device=device)


@pytest.mark.parametrize("name", sorted(WRONG_DEVICE_CASES))
@pytest.mark.parametrize("size", [0, 3, 5])
def test_cpu_out_raises_before_writing(name, size):
    out = _out_for(name, size, "cpu")
    with pytest.raises(RuntimeError, match="Expected out tensor to have device ocl:0, but got cpu instead"):
        WRONG_DEVICE_CASES[name](O, out)
    assert out.shape == (size,) and bool((out == 7).all())


@pytest.mark.parametrize("name", sorted(WRONG_DEVICE_CASES))
@pytest.mark.parametrize("size", [0, 3, 5])
def test_other_ocl_device_out_raises_before_writing(two_devices, name, size):
    d0, d1 = two_devices
    out = _out_for(name, size, d1)
    with pytest.raises(RuntimeError, match="Expected out tensor to have device ocl:0, but got ocl:1 instead"):
        WRONG_DEVICE_CASES[name](d0, out)
    assert out.shape == (size,) and bool((out.cpu() == 7).all())


def test_out_on_the_inputs_other_device_is_accepted(two_devices):
    """Inputs and out on ocl:1 while the current device is ocl:0: the check is
    against the inputs' device, not the current one."""
    _, d1 = two_devices
    for name, f in WRONG_DEVICE_CASES.items():
        out = torch.empty(0, dtype=torch.long if name in _LONG_OUT else torch.float32, device=d1)
        f(d1, out)
        assert out.device == d1, name


# ---- a non-contiguous out --------------------------------------------------------

def _gapped(shape, dtype, device):
    base = torch.full(tuple(shape) + (2,), float("nan") if dtype.is_floating_point else 7, dtype=dtype,
                      device=device)
    return base[..., 1], base


def _transposed(shape, dtype, device):
    base = torch.full(tuple(shape)[::-1], float("nan"), dtype=dtype, device=device)
    return base.permute(*range(len(shape) - 1, -1, -1)), base


# name -> (f(x, out), input shape): ops whose kernels wrote a gapped or
# transposed out as if it were contiguous (writing outside the view).
STRIDED_CASES = {
    "softmax": (lambda x, out: torch.softmax(x, -1, out=out), (4, 6)),
    "log_softmax": (lambda x, out: torch.log_softmax(x, -1, out=out), (4, 6)),
    "mm": (lambda x, out: torch.mm(x, x.t(), out=out), (4, 6)),
    "matmul": (lambda x, out: torch.matmul(x, x.t(), out=out), (4, 6)),
    "avg_pool3d": (lambda x, out: torch._C._nn.avg_pool3d(x, 2, out=out), (2, 3, 4, 4, 4)),
    "narrow_copy": (lambda x, out: torch.narrow_copy(x, 1, 1, 3, out=out), (4, 6)),
    "sum": (lambda x, out: torch.sum(x, 1, out=out), (4, 6)),
    "cumsum": (lambda x, out: torch.cumsum(x, 1, out=out), (4, 6)),
    "sort_values": (lambda x, out: torch.sort(x, 1, out=(out, torch.empty(0, dtype=torch.long,
                                                                          device=x.device)))[0], (4, 6)),
    "index_select": (lambda x, out: torch.index_select(x, 1, torch.tensor([5, 0, 2], device=x.device), out=out),
                     (4, 6)),
    "tril": (lambda x, out: torch.tril(x, out=out), (4, 6)),
}


@pytest.mark.parametrize("form", ["gapped", "transposed"])
@pytest.mark.parametrize("name", sorted(STRIDED_CASES))
def test_strided_out_written_through_its_view(name, form):
    f, shape = STRIDED_CASES[name]
    x = _x(*shape)
    expected = f(x, torch.empty(0, dtype=x.dtype))
    if form == "transposed" and expected.dim() < 2:
        pytest.skip("a 1-D result has no transposed form")
    out, base = (_gapped if form == "gapped" else _transposed)(expected.shape, expected.dtype, O)
    strides, ptr = out.stride(), out.data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a right-sized out is not resized
        ret = f(x.to(O), out)
    assert ret is out
    assert out.stride() == strides and out.data_ptr() == ptr
    torch.testing.assert_close(out.cpu(), expected)
    if form == "gapped":
        assert torch.isnan(base[..., 0].cpu()).all(), "wrote outside the out view"


@pytest.mark.parametrize("factory", ["zeros", "ones", "full", "randn", "rand", "empty"])
def test_factory_out_keeps_a_gapped_view(factory):
    out, base = _gapped((3, 4), torch.float32, O)
    strides = out.stride()
    if factory == "full":
        torch.full((3, 4), 2.5, out=out)
    else:
        getattr(torch, factory)((3, 4), out=out)
    assert out.stride() == strides
    assert torch.isnan(base[..., 0].cpu()).all(), "wrote outside the out view"
    if factory in ("zeros", "ones", "full"):
        assert bool((out.cpu() == {"zeros": 0, "ones": 1, "full": 2.5}[factory]).all())


def test_random_ops_out_keep_a_gapped_view():
    for f in (lambda out: torch.normal(torch.zeros(3, 4, device=O), 1.0, out=out),
              lambda out: torch.normal(2.0, torch.ones(3, 4, device=O), out=out),
              lambda out: torch.bernoulli(torch.full((3, 4), 0.5, device=O), out=out)):
        out, base = _gapped((3, 4), torch.float32, O)
        f(out)
        assert out.stride() == (8, 2)
        assert torch.isnan(base[..., 0].cpu()).all() and not torch.isnan(out.cpu()).any()


def test_resize_keeps_strides_of_a_tensor_of_that_size():
    for dev in ("cpu", O):
        base = torch.zeros(3, 8, device=dev)
        v = base[:, ::2]
        v.resize_(3, 4)
        assert v.stride() == (8, 2), dev
        v.resize_(3, 4, memory_format=torch.contiguous_format)
        assert v.stride() == (4, 1), dev
        w = base[:, ::2]
        w.resize_(2, 2)
        assert w.stride() == (2, 1), dev


def test_wrongly_sized_strided_out_is_resized_with_one_warning():
    x = _x(4, 6)
    expected = torch.softmax(x, -1)
    for dev in ("cpu", O):
        out, _ = _gapped((3, 6), torch.float32, dev)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.softmax(x.to(dev), -1, out=out)
        resized = [w for w in caught if "was resized" in str(w.message)]
        assert len(resized) == 1, (dev, [str(w.message) for w in caught])
        assert out.shape == (4, 6) and out.is_contiguous()
        torch.testing.assert_close(out.cpu(), expected)


def test_channels_last_out_keeps_its_layout():
    x = _x(2, 3, 8, 8)
    expected = F.avg_pool2d(x, 2)
    out = torch.empty(2, 3, 4, 4, device=O).to(memory_format=torch.channels_last)
    strides = out.stride()
    torch._C._nn.avg_pool2d(x.to(O), 2, out=out)
    assert out.stride() == strides
    torch.testing.assert_close(out.cpu(), expected)


# ---- out dtypes ---------------------------------------------------------------------

@pytest.mark.parametrize("name,f", [
    ("normal", lambda d, out: torch.normal(torch.zeros(3, device=d), torch.ones(3, device=d), out=out)),
    ("normal.float_mean", lambda d, out: torch.normal(2.0, torch.ones(3, device=d), out=out)),
    ("nansum", lambda d, out: torch.nansum(torch.ones(3, device=d), out=out)),
    ("nanmean", lambda d, out: torch.nanmean(torch.ones(3, device=d), out=out)),
])
def test_long_out_for_a_floating_result_raises_as_the_cpu(name, f):
    for dev in ("cpu", O):
        with pytest.raises(NotImplementedError):
            f(dev, torch.zeros(3, dtype=torch.long, device=dev))


def test_nansum_of_integers_into_a_long_out():
    x = torch.arange(6)
    out = torch.empty(0, dtype=torch.long, device=O)
    torch.nansum(x.to(O), out=out)
    assert out.item() == 15
    # with dtype= a floating input is cast, then summed (the CPU too)
    y = torch.tensor([1.5, 2.25, 4.0])
    for dev in ("cpu", O):
        assert torch.nansum(y.to(dev), dtype=torch.long, out=torch.empty(0, dtype=torch.long, device=dev)).item() == 7


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["max", "min"])
def test_full_max_min_into_a_wider_out(op, dtype):
    x = _x(5, 7, dtype=dtype) * 100
    expected = getattr(torch, op)(x, out=torch.empty(0, dtype=torch.float64))
    actual = getattr(torch, op)(x.to(O), out=torch.empty(0, dtype=torch.float64, device=O))
    assert actual.dtype == torch.float64 and actual.item() == expected.item()
    with pytest.raises(RuntimeError):
        getattr(torch, op)(x.to(O), out=torch.empty(0, dtype=torch.long, device=O))


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_compute_in_the_out_dtype(op):
    """A float16 input with a float64 out: computed in float64, as the CPU."""
    x = _x(5, 7, dtype=torch.float16) * 100
    expected = getattr(torch, op)(x, 1, out=torch.empty(0, dtype=torch.float64))
    torch.testing.assert_close(expected, getattr(torch, op)(x.double(), 1), atol=0, rtol=0)
    actual = getattr(torch, op)(x.to(O), 1, out=torch.empty(0, dtype=torch.float64, device=O))
    torch.testing.assert_close(actual.cpu(), expected, atol=1e-9, rtol=1e-12)
    with pytest.raises(RuntimeError, match="can't be cast"):
        getattr(torch, op)(x.to(O), 1, out=torch.empty(0, dtype=torch.long, device=O))


# ---- single ops -------------------------------------------------------------------

def test_mode_out():
    x = torch.tensor([[1.0, 2, 2, 3], [4, 4, 5, 5]])
    ev, ei = torch.mode(x, 1)
    v, i = torch.empty(0, device=O), torch.empty(0, dtype=torch.long, device=O)
    rv, ri = torch.mode(x.to(O), 1, out=(v, i))
    assert rv is v and ri is i
    torch.testing.assert_close(v.cpu(), ev)
    torch.testing.assert_close(i.cpu(), ei)
    with pytest.raises(RuntimeError, match="for values output"):
        torch.mode(x.to(O), 1, out=(torch.empty(0, dtype=torch.long, device=O), i))


def test_addr_inplace_on_a_broadcasting_self_raises():
    a, b = torch.ones(5), torch.ones(10)
    for dev in ("cpu", O):
        s = torch.tensor(2.0, device=dev)
        with pytest.raises(RuntimeError, match="2D tensor expected, got 0D tensor for input"):
            s.addr_(a.to(dev), b.to(dev))
        assert s.shape == () and s.item() == 2.0
        s = torch.zeros(1, 10, device=dev)
        with pytest.raises(RuntimeError, match="size mismatch"):
            s.addr_(a.to(dev), b.to(dev))
        assert s.shape == (1, 10)
    s = torch.zeros(5, 10, device=O)
    s.addr_(a.to(O), b.to(O), beta=2, alpha=3)
    assert bool((s.cpu() == 3).all())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_silu_backward_functional_is_the_grad_input_kernel(dtype):
    x, g = _x(257, dtype=dtype) * 4, _x(257, seed=1, dtype=dtype)
    fn = torch.ops.aten.silu_backward(g.to(O), x.to(O))
    out = torch.ops.aten.silu_backward.grad_input(g.to(O), x.to(O), grad_input=torch.empty(0, dtype=dtype,
                                                                                           device=O))
    torch.testing.assert_close(fn.cpu(), out.cpu(), atol=0, rtol=0)
    torch.testing.assert_close(fn.cpu(), torch.ops.aten.silu_backward(g, x), atol=0, rtol=0)


# ---- an out whose elements share memory ------------------------------------------

OVERLAP_CASES = {
    # the right size: the CPU kernel checks before it writes
    "index_select": lambda d, out: torch.index_select(torch.ones(3, 6, device=d), 0,
                                                      torch.tensor([0, 1], device=d), out=out),
    # the wrong size: the CPU checks before it resizes (OpInfo's error input)
    "index_select resized": lambda d, out: torch.index_select(torch.ones(3, 6, device=d), 1,
                                                              torch.tensor([0, 1], device=d), out=out),
    "mm": lambda d, out: torch.mm(torch.ones(2, 3, device=d), torch.ones(3, 6, device=d), out=out),
    "cumsum": lambda d, out: torch.cumsum(torch.ones(2, 6, device=d), 1, out=out),
    "gather": lambda d, out: torch.gather(torch.ones(2, 6, device=d), 1,
                                          torch.zeros(2, 6, dtype=torch.long, device=d), out=out),
}


@pytest.mark.parametrize("name", sorted(OVERLAP_CASES))
def test_expanded_out_raises_as_the_cpu(name):
    """An expanded out (stride 0: several elements in one place) raises what the CPU raises, before
    the out is resized; the adapter's dense temporary for strided outs used to hide the overlap."""
    f = OVERLAP_CASES[name]
    results = {}
    for d in ("cpu", O):
        out = torch.zeros(1, 6, device=d).expand(2, 6)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f(d, out)
            results[d] = None
        except RuntimeError as e:
            results[d] = "single memory location" in str(e)
            assert out.shape == (2, 6) and out.stride() == (0, 1)  # left as it was
    assert results[O] == results["cpu"], results
