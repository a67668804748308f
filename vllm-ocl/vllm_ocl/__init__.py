"""vllm-ocl: vLLM on torch-ocl's "ocl" device (a PrivateUse1 backend over OpenCL).

vLLM finds this package through its `vllm.platform_plugins` entry point and calls
`register()` in every process it starts; a non-None answer makes OclPlatform the
current platform (one activated out-of-tree plugin beats vLLM's built-ins).
"""

__version__ = "0.1.0"


def register() -> str | None:
    """The platform class path when an ocl device is present, else None (vLLM then
    falls back to its own platform detection)."""
    try:
        import torch
        import torch_ocl  # noqa: F401  (names PrivateUse1 "ocl", installs torch.ocl)

        if torch.ocl.device_count() == 0:
            return None
    except Exception:  # no torch_ocl, no OpenCL driver: not our machine
        return None
    return "vllm_ocl.platform.OclPlatform"
