"""Machinery of torch_ocl.transfer_to_ocl: run a CUDA script on ocl unchanged.

apply() installs every patch (targets.py), the torch.cuda stand-in
(cuda_shim.py) and the library probes (probes.py); undo() restores torch as
it was. The public entry point is torch_ocl.transfer_to_ocl.
"""

from . import patchset, probes, targets


def apply() -> bool:
    """Patch torch for CUDA scripts; returns False when already applied."""
    if patchset.is_applied():
        return False
    import torch

    if not torch.ocl.is_available():
        raise RuntimeError("torch_ocl.transfer_to_ocl: no OpenCL device, so CUDA scripts have nowhere to run "
                           "(`python -m torch_ocl info` lists devices).")
    try:
        targets.apply_all()
        probes.apply()
    except BaseException:
        undo()
        raise
    patchset.register_exit_summary()
    return True


def undo() -> None:
    """Restore everything apply() changed (tests call it after each case)."""
    probes.undo()
    patchset.restore_all()
    patchset.counts.clear()
    patchset.missing.clear()


def is_applied() -> bool:
    return patchset.is_applied()
