"""OpInfo conformance: PyTorch's operator database run on `ocl` against the CPU.

For every OpInfo entry and each dtype it supports among float32, float16,
bfloat16, float64, complex64, int64, int32, uint8 and bool, run its sample inputs on ocl
and on the CPU and compare; for float32 entries that support autograd also
compare gradients. Each (op, dtype) is classified:

  pass       every sample ran natively (TORCH_OCL_FALLBACK=error) and matched
  mismatch   ran natively but some output differed from the CPU, and a float64
             (complex128) reference does not show ocl right (within tolerance of it, or
             no further from it than twice the CPU's own error)
  fallback   needs an op without an ocl kernel (then re-run with the fallback
             on: 'fallback' if the result is right, 'fallback-mismatch' if not)
  error      ocl raised where the CPU did not
  random     a random op: ran natively, values not comparable with the CPU
             (a sample random by construction, e.g. dropout_p > 0, is not
             compared; the op's other samples still are)

Floating outputs are compared with the tolerance of their own dtype (an
integer input may give float outputs), integer and bool outputs exactly;
indices that ties make ambiguous (topk, kthvalue, unstable sort) are checked
by gathering. Factory samples naming a device run with device='ocl'.

Usage:
  python tools/conformance.py [--ops add,sub] [--max-samples N] \
      [--markdown docs/coverage.md] [--json docs/coverage.json]
"""

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
import warnings

import torch
import torch_ocl
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten, tree_map

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conformance_known import KNOWN_MISMATCHES  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64,
          torch.int64, torch.int32, torch.uint8, torch.bool]
RANDOM_OPS = ("bernoulli", "multinomial", "normal", "uniform", "rand", "randn", "randint",
              "nn.functional.dropout", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
              "nn.functional.rrelu", "randint_like", "rand_like", "randn_like", "empty", "empty_like",
              "new_empty", "new_empty_strided", "empty_strided", "empty_permuted", "exponential",
              "geometric", "cauchy", "log_normal")
# (atol, rtol), chosen by the dtype of each OUTPUT: an integer input whose op
# returns floats (sin, softmax(dtype=...)) is compared with float tolerances.
TOL = {torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2), torch.float32: (1.3e-5, 1e-4),
       torch.float64: (1e-7, 1e-7)}
# Ops whose samples build their tensors themselves and name the device in a
# `device` argument: the ocl side runs with device='ocl' (any *_like / new_*
# input is moved like every other tensor).
FACTORY_OPS = ("arange", "linspace", "logspace", "zeros", "ones", "full", "zeros_like", "ones_like",
               "full_like", "new_zeros", "new_ones", "new_full", "scalar_tensor", "tril_indices",
               "triu_indices", "signal.windows.", "to", "eye", "empty", "empty_like", "new_empty",
               "new_empty_strided", "empty_strided", "empty_permuted", "randint_like", "rand_like",
               "randn_like", "randint", "rand", "randn")
# Arguments PyTorch requires on the CPU: (op name, positional index, keyword).
CPU_ARGS = {"tensor_split": (0, "tensor_indices_or_sections")}
# Ops whose indices are ambiguous under ties: values are compared and indices
# checked by gathering (input at the returned indices == returned values).
# sort / argsort only when not stable (a stable sort has one right answer).
TIE_OPS = ("topk", "kthvalue", "sort", "argsort")
# Decompositions defined only up to the signs of their vectors (eigenvectors,
# singular vectors; complex ones up to a phase, which the low-rank ones take
# from their random projection): both sides are compared after the sample's
# own output_process_fn_grad, which PyTorch's OpInfo gives them for exactly
# this (|V|, |U|, U @ Vh).
SIGN_FREE_OPS = ("linalg.eigh", "linalg.svd", "svd", "svd_lowrank", "pca_lowrank")


def _canonical(op, sample, out):
    return sample.output_process_fn_grad(out) if op.name in SIGN_FREE_OPS else out


def _arg(sample, pos, name, default):
    if name in sample.kwargs:
        return sample.kwargs[name]
    return sample.args[pos] if len(sample.args) > pos else default


