"""Which out= overloads carry the boxed out= wrapper, and the contract held by
those that do not.

install_out_device_checks() (adapter/fallback.cpp) puts a boxed wrapper in
front of every aten out= overload with an ocl or CompositeExplicitAutograd
kernel: it refuses an out on another device before anything is written and
gives a non-contiguous out a contiguous temporary. The wrapper triples the
host cost of a small out= op, so the ocl kernels registered with
TOCL_ITER_OUT (adapter/aten/ocl_iter_out.h) are left unwrapped: their
TensorIterator checks the out's device first and writes strided outs in
place. Here:

- every aten out= overload with an ocl kernel is accounted for: wrapped, or
  unwrapped because it was registered with TOCL_ITER_OUT (its reason), and
  the dispatcher holds what the table says;
- every unwrapped overload keeps the contract, schema by schema, on
  arguments built from its schema: a CPU out and an ocl:1 out raise naming
  the device and stay unwritten, a gapped and a transposed out get the CPU's
  values with their strides and storage kept and nothing outside the view
  written. A kernel marked TOCL_ITER_OUT that does not keep it fails here.
"""

import pytest
import torch
import torch_ocl  # noqa: F401

DEVICE_ERROR_WORDS = ("same device", "device type", "to have device", "on the same device")


def _table():
    rows = [r.split(" ") for r in torch.ops.torch_ocl._out_checks()]
    return {name: how for name, how in rows}


TABLE = _table()
ITERATOR = sorted(n for n, how in TABLE.items() if how == "iterator")


def _overload(name):
    base, _, ov = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), ov or "default")


def _is_out_arg(a):
    return a.kwarg_only and a.alias_info is not None and a.alias_info.is_write


def _ocl_out_overloads():
    names = set()
    for full in torch._C._dispatch_get_all_op_names():
        if not full.startswith("aten::"):
            continue
        if not torch._C._dispatch_has_kernel_for_dispatch_key(full, "PrivateUse1"):
            continue
        try:
            schema = _overload(full[6:])._schema
        except (AttributeError, RuntimeError):
            continue
        if any(_is_out_arg(a) for a in schema.arguments):
            names.add(full[6:])
    return names


def _privateuse1_line(name):
    for line in torch._C._dispatch_dump("aten::" + name).splitlines():
        if line.startswith("PrivateUse1:"):
            return line
    return ""


def test_every_ocl_out_overload_is_wrapped_or_exempt():
    assert set(TABLE.values()) <= {"wrapped", "composite", "iterator"}
    unaccounted = sorted(_ocl_out_overloads() - set(TABLE))
    assert not unaccounted, f"out= overloads with an ocl kernel the out= checks never saw: {unaccounted}"
    for name, how in TABLE.items():
        line = _privateuse1_line(name)
        if how == "iterator":
            assert "fallback.cpp" not in line, f"{name} is listed as unwrapped but is wrapped: {line}"
        else:
            assert "fallback.cpp" in line and "boxed" in line, f"{name} is listed as {how} but is not wrapped: {line}"


def test_hot_pointwise_outs_are_unwrapped():
    # The benchmark headline ("small op, queued") is torch.add(x, y, out=z).
    for name in ("add.out", "sub.out", "mul.out", "div.out", "eq.Tensor_out", "exp.out", "sigmoid.out",
                 "clamp.out", "gelu.out"):
        assert TABLE.get(name) == "iterator", name


def test_kernels_that_need_the_wrapper_keep_it():
    for name in ("_softmax.out", "mm.out", "avg_pool3d.out", "narrow_copy.out", "zeros.out", "where.self_out",
                 "pow.Scalar_out", "addr.out"):
        assert TABLE.get(name) in ("wrapped", "composite"), (name, TABLE.get(name))


# ---- the contract of each unwrapped overload -----------------------------------

SHAPE = (3, 4)


def _inputs(kind, seed, shape=SHAPE):
    g = torch.Generator().manual_seed(seed)
    if kind == "float":
        return (torch.rand(shape, generator=g) * 0.8 + 0.1)
    if kind == "int":
        return torch.randint(1, 5, shape, generator=g)
    return torch.randint(0, 2, shape, generator=g).bool()


def _scalar(kind, one):
    return 1 if one and kind != "bool" else {"float": 0.5, "int": 2, "bool": True}[kind]


def _type_str(a):
    return str(a.type)


def _build_args(schema, kind, shape=SHAPE, one=False):
    """Positional and keyword arguments (out excluded) for `schema`, on the CPU:
    tensors of `kind` and `shape` (bool for a condition or mask), scalars 1
    when `one` (kernels branch on a scalar 1: pow(1, x)), else a typical one."""
    pos, kw = [], {}
    seed = 0
    for a in schema.arguments:
        if _is_out_arg(a):
            continue
        t = _type_str(a)
        if t in ("Tensor", "Optional[Tensor]"):
            if a.name in ("condition", "mask"):
                v = _inputs("bool", seed, shape)
            else:
                v = _inputs(kind, seed, shape)
            seed += 1
        elif t in ("number", "Scalar", "Optional[number]", "Optional[Scalar]"):
            v = _scalar(kind, one)
        elif a.has_default_value():
            v = a.default_value
        elif t == "int":
            v = 1
        elif t == "float":
            v = 0.5
        elif t == "bool":
            v = False
        elif t in ("str", "Optional[str]"):
            v = "trunc"  # div.out_mode, the only str without a default among the rows
        else:
            raise AssertionError(f"{schema}: no argument for {a.name}: {t}; teach _build_args")
        if a.kwarg_only:
            kw[a.name] = v
        else:
            pos.append(v)
    return pos, kw


