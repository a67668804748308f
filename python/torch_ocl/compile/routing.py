"""Hooking the ocl backend into torch.compile without importing Dynamo.

``import torch`` loads torch_ocl, and importing torch._dynamo costs about 2 s,
so nothing here imports it. Instead:
- the default backend: ``torch.compile(model)`` builds a
  ``torch._TorchCompileInductorWrapper``; its call gets the graph and the
  example inputs, and hands the graph to the ocl backend when an input is
  on ocl (Inductor has no ocl code generator: it raised KeyError: 'ocl');
- ``backend="ocl"`` and the Dynamo device interface are registered when
  torch._dynamo is first imported (an import hook), or at once if it
  already is. The installed package also names the backend through the
  ``torch_dynamo_backends`` entry point.
"""

import importlib.abc
import importlib.util
import sys

import torch


def _on_ocl(inputs) -> bool:
    for t in inputs:
        dev = getattr(t, "device", None)
        if dev is not None and getattr(dev, "type", None) == "ocl":
            return True
    return False


def _route_default_backend() -> None:
    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper is None or getattr(wrapper.__call__, "_torch_ocl", False):
        return
    inductor_call = wrapper.__call__

    def __call__(self, model_, inputs_, *args, **kwargs):
        if _on_ocl(inputs_):
            from . import ocl_backend

            # mode="reduce-overhead" sets Inductor's cudagraphs option: on
            # ocl it means graph replay (replay.py).
            cudagraphs = getattr(self, "config", {}).get("triton.cudagraphs", False)
            return ocl_backend(model_, inputs_, mode="reduce-overhead" if cudagraphs else None)
        return inductor_call(self, model_, inputs_, *args, **kwargs)

    __call__._torch_ocl = True
    __call__.__wrapped__ = inductor_call
    wrapper.__call__ = __call__


def register_with_dynamo() -> None:
    """backend="ocl" and the device interface (torch._dynamo is imported)."""
    from torch._dynamo.backends.registry import _BACKENDS, register_backend
    from torch._dynamo.device_interface import register_interface_for_device

    from .backend import ocl_backend
    from .device_interface import OclInterface

    if "ocl" not in _BACKENDS:
        register_backend(name="ocl")(ocl_backend)
    register_interface_for_device("ocl", OclInterface)


class _AfterDynamoImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Runs register_with_dynamo once torch._dynamo has been imported."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        register_with_dynamo()


def install_default_routing() -> None:
    _route_default_backend()
    if "torch._dynamo" in sys.modules:
        register_with_dynamo()
    elif not any(isinstance(f, _AfterDynamoImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDynamoImport())
