"""torch_ocl: PyTorch on any OpenCL device, as the ``ocl`` device.

``import torch`` loads this package through the ``torch.backends`` entry
point, so ``torch.ones(3, device="ocl")`` works without importing it;
``import torch_ocl`` works too. The device module is ``torch.ocl``.
"""

import os

import torch

__version__ = "0.1.0"

# Kineto, which torch.profiler runs on, reads its log level when the first
# profile starts. The CUDA wheels' Kineto logs CUPTI failures and trace
# markers on every profile of a machine without an NVIDIA GPU; quiet unless
# the user chose a level (docs/profiler.md).
os.environ.setdefault("KINETO_LOG_LEVEL", "6")

try:
    from . import _C  # registers the PrivateUse1 backend with the dispatcher
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "torch_ocl could not load its native library: "
        f"{e}. It needs an OpenCL ICD loader (Debian/Ubuntu: apt-get install ocl-icd-libopencl1) "
        "and a driver (for CPUs: apt-get install pocl-opencl-icd)."
    ) from e
# out= overloads refuse a wrong-device out before writing, as on the CPU and
# CUDA, and write a strided out in place: those whose kernel does not get this
# from a TensorIterator are wrapped (adapter/fallback.cpp).
_C._install_out_device_checks()

from . import _device_module as ocl  # noqa: E402
from ._fallback import fallback_stats, reset_fallback_stats, set_fallback_policy, get_fallback_policy  # noqa: E402,F401
from .fusion import (  # noqa: E402,F401
    eager_mode,
    fusion_stats,
    get_eager_mode,
    reset_fusion_stats,
    set_eager_mode,
)

from .kernels import Kernel, KernelLibrary, Local, compile_kernel  # noqa: E402,F401  (custom OpenCL C kernels)


def save_program_cache() -> None:
    """Write the OpenCL programs this process built to the disk cache now.

    On CPU devices a program built from source goes to disk once no program
    has been built for 3 s, on the background thread: producing its binary
    compiles every kernel in it again, which would double a cold first step.
    A process that ends sooner leaves the rest to be built by the next one
    (PoCL's own cache makes that quick). Call this at the end of a warm-up
    script to make the next process start warm; ``TORCH_OCL_CACHE_SAVE=now``
    writes each program as it is built."""
    _C._program_cache_flush()

_registered = False


def _register():
    """Name PrivateUse1 'ocl', install torch.ocl and the Tensor/Module helpers."""
    global _registered
    if _registered:
        return
    _registered = True
    from ._accelerators import WARNING, other_accelerator

    other = other_accelerator()
    if other:
        import warnings

        warnings.warn(WARNING.format(other=other), stacklevel=3)
    if torch._C._get_privateuse1_backend_name() != "ocl":
        torch.utils.rename_privateuse1_backend("ocl")
    torch._register_device_module("ocl", ocl)
    _C._register_accelerator_graph()  # torch.accelerator.Graph (torch >= 2.14) captures on ocl
    # torch.ocl is a plain module, so `import torch.ocl.memory` finds its
    # submodules only through sys.modules, as torch.cuda's users expect.
    import sys

    for sub in ("memory", "streams", "nvtx", "random", "amp"):
        sys.modules[f"torch.ocl.{sub}"] = getattr(ocl, sub)
    # tensor.ocl(), tensor.is_ocl, module.ocl(), storage.ocl() ...
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
    )


_register()

# torch.compile: backend="ocl", and the default backend's ocl graphs (imports
# no Dynamo until torch.compile runs).
from . import compile as _compile  # noqa: E402
from .compile import compile_stats, reset_compile_stats  # noqa: E402,F401

_compile.install()

# Backward on the calling thread instead of the engine's device thread (_autograd.py).
from . import _autograd  # noqa: E402

_autograd.use_calling_thread()

# torch.distributed: the "oclgloo" backend for ocl tensors.
from . import distributed as _distributed  # noqa: E402

_distributed.register()
_initialized = True
