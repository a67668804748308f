"""torch.distributed on ocl: the ``oclgloo`` c10d backend.

OpenCL has no collective library; collectives on ocl tensors are staged
through host memory and carried by Gloo (TCP between machines, loopback
within one). The backend is registered on import for the "cpu" and "ocl"
devices, so these all work unchanged:

    dist.init_process_group()                          # ocl:oclgloo
    dist.init_process_group(device_id=torch.device("ocl", local_rank))
    dist.init_process_group("oclgloo")                 # cpu and ocl tensors
    dist.init_process_group("cpu:gloo,ocl:oclgloo")

The C++ side (adapter/distributed/ocl_process_group.cpp) returns each
collective's Work at once and runs it on two FIFO threads; docs/distributed.md
has the design.
"""

import os

import torch

from . import _C

BACKEND = "oclgloo"


def _create_backend(opts, pg_options=None):
    """c10d's extended-API factory: an inner Gloo backend on the same store,
    wrapped by the ocl backend (no Gloo headers are needed to build it)."""
    from torch.distributed import PrefixStore, ProcessGroupGloo

    _C._register_distributed()
    gloo = ProcessGroupGloo(opts.store, opts.group_rank, opts.group_size, opts.timeout)
    # Each collective first checks that every rank's call matches (dtype,
    # size, op, root) with one small all-gather on a second Gloo group, so a
    # mismatch is a clear error instead of Gloo's abort. TORCH_OCL_DIST_CHECK=0
    # skips it.
    checker = None
    if os.environ.get("TORCH_OCL_DIST_CHECK", "1") != "0":
        checker = ProcessGroupGloo(PrefixStore("agree/", opts.store), opts.group_rank, opts.group_size, opts.timeout)
    return _C._ProcessGroupOCL(gloo, checker, opts.group_rank, opts.group_size)


def register() -> bool:
    """Register ``oclgloo`` with torch.distributed (once). False when this
    torch has no distributed package or no Gloo."""
    dist = torch.distributed
    if not dist.is_available() or not dist.is_gloo_available():
        return False
    if BACKEND not in dist.Backend.backend_list:
        dist.Backend.register_backend(BACKEND, _create_backend, extended_api=True, devices=["cpu", "ocl"])
    return True


def is_available() -> bool:
    """Whether collectives on ocl tensors are available in this process."""
    dist = torch.distributed
    return dist.is_available() and dist.is_gloo_available() and hasattr(_C, "_register_distributed")
