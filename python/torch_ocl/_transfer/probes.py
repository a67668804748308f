"""Library probes that must keep the real answer under the shim.

With torch.cuda answering from torch.ocl, torch.cuda.is_available() is
True, and a library that asks "is flash-attn usable?" as "is the package
installed and is CUDA up?" would say yes and load CUDA kernels. Each row
names such a probe; while it runs, torch.cuda.is_available() and
device_count() give the answers they give without the shim. A row applies
from the library version it was read in (``since``); rows for a module not
yet imported are applied when it is. A row may name helpers in the same
module that cache the CUDA answer (transformers' is_torch_cuda_available
is an lru_cache): during the probe they are called uncached, so neither
the shim's answer leaks into the probe nor the probe's into the cache.
"""

import importlib.abc
import importlib.machinery
import importlib.metadata
import sys

from packaging.version import InvalidVersion, Version

from . import cuda_shim

_TF_CACHED = ("is_torch_cuda_available",)

# (distribution, since version, module, function, cached helpers, what it decides)
PROBES = (
    ("transformers", "4.40", "transformers.utils.import_utils", "is_flash_attn_2_available", _TF_CACHED,
     "loads flash_attn's CUDA kernels"),
    ("transformers", "4.40", "transformers.utils.import_utils", "is_flash_attn_3_available", _TF_CACHED,
     "loads flash_attn_interface's CUDA kernels"),
    ("transformers", "4.40", "transformers.utils.import_utils", "is_bitsandbytes_available", _TF_CACHED,
     "enables bitsandbytes' CUDA quantisation"),
    ("accelerate", "0.30", "accelerate.utils.imports", "is_bnb_available", (),
     "enables bitsandbytes' CUDA quantisation"),
)

_wrapped = []  # (module, name, original)
_finder = None


def _version_ok(dist: str, since: str) -> bool:
    try:
        return Version(importlib.metadata.version(dist)) >= Version(since)
    except (importlib.metadata.PackageNotFoundError, InvalidVersion):
        return False


def _real_answer(fn, module, helpers):
    def probe(*args, **kwargs):
        saved = {h: getattr(module, h) for h in helpers if hasattr(module, h)}
        with cuda_shim.real_cuda_answers():
            try:
                for h, f in saved.items():
                    setattr(module, h, getattr(f, "__wrapped__", f))  # lru_cache keeps the function here
                return fn(*args, **kwargs)
            finally:
                for h, f in saved.items():
                    setattr(module, h, f)

    probe.__wrapped__ = fn
    probe._torch_ocl_probe = True
    probe.__name__ = getattr(fn, "__name__", "probe")
    probe.__doc__ = getattr(fn, "__doc__", None)
    return probe


def _wrap_module(module) -> None:
    for dist, since, modname, name, helpers, _why in PROBES:
        if modname == module.__name__ and hasattr(module, name) and _version_ok(dist, since):
            orig = getattr(module, name)
            if getattr(orig, "_torch_ocl_probe", False):
                continue
            cache_clear = getattr(orig, "cache_clear", None)
            if cache_clear:  # an answer cached before the shim was applied may be either
                cache_clear()
            _wrapped.append((module, name, orig))
            setattr(module, name, _real_answer(orig, module, helpers))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Applies the rows of a module right after it is executed, before any
    other module can `from ... import` the probe."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in {row[2] for row in PROBES}:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _wrap_module(module)

        spec.loader.exec_module = exec_module
        return spec


def apply() -> None:
    global _finder
    for modname in {row[2] for row in PROBES}:
        if modname in sys.modules:
            _wrap_module(sys.modules[modname])
    if _finder is None:
        _finder = _AfterImport()
        sys.meta_path.insert(0, _finder)


def undo() -> None:
    global _finder
    while _wrapped:
        module, name, orig = _wrapped.pop()
        setattr(module, name, orig)
        if getattr(orig, "cache_clear", None):
            orig.cache_clear()
    if _finder is not None:
        sys.meta_path.remove(_finder)
        _finder = None


def applied():
    """(module, function) of every probe row in force, for the log and port."""
    return [(m.__name__, n) for m, n, _o in _wrapped]
