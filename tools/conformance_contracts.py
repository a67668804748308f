"""OpInfo contracts on `ocl`: the checks PyTorch's test suite applies to every backend.

tools/conformance.py asks "does each op give the CPU's values?". This tool asks
whether ocl keeps the rest of the contract PyTorch's device-generic tests hold a
backend to (test_ops.py test_out / test_out_warning, test_variant_consistency_eager,
test_noncontiguous_samples; test_unary_ufuncs.py extremal values). Every OpInfo
entry of op_db runs, native ops and ops that go through the CPU fallback alike
(the policy is 'silent'; each op's row says which aten ops left the device).
Each check runs the op's first --max-samples samples on ocl and on the CPU; the
CPU is the reference for every value and for every behaviour (raise, warn,
resize, strides), except where PyTorch's contract is absolute (out_device).

  out                out= of the right shape, dtype and device, pre-filled with NaN
                     (integer max): the CPU's values, the out tensor returned, its
                     storage kept                                     (test_out case 0)
  out_device         a CPU out= (and an ocl:1 out= when there are two devices) for
                     ocl inputs raises RuntimeError naming the device, and leaves the
                     CPU tensor unwritten                             (test_out case 3)
  out_dtype          an integer (long) out= for a floating result raises as the CPU
                     does, with the same exception type; where the CPU accepts it,
                     the same values                                  (test_out case 4)
  out_resize         a wrongly-shaped non-empty out= is resized with PyTorch's
                     "An output with one or more elements was resized" UserWarning
                     when the CPU warns; an empty out= is resized without it
                                                        (test_out_warning, test_out case 2)
  out_compute_dtype  float16 (else bfloat16) inputs with a float64 out=: computed in
                     the dtype the CPU computes in, then cast: where the CPU's values
                     are float16 values, ocl's must be too (so half 33000 + 33000 is
                     inf, not 66000); also run with inputs scaled to ~33000
  out_alias          out= aliasing an input (out=input where the CPU allows it)
  out_strided        out= non-contiguous (gapped), transposed and at a storage offset:
                     nothing outside the view written,
                     the CPU's values, and the CPU's final strides and storage reuse
                                                                      (test_out case 1)
  variants           function, method, in-place, operator, alias and out= variants
                     on ocl equal the function on ocl and the CPU; in-place keeps the
                     input's storage, and raises where the sample broadcasts its
                     input; float32 gradients of each variant (PyTorch's
                     test_variant_consistency_eager)
  noncontig          every input tensor non-contiguous (noncontiguous_like) vs the
                     contiguous sample on the CPU        (test_noncontiguous_samples)
  noncontig_grad     the same with gradients, the grad_outputs strided, expanded and
                     transposed (float32)
  offset             every input tensor a view at storage offset 3 of a bigger
                     storage; forward, and float32 gradients
  inplace_view       the in-place variant applied to a view (x[..., 1::2], a
                     transposed view): the whole base on ocl equals the CPU's
  extremal           unary ufuncs (UnaryUfuncInfo) on nan, +-inf, +-0, huge, tiny and
                     denormal values, per floating dtype      (test_reference_numerics_extremal)

Values are compared as tools/conformance.py compares them (its tolerances, its
tie handling, and its float64 referee where ocl and the CPU differ in floating
point). Each (op, check, dtype) is: pass, fail, n/a (no sample applies: the op has
no out=, returns no tensor, the CPU refuses every sample ...) or known (a listed,
reasoned exception: KNOWN_CONTRACT_FAILURES in tools/conformance_known.py).

Usage:
  python tools/conformance_contracts.py [--ops add,sum] [--checks out_device,variants] \\
      [--max-samples N] [--timeout S] [--markdown docs/coverage_contracts.md] \\
      [--json docs/coverage_contracts.json]
"""

import argparse
import json
import math
import os
import signal
import sys
import time
import warnings

import torch
import torch_ocl
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import clone_input_helper, noncontiguous_like
from torch.testing._internal.opinfo.core import DecorateInfo, SampleInput, UnaryUfuncInfo
from torch.utils._pytree import tree_flatten, tree_unflatten

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance as C  # noqa: E402
from conformance_known import KNOWN_CONTRACT_FAILURES  # noqa: E402

Tensor = torch.Tensor
OUT_CHECKS = ["out", "out_device", "out_dtype", "out_resize", "out_compute_dtype", "out_alias", "out_strided"]
CHECKS = OUT_CHECKS + ["variants", "noncontig", "noncontig_grad", "offset", "inplace_view", "extremal"]
RESIZE_WARNING = "An output with one or more elements was resized"
FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
SHORT = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
         torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
         torch.bool: "b8"}


class NotApplicable(Exception):
    """This sample does not apply to the check (the CPU refuses it, ...)."""


class Fail(AssertionError):
    pass


# ---------------------------------------------------------------------------
# small helpers

def op_name(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def dtype_name(dt):
    return str(dt).replace("torch.", "")


def _is_random(op, sample=None):
    return (op.name in C.RANDOM_OPS or op.name.startswith(C.RANDOM_OPS)
            or (sample is not None and C._is_random_sample(op, sample)))


def _tensor_or_tensors(x):
    if isinstance(x, Tensor):
        return True
    return isinstance(x, (tuple, list)) and len(x) > 0 and all(isinstance(t, Tensor) for t in x)


def _each(x, fn):
    """fn over a tensor or a sequence of tensors, as PyTorch's _apply_out_transform."""
    return fn(x) if isinstance(x, Tensor) else tuple(fn(t) for t in x)


def _as_list(x):
    return [x] if isinstance(x, Tensor) else list(x)


def _call(op, s, **extra):
    return op(s.input, *s.args, **{**s.kwargs, **extra})


def _describe(s):
    shapes = [f"{SHORT.get(t.dtype, dtype_name(t.dtype))}{list(t.shape)}"
              for t in C._tensors((s.input, s.args, s.kwargs)) if isinstance(t, Tensor)]
    return ",".join(shapes[:4]) + ("..." if len(shapes) > 4 else "")


def _first_line(e):
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:180] if text else ''}"


def _fill_value(dtype):
    if dtype.is_floating_point or dtype.is_complex:
        return math.nan
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


def _filled(t, device=None, shape=None, dtype=None):
    """A fresh contiguous tensor like t (or of shape/dtype) filled with NaN / the integer max."""
    dtype = dtype or t.dtype
    return torch.full(tuple(t.shape) if shape is None else shape, _fill_value(dtype), dtype=dtype,
                      device=device or t.device)


def _equal_state(a, b):
    """Same shape and values (NaN equal to NaN): for 'the CPU tensor was not written'."""
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(
        torch.nan_to_num(a.double() if a.is_floating_point() else a, 1.0),
        torch.nan_to_num(b.double() if b.is_floating_point() else b, 1.0))


def _meta_equal(expected, actual):
    el, al = C._tensors(expected), C._tensors(actual)
    if len(el) != len(al):
        raise Fail(f"{len(al)} outputs, expected {len(el)}")
    for e, a in zip(el, al):
        if isinstance(e, Tensor) and (not isinstance(a, Tensor) or a.shape != e.shape or a.dtype != e.dtype):
            raise Fail(f"got {getattr(a, 'dtype', type(a))}{tuple(getattr(a, 'shape', ()))}, "
                       f"expected {e.dtype}{tuple(e.shape)}")


