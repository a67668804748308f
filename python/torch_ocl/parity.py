"""Parity with torch.cuda and torch.accelerator, measured, never hand-typed.

``python -m torch_ocl parity --markdown docs/parity.md --json docs/parity.json``:

- every public callable of ``torch.cuda`` and ``torch.cuda.memory`` (from
  ``dir()``), and whether ``torch.ocl`` (or ``torch.ocl.memory``) has it;
- every public callable of ``torch.accelerator`` and its submodules, called
  on ocl in a child process: it works, raises (which error), or crashes the
  process. A crash is recorded and the child restarted after that function,
  so one crash hides nothing else.

Required arguments come from one table keyed by parameter name (a device
index, the current stream, the current RNG state, ...), so calling a setter
leaves the state as it was. A function whose required parameter is not in
the table is reported as not called, with the parameter's name.
"""

import inspect
import json
import os
import subprocess
import sys
import types
import warnings
from typing import Any, Callable, Dict, List, Tuple

CHILD_TIMEOUT_S = 120


# ---- enumeration -----------------------------------------------------------

def _public_callables(mod: types.ModuleType, prefix: str) -> List[Tuple[str, Any]]:
    """Public functions and classes a module defines or exports in __all__."""
    exported = set(getattr(mod, "__all__", ()))
    out = []
    for name in sorted(dir(mod)):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name, None)
        if obj is None or isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        owner = getattr(obj, "__module__", "") or ""
        if name in exported or owner.startswith(prefix):
            out.append((name, obj))
    return out


def cuda_names() -> List[Dict[str, str]]:
    """torch.cuda's and torch.cuda.memory's public callables."""
    import torch

    rows, seen = [], set()
    for modname, mod in (("torch.cuda", torch.cuda), ("torch.cuda.memory", torch.cuda.memory)):
        for name, obj in _public_callables(mod, "torch.cuda"):
            if name in seen:
                continue
            seen.add(name)
            rows.append({"name": name, "module": modname, "kind": "class" if isinstance(obj, type) else "function"})
    # torch.cuda.memory's private functions that tools call by name
    # (the snapshot family): every one it defines itself.
    for name in sorted(dir(torch.cuda.memory)):
        obj = getattr(torch.cuda.memory, name)
        if (name.startswith("_") and not name.startswith("__") and inspect.isfunction(obj)
                and obj.__module__ == "torch.cuda.memory"):
            rows.append({"name": name, "module": "torch.cuda.memory", "kind": "private function"})
    return rows


def cuda_parity() -> List[Dict[str, Any]]:
    import torch

    out = []
    for r in cuda_names():
        where = torch.ocl.memory if r["module"] == "torch.cuda.memory" else torch.ocl
        out.append(dict(r, ocl=hasattr(where, r["name"]) or hasattr(torch.ocl, r["name"])))
    return out


def accelerator_targets() -> List[Tuple[str, Callable]]:
    """(qualified name, callable) for every public callable of torch.accelerator
    and of its submodules, deduplicated by object."""
    import torch

    acc = torch.accelerator
    mods = [("torch.accelerator", acc)]
    for name in sorted(dir(acc)):
        sub = getattr(acc, name)
        if (not name.startswith("_") and isinstance(sub, types.ModuleType)
                and sub.__name__.startswith("torch.accelerator.")):
            mods.append((sub.__name__, sub))
    out, seen = [], set()
    for modname, mod in mods:
        for name, obj in _public_callables(mod, "torch.accelerator"):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{modname}.{name}", obj))
    return out


# ---- calling one function ----------------------------------------------------

def _argument_table() -> Dict[str, Callable[[], Any]]:
    """Values for required parameters, by name; each leaves state unchanged."""
    import torch

    acc = torch.accelerator
    return {
        # An int, which every torch.accelerator function takes (device_index only takes ints).
        "device": lambda: acc.current_device_index(),
        "device_index": lambda: acc.current_device_index(),
        "idx": lambda: acc.current_device_index(),
        "stream": lambda: acc.current_stream(),
        "new_state": lambda: torch.ocl.get_rng_state(),
        "new_states": lambda: torch.ocl.get_rng_state_all(),
        "state": lambda: torch.ocl.get_rng_state(),
        "seed": lambda: torch.ocl.initial_seed(),
    }


def _call(fn: Callable) -> Dict[str, Any]:
    table = _argument_table()
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    args, kwargs = [], {}
    if sig is not None:
        for p in sig.parameters.values():
            if p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.name in ("self", "cls"):
                continue
            if p.name not in table:
                return {"outcome": "not called", "detail": f"needs a value for parameter '{p.name}'"}
            value = table[p.name]()
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs)
            if hasattr(result, "__enter__") and hasattr(result, "__exit__"):
                with result:
                    pass
        except Exception as e:  # the point is to see which
            first = (str(e).strip().splitlines() or [""])[0]
            return {"outcome": "raises", "detail": f"{type(e).__name__}: {first[:200]}"}
    detail = _describe(result)
    deprecated = [str(w.message).splitlines()[0][:120] for w in caught if issubclass(w.category, FutureWarning)
                  or issubclass(w.category, DeprecationWarning)]
    if deprecated:
        detail = (detail + "; " if detail else "") + "deprecated: " + deprecated[0]
    return {"outcome": "works", "detail": detail}


