"""python -m torch_ocl trace SCRIPT.py [ARGS...]: what a script did on ocl.

Runs the script in this process under a TorchDispatchMode and reports
- the aten ops that ran on ocl, with counts;
- the ops that left the device (the CPU fallback), with counts and the
  script's lines that called them (the frame nearest the op that is not in
  torch or torch_ocl);
- host-device copies by direction, with counts and bytes.

The fallback is seen, not guessed: an op fell back when the fallback's own
counters (torch_ocl.fallback_stats) moved while it ran. Composite ops are
seen as the aten ops they decompose into, as the device sees them.
Tracing costs Python time per op; use it to find what to fix, not to time.
"""

import collections
import json
import os
import runpy
import sys
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import torch_ocl

_COPY_OPS = {"aten::_to_copy", "aten::copy_", "aten::_copy_from", "aten::_copy_from_and_resize"}
_OWN_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, torch_ocl))


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)


def _call_site():
    """file:line of the innermost frame outside torch and torch_ocl."""
    for fr in reversed(traceback.extract_stack()[:-3]):
        if not fr.filename.startswith(_OWN_DIRS) and not fr.filename.startswith("<"):
            return f"{fr.filename}:{fr.lineno}"
    return "?"


class OpTracer(TorchDispatchMode):
    """Counts ops on ocl, fallbacks with call sites, and host-device copies."""

    def __init__(self):
        super().__init__()
        self.on_device = collections.Counter()
        self.fallback = collections.Counter()
        self.fallback_sites = collections.defaultdict(collections.Counter)
        self.copies = collections.Counter()  # "cpu->ocl" -> count
        self.copy_bytes = collections.Counter()

    @staticmethod
    def _fallback_total():
        return sum(torch_ocl.fallback_stats().values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        before = self._fallback_total()
        out = func(*args, **kwargs)
        name = func._schema.name
        ins = list(_tensors(args)) + list(_tensors(kwargs))
        outs = list(_tensors(out))
        devs = {t.device.type for t in ins + outs}
        if "ocl" not in devs and not ("device" in kwargs and str(kwargs["device"]).startswith("ocl")):
            return out
        overload = name + ("." + func._overloadname if func._overloadname != "default" else "")
        if self._fallback_total() != before:
            self.fallback[overload] += 1
            self.fallback_sites[overload][_call_site()] += 1
        else:
            self.on_device[overload] += 1
        if name in _COPY_OPS and ins and outs:
            src = ins[1] if name == "aten::copy_" and len(ins) > 1 else ins[0]
            dst = outs[0]
            if src.device.type != dst.device.type:
                key = f"{src.device.type}->{dst.device.type}"
                self.copies[key] += 1
                self.copy_bytes[key] += dst.numel() * dst.element_size()
        return out

    def report(self) -> dict:
        return {
            "ops_on_ocl": dict(self.on_device.most_common()),
            "fallback": {op: {"count": n, "call_sites": dict(self.fallback_sites[op].most_common())}
                         for op, n in self.fallback.most_common()},
            "copies": {k: {"count": n, "bytes": self.copy_bytes[k]} for k, n in sorted(self.copies.items())},
            "totals": {"ops_on_ocl": sum(self.on_device.values()), "fallback": sum(self.fallback.values()),
                       "copies": sum(self.copies.values())},
        }


def to_text(rep: dict) -> str:
    t = rep["totals"]
    lines = [f"torch_ocl trace: {t['ops_on_ocl']} op call(s) on ocl, {t['fallback']} on the CPU (fallback), "
             f"{t['copies']} host-device copies"]
    if rep["fallback"]:
        lines.append("ops that left the device:")
        for op, d in rep["fallback"].items():
            sites = ", ".join(f"{s} (x{n})" for s, n in list(d["call_sites"].items())[:3])
            lines.append(f"  {d['count']:>7}  {op}  from {sites}")
    else:
        lines.append("ops that left the device: none")
    if rep["copies"]:
        lines.append("host-device copies:")
        for k, d in rep["copies"].items():
            lines.append(f"  {d['count']:>7}  {k}  {d['bytes'] / 2**20:.2f} MiB")
    lines.append("ops on ocl (most called first):")
    for op, n in list(rep["ops_on_ocl"].items())[:25]:
        lines.append(f"  {n:>7}  {op}")
    if len(rep["ops_on_ocl"]) > 25:
        lines.append(f"  ... {len(rep['ops_on_ocl']) - 25} more (--json has all)")
    return "\n".join(lines) + "\n"


def run(argv, json_path=None, out=sys.stderr) -> int:
    """Run SCRIPT.py ARGS (or -m MODULE ARGS) under the tracer; print the
    report (and write JSON) even when the script fails."""
    if not argv:
        print("usage: python -m torch_ocl trace [--json PATH] SCRIPT.py [ARGS...] | -m MODULE [ARGS...]", file=out)
        return 2
    module = argv[0] == "-m"
    target = argv[1] if module else argv[0]
    if module and len(argv) < 2 or not module and not os.path.isfile(target):
        print(f"torch_ocl trace: no such script: {target}", file=out)
        return 2
    tracer = OpTracer()
    saved_argv, rc = sys.argv, 0
    sys.argv = argv[1:] if module else argv
    if not module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    try:
        with tracer:
            if module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
        rc = 1
    finally:
        sys.argv = saved_argv
    rep = tracer.report()
    rep["exit_code"] = rc
    out.write(to_text(rep))
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rep, f, indent=2, sort_keys=True)
    return rc