def same(op, sample, expected, actual, dtype, referee=True):
    """actual (ocl) equals expected (CPU) as tools/conformance.py judges it: the
    dtype's tolerance, ties by gathering, the float64 referee where they differ."""
    if _is_random(op, sample):
        return _meta_equal(expected, actual)
    if op.name in C.TIE_OPS and isinstance(expected, tuple) and len(expected) == 2:
        return C._compare_ties(op, sample, expected, actual, dtype)
    try:
        C._compare(expected, actual, dtype)
    except AssertionError as e:
        if not (referee and dtype.is_floating_point and C._judgeable(op)
                and C._judge_by_float64(op, sample, expected, actual)):
            raise Fail(str(e).strip().splitlines()[0][:200]) from None


def _samples(op, dtype, requires_grad, max_samples, cache):
    key = (dtype, requires_grad)
    if key not in cache:
        out = []
        for i, s in enumerate(C._samples(op, dtype, requires_grad=requires_grad)):
            if i >= max_samples:
                break
            out.append(s)
        cache[key] = out
    return cache[key]


def _cpu(op, s, **extra):
    """The CPU's result, or NotApplicable if the CPU refuses the sample."""
    try:
        out = _call(op, s, **extra)
    except Exception as e:
        raise NotApplicable(f"CPU raises {type(e).__name__}") from None
    if any(isinstance(t, Tensor) and t.dtype.is_complex for t in C._tensors(out)):
        raise NotApplicable("complex result: ocl has no complex dtypes")
    return out


def _dev(op, sample):
    """The sample on ocl: tools/conformance.py's _to_ocl, and a device='cpu' keyword of
    any op (not only its factory list) names ocl, so an out= on ocl matches it."""
    d = C._to_ocl(op, sample)
    if any(k == "device" and C._is_cpu_device(v) for k, v in d.kwargs.items()):
        d.kwargs = {k: ("ocl" if k == "device" and C._is_cpu_device(v) else v) for k, v in d.kwargs.items()}
    return d


def pytorch_excuses(op, test_name, dtype):
    """True where PyTorch's own OpInfo marks test_ops.py's `test_name` as skipped or
    expected to fail for this op on every device type (not for one device, and not
    a tolerance override): the test's premise does not hold for the op itself."""
    for d in op.decorators:
        if not isinstance(d, DecorateInfo) or d.test_name != test_name or d.device_type is not None:
            continue
        if d.dtypes is not None and dtype not in d.dtypes:
            continue
        if not d.active_if:
            continue
        for f in d.decorators:
            name = getattr(f, "__qualname__", getattr(f, "__name__", ""))
            if name == "expectedFailure" or name.startswith("skip.") or name == "skip":
                return True
    return False


# Checks whose premise PyTorch's own test shares: where PyTorch excuses the op from
# that test on every device (as_strided, whose result depends on its input's strides
# by definition; factories; random ops ...), the check does not apply.
EXCUSED_BY = {"noncontig": "test_noncontiguous_samples", "noncontig_grad": "test_noncontiguous_samples",
              "offset": "test_noncontiguous_samples"}


def _wants_grad(op, dtype):
    return dtype in op.supported_backward_dtypes("cpu")


# ---------------------------------------------------------------------------
# layouts: the same values in another memory layout, on the tensor's device

def noncontig(t):
    """noncontiguous_like keeping requires_grad (a leaf)."""
    return noncontiguous_like(t.detach()).requires_grad_(t.requires_grad)


def offset_view(t, k=3):
    """t's values in a contiguous view at storage offset k of a bigger storage."""
    base = t.detach().new_empty(t.numel() + k)
    base[:k] = _fill_value(t.dtype) if t.dtype != torch.bool else True
    v = base[k:].view(t.shape)
    v.copy_(t.detach())
    return v.detach().requires_grad_(t.requires_grad)


def transposed(t):
    """t's values in a dense layout with the dims reversed (non-contiguous for >= 2 dims)."""
    if t.dim() < 2:
        return t.detach().clone().requires_grad_(t.requires_grad)
    perm = list(range(t.dim()))[::-1]
    v = t.detach().permute(perm).contiguous().permute(perm)
    return v.detach().requires_grad_(t.requires_grad)


def _map_ocl_tensors(s, fn):
    return s.transform(lambda t: fn(t) if isinstance(t, Tensor) and t.device.type == "ocl" else t)


# ---------------------------------------------------------------------------
# gradients

def _grad_inputs(s):
    return [t for t in C._tensors((s.input, s.args, s.kwargs)) if isinstance(t, Tensor) and t.requires_grad]


def _grad_outputs(s, out):
    out = s.output_process_fn_grad(out)
    return [t for t in C._tensors(out) if isinstance(t, Tensor) and t.requires_grad and t.dtype.is_floating_point]


def _make_grads(outs, form, gen):
    """(cpu grads, ocl grads) for `outs` (CPU outputs), the ocl ones in layout `form`."""
    cpu, dev = [], []
    for o in outs:
        if form == "expanded" and o.dim() >= 1 and o.numel():
            small = torch.randn(o.shape[-1:], generator=gen, dtype=o.dtype)
            cpu.append(small.expand(o.shape))
            dev.append(small.to("ocl").expand(o.shape))
            continue
        g = torch.randn(o.shape, generator=gen, dtype=o.dtype)
        cpu.append(g)
        d = g.to("ocl")
        dev.append({"strided": noncontig, "transposed": transposed, "offset": offset_view}.get(form, lambda x: x)(d))
    return cpu, dev


def _grad(outs, inputs, grads):
    if not outs or not inputs:
        return None
    return torch.autograd.grad(outs, inputs, grads, allow_unused=True)


def _cpu_like_layout(t):
    """t's values on the CPU in t's own layout (sizes, strides, storage offset)."""
    if t is None or t.numel() == 0:
        return None if t is None else t.cpu()
    span = t.storage_offset() + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride())) + 1
    c = torch.empty(span, dtype=t.dtype).as_strided(t.shape, t.stride(), t.storage_offset())
    c.copy_(t.detach().cpu())
    return c


def grads_match(op, sample, dsample, form, seed=0):
    """Gradients of the op on dsample (ocl, any layout) with grad_outputs in `form`
    equal the CPU's on the contiguous sample; NotApplicable when there are none."""
    cpu_out = _cpu(op, sample)
    outs = _grad_outputs(sample, cpu_out)
    inputs = _grad_inputs(sample)
    if not outs or not inputs:
        raise NotApplicable("no differentiable output")
    gen = torch.Generator().manual_seed(seed)
    g_cpu, g_dev = _make_grads(outs, form, gen)
    try:
        expected = _grad(outs, inputs, g_cpu)
    except Exception:
        raise NotApplicable("CPU backward raises") from None
    d_out = _call(op, dsample)
    d_outs = _grad_outputs(dsample, d_out)
    d_inputs = _grad_inputs(dsample)
    if len(d_outs) != len(outs) or len(d_inputs) != len(inputs):
        raise Fail(f"{len(d_outs)} differentiable outputs / {len(d_inputs)} inputs, "
                   f"expected {len(outs)} / {len(inputs)}")
    try:
        actual = _grad(d_outs, d_inputs, g_dev)
    except Exception:
        # The CPU given grad_outputs in the same layout may refuse them too
        # (view_as_real's backward needs an even storage offset): then the
        # layout, not ocl, is what is refused.
        g_same = [_cpu_like_layout(g) for g in g_dev]
        try:
            _grad(outs, inputs, g_same)
        except Exception:
            raise NotApplicable(f"the CPU refuses {form} grad_outputs too") from None
        raise
    if any((e is None) != (a is None) for e, a in zip(expected, actual)):
        raise Fail("a gradient is None on one side only")
    idx = [i for i, e in enumerate(expected) if e is not None]
    exp_l, act_l = [expected[i] for i in idx], [actual[i] for i in idx]
    try:
        C._compare(exp_l, act_l, torch.float32)
    except AssertionError as e:
        if C._judgeable(op):
            s64 = C._upcast(sample)
            try:
                o64 = _grad_outputs(s64, _call(op, s64))
                r64 = _grad(o64, _grad_inputs(s64), [g.double() for g in g_cpu])
                if C._closer_than_cpu(exp_l, act_l, [r64[i] for i in idx]):
                    return
            except Exception:
                pass
        raise Fail(f"gradient ({form} grad_outputs): " + str(e).strip().splitlines()[0][:180]) from None