def _describe(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2**31:
        return "int"  # a seed or a byte count: differs from run to run
    if isinstance(v, (bool, int, float, str)):
        return repr(v)[:80]
    if isinstance(v, tuple) and len(v) <= 4 and all(isinstance(x, (int, float, bool)) for x in v):
        return "(" + ", ".join(_describe(x) for x in v) + ")"
    if isinstance(v, dict):
        return f"{type(v).__name__} of {len(v)} keys"
    return type(v).__name__


def _targets() -> List[Tuple[str, Callable]]:
    # TORCH_OCL_PARITY_TARGETS=module:function swaps in another list, so the
    # harness's own crash handling can be tested with a function that crashes.
    spec = os.environ.get("TORCH_OCL_PARITY_TARGETS")
    if spec:
        import importlib

        mod, _, fn = spec.partition(":")
        return getattr(importlib.import_module(mod), fn)()
    return accelerator_targets()


def _child(start: int) -> None:
    """Run targets[start:] in this process, one JSON line before and after each."""
    import torch
    import torch_ocl  # noqa: F401

    targets = _targets()
    print(json.dumps({"count": len(targets)}), flush=True)
    for i in range(start, len(targets)):
        name, fn = targets[i]
        print(json.dumps({"start": i, "name": name}), flush=True)
        r = _call(fn)
        print(json.dumps(dict(r, done=i, name=name)), flush=True)
    torch.ocl.synchronize()


def probe_accelerator(env: Dict[str, str] = None) -> List[Dict[str, Any]]:
    """Every torch.accelerator callable on ocl, each in a child process that
    is restarted after a crash or hang; results in enumeration order."""
    results: Dict[int, Dict[str, Any]] = {}
    count, start = None, 0
    child_env = dict(os.environ, **(env or {}))
    while count is None or start < count:
        cmd = [sys.executable, "-c", f"from torch_ocl.parity import _child; _child({start})"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=child_env)
            out, err, rc, hung = p.stdout, p.stderr, p.returncode, False
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err, rc, hung = "", None, True
        current = None
        for line in out.splitlines():
            if not line.startswith("{"):
                continue
            msg = json.loads(line)
            if "count" in msg:
                count = msg["count"]
            elif "start" in msg:
                current = (msg["start"], msg["name"])
            elif "done" in msg:
                results[msg["done"]] = {k: msg[k] for k in ("name", "outcome", "detail")}
                current = None
        if count is None:
            raise RuntimeError(f"the parity child could not start (exit {rc}):\n{err[-2000:]}")
        if current is None:
            if rc not in (0, None):
                raise RuntimeError(f"the parity child exited {rc} after its last function:\n{err[-2000:]}")
            break
        i, name = current
        how = "hangs (killed after %d s)" % CHILD_TIMEOUT_S if hung else f"crashes the process (exit status {rc})"
        results[i] = {"name": name, "outcome": "crashes", "detail": how}
        start = i + 1
    return [results[i] for i in sorted(results)]


# ---- report ------------------------------------------------------------------

def report(markdown: str = None, json_path: str = None) -> Dict[str, Any]:
    import torch
    import torch_ocl

    cuda = cuda_parity()
    acc = probe_accelerator()
    data = {"torch": torch.__version__, "torch_ocl": torch_ocl.__version__,
            "device": torch.ocl.get_device_name(0), "cuda": cuda, "accelerator": acc}
    if json_path:
        with open(json_path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    if markdown:
        with open(markdown, "w") as f:
            f.write(_markdown(data))
    return data


def _markdown(d: Dict[str, Any]) -> str:
    cuda, acc = d["cuda"], d["accelerator"]
    pub = [r for r in cuda if r["kind"] != "private function"]
    have = sum(r["ocl"] for r in pub)
    outcomes: Dict[str, int] = {}
    for r in acc:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    lines = [
        "# torch.ocl and torch.accelerator parity",
        "",
        "Generated by `python -m torch_ocl parity --markdown docs/parity.md --json docs/parity.json` "
        "(`make parity`); do not edit.",
        f"torch {d['torch']}, torch_ocl {d['torch_ocl']}, device ocl:0 = {d['device']}.",
        "",
        "## torch.cuda names in torch.ocl",
        "",
        f"Every public function and class of `torch.cuda` and `torch.cuda.memory` (from `dir()`): "
        f"**{have} of {len(pub)}** exist in `torch.ocl`. Having a name does not mean the same behaviour "
        "(e.g. `get_device_capability` returns the OpenCL C version; see docs/design.md).",
        "",
        "| name | module | kind | in torch.ocl |",
        "| --- | --- | --- | --- |",
    ]
    for r in pub:
        lines.append(f"| `{r['name']}` | {r['module']} | {r['kind']} | {'yes' if r['ocl'] else 'no'} |")
    priv = [r for r in cuda if r["kind"] == "private function"]
    lines += ["", "Private functions `torch.cuda.memory` defines (tools such as the memory viewer call the "
              f"snapshot ones): {sum(r['ocl'] for r in priv)} of {len(priv)} in `torch.ocl.memory`.", "",
              "| name | in torch.ocl.memory |", "| --- | --- |"]
    for r in priv:
        lines.append(f"| `{r['name']}` | {'yes' if r['ocl'] else 'no'} |")
    summary = ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))
    lines += [
        "",
        "## torch.accelerator on ocl",
        "",
        f"Every public callable of `torch.accelerator` and its submodules, called on ocl in a child process "
        f"(required arguments from a table by parameter name, so setters set the current value): {summary}.",
        "",
        "| function | outcome | detail |",
        "| --- | --- | --- |",
    ]
    for r in acc:
        detail = r["detail"].replace("|", "\\|")
        lines.append(f"| `{r['name']}` | {r['outcome']} | {detail} |")
    return "\n".join(lines) + "\n"
