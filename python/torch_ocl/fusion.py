"""Fused eager mode: elementwise ops are recorded and run as merged kernels.

``fused`` (the default) records
elementwise ops per stream and, when a value is needed (a host read, an op
that is not elementwise, a synchronisation, an event), renders them as few
kernels as possible; intermediates whose tensors were freed by then are
never written to memory; reductions compute the ops that produce their
input, and ops compute small producers they read through a broadcast.
Results equal strict mode bit for bit (reductions within rounding).
``strict`` runs every op as its own kernel.

Choose with ``TORCH_OCL_EAGER=strict|fused``, ``torch_ocl.set_eager_mode(...)``
or ``with torch_ocl.eager_mode("strict"): ...``. ``TORCH_OCL_LOG=fusion``
prints every fused group.
"""

import atexit
import contextlib

from . import _C

# At exit the fused kernels still queued for the background thread are
# dropped (nobody will run them) and the one being built gets a second to
# finish: waiting for the whole queue kept the process alive for tens of
# seconds after a run that met many new graphs, deaf to Ctrl-C. The runtime's
# own exit handler, which runs before the OpenCL driver's destructors, ends
# the process without them if that build is still in the driver by then.
atexit.register(_C._fusion_abandon_builds, 1.0)

_MODES = ("strict", "fused")


def get_eager_mode() -> str:
    """'strict' or 'fused'."""
    return _C._eager_mode()


def set_eager_mode(mode: str) -> None:
    """Switch the process to 'strict' or 'fused' (runs what is recorded first)."""
    if mode not in _MODES:
        raise ValueError(f"eager mode must be one of {_MODES}, got {mode!r}")
    _C._set_eager_mode(mode)


@contextlib.contextmanager
def eager_mode(mode: str):
    """Run the block in `mode`, then restore the previous mode."""
    previous = get_eager_mode()
    set_eager_mode(mode)
    try:
        yield
    finally:
        set_eager_mode(previous)


def flush() -> None:
    """Enqueue everything recorded so far (does not wait for the device)."""
    _C._fusion_flush()


def fusion_stats() -> dict:
    """Counters since start or the last reset: ops recorded, flushes, groups
    (``graphs_flushed``), kernels launched, fused launches, intermediates
    elided, reductions that computed recorded ops in their prologue
    (``reductions_fused``), broadcast producers computed by their consumer
    (``broadcasts_inlined``), fused-kernel cache hits and misses, background
    builds and their seconds; and two gauges that a reset leaves: ops
    recorded and not yet run (``ops_pending``) and the entries of the table
    that finds their outputs by address when freed (``free_table_entries``)."""
    return dict(_C._fusion_stats())


def reset_fusion_stats() -> None:
    _C._reset_fusion_stats()


def wait_for_builds() -> None:
    """Block until the background thread has built every fused kernel asked of it."""
    _C._fusion_wait_builds()


def set_sync_build(on: bool) -> None:
    """Build a new fused kernel before running it instead of running the ops
    separately meanwhile (deterministic kernel counts for tests)."""
    _C._fusion_set_sync_build(bool(on))