# ---------------------------------------------------------------------------
# the checks: each takes (op, sample, dtype) and raises Fail / NotApplicable

def _out_applicable(op, sample):
    if not op.supports_out:
        raise NotApplicable("no out=")
    expected = _cpu(op, sample)
    if not _tensor_or_tensors(expected):
        raise NotApplicable("output is not a tensor or tensors")
    return expected


def _run_out_both(op, sample, make_out, dtype):
    """Run out= on the CPU and on ocl with outs built by make_out(expected_tensor, device);
    returns (cpu_out, cpu_ret, ocl_out, ocl_ret). NotApplicable if the CPU refuses."""
    expected = _out_applicable(op, sample)
    cpu_out = _each(expected, lambda t: make_out(t, "cpu"))
    try:
        cpu_ret = _call(op, sample, out=cpu_out)
    except Exception as e:
        raise NotApplicable(f"CPU refuses this out= ({type(e).__name__})") from None
    dsample = _dev(op, sample)
    ocl_out = _each(expected, lambda t: make_out(t, "ocl"))
    try:
        ocl_ret = _call(op, dsample, out=ocl_out)
    except Exception as e:
        raise Fail(f"ocl raises where the CPU does not: {_first_line(e)}") from None
    return cpu_out, cpu_ret, ocl_out, ocl_ret


def _same_identity(cpu_out, cpu_ret, ocl_out, ocl_ret):
    """The CPU returns the out tensor(s) themselves: so must ocl."""
    c = [r is o for r, o in zip(_as_list(cpu_ret), _as_list(cpu_out))] if _tensor_or_tensors(cpu_ret) else []
    d = [r is o for r, o in zip(_as_list(ocl_ret), _as_list(ocl_out))] if _tensor_or_tensors(ocl_ret) else []
    if all(c) and c and d != c:
        raise Fail("out= call does not return the out tensor(s)")


def check_out(op, sample, dtype):
    ptrs = {}

    def make(t, dev):
        o = _filled(t, device=dev)
        ptrs.setdefault(dev, []).append(o.data_ptr())
        return o
    cpu_out, cpu_ret, ocl_out, ocl_ret = _run_out_both(op, sample, make, dtype)
    same(op, sample, cpu_out, ocl_out, dtype)
    _same_identity(cpu_out, cpu_ret, ocl_out, ocl_ret)
    cpu_kept = [o.data_ptr() == p for o, p in zip(_as_list(cpu_out), ptrs["cpu"])]
    ocl_kept = [o.data_ptr() == p for o, p in zip(_as_list(ocl_out), ptrs["ocl"])]
    if cpu_kept != ocl_kept:
        raise Fail(f"out storage kept {ocl_kept}, CPU {cpu_kept} (a right-sized out must not be reallocated)")


# An error about the out= device names the device or says what is wrong with it
# (PyTorch's own checks: "Expected all tensors to be on the same device ...",
# "... out tensor must be on the same device as the input tensor", "device type
# ... does not match"); anything else (an internal error of the runtime reached
# with the CPU tensor) is not the check this contract asks for.
DEVICE_ERROR_WORDS = ("same device", "device type", "to have device", "on the same device")


def check_out_device(op, sample, dtype):
    expected = _out_applicable(op, sample)
    if C._is_factory(op) and "device" not in sample.kwargs and not any(
            C._is_cpu_device(a) for a in sample.args):
        raise NotApplicable("factory without a device: out= decides the device")
    try:  # the CPU takes an out= for this sample at all
        _call(op, sample, out=_each(expected, lambda t: torch.empty_like(t)))
    except Exception as e:
        raise NotApplicable(f"CPU refuses out= ({type(e).__name__})") from None
    dsample = _dev(op, sample)
    if not any(isinstance(t, Tensor) and t.device.type == "ocl"
               for t in C._tensors((dsample.input, dsample.args, dsample.kwargs))) and not C._is_factory(op):
        raise NotApplicable("no ocl tensor among the inputs")
    # A factory's device= is checked against out= by device type only (as on CUDA),
    # so an out= on another ocl device is the factory's to accept.
    wrong = ["cpu"] + (["ocl:1"] if torch.ocl.device_count() > 1 and not C._is_factory(op) else [])
    for dev in wrong:
        out = _each(expected, lambda t: _filled(t, device=dev))
        before = _each(out, lambda t: t.clone())
        try:
            _call(op, dsample, out=out)
        except RuntimeError as e:
            msg = str(e)
            if dev not in msg and not any(w in msg for w in DEVICE_ERROR_WORDS):
                raise Fail(f"out= on {dev}: raised an error that does not name {dev}: {_first_line(e)}") from None
            if not all(_equal_state(a, b) for a, b in zip(_as_list(out), _as_list(before))):
                raise Fail(f"out= on {dev}: raised, but wrote (or resized) the {dev} tensor first") from None
            continue
        except Exception as e:
            raise Fail(f"out= on {dev}: raised {type(e).__name__}, not RuntimeError: {_first_line(e)}") from None
        written = not all(_equal_state(a, b) for a, b in zip(_as_list(out), _as_list(before)))
        raise Fail(f"out= on {dev} accepted for ocl inputs" + (" (and written)" if written else ""))


def check_out_dtype(op, sample, dtype):
    expected = _out_applicable(op, sample)
    if not any(t.dtype in FLOATS or t.dtype.is_complex for t in _as_list(expected)):
        raise NotApplicable("no floating output")
    cpu_out = _each(expected, lambda t: torch.zeros(t.shape, dtype=torch.long))
    cpu_exc = None
    try:
        _call(op, sample, out=cpu_out)
    except Exception as e:
        cpu_exc = e
    dsample = _dev(op, sample)
    ocl_out = _each(expected, lambda t: torch.zeros(t.shape, dtype=torch.long, device="ocl"))
    try:
        _call(op, dsample, out=ocl_out)
    except Exception as e:
        if cpu_exc is None:
            raise Fail(f"long out=: ocl raises where the CPU accepts it: {_first_line(e)}") from None
        if not isinstance(e, type(cpu_exc)):
            raise Fail(f"long out=: ocl raises {type(e).__name__}, CPU {type(cpu_exc).__name__}: "
                       f"{_first_line(e)}") from None
        return
    if cpu_exc is not None:
        raise Fail(f"long out= for a {_as_list(expected)[0].dtype} result accepted; the CPU raises "
                   f"{_first_line(cpu_exc)}")
    same(op, sample, cpu_out, ocl_out, dtype, referee=False)


