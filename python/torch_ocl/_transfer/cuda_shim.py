"""The stand-in for torch.cuda while torch_ocl.transfer_to_ocl is applied.

A public name resolves, at each lookup, to (1) an override in this file
where torch.cuda and torch.ocl differ in shape (a capability tuple, a
memory fraction, nvtx, CUDA graphs), else (2) torch.ocl's attribute of the
same name, with CUDA device arguments rewritten, else (3) an AttributeError
that names the missing torch.ocl function. Nothing is copied at import, so
names torch.ocl gains later are answered without changing this file.
Private names (``_lazy_init`` ...) are torch.ocl's when it has them, else
the real torch.cuda's: torch's own code calls those. Lookups from torch's
own modules get the real torch.cuda where torch.ocl has no answer or where
the real name is a class (annotations and isinstance checks keep their
meaning), and are not counted in the exit log.
"""

import contextlib
import functools
import os
import sys
import threading
import types

import torch

from . import devices, patchset

_real_answers = threading.local()  # depth > 0: library probes see the real torch.cuda


@contextlib.contextmanager
def real_cuda_answers():
    """Inside, torch.cuda.is_available() / device_count() answer as without the shim."""
    _real_answers.depth = getattr(_real_answers, "depth", 0) + 1
    try:
        yield
    finally:
        _real_answers.depth -= 1


def _probing() -> bool:
    return getattr(_real_answers, "depth", 0) > 0


class CudaGraphsUnsupported(NotImplementedError):
    pass


def _no_graphs(what):
    raise CudaGraphsUnsupported(
        f"{what}: ocl captures graphs with torch.cuda.CUDAGraph / torch.cuda.graph (torch.ocl.OCLGraph), "
        "but transfer_to_ocl has no counterpart for this call. Capture with torch.cuda.graph, run the "
        "region eagerly, or use torch.compile(mode='reduce-overhead')."
    )


@functools.lru_cache(maxsize=None)
def _mk_overrides(real):
    """Names where torch.cuda and torch.ocl differ in shape; each gets torch.ocl at call time."""
    ocl = lambda: torch.ocl  # noqa: E731  (looked up per call: torch.ocl may gain names)

    def is_available():
        return real.is_available() if _probing() else ocl().is_available()

    def device_count():
        return real.device_count() if _probing() else ocl().device_count()

    def get_device_capability(device=None):
        """CUDA's (major, minor); libraries compare it with (8, 0) for bf16/TF32 paths.
        TORCH_OCL_CUDA_CAPABILITY="8.0" sets the answer."""
        if device is not None:
            ocl().get_device_name(devices.to_ocl(device))  # a bad device raises as torch.ocl does
        spec = os.environ.get("TORCH_OCL_CUDA_CAPABILITY", "8.0")
        try:
            major, minor = (int(x) for x in spec.split("."))
        except ValueError:
            raise ValueError(f"TORCH_OCL_CUDA_CAPABILITY={spec!r}: expected 'MAJOR.MINOR', e.g. '8.0'") from None
        return (major, minor)

    def get_device_properties(device=None):
        return CudaStyleProperties(ocl().get_device_properties(devices.to_ocl(device)), get_device_capability(device))

    def set_per_process_memory_fraction(fraction, device=None):
        if not 0.0 <= float(fraction) <= 1.0:
            raise ValueError(f"set_per_process_memory_fraction: fraction {fraction} is not in [0, 1]")
        dev = devices.to_ocl(device)
        total = ocl().get_device_properties(dev).total_memory
        ocl().set_per_process_memory_limit(int(total * float(fraction)), dev)

    def is_current_stream_capturing():
        return ocl().is_current_stream_capturing()

    def ipc_collect():
        """No CUDA IPC on ocl, so nothing to collect."""

    aliases = {  # deprecated torch.cuda spellings of names torch.ocl has
        "memory_cached": "memory_reserved",
        "max_memory_cached": "max_memory_reserved",
        "reset_max_memory_allocated": "reset_peak_memory_stats",
        "reset_max_memory_cached": "reset_peak_memory_stats",
    }
    table = {
        "is_available": is_available,
        "device_count": device_count,
        "get_device_capability": get_device_capability,
        "get_device_properties": get_device_properties,
        "set_per_process_memory_fraction": set_per_process_memory_fraction,
        "is_current_stream_capturing": is_current_stream_capturing,
        "ipc_collect": ipc_collect,
        "StreamContext": StreamContext,
        "CUDAGraph": CUDAGraph,
        "graph": graph,
        "make_graphed_callables": make_graphed_callables,
        "graph_pool_handle": graph_pool_handle,
        "OutOfMemoryError": torch.OutOfMemoryError,
    }
    for cuda_name, ocl_name in aliases.items():
        table[cuda_name] = _forwarder(ocl_name)
    return table


