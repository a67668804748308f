"""Apply and undo a table of attribute patches, and count what they did.

A patch replaces ``owner.name``; undo restores exactly what was there (a
class attribute that was inherited is deleted again, not shadowed), so a
test can patch torch, check, undo and leave torch as it found it.
``TORCH_OCL_TRANSFER_LOG=1`` prints the counts when the process exits.
"""

import atexit
import collections
import json
import os
import sys

_MISSING = object()

counts = collections.Counter()  # "torch.zeros" -> calls the shim rewrote
missing = collections.Counter()  # torch.cuda names torch.ocl lacks, as asked for


def note(what: str) -> None:
    counts[what] += 1


def note_missing(name: str) -> None:
    missing[name] += 1


class Patches:
    """A set of attribute (and mapping entry) replacements that can be
    undone in reverse order. The shim owns one; torch_ocl.integrations
    keep their own, so undoing one leaves the other in place."""

    def __init__(self):
        self._applied = []  # (owner, name, previous value or _MISSING[, "key"]), in apply order

    def replace(self, owner, name: str, value) -> None:
        """Set owner.name = value, remembering what to put back."""
        prev = vars(owner).get(name, _MISSING)
        self._applied.append((owner, name, prev))
        setattr(owner, name, value)

    def replace_key(self, mapping: dict, key, value) -> None:
        """mapping[key] = value (sys.modules entries), remembering what to put back."""
        self._applied.append((mapping, key, mapping.get(key, _MISSING), "key"))
        mapping[key] = value

    def restore_all(self) -> None:
        while self._applied:
            owner, name, prev, *how = self._applied.pop()
            if how:  # a mapping entry
                if prev is _MISSING:
                    owner.pop(name, None)
                else:
                    owner[name] = prev
            elif prev is _MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, prev)

    def __bool__(self) -> bool:
        return bool(self._applied)


_shim = Patches()  # the transfer shim's patches
replace = _shim.replace
replace_key = _shim.replace_key
restore_all = _shim.restore_all


def is_applied() -> bool:
    return bool(_shim)


def summary() -> str:
    lines = ["torch_ocl.transfer_to_ocl: calls rewritten for ocl"]
    lines += [f"  {n:>7}  {what}" for what, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if not counts:
        lines.append("        0  (none)")
    if missing:
        lines.append("torch.cuda names with no torch.ocl counterpart (each raised):")
        lines += [f"  {n:>7}  torch.cuda.{name}" for name, n in sorted(missing.items())]
    try:
        import torch_ocl

        fb = torch_ocl.fallback_stats()
        lines.append("ops that ran on the CPU (fallback): " + (", ".join(f"{k}={v}" for k, v in sorted(fb.items())) or "none"))
        cs = torch_ocl.compile_stats()
        lines.append(f"torch.compile on ocl: {cs['graphs']} graph(s), {cs['calls']} call(s), "
                     f"{cs['fallback_nodes']} node(s) on the CPU")
    except Exception as e:  # the summary must never fail the exit
        lines.append(f"fallback stats unavailable: {e}")
    return "\n".join(lines)


def report() -> dict:
    """What the shim saw, for tools (python -m torch_ocl port --run)."""
    doc = {"rewritten": dict(counts), "missing_cuda": dict(missing)}
    try:
        import torch_ocl

        doc["fallback"] = torch_ocl.fallback_stats()
    except Exception as e:
        doc["fallback_error"] = str(e)
    return doc


def _at_exit() -> None:
    if log_enabled():
        print(summary(), file=sys.stderr)
    path = os.environ.get("TORCH_OCL_TRANSFER_REPORT")
    if path:
        try:
            with open(path, "w") as f:
                json.dump(report(), f, indent=2, sort_keys=True)
        except OSError as e:
            print(f"torch_ocl.transfer_to_ocl: cannot write TORCH_OCL_TRANSFER_REPORT={path}: {e}", file=sys.stderr)


def log_enabled() -> bool:
    return os.environ.get("TORCH_OCL_TRANSFER_LOG", "") not in ("", "0")


_atexit_registered = False


def register_exit_summary() -> None:
    """At exit: the summary (TORCH_OCL_TRANSFER_LOG=1) and a JSON report
    (TORCH_OCL_TRANSFER_REPORT=PATH)."""
    global _atexit_registered
    if (log_enabled() or os.environ.get("TORCH_OCL_TRANSFER_REPORT")) and not _atexit_registered:
        _atexit_registered = True
        atexit.register(_at_exit)
