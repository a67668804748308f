"""Is another accelerator (CUDA, ROCm, XPU) usable in this process?

PyTorch gives a process one accelerator: once a PrivateUse1 backend is named,
at::getAccelerator() answers PrivateUse1, and the autograd engine then fails
every backward over CUDA tensors with an internal assert ("opt_ready_stream &&
opt_parent_stream", pytorch/pytorch#161129; a fix was proposed and closed).
So on a machine with a CUDA, ROCm or XPU device, `import torch` does not load
torch_ocl by itself (installing it must not break CUDA training), and an
explicit `import torch_ocl` says what it costs.
"""

import os

# Device nodes of the drivers: checked first, so a CPU machine with a CUDA
# build of torch (the PyPI default) never initialises the CUDA driver here.
_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg", "/dev/dri/renderD128")


def other_accelerator():
    """'cuda' or 'xpu' when such a device is present and usable, else None."""
    import torch

    if not any(os.path.exists(n) for n in _NODES):
        return None
    try:
        if (torch.version.cuda or torch.version.hip) and torch.cuda.is_available():
            return "cuda"
        if getattr(torch.version, "xpu", None) and torch.xpu.is_available():
            return "xpu"
    except Exception:  # a broken driver is not ours to report
        return None
    return None


WARNING = ("torch_ocl: this process also has a {other} device. PyTorch supports one accelerator per "
           "process, and registering 'ocl' makes it torch.accelerator's device: backward passes over {other} "
           "tensors then fail inside PyTorch's autograd engine (INTERNAL ASSERT 'opt_ready_stream && "
           "opt_parent_stream', pytorch/pytorch#161129). Train on {other} in a process that does not import "
           "torch_ocl. (On such machines `import torch` alone does not load torch_ocl; TORCH_OCL_AUTOLOAD=1 "
           "makes it.)")
