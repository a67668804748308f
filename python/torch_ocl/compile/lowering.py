"""Lowering an ATen graph (from AOTAutograd) for the ocl device.

Each node is classified by how it will run: pointwise (merged into
generated kernels by fused eager), other native ocl kernels (GEMM,
convolution, norms, reductions, views), or an op without an ocl kernel
(the CPU fallback; counted per op and logged once). A custom op
(torch.library.custom_op with an ocl kernel, e.g. one launching a
torch_ocl.compile_kernel kernel) is an extern call: one node, run as its
kernel, counted as extern_nodes. Runs of pointwise
nodes are then replaced by segment calls, one generated kernel each
(segments.py). The graph runs with fused eager on, whatever the process's
eager mode, so what is left of its pointwise work is still merged.
"""

import os
import sys
import time
import warnings

import torch

from . import stats
from .epilogues import fuse_gemm_epilogues, fuse_residual_adds
from .prologues import fuse_norm_prologues
from .attention_append import fuse_attention_appends
from .cat_pairs import pair_cats
from .positions import slice_position_embeddings
from .replay import Replayer, replay_refusal
from .segments import lower_segments

_logged_fallback_ops = set()


def _strict() -> bool:
    return os.environ.get("TORCH_OCL_COMPILE_STRICT", "") not in ("", "0")


def _log_on() -> bool:
    topics = os.environ.get("TORCH_OCL_LOG", "")
    return any(t in ("compile", "all") for t in topics.split(","))


_DEVICE_GENERIC_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
                        "CompositeImplicitAutograd")


def has_kernel(op, device_generic: bool = True) -> bool:
    """An ocl kernel for op, or (device_generic) a device-generic one: views
    such as permute are CompositeExplicitAutograd over as_strided. Without
    either, op reaches the CPU fallback."""
    keys = ("PrivateUse1",) + (_DEVICE_GENERIC_KEYS if device_generic else ())
    try:
        name = op.name()
        return any(torch._C._dispatch_has_kernel_for_dispatch_key(name, k) for k in keys)
    except Exception:  # an overload packet or an op unknown to the dispatcher
        return False


def classify(gm: torch.fx.GraphModule) -> dict:
    """Count the graph's op nodes by how they run."""
    plan = dict(nodes=0, pointwise_nodes=0, native_nodes=0, fallback_nodes=0, fallback_by_op={}, extern_nodes=0,
                extern_by_op={})
    for node in gm.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        op = node.target
        plan["nodes"] += 1
        if not has_kernel(op):
            # A CompositeImplicit op would have been decomposed; what is left
            # without an ocl kernel reaches the CPU fallback.
            name = op.name()
            plan["fallback_nodes"] += 1
            plan["fallback_by_op"][name] = plan["fallback_by_op"].get(name, 0) + 1
        elif op.namespace not in ("aten", "prims"):
            # A custom op: the graph calls it as it is (its fake kernel gave
            # the shapes at trace time), so its launch is one extern call.
            name = op.name()
            plan["extern_nodes"] += 1
            plan["extern_by_op"][name] = plan["extern_by_op"].get(name, 0) + 1
        elif torch.Tag.pointwise in op.tags:
            plan["pointwise_nodes"] += 1
        else:
            plan["native_nodes"] += 1
    return plan


class CompiledGraph:
    """A lowered graph: boxed calling convention (the list of inputs is
    cleared so AOTAutograd's inputs can be freed early)."""

    def __init__(self, gm: torch.fx.GraphModule, kind: str, plan: dict, replayer=None):
        # An instance attribute: wrappers (functools.wraps) copy __dict__.
        self._boxed_call = True
        self.gm = gm
        self.kind = kind
        self.plan = plan
        self.replayer = replayer    # mode="reduce-overhead": replay.Replayer

    def __call__(self, args):
        from .. import fusion

        stats.add(calls=1)
        prev = fusion.get_eager_mode()
        if prev != "fused":
            fusion.set_eager_mode("fused")
        try:
            if self.replayer is not None:
                return self.replayer(args)
            return self.gm(*args)
        finally:
            args.clear()
            if prev != "fused":
                fusion.set_eager_mode(prev)


def _boxed_eager(gm):
    from functorch.compile import make_boxed_func

    return make_boxed_func(gm.forward)


def compile_graph(gm: torch.fx.GraphModule, example_inputs, kind: str = "forward", replay: bool = False):
    t0 = time.perf_counter()
    try:
        plan = classify(gm)
        plan["position_slices"] = slice_position_embeddings(gm)
        plan["gemm_epilogues"] = fuse_gemm_epilogues(gm)  # before segments take the ReLUs
        plan["gemm_residuals"] = fuse_residual_adds(gm)  # and the adds
        plan["gemm_norms"] = fuse_norm_prologues(gm)  # after the ReLUs joined their GEMM
        plan["cat_pairs"] = pair_cats(gm)
        plan["attention_appends"] = fuse_attention_appends(gm)  # over the pairs
        plan.update(lower_segments(gm, _strict()))
        # The graph module's own code calls each op: boxed inputs in.
        gm.graph.lint()
        replayer = None
        if replay:
            why = replay_refusal(gm, kind, plan)
            if why is None:
                replayer = Replayer(lambda a: gm(*a), gm, kind)
            elif _log_on():
                print(f"[torch_ocl compile] reduce-overhead: the {kind} graph is not replayed: {why}",
                      file=sys.stderr)
        compiled = CompiledGraph(gm, kind, plan, replayer)
    except Exception as e:  # an internal lowering error: this graph runs uncompiled
        if _strict():
            raise
        warnings.warn(f"torch_ocl.compile: lowering the {kind} graph failed ({type(e).__name__}: {e}); "
                      "it runs uncompiled. Set TORCH_OCL_COMPILE_STRICT=1 to raise instead.")
        stats.add(lowering_errors=1, graphs=1, compile_seconds=time.perf_counter() - t0)
        return _boxed_eager(gm)
    for name in plan["fallback_by_op"]:
        if name not in _logged_fallback_ops:
            _logged_fallback_ops.add(name)
            if _log_on():
                print(f"[torch_ocl compile] {name} has no ocl kernel: it runs on the CPU", file=sys.stderr)
    stats.add(graphs=1, nodes=plan["nodes"], pointwise_nodes=plan["pointwise_nodes"],
              native_nodes=plan["native_nodes"], fallback_nodes=plan["fallback_nodes"],
              fallback_by_op=plan["fallback_by_op"], extern_nodes=plan["extern_nodes"],
              extern_by_op=plan["extern_by_op"], segments_lowered=plan["segments_lowered"],
              nodes_fused=plan["nodes_fused"], segments_fallback=plan["segments_fallback"],
              gemm_epilogues=plan["gemm_epilogues"], gemm_residuals=plan["gemm_residuals"],
              gemm_norms=plan["gemm_norms"], cat_pairs=plan["cat_pairs"],
              attention_appends=plan["attention_appends"], position_slices=plan["position_slices"],
              compile_seconds=time.perf_counter() - t0)
    if _log_on():
        print(f"[torch_ocl compile] {kind} graph: {plan['nodes']} nodes, {plan['pointwise_nodes']} pointwise "
              f"(fused), {plan['native_nodes']} native, {plan['extern_nodes']} extern, {plan['fallback_nodes']} on the CPU "
              f"{plan['fallback_by_op'] or ''}; {plan['segments_lowered']} segments lowered ({plan['nodes_fused']} nodes), "
              f"{plan['segments_fallback']} refused", file=sys.stderr)
    return compiled