def _resize_warned(caught):
    return any(RESIZE_WARNING in str(w.message) for w in caught)


def check_out_resize(op, sample, dtype):
    expected = _out_applicable(op, sample)

    def wrong_shape(t):
        s = list(t.shape)
        if not s:
            return [2]
        s[-1] += 1
        return s
    dsample = _dev(op, sample)
    for case, shape_of in (("wrongly-sized", wrong_shape), ("empty", lambda t: [0])):
        results = {}
        for dev, s in (("cpu", sample), ("ocl", dsample)):
            out = _each(expected, lambda t: _filled(t, device=dev, shape=shape_of(t)))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    _call(op, s, out=out)
                except Exception as e:
                    if dev == "cpu":
                        raise NotApplicable(f"CPU refuses a {case} out=") from None
                    raise Fail(f"{case} out=: ocl raises where the CPU resizes: {_first_line(e)}") from None
            results[dev] = (out, _resize_warned(caught))
        (c_out, c_warn), (d_out, d_warn) = results["cpu"], results["ocl"]
        if c_warn != d_warn and not (d_warn and case == "wrongly-sized"):
            # (a resize warning where the CPU gives none is PyTorch's contract:
            # its test_out_warning asks every backend for it)
            raise Fail(f"{case} out=: " + ("no resize UserWarning (the CPU warns)" if c_warn
                                           else "a resize UserWarning the CPU does not give"))
        for c, d in zip(_as_list(c_out), _as_list(d_out)):
            if c.shape != d.shape:
                raise Fail(f"{case} out=: resized to {tuple(d.shape)}, CPU {tuple(c.shape)}")
        same(op, sample, c_out, d_out, dtype)


def _representable(t, dtype):
    """Every element of t (a wider float) is a value of `dtype`."""
    t = t.detach().cpu().double()
    r = t.to(dtype).double()
    fin = torch.isfinite(t)
    return torch.equal(r[fin], t[fin])


def _scaled(sample, target):
    """The sample with each floating tensor scaled so its largest |value| is `target`."""
    def sc(t):
        if isinstance(t, Tensor) and t.dtype.is_floating_point and t.numel():
            m = t.detach().abs().max().item()
            if m > 0 and math.isfinite(m):
                return (t.detach().double() * (target / m)).to(t.dtype)
        return t
    return sample.transform(sc)


def check_out_compute_dtype(op, sample, dtype):
    for variant, s in (("", sample), (" (inputs scaled to 33000)", _scaled(sample, 33000.0))):
        expected = _out_applicable(op, s)
        wide = {i: t.dtype in FLOATS and t.dtype != torch.float64 for i, t in enumerate(_as_list(expected))}
        if not any(wide.values()):
            raise NotApplicable("no reduced-precision floating output")
        outs = {}
        for dev, ss in (("cpu", s), ("ocl", _dev(op, s))):
            out = tuple(torch.zeros(t.shape, dtype=torch.float64 if wide[i] else t.dtype, device=dev)
                        for i, t in enumerate(_as_list(expected)))
            out = out[0] if isinstance(expected, Tensor) else out
            try:
                _call(op, ss, out=out)
            except Exception as e:
                if dev == "cpu":
                    raise NotApplicable("CPU refuses a float64 out=") from None
                raise Fail(f"float64 out={variant}: ocl raises where the CPU does not: {_first_line(e)}") from None
            outs[dev] = out
        if _is_random(op, s):
            continue
        for i, (e, c, d) in enumerate(zip(_as_list(expected), _as_list(outs["cpu"]), _as_list(outs["ocl"]))):
            if not wide[i]:
                continue
            d = d.detach().cpu()
            if _representable(c, e.dtype):
                # the CPU computed in e.dtype, then cast: so must ocl
                if not _representable(d, e.dtype):
                    bad = (d.double() != d.to(e.dtype).double()) & torch.isfinite(d)
                    j = bad.flatten().nonzero()[0].item()
                    raise Fail(f"float64 out={variant}: values not rounded to {dtype_name(e.dtype)} (computed in "
                               f"a wider dtype): e.g. {d.flatten()[j].item()!r}, CPU {c.flatten()[j].item()!r}")
                atol, rtol = C._tol(e.dtype)
            else:
                atol, rtol = C._tol(torch.float32)  # the CPU computed in the out dtype
            try:
                torch.testing.assert_close(d, c, atol=atol, rtol=rtol, equal_nan=True, check_device=False)
            except AssertionError as err:
                raise Fail(f"float64 out={variant}: " + str(err).strip().splitlines()[0][:160]) from None


def check_out_alias(op, sample, dtype):
    expected = _out_applicable(op, sample)
    if not isinstance(expected, Tensor):
        raise NotApplicable("several outputs")
    leaves, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
    cands = [i for i, t in enumerate(leaves) if isinstance(t, Tensor) and t.shape == expected.shape
             and t.dtype == expected.dtype and not (op.name in C.CPU_ARGS)][:2]
    if not cands:
        raise NotApplicable("no input of the output's shape and dtype")
    tried = 0
    for k in cands:
        res = {}
        for dev in ("cpu", "ocl"):
            lv = [t.detach().clone() if isinstance(t, Tensor) else t for t in leaves]
            if dev == "ocl":
                lv = [t.to("ocl") if isinstance(t, Tensor) else t for t in lv]
            inp, args, kwargs = tree_unflatten(lv, spec)
            s = SampleInput(inp, args=args, kwargs=kwargs)
            if dev == "ocl":
                s = _dev(op, s)  # factory device arguments
                inp, args, kwargs = s.input, s.args, s.kwargs
                lv2, _ = tree_flatten((inp, args, kwargs))
                alias = lv2[k]
            else:
                alias = lv[k]
            try:
                ret = op(inp, *args, **kwargs, out=alias)
            except Exception as e:
                if dev == "cpu":
                    res = None
                    break
                raise Fail(f"out= aliasing input {k}: ocl raises where the CPU does not: {_first_line(e)}") from None
            res[dev] = (alias, ret is alias)
        if res is None:
            continue
        tried += 1
        (c, c_id), (d, d_id) = res["cpu"], res["ocl"]
        if c_id and not d_id:
            raise Fail(f"out= aliasing input {k}: the out tensor is not returned")
        try:
            same(op, sample, c, d, dtype)
        except Fail as e:
            raise Fail(f"out= aliasing input {k}: {e}") from None
    if not tried:
        raise NotApplicable("the CPU refuses every aliasing out=")


def _eff_strides(t):
    """The strides that matter: those of dims longer than 1 (none for an empty tensor)."""
    if t.numel() == 0:
        return ()
    return tuple(st for st, n in zip(t.stride(), t.shape) if n > 1)


def _strided_out(form, t, dev):
    """(out view, its base): an out= for t's shape and dtype, pre-filled, laid out as `form`."""
    shape, fill = tuple(t.shape), _fill_value(t.dtype)
    if form == "gapped":  # as noncontiguous_like: every other element of a bigger tensor
        base = torch.full(shape + (2,), fill, dtype=t.dtype, device=dev)
        return base[..., 1], base
    if form == "offset":  # contiguous, at storage offset 3
        base = torch.full((t.numel() + 3,), fill, dtype=t.dtype, device=dev)
        return base[3:].view(shape), base
    perm = list(range(t.dim()))[::-1]  # transposed: dense, dims reversed
    base = torch.full(tuple(shape[i] for i in perm), fill, dtype=t.dtype, device=dev)
    return base.permute(perm), base


