"""Backward passes run on the thread that calls backward().

PyTorch's autograd engine runs the part of a backward that is on an
accelerator in a worker thread of that device's (as for CUDA), while the
calling thread waits: two thread hand-offs per backward. On ocl an op only
enqueues its work, so the worker overlaps nothing, and the hand-offs are
what remains: waking a sleeping thread costs tens of microseconds on a
virtual machine (measured with PoCL on 2 cores: a trivial backward took
120 us of host time with the worker, 46 without; a small AdamW train step
1.44 ms against 1.20).

torch.autograd.set_multithreading_enabled(False) is PyTorch's own switch;
it is thread-local, so torch_ocl sets it on the thread that imports it,
which is where training loops run. A user's own call wins (it comes later),
and TORCH_OCL_BACKWARD_THREADS=1 leaves PyTorch's default. CUDA training
is not affected: it cannot run in a process that loaded torch_ocl anyway
(see _accelerators.py).
"""

import os

import torch


def use_calling_thread() -> bool:
    """Turn the engine's device threads off on this thread unless
    TORCH_OCL_BACKWARD_THREADS=1; returns whether it did."""
    if os.environ.get("TORCH_OCL_BACKWARD_THREADS", "0") == "1":
        return False
    torch.autograd.set_multithreading_enabled(False)
    return True
