"""Custom OpenCL C kernels from Python: ``torch_ocl.compile_kernel``.

The analogue of Pallas (TorchTPU), NKI (TorchNeuron) and
``torch.mps.compile_shader``::

    lib = torch_ocl.compile_kernel(source, options="-cl-fast-relaxed-math", defines={"T": "float"})
    lib.axpy(y, x, 2.0, n, threads=n)          # asynchronous, on the current stream
    lib.rowsum(x, out, torch_ocl.Local(1024), threads=(rows * 256,), group_size=(256,))
    lib.axpy.arg_types, lib.axpy.max_work_group_size

Parsing, the (buffer, offset) rewrite, the build through the program cache,
argument checks and the launch are the runtime's (``runtime/custom/``,
``include/tocl/custom.h``); this module is the Python face of it. Wrap a
launch in ``torch.library.custom_op`` for autograd and torch.compile
(docs/custom_kernels.md).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import torch

from . import _C

Local = _C.Local
_launch = _C._custom_launch
_profiler_enabled = torch._C._autograd._profiler_enabled

__all__ = ["compile_kernel", "KernelLibrary", "Kernel", "Local"]

_Size = Union[int, Sequence[int]]


def _defines_text(defines: Optional[Mapping[str, object]]) -> str:
    if not defines:
        return ""
    lines = []
    for name, value in defines.items():
        value = "" if value is None else str(value)
        if "\n" in value or "\n" in str(name) or "=" in str(name):
            raise ValueError(f"compile_kernel: define {name!r} must be one line, and its name must not contain '='")
        lines.append(f"{name}={value}")
    return "\n".join(lines)


def _device_index(device) -> int:
    if device is None:
        return torch.ocl.current_device()
    device = torch.device(device)
    if device.type != "ocl":
        raise ValueError(f"compile_kernel: device must be an ocl device, got {device}")
    return torch.ocl.current_device() if device.index is None else device.index


def _dims(value: _Size, what: str, kernel: str) -> list:
    dims = [value] if isinstance(value, int) else list(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise ValueError(f"kernel {kernel}: {what} must be an int or 1 to 3 ints, got {value!r}")
    if any(d < 0 for d in dims):
        raise ValueError(f"kernel {kernel}: {what} must not be negative, got {value!r}")
    return dims


class Kernel:
    """One ``__kernel`` of a library. Call it with the kernel's arguments in
    order: a contiguous ocl tensor for each ``__global``/``__constant``
    pointer, a number (or a list for a vector type) for each value
    parameter, ``torch_ocl.Local(nbytes)`` for each ``__local`` pointer."""

    def __init__(self, library: "KernelLibrary", handle: int, name: str, params: list):
        self._library = library
        self._handle = handle
        self.name = name
        self.params = params

    @property
    def arg_names(self) -> list:
        return [p["name"] for p in self.params]

    @property
    def arg_types(self) -> list:
        """Each parameter as declared: ``"__global float*"``, ``"float"``, ..."""
        return [p["decl"] for p in self.params]

    def limits(self, device=None) -> dict:
        """The driver's limits for this kernel on device (default: current):
        max_work_group_size, preferred_work_group_size_multiple,
        static_local_memory, private_memory, device_local_memory,
        max_work_item_sizes."""
        return _C._custom_limits(self._handle, _device_index(device))

    @property
    def max_work_group_size(self) -> int:
        return self.limits()["max_work_group_size"]

    @property
    def preferred_work_group_size_multiple(self) -> int:
        return self.limits()["preferred_work_group_size_multiple"]

    @property
    def static_local_memory(self) -> int:
        return self.limits()["static_local_memory"]

    def __call__(self, *args, threads: Optional[_Size] = None, group_size: Optional[_Size] = None) -> None:
        # Plain ints take the short path: this is the per-launch host cost.
        if type(threads) is int and threads >= 0:
            g = (threads,)
        elif threads is None:
            # As torch.mps.compile_shader: one thread per element of the first tensor.
            first = next((a for a in args if isinstance(a, torch.Tensor)), None)
            if first is None:
                raise ValueError(f"kernel {self.name}: pass threads= (no tensor argument to take the size from)")
            g = (first.numel(),)
        else:
            g = _dims(threads, "threads", self.name)
        if group_size is None:
            l = None
        elif type(group_size) is int and group_size > 0:
            l = (group_size,)
        else:
            l = _dims(group_size, "group_size", self.name)
        if _profiler_enabled():
            with torch.autograd.profiler.record_function(f"ocl_kernel::{self.name}"):
                _launch(self._handle, g, l, args)
        else:
            _launch(self._handle, g, l, args)

    def __repr__(self) -> str:
        return f"<ocl kernel {self.name}({', '.join(self.arg_types[i] + ' ' + n for i, n in enumerate(self.arg_names))})>"


class KernelLibrary:
    """The kernels of one OpenCL C source; each is an attribute."""

    def __init__(self, source: str, options: str, defines: Optional[Mapping[str, object]], device: int):
        self.source = source
        self.options = options
        self.defines = dict(defines or {})
        self._handle = _C._custom_compile(device, source, options, _defines_text(defines))
        self._kernels = {name: Kernel(self, h, name, params) for h, name, params in _C._custom_kernels(self._handle)}
        # Kernels are instance attributes (a plain lookup, no __getattr__ on
        # every launch), unless the name is one of the library's own.
        for name, k in self._kernels.items():
            if not hasattr(type(self), name) and name not in self.__dict__:
                self.__dict__[name] = k

    @property
    def kernels(self) -> tuple:
        return tuple(self._kernels)

    @property
    def built_source(self) -> str:
        """The text the OpenCL compiler sees: defines, ``#line 1`` and the
        source with each pointer parameter taken as a buffer and an offset."""
        return _C._custom_text(self._handle)

    def __getattr__(self, name: str) -> Kernel:
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"the kernel library has no kernel {name!r}; its kernels: {', '.join(kernels) or 'none'}")

    def __getitem__(self, name: str) -> Kernel:
        return self.__getattr__(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._kernels))

    def __repr__(self) -> str:
        return f"<ocl kernel library: {', '.join(self._kernels)}>"


def compile_kernel(source: str, options: str = "", defines: Optional[Mapping[str, object]] = None,
                   device=None) -> KernelLibrary:
    """Build OpenCL C ``source`` for the ocl device and return its kernels.

    options: build options for clBuildProgram (``"-cl-fast-relaxed-math"``).
    defines: ``{"T": "float", "ACT(x)": "max(x, 0.0f)"}``, prepended as
    ``#define`` lines (line numbers in build errors stay the source's own).
    device: where to build now (default: current); a launch on another ocl
    device builds there through the program cache.

    The build goes through the program cache (memory, then disk), so a
    second process builds nothing. A source that does not build raises
    RuntimeError with the build log; the process stays usable.
    """
    if not isinstance(source, str):
        raise TypeError(f"compile_kernel: source must be a str of OpenCL C, got {type(source).__name__}")
    if not isinstance(options, str):
        raise TypeError(f"compile_kernel: options must be a str, got {type(options).__name__}")
    return KernelLibrary(source, options, defines, _device_index(device))


def compile_shader(source: str) -> KernelLibrary:
    """``torch.ocl.compile_shader``: MPS's name for compile_kernel."""
    return compile_kernel(source)