# Samples random by construction (dropout active): values not comparable. The
# op's deterministic samples are still compared.
RANDOM_SAMPLES = {
    "nn.functional.scaled_dot_product_attention": lambda s: _arg(s, 3, "dropout_p", 0.0) > 0,
    "nn.functional.multi_head_attention_forward":
        lambda s: _arg(s, 9, "dropout_p", 0.0) > 0 and _arg(s, 100, "training", True),
}


def _with_random_samples(nd):
    """F.fractional_max_pool2d/3d draw their windows from random samples when
    the caller gives none, and the OpInfo gives none: both devices would pool
    different windows. Give both the same samples, drawn here with a seed."""
    def fix(sample):
        if "_random_samples" in sample.kwargs:
            return sample
        x = sample.input
        n = x.size(0) if x.dim() == nd + 2 else 1
        g = torch.Generator().manual_seed(0)
        s = torch.rand(n, x.size(-nd - 1), nd, generator=g, dtype=x.dtype)
        return type(sample)(x, args=sample.args, kwargs={**sample.kwargs, "_random_samples": s},
                            output_process_fn_grad=sample.output_process_fn_grad)
    return fix


# Sample rewrites that make an op's result comparable across devices.
SAMPLE_FIXUPS = {"nn.functional.fractional_max_pool2d": _with_random_samples(2),
                 "nn.functional.fractional_max_pool3d": _with_random_samples(3)}


def _samples(op, dtype, requires_grad=False):
    fix = SAMPLE_FIXUPS.get(op.name, lambda s: s)
    return (fix(s) for s in op.sample_inputs("cpu", dtype, requires_grad=requires_grad))


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def _is_factory(op):
    return op.name in FACTORY_OPS or op.name.startswith(tuple(n for n in FACTORY_OPS if n.endswith(".")))


def _is_cpu_device(x):
    return (isinstance(x, str) and x == "cpu") or (isinstance(x, torch.device) and x.type == "cpu")


def _to_ocl(op, sample):
    d = sample.transform(lambda t: t.detach().to("ocl").requires_grad_(t.requires_grad)
                         if isinstance(t, torch.Tensor) else t)
    if op.name in CPU_ARGS:  # keep these on the CPU, where PyTorch requires them
        pos, name = CPU_ARGS[op.name]
        if len(sample.args) > pos:
            d.args = tuple(sample.args[i] if i == pos else a for i, a in enumerate(d.args))
        if name in sample.kwargs:
            d.kwargs = {**d.kwargs, name: sample.kwargs[name]}
    if _is_factory(op):  # the ocl side builds its tensors on ocl
        d.args = tuple("ocl" if _is_cpu_device(a) else a for a in d.args)
        d.kwargs = {k: ("ocl" if k == "device" and _is_cpu_device(v) else v) for k, v in d.kwargs.items()}
    return d


def _is_random_sample(op, sample):
    pred = RANDOM_SAMPLES.get(op.name)
    return bool(pred and pred(sample))


def _tensors(out):
    leaves, _ = tree_flatten(out)
    return leaves


def _tol(dtype):
    """(atol, rtol) for values of `dtype`: exact for integers and bool."""
    if dtype.is_complex:
        dtype = dtype.to_real()
    return TOL.get(dtype, (0, 0))


def _compare(expected, actual, dtype):
    """dtype: the sample's input dtype, used only for Python float outputs."""
    el, al = _tensors(expected), _tensors(actual)
    if len(el) != len(al):
        raise AssertionError(f"{len(al)} outputs, expected {len(el)}")
    for e, a in zip(el, al):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                raise AssertionError("expected a tensor output")
            if a.device.type != "ocl" and e.device.type == "cpu" and a.numel():
                raise AssertionError(f"output on {a.device}, expected ocl")
            atol, rtol = _tol(e.dtype)
            torch.testing.assert_close(a.detach().cpu(), e.detach(), atol=atol, rtol=rtol, equal_nan=True,
                                       check_device=False)
        elif isinstance(e, float) and isinstance(a, float):
            # a float computed from integers is at best float32 on the device
            atol, rtol = _tol(dtype if dtype.is_floating_point else torch.float32)
            torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True)
        elif e != a and not (isinstance(e, torch.dtype) or e is None):
            raise AssertionError(f"got {a!r}, expected {e!r}")


