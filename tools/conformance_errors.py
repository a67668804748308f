"""PyTorch's error inputs on `ocl`: every OpInfo ErrorInput must raise, as on the CPU.

OpInfo entries carry `error_inputs` (and, for sparse-capable ops,
`error_inputs_sparse`): inputs PyTorch's test_errors expects to raise a given
exception type. Each one runs on ocl and on the CPU. A case is

  pass       ocl raised the exception type the CPU raised (or, where the CPU did
             not raise, the type the ErrorInput names); the message may differ
  wrong-type ocl raised another type
  no-raise   ocl returned a value where the CPU (or the ErrorInput) raises
  hang       no answer within --timeout seconds
  crash      the process died (the driver restarts after the op and counts it)
  known      a listed, reasoned difference (KNOWN below)
  n/a        the CPU itself neither raises nor raises the named type, or the
             input could not be made on ocl (sparse layouts: ocl has none)

Usage:
  python tools/conformance_errors.py [--ops add,cat] [--every N] [--json docs/coverage_errors.json]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import warnings


# (case, status) -> reason: differences understood and not fixed yet. A listed case that starts
# passing is reported as "fixed" so the entry can be removed.
KNOWN = {
    ("narrow_copy[1]", "wrong-type"):
        "dim out of range: ocl raises IndexError (as CUDA's narrow_copy, via narrow), the CPU's "
        "narrow_copy_dense_cpu an internal-assert RuntimeError",
    ("fft.hfft[0]", "wrong-type"): "runs through the CPU fallback; raises TypeError where the CPU raises IndexError",
    ("fft.irfft[0]", "wrong-type"): "runs through the CPU fallback; raises TypeError where the CPU raises IndexError",
}


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def _call(op, si):
    out = op(si.input, *si.args, **si.kwargs)
    # a lazily checked error must surface: read the result back
    for t in _tensors(out):
        t.cpu()
    return out


def _tensors(x):
    import torch
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _tensors(y)


def _outcome(fn):
    try:
        fn()
        return None
    except Timeout:
        raise
    except Exception as e:  # the exception is the result
        return type(e)


def _inputs(op, device, sparse):
    import torch
    if not sparse:
        return list(op.error_inputs(device))
    out = []
    for layout in (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
        try:
            out += [(layout, e) for e in op.error_inputs_sparse(device, layout)]
        except Exception:
            pass
    return out


def check_op(op, timeout):
    """[(case name, status, detail)] for every error input of op."""
    import torch
    rows = []
    name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    for sparse in (False, True):
        if sparse and getattr(op, "error_inputs_sparse_func", None) is None:
            continue
        try:
            cpu_inputs = _inputs(op, "cpu", sparse)
        except Exception:
            continue  # the entry makes no error inputs (masked.* entries without a function)
        try:
            ocl_inputs = _inputs(op, "ocl", sparse)
        except Exception as e:
            rows += [(f"{name}[{'sparse ' if sparse else ''}{i}]", "n/a", f"inputs on ocl: {type(e).__name__}")
                     for i in range(len(cpu_inputs))]
            continue
        if len(ocl_inputs) != len(cpu_inputs):
            rows.append((f"{name}[*]", "n/a", f"{len(cpu_inputs)} inputs on cpu, {len(ocl_inputs)} on ocl"))
            continue
        for i, (ce, oe) in enumerate(zip(cpu_inputs, ocl_inputs)):
            case = f"{name}[{'sparse ' if sparse else ''}{i}]"
            if sparse:
                (_, ce), (_, oe) = ce, oe
            expected = ce.error_type
            signal.alarm(timeout)
            try:
                c = _outcome(lambda: _call(op, ce.sample_input))
                o = _outcome(lambda: _call(op, oe.sample_input))
            except Timeout:
                rows.append((case, "hang", f"over {timeout} s"))
                continue
            finally:
                signal.alarm(0)
            want = c if c is not None else None
            if want is None:
                # the CPU accepts it (a CUDA-only check): ocl may do either, but must not crash
                rows.append((case, "n/a", f"cpu did not raise (expected {expected.__name__})"))
                continue
            if o is None:
                rows.append((case, "no-raise", f"cpu raised {want.__name__}"))
            elif o is want or issubclass(o, want):
                rows.append((case, "pass", ""))
            else:
                rows.append((case, "wrong-type", f"cpu {want.__name__}, ocl {o.__name__}"))
        torch.ocl.synchronize()
    return rows


def _worker(args):
    import torch
    import torch_ocl
    from torch.testing._internal.common_methods_invocations import op_db
    warnings.simplefilter("ignore")
    torch_ocl.set_fallback_policy("silent")
    signal.signal(signal.SIGALRM, _alarm)
    ops = _select(op_db, args)
    for k, op in enumerate(ops):
        if k < args.start:
            continue
        print(f"OP {k} {op.name}", flush=True)
        for case, status, detail in check_op(op, args.timeout):
            print("ROW " + json.dumps([case, status, detail]), flush=True)
    print("DONE", flush=True)


def _select(op_db, args):
    wanted = set(filter(None, args.ops.split(",")))
    ops = [op for op in op_db if not wanted or op.name in wanted
           or f"{op.name}.{op.variant_test_name}" in wanted]
    return ops[args.offset::args.every]


def run_all(args):
    """Run the worker, restarting it after the op a crash killed; the rows."""
    rows, start, t0 = [], 0, time.time()
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--start", str(start),
               "--ops", args.ops, "--every", str(args.every), "--offset", str(args.offset),
               "--timeout", str(args.timeout)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        current, current_name, done = start, "?", False
        for line in proc.stdout:
            if line.startswith("OP "):
                current, current_name = int(line.split()[1]), line.split()[2]
            elif line.startswith("ROW "):
                rows.append(json.loads(line[4:]))
            elif line.startswith("DONE"):
                done = True
        proc.wait()
        if done:
            break
        rows.append([f"{current_name}[*]", "crash", f"exit status {proc.returncode} (OpInfo entry #{current})"])
        start = current + 1
    return rows, time.time() - t0


def summary(rows, seconds):
    rows = [[c, "known", KNOWN[(c, st)]] if (c, st) in KNOWN else [c, st, d] for c, st, d in rows]
    counts = {}
    for _, status, _ in rows:
        counts[status] = counts.get(status, 0) + 1
    return {"cases": len(rows), "counts": counts, "seconds": round(seconds, 1),
            "failures": [r for r in rows if r[1] not in ("pass", "n/a", "known")],
            "known": [r for r in rows if r[1] == "known"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="")
    ap.add_argument("--every", type=int, default=1, help="run every N-th OpInfo entry (a sample)")
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per error input")
    ap.add_argument("--json")
    ap.add_argument("--check", action="store_true", help="exit 1 if any case is not pass or n/a")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return _worker(args)
    rows, seconds = run_all(args)
    rep = summary(rows, seconds)
    rep["rows"] = rows
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=1)
    print(f"error inputs: {rep['cases']} cases, " + ", ".join(f"{k} {v}" for k, v in sorted(rep["counts"].items()))
          + f" ({rep['seconds']} s)")
    for r in rep["failures"]:
        print("  ", *r)
    return 1 if rep["failures"] and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
