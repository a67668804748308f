"""dist.init_process_group("nccl") under the shim.

"nccl" becomes "cpu:gloo,ocl:<the ocl backend>" (oclgloo, which torch_ocl
registers on import). Without an ocl backend (a torch without distributed or
Gloo) it raises: Gloo could carry CPU tensors, but a script written for NCCL
hands the collectives its device tensors, which Gloo refuses with errors
that say nothing about the cause.
"""

import torch.distributed as dist


def ocl_backend():
    """The c10d backend registered for the ocl device, or None."""
    return dist.Backend.default_device_backend_map.get("ocl")


def map_backend(backend):
    if not isinstance(backend, str) or "nccl" not in backend.lower():
        return backend
    ocl = ocl_backend()
    if ocl is None:
        raise RuntimeError(
            f"init_process_group(backend={backend!r}): this torch has no distributed backend for ocl tensors "
            "(torch_ocl's oclgloo needs torch.distributed with Gloo), so torch_ocl.transfer_to_ocl cannot "
            "stand in for NCCL. Run the script as a "
            "single process (without torchrun / RANK), or give backend='gloo' and keep the tensors you "
            "communicate on the CPU."
        )
    from . import patchset

    patchset.note("torch.distributed.init_process_group(nccl)")
    return f"cpu:gloo,ocl:{ocl}"
