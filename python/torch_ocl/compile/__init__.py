"""torch.compile on ocl.

``torch.compile(model, backend="ocl")``, or the unchanged ``torch.compile(model)``
when the model and inputs are on ocl (the default Inductor backend hands ocl
graphs to this one). Dynamo captures the graph; AOTAutograd functionalises it
into ATen forward and backward graphs (min-cut rematerialisation partitioner,
boxed calling convention); each graph is lowered here and run on the device.

What runs today (see docs/design.md, "torch.compile" and "Compiled
lowering"): runs of pointwise ATen nodes are lowered at compile time to one
generated kernel each, called once per run of the graph (segments.py); every
other ATen node runs as the backend's native kernel through the dispatcher,
under fused eager, as eager fused mode does. Kernels take sizes as
arguments, so ``dynamic=True``, ``mark_dynamic`` and automatic dynamic give one
compiled graph for every size and build no OpenCL program for a new size.
Not yet: the whole-graph launch plan replayed from C without the dispatcher,
reductions in segments, and GEMM epilogue fusion from the graph.

``compile_stats()`` counts graphs, nodes by how they run, CPU fallbacks by op,
segments lowered, nodes fused into them, segments that fell back, and compile
seconds; ``TORCH_OCL_LOG=compile`` prints each graph's plan;
``TORCH_OCL_COMPILE_STRICT=1`` turns a lowering error into an exception
instead of a warning and an uncompiled graph.
"""

from .backend import ocl_backend
from .stats import compile_stats, reset_compile_stats

__all__ = ["ocl_backend", "compile_stats", "reset_compile_stats", "install"]

_installed = False


def install() -> None:
    """Register the ``ocl`` backend and device interface with Dynamo, and route
    the default backend's ocl graphs here. Called by ``import torch_ocl``;
    imports nothing heavy until torch.compile runs."""
    global _installed
    if _installed:
        return
    _installed = True
    from .routing import install_default_routing

    install_default_routing()
