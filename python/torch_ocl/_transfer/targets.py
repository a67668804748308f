"""What the shim patches: one table of (owner, name, how to rewrite).

Each row names a place where PyTorch receives a device (or reports one)
and how the CUDA value is rewritten. ``apply`` installs every row through
patchset, so ``undo`` restores all of them. Wrappers count only the calls
they changed (TORCH_OCL_TRANSFER_LOG=1), so code already on ocl pays one
isinstance check per argument and writes nothing.
"""

import functools
import sys

import torch

from . import cuda_shim, devices, patchset

_FACTORY_LIKE = ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                 "randint_like", "normal", "from_file")
_NEW_METHODS = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided")


def _with_device_kwarg(label, fn, kw="device"):
    """fn(..., device="cuda") -> fn(..., device="ocl")."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        dev = kwargs.get(kw)
        if dev is not None and devices.is_cuda_spec(dev):
            kwargs[kw] = devices.to_ocl(dev)
            patchset.note(label)
        return fn(*args, **kwargs)

    return wrapper


def _with_first_or_kwarg(label, fn, kw):
    """A device given first (after self) or by keyword: Tensor.to, Module.to, GradScaler."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if args and devices.is_cuda_spec(args[0]):
            args = (devices.to_ocl(args[0]),) + args[1:]
            patchset.note(label)
        dev = kwargs.get(kw)
        if dev is not None and devices.is_cuda_spec(dev):
            kwargs[kw] = devices.to_ocl(dev)
            patchset.note(label)
        return fn(self, *args, **kwargs)

    return wrapper


def _ocl_device(device):
    """.cuda(device): None -> the current ocl device, an int -> ocl:N."""
    if device is None:
        return torch.device("ocl", torch.ocl.current_device())
    if isinstance(device, int):
        return torch.device("ocl", device)
    return torch.device(devices.to_ocl(device))


