"""Apply and undo a table of attribute patches, and count what they did.

A patch replaces ``owner.name``; undo restores exactly what was there (a
class attribute that was inherited is deleted again, not shadowed), so a
test can patch torch, check, undo and leave torch as it found it.
``TORCH_OCL_TRANSFER_LOG=1`` prints the counts when the process exits.
"""

import atexit
import collections
import os
import sys

_MISSING = object()

counts = collections.Counter()  # "torch.zeros" -> calls the shim rewrote
missing = collections.Counter()  # torch.cuda names torch.ocl lacks, as asked for
_applied = []  # (owner, name, previous value or _MISSING), in apply order


def note(what: str) -> None:
    counts[what] += 1


def note_missing(name: str) -> None:
    missing[name] += 1


def replace(owner, name: str, value) -> None:
    """Set owner.name = value, remembering what to put back."""
    prev = vars(owner).get(name, _MISSING)
    _applied.append((owner, name, prev))
    setattr(owner, name, value)


def replace_key(mapping: dict, key, value) -> None:
    """mapping[key] = value (sys.modules entries), remembering what to put back."""
    _applied.append((mapping, key, mapping.get(key, _MISSING), "key"))
    mapping[key] = value


def restore_all() -> None:
    while _applied:
        owner, name, prev, *how = _applied.pop()
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


def is_applied() -> bool:
    return bool(_applied)


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


def _print_summary() -> None:
    print(summary(), file=sys.stderr)


def log_enabled() -> bool:
    return os.environ.get("TORCH_OCL_TRANSFER_LOG", "") not in ("", "0")


_atexit_registered = False


def register_exit_summary() -> None:
    global _atexit_registered
    if log_enabled() and not _atexit_registered:
        _atexit_registered = True
        atexit.register(_print_summary)
