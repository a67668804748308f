"""Target of the ``torch.backends`` entry point: ``import torch`` calls load()."""

import sys


def load():
    pkg = sys.modules.get("torch_ocl")
    if pkg is not None and not getattr(pkg, "_initialized", False):
        # `import torch_ocl` is running and is what imported torch; the
        # package registers the backend itself once its import finishes.
        return
    import torch_ocl  # noqa: F401  (registers the backend)
