"""Allocation history and memory snapshots in torch.cuda.memory's shape.

``torch.ocl.memory._record_memory_history()`` starts keeping a stack for each
live block and a ring of allocator events; ``_snapshot()`` returns the
dictionary torch.cuda.memory._snapshot() returns (segments with their blocks,
one event list per device), so ``torch.cuda._memory_viz`` and PyTorch's
memory viewer (pytorch.org/memory_viz) read an ocl snapshot unchanged. The
recording is done by the C++ adapter (adapter/runtime/ocl_memory_history.cpp)
from the runtime allocator's events; this module only checks arguments.
"""

import atexit
import pickle
import sys
from typing import Any, List, Optional

from . import _C

_recording = False


def _record_memory_history(
    enabled: Any = "all",
    context: Optional[str] = "all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
    device: Any = None,
    clear_history: bool = False,
    compile_context: bool = False,
    global_record_annotations: bool = False,
    skip_actions: Optional[List[str]] = None,
    record_pinned_host_memory: bool = False,
    **legacy: Any,
) -> None:
    """Start (or with ``enabled=None`` stop) recording allocation history.

    Arguments are torch.cuda.memory._record_memory_history's: ``enabled``
    None | "state" | "all"; ``context`` None | "state" | "alloc" | "all";
    ``stacks`` "python" | "all" (adds C++ frames; symbolizing them at
    snapshot time is slow); ``max_entries`` bounds the event ring. The
    history covers every ocl device (``device`` is accepted for
    compatibility, as on CUDA). The legacy boolean form
    (``enabled=True/False``) maps to "all" / None.
    """
    global _recording
    if isinstance(enabled, bool):  # torch.cuda's legacy form
        enabled = "all" if enabled else None
        context = "all" if legacy.pop("record_context", True) else None
        max_entries = legacy.pop("trace_alloc_max_entries", max_entries)
        stacks = "all" if legacy.pop("record_context_cpp", False) else "python"
        legacy.pop("trace_alloc_record_context", None)
    if legacy:
        raise TypeError(f"_record_memory_history() got unexpected arguments: {sorted(legacy)}")
    for name, value in (("compile_context", compile_context),
                        ("global_record_annotations", global_record_annotations),
                        ("record_pinned_host_memory", record_pinned_host_memory)):
        if value:
            raise NotImplementedError(f"torch.ocl.memory._record_memory_history: {name}=True is not "
                                      "supported on ocl yet; leave it False")
    if not isinstance(max_entries, int) or max_entries < 0:
        raise ValueError(f"max_entries must be a non-negative int, got {max_entries!r}")
    _C._record_memory_history(enabled, context, stacks, max_entries, bool(clear_history),
                              list(skip_actions or []))
    _recording = enabled is not None


def _snapshot(device: Any = None, augment_with_fx_traces: bool = False) -> dict:
    """The allocator's state and recorded history, as torch.cuda.memory._snapshot():
    ``{"segments": [...], "device_traces": [[...] per device], ...}``; see
    torch.cuda.memory._snapshot for every field. All devices, as on CUDA."""
    s = _C._memory_snapshot(True)
    if augment_with_fx_traces:
        from torch.cuda.memory import _augment_memory_snapshot_stack_traces

        s = _augment_memory_snapshot_stack_traces(s)
    return s


def _dump_snapshot(filename: str = "dump_snapshot.pickle", augment_with_fx_traces: bool = False) -> None:
    """Pickle ``_snapshot()`` to ``filename`` (open it at pytorch.org/memory_viz)."""
    s = _snapshot(augment_with_fx_traces=augment_with_fx_traces)
    with open(filename, "wb") as f:
        pickle.dump(s, f)


def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> list:
    """The segments of ``_snapshot()`` (torch.cuda.memory_snapshot's result)."""
    if mempool_id is not None and tuple(mempool_id) != (0, 0):
        raise ValueError(f"ocl has one memory pool, (0, 0); got mempool_id={mempool_id!r}")
    return _C._memory_snapshot(bool(include_traces))["segments"]


@atexit.register
def _stop_at_exit() -> None:
    # Tensors freed while the interpreter shuts down must not gather Python
    # stacks from a half-finalized interpreter.
    if _recording:
        _C._record_memory_history(None, None, "python", 0, True, [])