class StreamContext:
    """torch.cuda.StreamContext(s): torch.ocl.stream(s) as a class, since
    libraries test isinstance against it as they do against torch.cuda's."""

    def __init__(self, stream):
        self.stream = stream
        self._cm = None

    def __enter__(self):
        self._cm = torch.ocl.stream(self.stream)
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _ocl_graphs():
    from torch_ocl import graphs

    return graphs


class CUDAGraph:
    """torch.cuda.CUDAGraph(): a torch.ocl.OCLGraph (capture and replay on ocl)."""

    def __new__(cls, *args, **kwargs):
        return _ocl_graphs().OCLGraph(*args, **kwargs)


class graph:  # a class in torch.cuda too, so isinstance checks against it still work
    """torch.cuda.graph(g): torch.ocl.graph(g)."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        self._cm = _ocl_graphs().graph(cuda_graph, pool=pool, stream=stream, capture_error_mode=capture_error_mode)

    def __enter__(self):
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def make_graphed_callables(*args, **kwargs):
    _no_graphs("torch.cuda.make_graphed_callables(...)")


def graph_pool_handle(*args, **kwargs):
    _no_graphs("torch.cuda.graph_pool_handle()")


class CudaStyleProperties:
    """torch.ocl's device properties with the CUDA fields scripts read
    (major, minor, multi_processor_count, total_memory, name)."""

    def __init__(self, props, capability):
        self._props = props
        self.major, self.minor = capability

    def __getattr__(self, name):
        try:
            return getattr(self._props, name)
        except AttributeError:
            raise AttributeError(
                f"torch.cuda.get_device_properties(...).{name}: the ocl device properties have no '{name}' "
                f"(they have {', '.join(sorted(vars(self._props)))}, major, minor)"
            ) from None

    def __repr__(self):
        return f"_CudaStyleProperties(major={self.major}, minor={self.minor}, {self._props!r})"


def _map_args(args, kwargs):
    return tuple(devices.to_ocl(a) for a in args), {k: devices.to_ocl(v) for k, v in kwargs.items()}


@functools.lru_cache(maxsize=None)
def _forwarder(ocl_name: str):
    """A function that calls torch.ocl.<ocl_name> (looked up per call) with CUDA devices rewritten."""

    def call(*args, **kwargs):
        a, kw = _map_args(args, kwargs)
        return getattr(torch.ocl, ocl_name)(*a, **kw)

    call.__name__ = call.__qualname__ = ocl_name
    return call


@functools.lru_cache(maxsize=None)
def _mapped_class(cls):
    """A subclass of a torch.ocl class whose constructor rewrites CUDA devices,
    so torch.cuda.Stream("cuda") and torch.cuda.device("cuda:0") work and the
    objects are still torch.ocl's (isinstance holds)."""

    def __new__(k, *args, **kwargs):
        a, kw = _map_args(args, kwargs)
        if cls.__new__ is object.__new__:
            return object.__new__(k)
        return cls.__new__(k, *a, **kw)

    def __init__(self, *args, **kwargs):
        a, kw = _map_args(args, kwargs)
        if cls.__init__ is not object.__init__:
            cls.__init__(self, *a, **kw)

    return type(cls.__name__, (cls,), {"__new__": __new__, "__init__": __init__, "__module__": "torch.cuda"})


# torch.cuda's submodules that are namespaces over the same functions.
_SAME_NAMESPACE = ("memory", "random", "streams")


class CudaShim(types.ModuleType):
    """torch.cuda, answered from torch.ocl (see the module docstring)."""

    def __init__(self, real, namespace=None):
        """real: the torch.cuda module; namespace: the real submodule this
        stands for (torch.cuda.memory ...), whose private names torch's own
        code asks for; None for torch.cuda itself."""
        ns = namespace if namespace is not None else real
        super().__init__(ns.__name__, ns.__doc__)
        self.__dict__.update(
            _real=real,
            _ns=ns,
            __file__=getattr(ns, "__file__", None),
            __spec__=ns.__spec__,
            __loader__=ns.__loader__,
            __package__="torch.cuda",
        )
        if namespace is None:
            self.__dict__.update(__path__=getattr(real, "__path__", []), amp=AmpShim(real.amp), nvtx=NvtxShim())
            for sub in _SAME_NAMESPACE:
                self.__dict__[sub] = CudaShim(real, getattr(real, sub))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        kind, value = resolve(name, self._real, self._ns)
        by_torch = _asked_by_torch()
        if kind == "missing" and by_torch and hasattr(self._ns, name):
            # torch's own modules name torch.cuda classes in annotations and
            # behind their own checks; they get the real (CUDA-less) answer.
            return getattr(self._ns, name)
        if by_torch and isinstance(getattr(self._ns, name, None), type):
            # torch's isinstance checks against torch.cuda classes (Dynamo
            # asks `isinstance(v, torch.cuda.StreamContext)`) keep their meaning.
            return getattr(self._ns, name)
        if by_torch:  # not counted: the log is about the script's calls
            if kind == "missing":
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
            return value
        if kind == "missing":
            patchset.note_missing(name)
            raise AttributeError(
                f"torch.cuda.{name}: torch.ocl has no '{name}', so torch_ocl.transfer_to_ocl cannot answer it "
                "on the ocl device. Remove the call or guard it, or see `python -m torch_ocl port` for the "
                "CUDA names the shim covers."
            )
        if not name.startswith("_"):
            patchset.note(f"torch.cuda.{name}")
        return value

    def __dir__(self):
        return sorted(set(dir(torch.ocl)) | set(_mk_overrides(self._real)) | set(self.__dict__))