def _compare_ties(op, sample, expected, actual, dtype):
    """topk / kthvalue: (values, indices). Under ties the indices may differ
    and both be right: compare values, then check that the input at the
    returned indices holds the returned values, as PyTorch's tests do."""
    x = sample.input.detach()
    if op.name in ("sort", "argsort"):
        return _compare_sort_ties(op, sample, x, expected, actual, dtype)
    ev, ei = expected
    av, ai = actual
    if ai.device.type != "ocl" or av.device.type != "ocl":
        raise AssertionError(f"output on {av.device}, expected ocl")
    av, ai = av.detach().cpu(), ai.cpu()
    dim = _arg(sample, 1, "dim", -1)
    if op.name == "topk" and not _arg(sample, 3, "sorted", True):
        # unsorted: the order itself is unspecified
        order = av.sort(dim, descending=True).indices if x.dim() else None
        if order is not None:
            av, ai = av.gather(dim, order), ai.gather(dim, order)
            ev = ev.sort(dim, descending=True).values
    atol, rtol = _tol(ev.dtype)
    torch.testing.assert_close(av, ev.detach(), atol=atol, rtol=rtol, equal_nan=True)
    if ai.shape != ei.shape or ai.dtype != ei.dtype:
        raise AssertionError(f"indices {ai.dtype}{tuple(ai.shape)}, expected {ei.dtype}{tuple(ei.shape)}")
    if x.dim() == 0:
        if ai.numel() and ai.item() != 0:
            raise AssertionError("index of a 0-dim input must be 0")
        return
    keep = op.name == "topk" or _arg(sample, 2, "keepdim", False)
    idx, vals = (ai, av) if keep else (ai.unsqueeze(dim), av.unsqueeze(dim))
    if idx.numel() and (idx.min() < 0 or idx.max() >= x.size(dim)):
        raise AssertionError("index out of range")
    torch.testing.assert_close(x.gather(dim, idx), vals, atol=0, rtol=0, equal_nan=True,
                               msg=lambda m: "values at the returned indices differ from the returned values: " + m)


def _compare_sort_ties(op, sample, x, expected, actual, dtype):
    """Unstable sort / argsort: the indices are a permutation along dim that
    puts the input in the same order as the CPU's."""
    if _arg(sample, 99, "stable", False) or x.dim() == 0:
        return _compare(expected, actual, dtype)
    ei, ai = (expected[1], actual[1]) if op.name == "sort" else (expected, actual)
    if ai.device.type != "ocl":
        raise AssertionError(f"output on {ai.device}, expected ocl")
    if op.name == "sort":
        _compare(expected[0], actual[0], dtype)
    ai = ai.cpu()
    if ai.shape != ei.shape or ai.dtype != ei.dtype:
        raise AssertionError(f"indices {ai.dtype}{tuple(ai.shape)}, expected {ei.dtype}{tuple(ei.shape)}")
    dim = _arg(sample, 0, "dim", -1)
    n = x.size(dim)
    perm = torch.arange(n).expand_as(ai.movedim(dim, -1)).movedim(-1, dim)
    if ai.numel() and not torch.equal(ai.sort(dim).values, perm):
        raise AssertionError("indices are not a permutation along dim")
    torch.testing.assert_close(x.gather(dim, ai), x.gather(dim, ei), atol=0, rtol=0, equal_nan=True,
                               msg=lambda m: "the input in the returned order differs from the CPU's: " + m)


def _upcast(sample):
    """The sample with every floating tensor in float64, every complex one in complex128
    (leaves keep requires_grad)."""
    def up(t):
        if isinstance(t, torch.Tensor) and t.dtype.is_floating_point:
            return t.detach().double().requires_grad_(t.requires_grad)
        if isinstance(t, torch.Tensor) and t.dtype.is_complex:
            return t.detach().to(torch.complex128).requires_grad_(t.requires_grad)
        return t
    return type(sample)(tree_map(up, sample.input), args=tree_map(up, sample.args),
                        kwargs=tree_map(up, sample.kwargs), output_process_fn_grad=sample.output_process_fn_grad)