def _outside(view, base):
    """Indices of base's elements that the view does not cover."""
    idx = torch.arange(base.numel()).view(base.shape)
    covered = idx.as_strided(view.size(), view.stride(), view.storage_offset()).flatten()
    mask = torch.ones(base.numel(), dtype=torch.bool)
    mask[covered] = False
    return mask


def _untouched(rest):
    """The elements of an out's base outside its view still hold the fill value."""
    return _equal_state(rest, torch.full_like(rest, _fill_value(rest.dtype)))


def _same_outside(op, sample, cpu_rest, ocl_rest, dtype, form):
    """What ocl wrote outside the view is what the CPU wrote there (to the dtype's
    tolerance; for a random op, the same elements written)."""
    try:
        if _is_random(op, sample):
            fill = _fill_value(cpu_rest.dtype)
            written = [torch.nan_to_num(r.double(), 1.0) != torch.nan_to_num(torch.tensor(fill).double(), 1.0)
                       for r in (cpu_rest, ocl_rest)]
            if not torch.equal(*written):
                raise AssertionError("other elements written")
        else:
            atol, rtol = C._tol(cpu_rest.dtype)
            torch.testing.assert_close(ocl_rest, cpu_rest, atol=atol, rtol=rtol, equal_nan=True)
    except AssertionError:
        raise Fail(f"{form} out=: wrote outside the out view (elements of its base that it does not cover) "
                   "other than the CPU") from None


def check_out_strided(op, sample, dtype):
    expected = _out_applicable(op, sample)
    forms = ["gapped", "offset"] + (["transposed"] if any(t.dim() >= 2 for t in _as_list(expected)) else [])
    dsample = _dev(op, sample)
    ran = 0
    for form in forms:
        res = {}
        for dev, s in (("cpu", sample), ("ocl", dsample)):
            pairs = [_strided_out(form, t, dev) for t in _as_list(expected)]
            out = pairs[0][0] if isinstance(expected, Tensor) else tuple(v for v, _ in pairs)
            outside = [_outside(v, b) for v, b in pairs]
            strides0 = [_eff_strides(o) for o in _as_list(out)]
            ptr0 = [o.data_ptr() for o in _as_list(out)]
            try:
                _call(op, s, out=out)
            except Exception as e:
                if dev == "cpu":
                    res = None
                    break
                raise Fail(f"{form} out=: ocl raises where the CPU does not: {_first_line(e)}") from None
            res[dev] = (out, [_eff_strides(o) == s0 for o, s0 in zip(_as_list(out), strides0)],
                        [o.data_ptr() == p for o, p in zip(_as_list(out), ptr0) if o.numel()],
                        [_eff_strides(o) for o in _as_list(out)],
                        [b.detach().cpu().flatten()[m] for (_, b), m in zip(pairs, outside)])
        if res is None:
            continue
        ran += 1
        (c, c_keep, c_ptr, c_str, c_rest), (d, d_keep, d_ptr, d_str, d_rest) = res["cpu"], res["ocl"]
        reference = c
        for cr, dr in zip(c_rest, d_rest):
            if _untouched(cr):
                if not _untouched(dr):
                    raise Fail(f"{form} out=: wrote outside the out view (elements of its base that it does not cover)")
            elif all(c_keep):
                # The CPU kept the view and still wrote outside it: its kernel writes
                # a strided out as if it were contiguous (narrow_copy, avg_pool3d), a
                # CPU bug, not a reference. ocl writes nothing outside (or what the
                # CPU wrote); the values it must hold are the op's.
                if _untouched(dr):
                    reference = expected
                else:
                    _same_outside(op, sample, cr, dr, dtype, form)
            else:
                # The CPU resized the out (a view of another shape): what it wrote
                # beyond the old view is the result, as ocl's must be.
                _same_outside(op, sample, cr, dr, dtype, form)
        try:
            same(op, sample, reference, d, dtype)
        except Fail as e:
            raise Fail(f"{form} out=: {e}" + (" (the CPU's own strided out= is wrong here; compared with the "
                                              "op's result)" if reference is expected else "")) from None
        if c_keep != d_keep or (c_keep and c_str != d_str):
            raise Fail(f"{form} out=: strides {d_str}, CPU {c_str}")
        if c_ptr != d_ptr:
            raise Fail(f"{form} out=: storage kept {d_ptr}, CPU {c_ptr}")
    if not ran:
        raise NotApplicable("the CPU refuses every strided out=")


def _variants(op):
    v = [("method", op.method_variant), ("inplace", op.inplace_variant),
         ("operator", op.operator_variant), ("inplace_operator", op.inplace_operator_variant)]
    for a in op.aliases:
        v += [(f"alias {a.name}", a.op), (f"alias {a.name} method", a.method_variant),
              (f"alias {a.name}_", a.inplace_variant)]
    return [(n, f) for n, f in v if f is not None]


