"""GEMM epilogues from the graph: a ReLU applied to a linear layer's addmm
becomes one _addmm_activation, whose ocl kernel applies it in the GEMM's
epilogue (include/tocl/gemm.h: act(alpha * A @ B + beta * D + bias)), so the
ReLU costs no launch and no pass over the product; and a residual add after
a linear layer, `addmm(b, x, w) + h` (a transformer block's two per layer),
becomes torch_ocl::linear_residual, the same GEMM with h as D and b as its
bias (fuse_residual_adds).

`relu(addmm(b, x, w))` and, for inputs of more than two dimensions, where
F.linear's decomposition views the product, `relu(view(addmm(...)))` are
rewritten when the product has no other user (ReLU commutes with the view).
The result is the same values bit for bit: the epilogue computes max(v, 0)
on the value addmm would have stored. GELU is left alone: aten's
_addmm_activation means the tanh approximation on CUDA and erf on the CPU.
"""

import torch
import torch.fx as fx

from .rewrite import VIEWS, rewritten, turned_off

aten = torch.ops.aten
_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _single_use(node) -> bool:
    return isinstance(node, fx.Node) and node.op == "call_function" and len(node.users) == 1


def _viewed_addmm(node):
    """(addmm, view or None) when node is an addmm, or a view of one (F.linear
    on more than two dims), used by node's consumer alone; else None."""
    view = None
    if _single_use(node) and node.target in VIEWS:
        view, node = node, node.args[0]
    return (node, view) if _single_use(node) and node.target is aten.addmm.default else None


def fuse_gemm_epilogues(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of epilogues fused.
    TORCH_OCL_GEMM_EPILOGUES=0 turns it off (read at compile time)."""
    if turned_off("TORCH_OCL_GEMM_EPILOGUES"):
        return 0
    fused = 0
    for relu in list(gm.graph.nodes):
        if relu.op != "call_function" or relu.target is not aten.relu.default:
            continue
        found = _viewed_addmm(relu.args[0])
        if found is None:
            continue
        src, view = found
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
    return rewritten(gm, fused)


def _residual_parts(add):
    """(addmm, view or None, residual) when add is addmm(b, x, w) [viewed] + h
    with h of the sum's shape and dtype, a 1-D bias, beta = alpha = 1."""
    if add.op != "call_function" or add.target is not aten.add.Tensor or len(add.args) != 2:
        return None
    if add.kwargs.get("alpha", 1) != 1:
        return None
    out = add.meta.get("val")
    if not isinstance(out, torch.Tensor) or out.dtype not in _DTYPES:
        return None
    for side, h in (add.args, reversed(add.args)):
        found = _viewed_addmm(side)
        if found is None:
            continue
        prod, view = found
        if prod.kwargs.get("beta", 1) != 1 or prod.kwargs.get("alpha", 1) != 1:
            continue
        bias, hv = prod.args[0].meta.get("val") if isinstance(prod.args[0], fx.Node) else None, \
            h.meta.get("val") if isinstance(h, fx.Node) else None
        if not (isinstance(bias, torch.Tensor) and bias.dim() == 1 and isinstance(hv, torch.Tensor)):
            continue
        if hv.dtype != out.dtype or bias.dtype != out.dtype or tuple(hv.shape) != tuple(out.shape):
            continue
        return prod, view, h
    return None


def fuse_residual_adds(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of residual adds fused into
    their GEMM. TORCH_OCL_GEMM_EPILOGUES=0 turns it off too."""
    if turned_off("TORCH_OCL_GEMM_EPILOGUES"):
        return 0
    fused = 0
    for add in list(gm.graph.nodes):
        parts = _residual_parts(add)
        if parts is None:
            continue
        prod, view, h = parts
        bias, x, w = prod.args[0], prod.args[1], prod.args[2]
        n = prod.meta["val"].shape[-1]
        if not isinstance(n, int):  # a symbolic width: the reshape would need its node
            continue
        with gm.graph.inserting_before(add):
            h2 = gm.graph.call_function(aten.reshape.default, (h, [-1, n]))
            fused_node = gm.graph.call_function(torch.ops.torch_ocl.linear_residual.default, (x, w, bias, h2))
            fused_node.meta = dict(prod.meta)
            result = fused_node
            if view is not None:
                result = gm.graph.call_function(view.target, (fused_node,) + tuple(view.args[1:]), dict(view.kwargs))
                result.meta = dict(add.meta)
        add.replace_all_uses_with(result)
        gm.graph.erase_node(add)
        if view is not None:
            gm.graph.erase_node(view)
        gm.graph.erase_node(prod)
        fused += 1
    return rewritten(gm, fused)
