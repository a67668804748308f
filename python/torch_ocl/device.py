"""Device selection and properties (torch.ocl.device_count(), ...)."""

import contextlib
from dataclasses import dataclass, field
from typing import Any, Union

import torch

from . import _C

_INSTALL_HINT = (
    "No OpenCL device was found. Install an OpenCL driver: for CPUs "
    "`apt-get install pocl-opencl-icd`, for GPUs the vendor's OpenCL driver "
    "(e.g. NVIDIA's driver, AMD ROCm, Intel compute-runtime); `clinfo -l` lists devices."
)


def is_available() -> bool:
    try:
        return _C._device_count() > 0
    except RuntimeError:
        return False


def device_count() -> int:
    try:
        return _C._device_count()
    except RuntimeError:
        return 0


def _is_in_bad_fork() -> bool:
    """True in a child forked after its parent used the ocl device: the
    OpenCL driver's threads stayed in the parent, so the child cannot use
    the device (as CUDA in a forked child)."""
    return _C._in_bad_fork()


def is_initialized() -> bool:
    return not _is_in_bad_fork()


def init():
    """Discover devices; raises with the reason when discovery failed, or
    in a child forked after the parent used the device."""
    _C._init()
    if _C._device_count() == 0:
        raise RuntimeError(_INSTALL_HINT)


def _lazy_init():
    init()


def _index(device: Union[int, str, torch.device, None]) -> int:
    if device is None:
        return _C._get_device()
    if isinstance(device, int):
        idx = device
    else:
        device = torch.device(device)
        if device.type != "ocl":
            raise ValueError(f"expected an ocl device, got {device}")
        idx = device.index if device.index is not None else _C._get_device()
    _C._check_device(idx)
    return idx


def current_device() -> int:
    return _C._get_device()


def set_device(device: Union[int, str, torch.device]) -> None:
    _C._set_device(_index(device))


class device:
    """Context manager that changes the current ocl device."""

    def __init__(self, device: Union[int, str, torch.device, None]):
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self):
        self.prev = _C._get_device()
        if self.idx >= 0 and self.idx != self.prev:
            _C._set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.idx != self.prev:
            _C._set_device(self.prev)
        return False


class device_of(device):
    """Context manager: the device of a tensor (no-op for non-ocl tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "ocl" else None)


@dataclass(frozen=True)
class OclDeviceProperties:
    name: str
    vendor: str
    type: str
    platform_name: str
    platform_version: str
    driver_version: str
    opencl_version: str
    opencl_c_version: str
    compute_units: int
    total_memory: int
    local_memory: int
    max_alloc: int
    max_work_group_size: int
    has_fp64: bool
    has_fp16: bool
    extensions: tuple = field(repr=False)

    @property
    def multi_processor_count(self) -> int:  # torch.cuda's name for compute units
        return self.compute_units


def get_device_properties(device: Any = None) -> OclDeviceProperties:
    p = dict(_C._device_props(_index(device)))
    p["extensions"] = tuple(p["extensions"].split())
    return OclDeviceProperties(**p)


def get_device_name(device: Any = None) -> str:
    return _C._device_props(_index(device))["name"]


def _opencl_c_version(text: str) -> tuple:
    """(major, minor) from CL_DEVICE_OPENCL_C_VERSION, "OpenCL C <major>.<minor> <vendor text>"."""
    parts = text.split()
    if len(parts) >= 3 and parts[0] == "OpenCL" and parts[1] == "C":
        major, _, minor = parts[2].partition(".")
        if major.isdigit() and minor[:1].isdigit():
            return int(major), int(minor[:1])
    return 1, 2  # the version every OpenCL device supports


def get_device_capability(device: Any = None) -> tuple:
    """A (major, minor) tuple shaped like torch.cuda's: the device's OpenCL C
    version (1.2 on PoCL 3.1), not a CUDA compute capability. Code that gates
    CUDA features on ``>= (7, 0)`` or ``>= (8, 0)`` therefore takes its
    portable path, which is the right one on OpenCL devices. Feature flags
    are in get_device_features(); torch.accelerator.get_device_capability()
    lists the dtypes."""
    return _opencl_c_version(get_device_properties(device).opencl_c_version)


def get_device_features(device: Any = None) -> dict:
    """What get_device_capability() returned before it took torch.cuda's
    tuple shape: {"fp64", "fp16", "opencl_version"}."""
    p = get_device_properties(device)
    return {"fp64": p.has_fp64, "fp16": p.has_fp16, "opencl_version": p.opencl_version}


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on every stream of the device."""
    _C._synchronize(_index(device))


@contextlib.contextmanager
def _noop():
    yield