def check_variants(op, sample, dtype):
    expected = _cpu(op, sample)
    dsample = _dev(op, sample)
    tensor = sample.input if isinstance(sample.input, Tensor) else (
        sample.input[0] if isinstance(sample.input, (list, tuple)) and sample.input
        and isinstance(sample.input[0], Tensor) else None)
    dtensor = dsample.input if isinstance(dsample.input, Tensor) else (
        dsample.input[0] if tensor is not None else None)
    try:
        d_func = _call(op, dsample)
    except Exception as e:
        raise Fail(f"function: ocl raises where the CPU does not: {_first_line(e)}") from None
    same(op, sample, expected, d_func, dtype)
    grad_ok = (isinstance(expected, Tensor) and tensor is not None and tensor.requires_grad
               and _wants_grad(op, dtype) and not _is_random(op, sample))
    exp_grad = None
    if grad_ok:
        try:
            out = sample.output_process_fn_grad(expected).sum()
            exp_grad = torch.autograd.grad(out, tensor, allow_unused=True)[0]
        except Exception:
            exp_grad = None
    skip_inplace = isinstance(expected, Tensor) and tensor is not None and expected.dtype != tensor.dtype
    inplace_names = ("inplace", "inplace_operator")
    for name, fn in _variants(op):
        is_inplace = name in inplace_names or name.endswith("_")
        if is_inplace and (skip_inplace or tensor is None):
            continue
        if name.startswith("operator") or name == "inplace_operator":
            if sample.kwargs:
                continue
        if is_inplace and sample.broadcasts_input:
            try:
                fn(clone_input_helper(sample.input), *sample.args, **sample.kwargs)
                continue  # the CPU accepts it: nothing to hold ocl to
            except Exception:
                pass
            try:
                fn(clone_input_helper(dsample.input), *dsample.args, **dsample.kwargs)
            except RuntimeError:
                continue
            except Exception as e:
                raise Fail(f"{name}: broadcasting in-place raised {type(e).__name__}, not RuntimeError") from None
            raise Fail(f"{name}: in-place on a sample that broadcasts its input is accepted (the CPU raises)")
        arg = clone_input_helper(dsample.input) if is_inplace else dsample.input
        ptr = (arg if isinstance(arg, Tensor) else arg[0]).data_ptr() if is_inplace else None
        try:
            r = fn(arg, *dsample.args, **dsample.kwargs)
        except Exception as e:
            try:
                fn(clone_input_helper(sample.input) if is_inplace else sample.input, *sample.args, **sample.kwargs)
            except Exception:
                continue  # the CPU refuses this variant too
            raise Fail(f"{name}: ocl raises where the CPU does not: {_first_line(e)}") from None
        try:
            same(op, sample, expected, r, dtype)
            if not _is_random(op, sample):
                C._compare(d_func, r, dtype)
        except AssertionError as e:
            raise Fail(f"{name} variant differs: {str(e).strip().splitlines()[0][:160]}") from None
        if is_inplace and isinstance(r, Tensor) and r.data_ptr() != ptr:
            c_arg = clone_input_helper(sample.input)
            c_ptr = (c_arg if isinstance(c_arg, Tensor) else c_arg[0]).data_ptr()
            c_r = fn(c_arg, *sample.args, **sample.kwargs)
            if isinstance(c_r, Tensor) and c_r.data_ptr() == c_ptr:
                raise Fail(f"{name}: the result does not share the input's storage (it does on the CPU)")
        if exp_grad is not None and (not is_inplace or op.supports_inplace_autograd) and isinstance(r, Tensor) \
                and r.requires_grad:
            g = torch.autograd.grad(sample.output_process_fn_grad(r).sum(), dtensor, allow_unused=True)[0]
            if (g is None) != (exp_grad is None):
                raise Fail(f"{name}: gradient is None on one side only")
            try:
                C._compare(exp_grad, g, dtype)
            except AssertionError as e:
                raise Fail(f"{name} gradient differs: {str(e).strip().splitlines()[0][:160]}") from None
    if op.supports_out and _tensor_or_tensors(d_func) and not _is_random(op, sample):
        out = _each(d_func, lambda t: torch.empty_like(t.detach()))
        try:
            with torch.no_grad():
                _call(op, dsample.transform(lambda t: t.detach() if isinstance(t, Tensor) else t), out=out)
        except Exception as e:
            try:
                with torch.no_grad():
                    _call(op, sample.transform(lambda t: t.detach() if isinstance(t, Tensor) else t),
                          out=_each(expected, lambda t: torch.empty_like(t.detach())))
            except Exception:
                return
            raise Fail(f"out= variant: ocl raises where the CPU does not: {_first_line(e)}") from None
        try:
            C._compare(d_func, out, dtype)
        except AssertionError as e:
            raise Fail(f"out= variant differs from the function: {str(e).strip().splitlines()[0][:160]}") from None


def check_noncontig(op, sample, dtype):
    expected = _cpu(op, sample)
    nsample = _map_ocl_tensors(_dev(op, sample), noncontig)
    try:
        actual = _call(op, nsample)
    except Exception as e:
        raise Fail(f"non-contiguous inputs: ocl raises where the CPU does not: {_first_line(e)}") from None
    try:
        same(op, sample, expected, actual, dtype)
    except Fail as e:
        raise Fail(f"non-contiguous inputs: {e}") from None


def check_noncontig_grad(op, sample, dtype):
    if _is_random(op, sample):
        raise NotApplicable("random")
    nsample = _map_ocl_tensors(_dev(op, sample), noncontig)
    for form in ("strided", "expanded", "transposed"):
        try:
            grads_match(op, sample, nsample, form)
        except Fail:
            raise
        except NotApplicable:
            raise
        except Exception as e:
            raise Fail(f"non-contiguous inputs, {form} grad_outputs: ocl raises: {_first_line(e)}") from None


def check_offset(op, sample, dtype):
    expected = _cpu(op, sample)
    osample = _map_ocl_tensors(_dev(op, sample), offset_view)
    try:
        actual = _call(op, osample)
    except Exception as e:
        raise Fail(f"inputs at a storage offset: ocl raises where the CPU does not: {_first_line(e)}") from None
    try:
        same(op, sample, expected, actual, dtype)
    except Fail as e:
        raise Fail(f"inputs at a storage offset: {e}") from None
    if any(isinstance(t, Tensor) and t.requires_grad for t in C._tensors((sample.input, sample.args, sample.kwargs))) \
            and not _is_random(op, sample):
        try:
            grads_match(op, sample, osample, "offset")
        except (Fail, NotApplicable) as e:
            if isinstance(e, Fail):
                raise Fail(f"inputs at a storage offset: {e}") from None
        except Exception as e:
            raise Fail(f"inputs at a storage offset, backward: ocl raises: {_first_line(e)}") from None


def _view_forms(t):
    """(name, base builder, view of base) pairs that hold t's values in a view."""
    def strided(x):
        if x.dim() == 0:
            base = x.new_full((3,), _fill_value(x.dtype) if x.dtype != torch.bool else True)
            return base, base[1]
        base = x.new_full(tuple(x.shape[:-1]) + (2 * x.shape[-1],),
                          7 if x.dtype != torch.bool else True)
        return base, base[..., 1::2]

    def trans(x):
        perm = list(range(x.dim()))[::-1]
        base = x.new_full(tuple(x.permute(perm).shape), 7 if x.dtype != torch.bool else True)
        return base, base.permute(perm)
    forms = [("x[..., 1::2]", strided)]
    if t.dim() >= 2:
        forms.append(("transposed view", trans))
    return forms


def check_inplace_view(op, sample, dtype):
    fn = op.inplace_variant
    if fn is None:
        raise NotApplicable("no in-place variant")
    if not isinstance(sample.input, Tensor):
        raise NotApplicable("input is not a tensor")
    if sample.broadcasts_input:
        raise NotApplicable("sample broadcasts its input")
    expected = _cpu(op, sample)
    if not isinstance(expected, Tensor) or expected.dtype != sample.input.dtype:
        raise NotApplicable("result dtype differs from the input's")
    dsample = _dev(op, sample)
    ran = 0
    for form, build in _view_forms(sample.input):
        res = {}
        for dev, s in (("cpu", sample), ("ocl", dsample)):
            base, view = build(s.input.detach())
            view.copy_(s.input.detach())
            ptr = view.data_ptr()
            try:
                r = fn(view, *s.args, **s.kwargs)
            except Exception as e:
                if dev == "cpu":
                    res = None
                    break
                raise Fail(f"in-place on {form}: ocl raises where the CPU does not: {_first_line(e)}") from None
            res[dev] = (base, view, isinstance(r, Tensor) and r.data_ptr() == ptr)
        if res is None:
            continue
        ran += 1
        (cb, cv, cp), (db, dv, dp) = res["cpu"], res["ocl"]
        if cp and not dp:
            raise Fail(f"in-place on {form}: the result is not the view")
        if _is_random(op, sample):
            continue
        try:
            same(op, sample, cb, db, dtype, referee=False)
        except Fail as e:
            try:
                same(op, sample, cv, dv, dtype)
            except Fail:
                raise Fail(f"in-place on {form}: the view: {e}") from None
            raise Fail(f"in-place on {form}: elements outside the view changed: {e}") from None
    if not ran:
        raise NotApplicable("the CPU refuses the in-place variant on views")


_HUGE = {torch.float32: [1e30, 3e38], torch.bfloat16: [1e30, 3e38], torch.float16: [6e4],
         torch.float64: [1e300, 1.7e308]}
