"""dist.init_process_group("nccl") under the shim.

"nccl" becomes the ocl c10d backend when one is registered for the ocl
device (issue 16 adds it). Until then it raises: Gloo could carry CPU
tensors, but a script written for NCCL hands the collectives its device
tensors, which Gloo refuses with errors that say nothing about the cause.
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
            f"init_process_group(backend={backend!r}): torch_ocl has no distributed backend for ocl tensors "
            "yet (issue 16), so torch_ocl.transfer_to_ocl cannot stand in for NCCL. Run the script as a "
            "single process (without torchrun / RANK), or give backend='gloo' and keep the tensors you "
            "communicate on the CPU."
        )
    from . import patchset

    patchset.note("torch.distributed.init_process_group(nccl)")
    return f"cpu:gloo,ocl:{ocl}"
