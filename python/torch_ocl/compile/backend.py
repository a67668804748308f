"""The ``ocl`` Dynamo backend: AOTAutograd over the lowering in lowering.py."""

import functools

import torch

from .lowering import compile_graph, has_kernel


@functools.lru_cache(maxsize=1)
def decompositions() -> dict:
    """Core ATen decompositions, minus every op that has an ocl kernel: the
    hand-written kernels (softmax, norms, GEMM family, convolution,
    attention, embedding, losses) and the pointwise library stay whole, the
    rest is taken apart into ops that do have one."""
    from torch._decomp import core_aten_decompositions

    return {op: fn for op, fn in core_aten_decompositions().items() if not has_kernel(op, device_generic=False)}


@functools.lru_cache(maxsize=4)
def _aot_backend(replay: bool, cached: bool):
    from functorch.compile import min_cut_rematerialization_partition
    from torch._dynamo.backends.common import aot_autograd

    kinds = ("forward", "backward", "inference")
    if cached:  # AOTAutogradCache can hold the graphs (artifact.py)
        from . import artifact  # imports Inductor's OutputCode: only once something compiles

        compilers = {k: artifact.serializable_compiler(k, replay) for k in kinds}
    else:
        compilers = {k: functools.partial(compile_graph, kind=k, replay=replay) for k in kinds}
    return aot_autograd(
        fw_compiler=compilers["forward"],
        bw_compiler=compilers["backward"],
        inference_compiler=compilers["inference"],
        decompositions=decompositions(),
        partition_fn=min_cut_rematerialization_partition,
        keep_inference_input_mutations=True,
    )


def ocl_backend(gm, example_inputs, mode=None, options=None, **kwargs):
    """torch.compile(model, backend="ocl"). mode="reduce-overhead" (or
    options={"triton.cudagraphs": True}, what that mode sets for Inductor)
    replays captured inference graphs (replay.py); "max-autotune" and other
    options change nothing (see docs/design.md)."""
    from . import artifact

    replay = mode == "reduce-overhead" or bool((options or {}).get("triton.cudagraphs", False))
    cached = artifact.enabled()
    with artifact.caching(decompositions(), replay):
        return _aot_backend(replay, cached)(gm, example_inputs)