_TINY = {torch.float32: [1e-30, 1e-40, 1.4e-45], torch.bfloat16: [1e-30, 1e-40],
         torch.float16: [1e-5, 6e-8], torch.float64: [1e-300, 1e-310, 5e-324]}


def extremal_values(dtype):
    """nan, +-inf, +-0, huge, tiny and denormal values of `dtype`, with some ordinary
    values (and the poles of gamma-like functions) among them."""
    fi = torch.finfo(dtype)
    mags = [1.0, 0.5, 2.0, 3.0, 10.0, 100.0, fi.eps, fi.tiny, fi.max] + _HUGE[dtype] + _TINY[dtype]
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan]
    for m in mags:
        vals += [m, -m]
    return torch.tensor(vals, dtype=torch.float64).to(dtype)


def extremal_sample(op, dtype):
    t = extremal_values(dtype)
    return SampleInput(t, kwargs=op.sample_kwargs("cpu", dtype, t)[0])


def check_extremal(op, sample, dtype):
    expected = _cpu(op, sample)
    dsample = _dev(op, sample)
    try:
        actual = _call(op, dsample)
    except Exception as e:
        raise Fail(f"extremal values: ocl raises where the CPU does not: {_first_line(e)}") from None
    if isinstance(expected, Tensor) and isinstance(actual, Tensor) and expected.shape == sample.input.shape \
            and not expected.dtype.is_floating_point and expected.dtype != torch.bool:
        # a float -> integer conversion of nan, inf or a value out of range is
        # undefined (C's rule, which PyTorch keeps): compare the others only
        info = torch.iinfo(expected.dtype)
        x = sample.input.double()
        keep = torch.isfinite(x) & (x >= info.min) & (x <= info.max)
        sample = SampleInput(sample.input[keep], kwargs=sample.kwargs)
        expected, actual = expected[keep], actual[keep.to(actual.device)]
    try:
        same(op, sample, expected, actual, dtype)
    except Fail as e:
        detail = str(e)
        if isinstance(expected, Tensor) and isinstance(actual, Tensor) and expected.shape == sample.input.shape:
            a = actual.detach().cpu()
            atol, rtol = C._tol(expected.dtype)
            if expected.dtype.is_floating_point:
                ok = torch.isclose(a.double(), expected.double(), atol=atol, rtol=rtol, equal_nan=True)
            else:
                ok = a == expected
            bad = (~ok).nonzero().flatten().tolist()[:4]
            x = sample.input
            detail = "; ".join(f"x={x[j].item():.4g}: ocl {a[j].item():.6g}, CPU {expected[j].item():.6g}"
                               for j in bad) or detail
        raise Fail(f"extremal values: {detail}") from None


CHECK_FNS = {"out": check_out, "out_device": check_out_device, "out_dtype": check_out_dtype,
             "out_resize": check_out_resize, "out_compute_dtype": check_out_compute_dtype,
             "out_alias": check_out_alias, "out_strided": check_out_strided, "variants": check_variants,
             "noncontig": check_noncontig, "noncontig_grad": check_noncontig_grad, "offset": check_offset,
             "inplace_view": check_inplace_view, "extremal": check_extremal}


# ---------------------------------------------------------------------------
# which (check, dtype) cases apply to an op

def _any_one(supported):
    """float32 if supported, else the first supported dtype (PyTorch's OpDTypes.any_one)."""
    for dt in [torch.float32] + C.DTYPES:
        if dt in supported:
            return dt
    return None


def cases(op, checks=CHECKS):
    """[(check, dtype, requires_grad)] for op."""
    sup = op.supported_dtypes("cpu")
    out = []
    for check in checks:
        if check in ("out", "out_device", "out_dtype", "out_resize", "out_alias", "out_strided"):
            dt = _any_one(sup)
            dts = [dt] if dt is not None else []
        elif check == "out_compute_dtype":
            dts = [next((d for d in (torch.float16, torch.bfloat16) if d in sup), None)]
            dts = [d for d in dts if d is not None]
        elif check in ("variants", "noncontig", "offset", "inplace_view"):
            dts = [d for d in (torch.float32, torch.int64) if d in sup]
        elif check == "noncontig_grad":
            dts = [torch.float32] if torch.float32 in sup and _wants_grad(op, torch.float32) else []
        elif check == "extremal":
            dts = [d for d in FLOATS if d in sup] if isinstance(op, UnaryUfuncInfo) else []
        else:
            raise ValueError(f"unknown check {check!r}")
        for dt in dts:
            rg = check in ("variants", "noncontig_grad", "offset") and dt == torch.float32 and _wants_grad(op, dt)
            out.append((check, dt, rg))
    return out


def known_reason(name, check, dtype):
    return (KNOWN_CONTRACT_FAILURES.get((name, check, dtype_name(dtype)))
            or KNOWN_CONTRACT_FAILURES.get((name, check)))


def plain_failure(op, sample, dtype, grads):
    """Why the op fails on ocl with the sample as it is (contiguous inputs, no out=), or
    None: then a contract check of that sample cannot be judged (tools/conformance.py
    reports the op's failure)."""
    try:
        expected = _call(op, sample)
    except Exception:
        return None
    try:
        same(op, sample, expected, _call(op, _dev(op, sample)), dtype)
        if grads and not _is_random(op, sample):
            grads_match(op, sample, _dev(op, sample), "contiguous")
    except NotApplicable:
        return None
    except C.Timeout:
        raise
    except Fail as e:
        return str(e)
    except Exception as e:
        return _first_line(e)
    return None


def run_check(op, check, dtype, max_samples=3, requires_grad=None, cache=None):
    """(status, detail) of one (op, check, dtype): pass / fail / n/a (known is applied by the caller)."""
    torch_ocl.set_fallback_policy("silent")
    if requires_grad is None:
        requires_grad = check in ("variants", "noncontig_grad", "offset") and dtype == torch.float32 \
            and _wants_grad(op, dtype)
    cache = {} if cache is None else cache
    if check in EXCUSED_BY and pytorch_excuses(op, EXCUSED_BY[check], dtype):
        return "n/a", f"PyTorch's {EXCUSED_BY[check]} skips this op (or expects it to fail) on every device"
    fn = CHECK_FNS[check]
    samples = [extremal_sample(op, dtype)] if check == "extremal" else \
        _samples(op, dtype, requires_grad, max_samples, cache)
    ran, why = 0, ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, sample in enumerate(samples):
            torch.manual_seed(i)
            try:
                fn(op, sample, dtype)
            except NotApplicable as e:
                why = why or str(e)
                continue
            except C.Timeout:
                raise
            except Exception as e:
                msg = str(e) if isinstance(e, Fail) else f"ocl raises: {_first_line(e)}"
                plain = None if check == "extremal" else plain_failure(
                    op, sample, dtype, check == "noncontig_grad" or requires_grad)
                if plain:
                    why = why or f"the op itself fails on ocl (contiguous inputs): {plain}"
                    continue
                return "fail", f"sample {i} ({_describe(sample)}): {msg}"
            ran += 1
    return ("pass", "") if ran else ("n/a", why or "no samples")


