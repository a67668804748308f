"""OpInfo conformance: PyTorch's operator database run on `ocl` against the CPU.

For every OpInfo entry and each dtype it supports among float32, float16,
bfloat16, float64, int64, int32, uint8 and bool, run its sample inputs on ocl
and on the CPU and compare; for float32 entries that support autograd also
compare gradients. Each (op, dtype) is classified:

  pass       every sample ran natively (TORCH_OCL_FALLBACK=error) and matched
  mismatch   ran natively but some output differed from the CPU
  fallback   needs an op without an ocl kernel (then re-run with the fallback
             on: 'fallback' if the result is right, 'fallback-mismatch' if not)
  error      ocl raised where the CPU did not
  random     a random op: ran natively, values not comparable with the CPU

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
from torch.utils._pytree import tree_flatten

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conformance_known import KNOWN_MISMATCHES  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64,
          torch.int64, torch.int32, torch.uint8, torch.bool]
RANDOM_OPS = ("bernoulli", "multinomial", "normal", "uniform", "rand", "randn", "randint",
              "nn.functional.dropout", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
              "nn.functional.rrelu", "randint_like", "rand_like", "randn_like", "empty", "empty_like",
              "new_empty", "new_empty_strided", "empty_strided", "empty_permuted", "exponential",
              "geometric", "cauchy", "log_normal")
TOL = {torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2), torch.float32: (1.3e-5, 1e-4),
       torch.float64: (1e-7, 1e-7)}


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def _to_ocl(sample):
    return sample.transform(lambda t: t.detach().to("ocl").requires_grad_(t.requires_grad)
                            if isinstance(t, torch.Tensor) else t)


def _tensors(out):
    leaves, _ = tree_flatten(out)
    return leaves


def _compare(expected, actual, dtype):
    el, al = _tensors(expected), _tensors(actual)
    if len(el) != len(al):
        raise AssertionError(f"{len(al)} outputs, expected {len(el)}")
    atol, rtol = TOL.get(dtype, (0, 0))
    for e, a in zip(el, al):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                raise AssertionError("expected a tensor output")
            if a.device.type != "ocl" and e.device.type == "cpu" and a.numel():
                raise AssertionError(f"output on {a.device}, expected ocl")
            torch.testing.assert_close(a.detach().cpu(), e.detach(), atol=atol, rtol=rtol, equal_nan=True,
                                       check_device=False)
        elif isinstance(e, float) and isinstance(a, float):
            torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True)
        elif e != a and not (isinstance(e, torch.dtype) or e is None):
            raise AssertionError(f"got {a!r}, expected {e!r}")


def _grads(op, sample, inputs):
    out = op(sample.input, *sample.args, **sample.kwargs)
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
    ran = 0
    for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
        if i >= max_samples:
            break
        try:
            expected = op(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            continue  # the CPU refuses this sample too
        dsample = _to_ocl(sample)
        try:
            actual = op(dsample.input, *dsample.args, **dsample.kwargs)
            if not is_random:
                _compare(expected, actual, dtype)
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
    if ran == 0:
        return "no-samples", ""
    return ("random" if is_random else "pass"), ""


def run_grad_case(op, max_samples):
    torch_ocl.set_fallback_policy("error")
    for i, sample in enumerate(op.sample_inputs("cpu", torch.float32, requires_grad=True)):
        if i >= max_samples:
            break
        cpu_inputs = [t for t in _tensors((sample.input, sample.args, sample.kwargs))
                      if isinstance(t, torch.Tensor) and t.requires_grad]
        try:
            expected = _grads(op, sample, cpu_inputs)
        except Exception:
            continue
        if expected is None:
            continue
        dsample = _to_ocl(sample)
        dev_inputs = [t for t in _tensors((dsample.input, dsample.args, dsample.kwargs))
                      if isinstance(t, torch.Tensor) and t.requires_grad]
        try:
            actual = _grads(op, dsample, dev_inputs)
            _compare([g for g in expected if g is not None], [g for g in actual if g is not None], torch.float32)
        except NotImplementedError as e:
            return "fallback" if "TORCH_OCL_FALLBACK" in str(e) else "error"
        except AssertionError:
            return "mismatch"
        except Timeout:
            raise
        except Exception:
            return "error"
    return "pass"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all)")
    ap.add_argument("--max-samples", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per (op, dtype)")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
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
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(report))
    print(headline(report))


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
    native = [x for x in torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
              if x.startswith("aten::")]
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


def markdown(rep):
    out = ["# OpInfo conformance on `ocl`", "",
           "Generated by `make conformance` (tools/conformance.py); do not edit by hand.", "",
           f"torch {rep['torch']}, torch_ocl {rep['torch_ocl']} (commit {rep['commit']}), device "
           f"{rep['device']} (driver {rep['driver']}), {rep['date']}, {rep['seconds']} s, up to "
           f"{rep['max_samples']} samples per (op, dtype).", "",
           f"**{rep['native_aten_overloads']}** native aten overloads registered; "
           f"**{rep['entries']}** OpInfo entries.", "", "```", headline(rep), "```", "",
           "Statuses: pass = native and equal to CPU; random = native random op (values not compared); "
           "mismatch = native but differs from CPU; fallback = needs an op without an ocl kernel, result right "
           "through the CPU fallback; fallback-mismatch = wrong even through the fallback; error = ocl raised "
           "where the CPU did not. Known mismatches with reasons: tools/conformance_known.py.", "",
           "| op | " + " | ".join(str(d).replace("torch.", "") for d in DTYPES) + " | grad f32 | note |",
           "|---|" + "---|" * (len(DTYPES) + 2)]
    for r in rep["ops"]:
        cells, notes = [], []
        for d in DTYPES:
            v = r["dtypes"].get(str(d).replace("torch.", ""))
            cells.append(v["status"] if v else "")
            if v and v["status"] not in ("pass", "random") and v.get("detail"):
                notes.append(v["detail"].replace("|", "\\|").replace("\n", " ")[:80])
            if v and v.get("known"):
                notes.append("known: " + v["known"])
        note = notes[0] if notes else ""
        out.append(f"| {r['op']} | " + " | ".join(cells) + f" | {r['grad'] or ''} | {note} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