# Samples the schema alone cannot give: log_sigmoid_backward takes the buffer
# its forward returned (the CPU reads it; the ocl kernel recomputes it).
FIX_ARGS = {
    "log_sigmoid_backward.grad_input": lambda pos, kw: pos.__setitem__(
        2, torch.ops.aten.log_sigmoid_forward(pos[1])[1]),
}


def _to(v, dev):
    return v.to(dev) if isinstance(v, torch.Tensor) else v


def _samples(name):
    """[(op, out name, args, kwargs, CPU result)] for each sample the CPU accepts
    (float, int and bool tensors; of SHAPE and 0-dim; typical scalars and 1),
    each with the first out dtype the CPU accepts for it; SHAPE samples first."""
    op = _overload(name)
    schema = op._schema
    outs = [a for a in schema.arguments if _is_out_arg(a)]
    assert len(outs) == 1, f"{name}: {len(outs)} out arguments; extend the test"
    found, errors = [], []
    for shape in (SHAPE, ()):
        for kind in ("float", "int", "bool"):
            for one in (False, True):
                pos, kw = _build_args(schema, kind, shape, one)
                try:
                    if name in FIX_ARGS:
                        FIX_ARGS[name](pos, kw)
                except Exception as e:  # the CPU refuses the fix's own op for this sample
                    errors.append(f"{kind}: {type(e).__name__}: {str(e).splitlines()[0]}")
                    continue
                first = pos[0].dtype if pos and isinstance(pos[0], torch.Tensor) else torch.float32
                for dt in (first, torch.float32, torch.bool, torch.int64):
                    out = torch.empty(0, dtype=dt)
                    try:
                        op(*pos, **kw, **{outs[0].name: out})
                    except Exception as e:  # the CPU refuses this sample; try the next
                        errors.append(f"{kind}/{dt}: {type(e).__name__}: {str(e).splitlines()[0]}")
                        continue
                    found.append((op, outs[0].name, pos, kw, out))
                    break
    assert found and found[0][4].shape == SHAPE, (
        f"{name}: the CPU accepts no sample built from its schema: {errors[:4]}")
    return found


def _call_ocl(op, out_name, pos, kw, out, dev="ocl:0"):
    return op(*[_to(v, dev) for v in pos], **{k: _to(v, dev) for k, v in kw.items()}, **{out_name: out})


def _sentinel(dt):
    return True if dt == torch.bool else -123


def _check_wrong_device(name, op, out_name, pos, kw, ref):
    dt = ref.dtype
    wrong = ["cpu"] + (["ocl:1"] if torch.ocl.device_count() > 1 else [])
    for dev in wrong:
        for shape in (ref.shape, (1,)):
            bad = torch.full(shape, _sentinel(dt), dtype=dt, device=dev)
            before = bad.clone()
            with pytest.raises(RuntimeError) as ei:
                _call_ocl(op, out_name, pos, kw, bad)
            msg = str(ei.value)
            assert dev in msg or any(w in msg for w in DEVICE_ERROR_WORDS), f"{name}, out on {dev}: {msg}"
            assert bad.shape == before.shape and bad.stride() == before.stride(), f"{name}: {dev} out resized"
            assert torch.equal(bad.cpu(), before.cpu()), f"{name}: {dev} out written"


@pytest.mark.parametrize("name", ITERATOR)
def test_unwrapped_out_keeps_the_contract(name):
    samples = _samples(name)
    op, out_name, pos, kw, ref = samples[0]
    dt = ref.dtype
    close = dict(equal_nan=True, rtol=1e-5, atol=1e-5) if dt.is_floating_point else dict(rtol=0, atol=0)

    # The right device, contiguous: the CPU's values (the baseline of the rest).
    out = torch.empty(ref.shape, dtype=dt, device="ocl")
    r = _call_ocl(op, out_name, pos, kw, out)
    assert r is out
    torch.testing.assert_close(out.cpu(), ref, **close)

    # A wrong-device out raises naming the device, before anything is written
    # or resized: every sample (kernels branch on dtypes, 0-dim inputs, scalars).
    for op_, out_name_, pos_, kw_, ref_ in samples:
        _check_wrong_device(name, op_, out_name_, pos_, kw_, ref_)

    # Non-contiguous outs: values in place, strides and storage kept, nothing outside the view written.
    gapped_base = torch.full((ref.shape[0], 2 * ref.shape[1]), _sentinel(dt), dtype=dt, device="ocl")
    transposed_base = torch.full((ref.shape[1], ref.shape[0]), _sentinel(dt), dtype=dt, device="ocl")
    for base, view in ((gapped_base, gapped_base[:, ::2]), (transposed_base, transposed_base.t())):
        strides, ptr = view.stride(), view.data_ptr()
        r = _call_ocl(op, out_name, pos, kw, view)
        assert r is view
        assert view.stride() == strides and view.data_ptr() == ptr, f"{name}: strided out re-laid-out"
        torch.testing.assert_close(view.cpu(), ref, **close)
        if base is gapped_base:
            assert torch.equal(base[:, 1::2].cpu(), torch.full_like(ref, _sentinel(dt))), (
                f"{name}: gapped out: wrote outside the view")