def run_op(op, checks=CHECKS, max_samples=3, timeout=60):
    """All cases of one op: a row for the report."""
    name = op_name(op)
    torch_ocl.reset_fallback_stats()
    cache, results = {}, []
    for check, dt, rg in cases(op, checks):
        if timeout:
            signal.alarm(timeout)
        t0 = time.time()
        try:
            status, detail = run_check(op, check, dt, max_samples, rg, cache)
        except C.Timeout:
            status, detail = "fail", f"timeout after {timeout} s"
        finally:
            if timeout:
                signal.alarm(0)
        r = {"check": check, "dtype": dtype_name(dt), "status": status, "detail": detail,
             "seconds": round(time.time() - t0, 2)}
        reason = known_reason(name, check, dt)
        if reason:
            r["known"] = reason
            if status == "fail":
                r["status"] = "known"
        results.append(r)
    fb = sorted(torch_ocl.fallback_stats())
    return {"op": name, "path": "fallback" if fb else "native", "fallback_ops": fb, "cases": results}


# ---------------------------------------------------------------------------
# report

STATUSES = ("pass", "fail", "n/a", "known")


def summarize(rows, seconds, args):
    counts = {c: {s: 0 for s in STATUSES} for c in CHECKS}
    for r in rows:
        for c in r["cases"]:
            counts[c["check"]][c["status"]] += 1
    for r in rows:  # checks that do not apply to an op at all count as n/a once per op
        have = {c["check"] for c in r["cases"]}
        for c in args.checks:
            if c not in have:
                counts[c]["n/a"] += 1
    return {"torch": torch.__version__, "torch_ocl": torch_ocl.__version__, "commit": _commit(),
            "device": torch.ocl.get_device_name(0), "date": time.strftime("%Y-%m-%d"),
            "seconds": round(seconds, 1), "max_samples": args.max_samples, "entries": len(rows),
            "checks": args.checks, "counts": {c: counts[c] for c in args.checks}, "ops": rows}


def _commit():
    import subprocess
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        return "unknown"


def compact(rep):
    """The report for the JSON file: per op, 'check/dtype' -> status, or
    [status, detail] (a known case: [status, detail, reason])."""
    ops = []
    for r in rep["ops"]:
        cases = {}
        for c in r["cases"]:
            v = [c["status"]] + ([c["detail"]] if c["detail"] or c.get("known") else []) + \
                ([c["known"]] if c.get("known") else [])
            cases[f"{c['check']}/{c['dtype']}"] = v[0] if len(v) == 1 else v
        ops.append({"op": r["op"], "path": r["path"], "fallback_ops": r["fallback_ops"],
                    "seconds": round(sum(c["seconds"] for c in r["cases"]), 2), "cases": cases})
    return {**rep, "ops": ops}


def failures(rep):
    return [(r["op"], c["dtype"], c["check"], c["detail"], r["path"])
            for r in rep["ops"] for c in r["cases"] if c["status"] == "fail"]


def headline(rep):
    lines = [f"OpInfo contract checks: {rep['entries']} entries, up to {rep['max_samples']} samples "
             f"per (op, check, dtype), {rep['seconds']} s"]
    for c, n in rep["counts"].items():
        lines.append(f"  {c:18s} " + "  ".join(f"{s} {n[s]:4d}" for s in STATUSES))
    return "\n".join(lines)


def markdown(rep):
    out = ["# OpInfo contract checks on `ocl`", "",
           "Generated by `make conformance` (tools/conformance_contracts.py); do not edit by hand. "
           "See the tool's docstring for what each check asserts; values as in [coverage.md](coverage.md).", "",
           f"torch {rep['torch']}, torch_ocl {rep['torch_ocl']} (commit {rep['commit']}), device {rep['device']}, "
           f"{rep['date']}, {rep['seconds']} s, up to {rep['max_samples']} samples per (op, check, dtype).", "",
           "Counts are (op, check, dtype) cases (an op to which a check does not apply in any dtype counts "
           "once); n/a = the check does not apply (no out=, no in-place variant, not a unary ufunc, a complex "
           "result, the CPU refuses every sample, the op already fails on ocl with plain contiguous inputs "
           "(coverage.md reports that), PyTorch's own test excuses the op on every device, ...); known = a "
           "reasoned exception in tools/conformance_known.py (KNOWN_CONTRACT_FAILURES). path: native, or "
           "the aten ops that ran through the CPU fallback during the op's checks (backward included).", ""]
    out += C.contract_counts_table(rep["counts"])
    fl = failures(rep)
    out += ["", f"## Failures ({len(fl)})", "", "| op | path | dtype | check | error |", "|---|---|---|---|---|"]
    for op, dt, check, detail, path in fl:
        out.append(f"| {op} | {path} | {dt} | {check} | {detail.replace('|', '/').replace(chr(10), ' ')[:240]} |")
    kn = [(r["op"], c) for r in rep["ops"] for c in r["cases"] if c["status"] == "known"]
    if kn:
        out += ["", "## Known", "", "| op | dtype | check | reason |", "|---|---|---|---|"]
        for op, c in kn:
            out.append(f"| {op} | {c['dtype']} | {c['check']} | {c['known']} |")
    out += ["", "## Per op", "",
            "A cell lists the dtypes that failed; empty = the check has no case for the op.", "",
            "| op | path | " + " | ".join(rep["checks"]) + " |", "|---|---|" + "---|" * len(rep["checks"])]
    for r in rep["ops"]:
        cells = []
        for check in rep["checks"]:
            cs = [c for c in r["cases"] if c["check"] == check]
            if not cs:
                cells.append("")
            elif any(c["status"] == "fail" for c in cs):
                cells.append("fail " + ",".join(c["dtype"] for c in cs if c["status"] == "fail"))
            elif any(c["status"] == "known" for c in cs):
                cells.append("known")
            elif any(c["status"] == "pass" for c in cs):
                cells.append("pass")
            else:
                cells.append("n/a")
        path = "native" if r["path"] == "native" else "fallback: " + " ".join(
            x.replace("aten::", "") for x in r["fallback_ops"][:3]) + ("..." if len(r["fallback_ops"]) > 3 else "")
        out.append(f"| {r['op']} | {path} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all)")
    ap.add_argument("--checks", default="", help="comma-separated checks (default: all): " + ",".join(CHECKS))
    ap.add_argument("--max-samples", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per (op, check, dtype)")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--quiet", action="store_true", help="no per-failure lines while running")
    args = ap.parse_args()
    args.checks = [c for c in args.checks.split(",") if c] or list(CHECKS)
    bad = [c for c in args.checks if c not in CHECKS]
    if bad:
        ap.error(f"unknown checks {bad}; choose from {CHECKS}")
    warnings.simplefilter("ignore")
    wanted = set(filter(None, args.ops.split(",")))
    ops = [op for op in op_db if not wanted or op.name in wanted or op_name(op) in wanted]
    signal.signal(signal.SIGALRM, C._alarm)
    rows, start = [], time.time()
    try:
        from tqdm import tqdm
        it = tqdm(ops, desc="OpInfo contracts on ocl", unit="op")
    except ImportError:
        it = ops
    for op in it:
        row = run_op(op, args.checks, args.max_samples, args.timeout)
        rows.append(row)
        if not args.quiet:
            for c in row["cases"]:
                if c["status"] == "fail":
                    print(f"FAIL {row['op']} [{c['dtype']}] {c['check']}: {c['detail']}", file=sys.stderr, flush=True)
    torch_ocl.set_fallback_policy("warn")
    rep = summarize(rows, time.time() - start, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(compact(rep), f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rep))
    print(headline(rep))


if __name__ == "__main__":
    main()