def _closer_than_cpu(expected, actual, reference):
    """When ocl and the CPU disagree on floating outputs: is ocl right by a
    float64 reference (rounded to the output's dtype)? Each floating output
    must be within the dtype's tolerance of that value, or have an error (max over finite
    elements) no more than twice the CPU's own; non-finite elements must
    match the CPU's or the reference's exactly. Other outputs must be equal."""
    el, al, rl = _tensors(expected), _tensors(actual), _tensors(reference)
    if not (len(el) == len(al) == len(rl)):
        return False
    for e, a, r in zip(el, al, rl):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor) or not isinstance(r, torch.Tensor):
            if e != a:
                return False
            continue
        a = a.detach().cpu()
        if not (e.dtype.is_floating_point or e.dtype.is_complex) or a.shape != e.shape or r.shape != e.shape:
            if not torch.equal(a, e):
                return False
            continue
        # the reference rounded to the output's dtype: the best any result can be
        # (a value past float16's range is inf there, as ocl's correctly rounded one)
        wide = torch.complex128 if e.dtype.is_complex else torch.float64
        r, a64, e64 = r.detach().to(e.dtype).to(wide), a.to(wide), e.detach().to(wide)
        fin = torch.isfinite(r)
        same_nonfinite = lambda x: torch.equal(torch.nan_to_num(x[~fin], 1.0), torch.nan_to_num(r[~fin], 1.0))  # noqa: E731
        if not (same_nonfinite(a64) or torch.equal(torch.nan_to_num(a64[~fin], 1.0), torch.nan_to_num(e64[~fin], 1.0))):
            return False
        if not fin.any():
            continue
        err_a, err_e = (a64 - r).abs()[fin], (e64 - r).abs()[fin]
        if not torch.isfinite(err_a).all():
            return False
        atol, rtol = _tol(e.dtype)
        if (err_a <= atol + rtol * r.abs()[fin]).all():
            continue
        if err_a.max() > 2 * err_e.max():
            return False
    return True


def _judgeable(op):
    """A known mismatch keeps its status: its reference would share the flaw."""
    name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    return not any(k[0] == name for k in KNOWN_MISMATCHES)


def _judge_by_float64(op, sample, expected, actual):
    """True if ocl's result is right by the float64 reference (see _closer_than_cpu)."""
    try:
        s64 = _upcast(sample)
        reference = _canonical(op, s64, op(s64.input, *s64.args, **s64.kwargs))
    except Exception:
        return False
    return _closer_than_cpu(expected, actual, reference)


def _grads(op, sample, inputs):
    out = _canonical(op, sample, op(sample.input, *sample.args, **sample.kwargs))
    outs = [t for t in _tensors(out) if isinstance(t, torch.Tensor) and t.requires_grad
            and t.dtype.is_floating_point]
    if not outs or not inputs:
        return None
    total = sum((o.float().sum() if o.numel() else o.sum()) for o in outs)
    return torch.autograd.grad(total, inputs, allow_unused=True)