def _tensor_cuda(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
    patchset.note("torch.Tensor.cuda")
    return self.to(_ocl_device(device), non_blocking=non_blocking, memory_format=memory_format)


def _module_cuda(self, device=None):
    patchset.note("torch.nn.Module.cuda")
    return self.to(_ocl_device(device))


def _is_cuda_property(orig):
    def is_cuda(self):
        return orig.__get__(self) or self.device.type == "ocl"

    return property(is_cuda, doc="True for ocl tensors under torch_ocl.transfer_to_ocl (scripts assert it).")


def _load(orig):
    @functools.wraps(orig)
    def load(f, map_location=None, *args, **kwargs):
        patchset.note("torch.load")
        return orig(f, devices.map_location_to_ocl(map_location), *args, **kwargs)

    return load


def _device_context_init(orig):
    # `with torch.device("cuda")` (from C, torch/csrc/Device.cpp) and
    # torch.set_default_device("cuda") both construct a DeviceContext.
    @functools.wraps(orig)
    def __init__(self, device):
        if devices.is_cuda_spec(device):
            device = devices.to_ocl(device)
            patchset.note("torch.device context / set_default_device")
        orig(self, device)

    return __init__


def _autocast_init(orig):
    @functools.wraps(orig)
    def __init__(self, device_type, *args, **kwargs):
        if devices.type_to_ocl(device_type) != device_type:
            patchset.note("torch.autocast")
        orig(self, devices.type_to_ocl(device_type), *args, **kwargs)

    return __init__


def _device_type_first(label, fn):
    """torch.is_autocast_enabled("cuda") and friends take a device *type* first."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args and devices.type_to_ocl(args[0]) != args[0]:
            args = ("ocl",) + args[1:]
            patchset.note(label)
        if "device_type" in kwargs and devices.type_to_ocl(kwargs["device_type"]) != kwargs["device_type"]:
            kwargs["device_type"] = "ocl"
            patchset.note(label)
        return fn(*args, **kwargs)

    return wrapper


def _grad_scaler_init(orig):
    @functools.wraps(orig)
    def __init__(self, device="cuda", *args, **kwargs):  # "cuda" is GradScaler's own default
        if devices.type_to_ocl(device) != device:
            patchset.note("torch.amp.GradScaler")
        orig(self, devices.type_to_ocl(device), *args, **kwargs)

    return __init__


class _MappingType(type):
    """Stands in for a C type (torch.Generator, torch.Stream, torch.Event):
    calling it makes the real type's object with a CUDA device rewritten, and
    isinstance / issubclass answer for the real type."""

    def __call__(cls, *args, **kwargs):
        if args and devices.is_cuda_spec(args[0]):
            args = (devices.to_ocl(args[0]),) + args[1:]
            patchset.note(f"torch.{cls.__name__}")
        if "device" in kwargs and devices.is_cuda_spec(kwargs["device"]):
            kwargs["device"] = devices.to_ocl(kwargs["device"])
            patchset.note(f"torch.{cls.__name__}")
        return cls._real(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._real)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls._real)


def _mapping_type(real):
    return _MappingType(real.__name__, (), {"_real": real, "__doc__": real.__doc__, "__module__": "torch"})


def _data_parallel_init(self, module, device_ids=None, output_device=None, dim=0):
    """DataParallel over one device is the module itself (as DataParallel is on
    a machine without GPUs); over several it needs CUDA's comm ops, which ocl
    has not, and passing calls through would change the results (HF Trainer
    scales the loss by the device count it sees), so that raises."""
    ids = list(range(torch.ocl.device_count())) if device_ids is None else list(device_ids)
    if len(ids) > 1:
        raise RuntimeError(
            f"nn.DataParallel over {len(ids)} devices: ocl has no CUDA comm ops to scatter and gather with, so "
            "torch_ocl.transfer_to_ocl cannot run it. Use one device (TORCH_OCL_DEVICES=0 makes "
            "torch.cuda.device_count() 1, and HF Trainer then does not wrap the model), or DDP once ocl has "
            "a distributed backend (issue 16)."
        )
    torch.nn.Module.__init__(self)
    self.module = module
    self.device_ids = []  # DataParallel.forward then calls the module directly
    self.dim = dim
    self.output_device = None
    patchset.note("torch.nn.DataParallel (one device)")


def _init_process_group(orig):
    from . import distributed

    @functools.wraps(orig)
    def init_process_group(backend=None, *args, **kwargs):
        return orig(distributed.map_backend(backend), *args, **kwargs)

    return init_process_group


def _register_for_torchscript(name, wrapper, orig):
    """TorchScript resolves torch.zeros by the function object's identity;
    name the wrapper as the same aten builtin, so scripted code that calls a
    factory (with a device it computed, such as x.device) still compiles."""
    import torch.jit._builtins as jb

    op = jb._get_builtin_table().get(id(orig))
    if op is not None:
        patchset.replace_key(jb._get_builtin_table(), id(wrapper), op)


def _factory_names():
    import torch.utils._device as ud

    # The set DeviceContext compares against holds the functions torch had
    # when it was first built; build it now, before the wrappers replace them.
    names = sorted({f.__name__ for f in ud._device_constructors()} | set(_FACTORY_LIKE))
    return [n for n in names if callable(vars(torch).get(n))]


def apply_all() -> None:
    real_cuda = sys.modules["torch.cuda"]
    shim = cuda_shim.CudaShim(real_cuda)
    patchset.replace(torch, "cuda", shim)
    for key, value in (("torch.cuda", shim), ("torch.cuda.amp", shim.amp), ("torch.cuda.nvtx", shim.nvtx),
                       ("torch.cuda.memory", shim.memory), ("torch.cuda.random", shim.random),
                       ("torch.cuda.streams", shim.streams)):
        patchset.replace_key(sys.modules, key, value)

    for name in _factory_names():
        orig = getattr(torch, name)
        wrapper = _with_device_kwarg(f"torch.{name}", orig)
        patchset.replace(torch, name, wrapper)
        _register_for_torchscript(name, wrapper, orig)
    T = torch.Tensor
    for name in _NEW_METHODS:
        patchset.replace(T, name, _with_device_kwarg(f"torch.Tensor.{name}", getattr(T, name)))
    patchset.replace(T, "to", _with_first_or_kwarg("torch.Tensor.to", T.to, "device"))
    patchset.replace(T, "pin_memory", _with_first_or_kwarg("torch.Tensor.pin_memory", T.pin_memory, "device"))
    patchset.replace(T, "cuda", _tensor_cuda)
    patchset.replace(T, "is_cuda", _is_cuda_property(torch._C.TensorBase.is_cuda))
    M = torch.nn.Module
    patchset.replace(M, "to", _with_first_or_kwarg("torch.nn.Module.to", M.to, "device"))
    patchset.replace(M, "cuda", _module_cuda)

    patchset.replace(torch, "load", _load(torch.load))
    import torch.utils._device as ud

    patchset.replace(ud.DeviceContext, "__init__", _device_context_init(ud.DeviceContext.__init__))
    autocast = torch.amp.autocast_mode.autocast
    patchset.replace(autocast, "__init__", _autocast_init(autocast.__init__))
    for name in ("is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype"):
        patchset.replace(torch, name, _device_type_first(f"torch.{name}", getattr(torch, name)))
    am = torch.amp.autocast_mode
    patchset.replace(am, "is_autocast_available", _device_type_first("torch.amp.is_autocast_available",
                                                                       am.is_autocast_available))
    scaler = torch.amp.GradScaler
    patchset.replace(scaler, "__init__", _grad_scaler_init(scaler.__init__))
    for name in ("Generator", "Stream", "Event"):
        patchset.replace(torch, name, _mapping_type(getattr(torch, name)))

    patchset.replace(torch.nn.DataParallel, "__init__", _data_parallel_init)

    import torch.distributed as dist

    if dist.is_available():
        patchset.replace(dist, "init_process_group", _init_process_group(dist.init_process_group))
        import torch.distributed.distributed_c10d as c10d

        patchset.replace(c10d, "init_process_group", dist.init_process_group)
