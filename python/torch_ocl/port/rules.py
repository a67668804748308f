"""Verdicts for the CUDA-specific uses `python -m torch_ocl port` finds.

A verdict is one of RUNS (runs under torch_ocl.transfer_to_ocl as it is),
EDIT (needs an edit; the note says which) or BLOCKED (cannot run on ocl
yet; the note says why). torch.cuda names are judged by asking the shim
itself (transfer's cuda_shim.kind_of), which looks in torch.ocl at run time,
so a name torch.ocl gains changes the verdict with no change here.
"""

RUNS, EDIT, BLOCKED = "runs", "edit", "blocked"
ORDER = (RUNS, EDIT, BLOCKED)

# Third-party imports: top-level package -> (verdict, note).
IMPORTS = {
    "triton": (BLOCKED, "Triton kernels have no OpenCL code generator: rewrite the kernel with torch ops "
                        "(fused eager or torch.compile fuse pointwise chains on ocl)"),
    "apex": (EDIT, "apex is CUDA-only: apex.amp -> torch.amp, FusedAdam -> torch.optim.AdamW(fused=True), "
                   "FusedLayerNorm -> torch.nn.LayerNorm"),
    "flash_attn": (EDIT, "flash_attn is CUDA-only: use torch.nn.functional.scaled_dot_product_attention "
                         "(a flash-style kernel on ocl)"),
    "xformers": (EDIT, "xformers is CUDA-only: memory_efficient_attention -> "
                       "torch.nn.functional.scaled_dot_product_attention"),
    "bitsandbytes": (BLOCKED, "bitsandbytes' quantised kernels are CUDA-only and ocl has no quantized tensors yet"),
    "deepspeed": (BLOCKED, "DeepSpeed needs NCCL and CUDA kernels; ocl has no distributed backend yet (issue 16)"),
}

TRITON_DECORATORS = ("triton.jit", "triton.autotune", "triton.heuristics")

# torch.compile(backend=...): backends that run ocl graphs.
COMPILE_BACKENDS_OK = (None, "inductor", "ocl", "aot_eager", "eager")

CUDA_GRAPH_NAMES = ("make_graphed_callables", "graph_pool_handle", "graphs")  # CUDAGraph and graph run

CPP_EXTENSION = "torch.utils.cpp_extension"


def cuda_api(name: str, full: str):
    """torch.cuda.<name> (full is the whole dotted use)."""
    from torch_ocl._transfer import cuda_shim

    if name in CUDA_GRAPH_NAMES:
        return BLOCKED, ("no ocl counterpart (the shim raises): capture with torch.cuda.graph "
                         "(torch.ocl.graph) or run the region eagerly")
    if name in ("CUDAGraph", "graph"):
        return RUNS, f"answered by torch.ocl.{'OCLGraph' if name == 'CUDAGraph' else 'graph'} (capture and replay)"
    kind = cuda_shim.kind_of(name)
    if kind == "override":
        return RUNS, "answered by the shim"
    if kind == "ocl":
        return RUNS, f"answered by torch.ocl.{name}"
    return EDIT, f"torch.ocl has no '{name}' (the shim raises AttributeError): remove or guard the call"


def nccl():
    from torch_ocl._transfer import distributed

    ocl = distributed.ocl_backend()
    if ocl:
        return RUNS, f"the shim maps nccl to 'cpu:gloo,ocl:{ocl}'"
    return BLOCKED, ("this torch has no distributed backend for ocl tensors (oclgloo needs "
                     "torch.distributed with Gloo): the shim raises; run as a single process")


def compile_backend(backend):
    if backend in COMPILE_BACKENDS_OK:
        return RUNS, "graphs on ocl tensors go to the ocl backend"
    if not isinstance(backend, str):
        return EDIT, "a custom backend callable: check that it handles ocl tensors"
    return EDIT, f"backend {backend!r} targets CUDA: use the default backend or backend='ocl'"


def float64():
    import torch

    n = torch.ocl.device_count()
    has = [torch.ocl.get_device_properties(i).has_fp64 for i in range(n)]
    if has and all(has):
        return RUNS, "float64: every ocl device here has cl_khr_fp64"
    return EDIT, "float64 on a device without cl_khr_fp64 falls back to the CPU: use float32"


def cpp_extension(func: str, has_cuda_sources: bool):
    if has_cuda_sources or func == "CUDAExtension":
        return BLOCKED, "a CUDA C++ extension cannot run on OpenCL devices: port its kernels to torch ops"
    if func in ("load", "load_inline", "CppExtension"):
        return EDIT, "a C++ extension has CPU kernels only: its ops fall back to the CPU for ocl tensors"
    return RUNS, "build helper"


NOTES = {
    "dot_cuda": (RUNS, "the shim sends .cuda() to ocl; without it write .to('ocl')"),
    "is_cuda": (RUNS, "the shim answers True for ocl tensors"),
    "device_literal": (RUNS, "the shim rewrites 'cuda' where a device is consumed; without it write 'ocl'"),
    "device_type_compare": (EDIT, "tensors report device.type 'ocl', so this comparison with 'cuda' is false "
                                  "under the shim: compare with the device the script chose"),
    "backend_flag": (RUNS, "settable; no effect on ocl"),
    "data_parallel": (EDIT, "DataParallel scatters with CUDA's comm ops: the shim passes one device through and refuses more; "
                            "drop the wrapper (DDP once ocl has a distributed backend)"),
    "jit_script": (RUNS, "scripted factory calls compile under the shim, but a 'cuda' literal inside scripted "
                         "code is not rewritten (TorchScript calls aten itself): pass x.device"),
    "syntax_error": (EDIT, "could not be parsed, so it was not scanned"),
}