def run_case(op, dtype, max_samples, policy):
    """Returns (status, detail) for one (op, dtype)."""
    torch_ocl.set_fallback_policy(policy)
    is_random = op.name in RANDOM_OPS or op.name.startswith(RANDOM_OPS)
    ran = compared = judged64 = 0
    for i, sample in enumerate(_samples(op, dtype)):
        if i >= max_samples:
            break
        try:
            expected = _canonical(op, sample, op(sample.input, *sample.args, **sample.kwargs))
        except Exception:
            continue  # the CPU refuses this sample too
        dsample = _to_ocl(op, sample)
        random_sample = is_random or _is_random_sample(op, sample)
        try:
            actual = _canonical(op, dsample, op(dsample.input, *dsample.args, **dsample.kwargs))
            if random_sample:
                pass
            elif op.name in TIE_OPS:
                _compare_ties(op, sample, expected, actual, dtype)
            else:
                try:
                    _compare(expected, actual, dtype)
                except AssertionError:
                    # The CPU's own float16/bfloat16/float32 result can be the
                    # less accurate one: ask a float64 reference.
                    if not ((dtype.is_floating_point or dtype.is_complex) and _judgeable(op) and
                            _judge_by_float64(op, sample, expected, actual)):
                        raise
                    judged64 += 1
        except NotImplementedError as e:
            if "TORCH_OCL_FALLBACK" in str(e):
                return "fallback", str(e).split("'")[1] if "'" in str(e) else ""
            return "error", f"{type(e).__name__}: {str(e)[:200]}"
        except AssertionError as e:
            return "mismatch", str(e).strip().splitlines()[0][:200]
        except Timeout:
            raise
        except Exception as e:
            return "error", f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"
        ran += 1
        compared += not random_sample
    if ran == 0:
        return "no-samples", ""
    notes = []  # recorded in the JSON, not shown for a pass
    if compared < ran and compared:
        notes.append(f"{ran - compared} random sample(s) not compared")
    if judged64:
        notes.append(f"{judged64} sample(s) differ from the CPU but are right by a float64 reference")
    return ("pass" if compared else "random"), "; ".join(notes)


