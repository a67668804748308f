"""torch.ocl.nvtx: torch.cuda.nvtx's range API as profiler ranges.

OpenCL has no NVTX; a range here is a ``torch.autograd.profiler.record_function``
span, so it shows up in torch.profiler tables and Chrome traces exactly where
an NVTX range would show up in Nsight. Outside a profile it costs a record
function push/pop.
"""

import contextlib
import threading
from typing import Any, List

import torch

_local = threading.local()


def _stack() -> List[Any]:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def range_push(msg: str) -> int:
    """Open a nested range; returns its depth (0-based), as NVTX does."""
    handle = torch.ops.profiler._record_function_enter_new(str(msg), None)
    s = _stack()
    s.append(handle)
    return len(s) - 1


def range_pop() -> int:
    """Close the innermost range; returns the depth it had, or -1 if none is open."""
    s = _stack()
    if not s:
        return -1
    torch.ops.profiler._record_function_exit._RecordFunction(s.pop())
    return len(s)


_UNNESTED = ("torch.ocl.nvtx.range_start/range_end are not supported (NVTX's unnested ranges have no "
             "record_function equivalent); use range_push/range_pop or the range() context manager")


def range_start(msg: str) -> int:
    raise NotImplementedError(_UNNESTED)


def range_end(range_id: int) -> None:
    raise NotImplementedError(_UNNESTED)


def mark(msg: str) -> None:
    """An instantaneous marker: an empty range."""
    range_push(msg)
    range_pop()


@contextlib.contextmanager
def range(msg: str, *args: Any, **kwargs: Any):
    """``with torch.ocl.nvtx.range("step {}", i):`` (message formatted as torch.cuda.nvtx.range does)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