def _asked_by_torch() -> bool:
    """Whether the attribute lookup comes from torch's own code (not torch_ocl,
    not the user's script or a library)."""
    frame = sys._getframe(2)
    mod = frame.f_globals.get("__name__", "") if frame else ""
    return mod == "torch" or (mod.startswith("torch.") and not mod.startswith("torch_ocl"))


def resolve(name, real=None, namespace=None):
    """How torch.cuda.<name> is answered under the shim: (kind, value), kind
    one of 'override', 'ocl', 'private', 'missing'. `python -m torch_ocl port`
    asks the same function, so its verdicts are the shim's behaviour."""
    real = real if real is not None else _real_cuda()
    overrides = _mk_overrides(real)
    real = namespace if namespace is not None else real
    if name in overrides:
        return "override", overrides[name]
    if hasattr(torch.ocl, name):
        v = getattr(torch.ocl, name)
        if isinstance(v, type):
            return "ocl", _mapped_class(v)
        if callable(v):
            return "ocl", _forwarder(name)
        return "ocl", v
    if name.startswith("_") and real is not None and hasattr(real, name):
        return "private", getattr(real, name)
    return "missing", None


def _real_cuda():
    shim = torch.cuda
    return shim._real if isinstance(shim, CudaShim) else shim


def kind_of(name: str) -> str:
    """'override' / 'ocl' / 'missing' for a torch.cuda name (port's verdicts)."""
    if name in ("amp", "nvtx") + _SAME_NAMESPACE:
        return "override"
    return resolve(name)[0]


class AmpShim(types.ModuleType):
    """torch.cuda.amp: autocast and GradScaler bound to ocl."""

    def __init__(self, real_amp):
        super().__init__("torch.cuda.amp")
        self.__dict__.update(_real=real_amp, __path__=getattr(real_amp, "__path__", []), __spec__=real_amp.__spec__)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        table = {
            "autocast": lambda: torch.ocl.amp.autocast,
            "GradScaler": lambda: torch.ocl.amp.GradScaler,
            "custom_fwd": lambda: _custom_fwd,
            "custom_bwd": lambda: _custom_bwd,
        }
        if name in table:
            patchset.note(f"torch.cuda.amp.{name}")
            return table[name]()
        return getattr(self._real, name)


def _custom_fwd(fwd=None, *, cast_inputs=None):
    return torch.amp.custom_fwd(fwd, device_type="ocl", cast_inputs=cast_inputs)


def _custom_bwd(bwd=None):
    return torch.amp.custom_bwd(bwd, device_type="ocl")


class NvtxShim(types.ModuleType):
    """torch.cuda.nvtx ranges as profiler record_function ranges, so they
    show up in torch.profiler traces as NVTX ranges do in Nsight."""

    def __init__(self):
        super().__init__("torch.cuda.nvtx")
        self._stack = []
        self._ranges = {}
        self._next_id = 0

    def range_push(self, msg):
        rf = torch.autograd.profiler.record_function(msg)
        rf.__enter__()
        self._stack.append(rf)
        return len(self._stack) - 1

    def range_pop(self):
        if not self._stack:
            return -1
        self._stack.pop().__exit__(None, None, None)
        return len(self._stack)

    def range_start(self, msg):
        rf = torch.autograd.profiler.record_function(msg)
        rf.__enter__()
        self._next_id += 1
        self._ranges[self._next_id] = rf
        return self._next_id

    def range_end(self, range_id):
        rf = self._ranges.pop(range_id, None)
        if rf is not None:
            rf.__exit__(None, None, None)

    def mark(self, msg):
        with torch.autograd.profiler.record_function(msg):
            pass

    @contextlib.contextmanager
    def range(self, msg, *args, **kwargs):
        with torch.autograd.profiler.record_function(msg.format(*args, **kwargs)):
            yield