def run_grad_case(op, max_samples):
    torch_ocl.set_fallback_policy("error")
    if op.name in RANDOM_OPS or op.name.startswith(RANDOM_OPS):
        return "random"  # gradients through a random mask are not comparable
    compared = 0
    for i, sample in enumerate(_samples(op, torch.float32, requires_grad=True)):
        if i >= max_samples:
            break
        if _is_random_sample(op, sample):
            continue
        cpu_inputs = [t for t in _tensors((sample.input, sample.args, sample.kwargs))
                      if isinstance(t, torch.Tensor) and t.requires_grad]
        try:
            expected = _grads(op, sample, cpu_inputs)
        except Exception:
            continue
        if expected is None:
            continue
        dsample = _to_ocl(op, sample)
        dev_inputs = [t for t in _tensors((dsample.input, dsample.args, dsample.kwargs))
                      if isinstance(t, torch.Tensor) and t.requires_grad]
        try:
            actual = _grads(op, dsample, dev_inputs)
            exp_l = [g for g in expected if g is not None]
            act_l = [g for g in actual if g is not None]
            try:
                _compare(exp_l, act_l, torch.float32)
            except AssertionError:
                if not _judgeable(op):
                    raise
                s64 = _upcast(sample)
                ref_inputs = [t for t in _tensors((s64.input, s64.args, s64.kwargs))
                              if isinstance(t, torch.Tensor) and t.requires_grad]
                try:
                    ref = _grads(op, s64, ref_inputs)
                except Exception:
                    raise AssertionError("no float64 reference")
                if ref is None or not _closer_than_cpu(exp_l, act_l, [g for g in ref if g is not None]):
                    raise
        except NotImplementedError as e:
            return "fallback" if "TORCH_OCL_FALLBACK" in str(e) else "error"
        except AssertionError:
            return "mismatch"
        except Timeout:
            raise
        except Exception:
            return "error"
        compared += 1
    return "pass" if compared else "no-samples"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all)")
    ap.add_argument("--max-samples", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per (op, dtype)")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--contracts", help="JSON of tools/conformance_contracts.py: its per-check counts "
                    "become a section of the markdown")
    ap.add_argument("--errors", help="JSON of tools/conformance_errors.py: its counts of PyTorch's error "
                    "inputs become a section of the markdown")
    ap.add_argument("--render-only", action="store_true", help="write --markdown from the report already in "
                    "--json (and --contracts/--errors) without running anything")
    args = ap.parse_args()
    if args.render_only:
        with open(args.json) as f:
            report = json.load(f)
        return _write_markdown(report, args)
    warnings.simplefilter("ignore")
    wanted = set(filter(None, args.ops.split(",")))
    ops = [op for op in op_db if not wanted or op.name in wanted or f"{op.name}.{op.variant_test_name}" in wanted]
    signal.signal(signal.SIGALRM, _alarm)
    rows, start = [], time.time()
    try:
        from tqdm import tqdm
        it = tqdm(ops, desc="OpInfo on ocl", unit="op")
    except ImportError:
        it = ops
    for op in it:
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        supported = op.supported_dtypes("cpu")
        row = {"op": name, "dtypes": {}, "grad": None}
        for dt in DTYPES:
            if dt not in supported:
                continue
            key = str(dt).replace("torch.", "")
            signal.alarm(args.timeout)
            try:
                status, detail = run_case(op, dt, args.max_samples, "error")
                if status == "fallback":
                    s2, d2 = run_case(op, dt, args.max_samples, "silent")
                    status = "fallback" if s2 in ("pass", "random") else "fallback-mismatch"
                    detail = detail or d2
            except Timeout:
                status, detail = "error", f"timeout after {args.timeout} s"
            finally:
                signal.alarm(0)
            known = KNOWN_MISMATCHES.get((name, key)) or KNOWN_MISMATCHES.get((name, "*"))
            row["dtypes"][key] = {"status": status, "detail": detail, **({"known": known} if known else {})}
        if op.supports_autograd and torch.float32 in supported:
            signal.alarm(args.timeout)
            try:
                row["grad"] = run_grad_case(op, args.max_samples)
            except Timeout:
                row["grad"] = "error"
            finally:
                signal.alarm(0)
        rows.append(row)
    torch_ocl.set_fallback_policy("warn")
    report = summarize(rows, time.time() - start, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    _write_markdown(report, args)
    print(headline(report))


def _write_markdown(report, args):
    if args.markdown:
        contracts = None
        if args.contracts and os.path.exists(args.contracts):
            with open(args.contracts) as f:
                contracts = json.load(f)
        errors = None
        if args.errors and os.path.exists(args.errors):
            with open(args.errors) as f:
                errors = json.load(f)
        with open(args.markdown, "w") as f:
            f.write(markdown(report, contracts, errors))


def summarize(rows, seconds, args):
    per_dtype = {}
    for r in rows:
        for dt, v in r["dtypes"].items():
            c = per_dtype.setdefault(dt, {})
            c[v["status"]] = c.get(v["status"], 0) + 1
    grads = {}
    for r in rows:
        if r["grad"]:
            grads[r["grad"]] = grads.get(r["grad"], 0) + 1
    from torch_ocl.__main__ import native_ops  # the count docs/native_ops.md gives
    native = native_ops()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = "unknown"
    return {
        "torch": torch.__version__, "torch_ocl": torch_ocl.__version__, "commit": commit,
        "device": torch.ocl.get_device_name(0), "driver": torch.ocl.get_device_properties(0).driver_version,
        "machine": platform.machine(), "date": time.strftime("%Y-%m-%d"),
        "seconds": round(seconds, 1), "max_samples": args.max_samples, "entries": len(rows),
        "native_aten_overloads": len(native), "per_dtype": per_dtype, "grad": grads, "ops": rows,
    }


def headline(rep):
    lines = [f"OpInfo entries: {rep['entries']}; native aten overloads registered: {rep['native_aten_overloads']}"]
    for dt, c in rep["per_dtype"].items():
        total = sum(c.values())
        lines.append(f"  {dt:9s} native pass {c.get('pass', 0) + c.get('random', 0):4d} / {total:4d}   "
                     + "  ".join(f"{k} {v}" for k, v in sorted(c.items()) if k not in ("pass",)))
    if rep["grad"]:
        lines.append("  gradients (float32): " + "  ".join(f"{k} {v}" for k, v in sorted(rep["grad"].items())))
    lines.append(f"  ({rep['seconds']} s, up to {rep['max_samples']} samples per op and dtype)")
    return "\n".join(lines)


def contracts_section(contracts, link="coverage_contracts.md"):
    """Markdown lines: the per-check counts of tools/conformance_contracts.py's report."""
    out = ["## OpInfo contract checks", "",
           f"out= (wrong device, unsafe dtype, resize, computation dtype, aliasing, strides), variant "
           f"consistency, non-contiguous and offset inputs and grad_outputs, in-place on views and extremal "
           f"values of unary ufuncs, by tools/conformance_contracts.py ({contracts['entries']} entries, "
           f"{contracts['seconds']} s, commit {contracts['commit']}). Counts are (op, check, dtype) cases; "
           f"each failure and the per-op table: [{link}]({link}).", ""]
    return out + contract_counts_table(contracts["counts"]) + [""]


def contract_counts_table(counts):
    """Markdown table rows: per check, the pass / fail / n/a / known counts."""
    out = ["| check | pass | fail | n/a | known |", "|---|---|---|---|---|"]
    for c, n in counts.items():
        out.append(f"| {c} | {n.get('pass', 0)} | {n.get('fail', 0)} | {n.get('n/a', 0)} | {n.get('known', 0)} |")
    return out


def errors_section(errors):
    """Markdown lines: the counts of tools/conformance_errors.py's run of PyTorch's error inputs."""
    c = errors["counts"]
    out = ["## Error inputs", "",
           f"Every `error_inputs` (and `error_inputs_sparse`) case of the OpInfo database, run on ocl and on "
           f"the CPU by tools/conformance_errors.py ({errors['cases']} cases, {errors['seconds']} s): ocl must "
           f"raise the exception type the CPU raises (the message may differ), never return a value, crash or "
           f"hang. n/a: the CPU itself does not raise (a check of another device), or the inputs cannot be "
           f"made on ocl (complex dtypes, more than 25 dims: the generator stops at the first; the reason is in "
           f"docs/coverage_errors.json).", "",
           "| pass | known | wrong-type | no-raise | crash | hang | n/a |", "|---|---|---|---|---|---|---|",
           "| " + " | ".join(str(c.get(k, 0)) for k in ("pass", "known", "wrong-type", "no-raise", "crash", "hang",
                                                        "n/a")) + " |", ""]
    for case, status, detail in errors["failures"] + errors.get("known", []):
        out.append(f"- {case}: {status} ({detail})")
    return out + ([""] if errors["failures"] or errors.get("known") else [])


def markdown(rep, contracts=None, errors=None):
    out = ["# OpInfo conformance on `ocl`", "",
           "Generated by `make conformance` (tools/conformance.py); do not edit by hand.", "",
           f"torch {rep['torch']}, torch_ocl {rep['torch_ocl']} (commit {rep['commit']}), device "
           f"{rep['device']} (driver {rep['driver']}), {rep['date']}, {rep['seconds']} s, up to "
           f"{rep['max_samples']} samples per (op, dtype).", "",
           f"**{rep['native_aten_overloads']}** native aten overloads registered; "
           f"**{rep['entries']}** OpInfo entries.", "", "```", headline(rep), "```", "",
           "Statuses: pass = native and equal to CPU (or, where they differ in floating point, right by a float64 reference: within tolerance of it or no further from it than twice the CPU's own error); random = native random op (values not compared); "
           "mismatch = native but differs from CPU; fallback = needs an op without an ocl kernel, result right "
           "through the CPU fallback; fallback-mismatch = wrong even through the fallback; error = ocl raised "
           "where the CPU did not. Known mismatches with reasons: tools/conformance_known.py.", ""]
    if contracts:
        out += contracts_section(contracts)
    if errors:
        out += errors_section(errors)
    out += ["| op | " + " | ".join(str(d).replace("torch.", "") for d in DTYPES) + " | grad f32 | note |",
            "|---|" + "---|" * (len(DTYPES) + 2)]
    for r in rep["ops"]:
        cells, notes, known = [], [], []
        for d in DTYPES:
            v = r["dtypes"].get(str(d).replace("torch.", ""))
            cells.append(v["status"] if v else "")
            if v and v["status"] not in ("pass", "random") and v.get("detail"):
                notes.append(v["detail"].replace("|", "\\|").replace("\n", " ")[:80])
            if v and v.get("known"):
                known.append("known: " + v["known"])
        note = (known + notes)[0] if known or notes else ""  # a known reason explains the row best
        out.append(f"| {r['op']} | " + " | ".join(cells) + f" | {r['grad'] or ''} | {note} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
