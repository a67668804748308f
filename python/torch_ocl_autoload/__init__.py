"""Target of the ``torch.backends`` entry point: ``import torch`` calls load().

A package of its own, outside torch_ocl, so that deciding not to load costs
no import of torch_ocl (whose import registers the ocl device).
"""

import importlib.util
import os
import sys


def _accelerators():
    """torch_ocl/_accelerators.py, loaded without running torch_ocl/__init__."""
    spec = importlib.util.find_spec("torch_ocl")  # a top-level find imports nothing
    path = os.path.join(spec.submodule_search_locations[0], "_accelerators.py")
    mspec = importlib.util.spec_from_file_location("_torch_ocl_accelerators", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return mod


def load():
    if os.environ.get("TORCH_OCL_AUTOLOAD") != "1" and _accelerators().other_accelerator():
        return  # see torch_ocl/_accelerators.py: ocl here would break CUDA/XPU autograd
    pkg = sys.modules.get("torch_ocl")
    if pkg is not None and not getattr(pkg, "_initialized", False):
        # `import torch_ocl` is running and is what imported torch; the
        # package registers the backend itself once its import finishes.
        return
    import torch_ocl  # noqa: F401  (registers the backend)
