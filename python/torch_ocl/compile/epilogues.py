"""GEMM epilogues from the graph: a ReLU applied to a linear layer's addmm
becomes one _addmm_activation, whose ocl kernel applies it in the GEMM's
epilogue (include/tocl/gemm.h: act(alpha * A @ B + beta * D + bias)), so the
ReLU costs no launch and no pass over the product.

`relu(addmm(b, x, w))` and, for inputs of more than two dimensions, where
F.linear's decomposition views the product, `relu(view(addmm(...)))` are
rewritten when the product has no other user (ReLU commutes with the view).
The result is the same values bit for bit: the epilogue computes max(v, 0)
on the value addmm would have stored. GELU is left alone: aten's
_addmm_activation means the tanh approximation on CUDA and erf on the CPU.
"""

import os

import torch
import torch.fx as fx

aten = torch.ops.aten
_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)
_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _single_use(node) -> bool:
    return isinstance(node, fx.Node) and node.op == "call_function" and len(node.users) == 1


def fuse_gemm_epilogues(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of epilogues fused.
    TORCH_OCL_GEMM_EPILOGUES=0 turns it off (read at compile time)."""
    if os.environ.get("TORCH_OCL_GEMM_EPILOGUES", "1").strip().lower() in ("0", "false", "no", "off"):
        return 0
    fused = 0
    for relu in list(gm.graph.nodes):
        if relu.op != "call_function" or relu.target is not aten.relu.default:
            continue
        src, view = relu.args[0], None
        if _single_use(src) and src.target in _VIEWS:
            view, src = src, src.args[0]
        if not (_single_use(src) and src.target is aten.addmm.default):
            continue
        val = src.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype not in _DTYPES:
            continue
        beta, alpha = src.kwargs.get("beta", 1), src.kwargs.get("alpha", 1)
        with gm.graph.inserting_before(src):
            act = gm.graph.call_function(aten._addmm_activation.default, (src.args[0], src.args[1], src.args[2]),
                                         {"beta": beta, "alpha": alpha, "use_gelu": False})
        act.meta = dict(src.meta)
        src.replace_all_uses_with(act)
        gm.graph.erase_node(src)
        relu.replace_all_uses_with(view if view is not None else act)
        gm.graph.erase_node(relu)
        fused += 1
    if fused:
        gm.graph.lint()
        gm.recompile()
    return fused
