"""GEMM prologues from the graph: a LayerNorm whose output only feeds a
linear layer becomes torch_ocl::norm_linear, which on one row (a decoding
step) is a single kernel normalising x as it loads it
(include/tocl/gemm.h, tocl_gemm_normed). A transformer block's norm1 ->
in_proj and norm2 -> linear1, and the final norm -> head, then cost no
launch of their own: in a replayed decoding step each launch costs about
10 us on PoCL against the norm's 1.4 us of device time.

Matched: `native_layer_norm(x, [K], w, b, eps)[0]`, optionally viewed to
[-1, K] (F.linear on more than two dims), as the input of `addmm(bias, y,
wt)`, `_addmm_activation(bias, y, wt)` with ReLU, or `mm(y, wt)`, with
alpha = beta = 1, and nothing else using the norm's output, mean or rstd
(so training graphs, which save them for the backward, are left alone).
Other shapes run the same two ops inside norm_linear, so the values are
those of the unfused graph; the fused kernel's are within float32 rounding
of them (it sums the row's moments in its own order).
TORCH_OCL_GEMM_EPILOGUES=0 turns it off with the epilogues.
"""

import operator

import torch
import torch.fx as fx

from .rewrite import VIEWS, rewritten, turned_off

aten = torch.ops.aten
_GEMMS = (aten.addmm.default, aten._addmm_activation.default, aten.mm.default)


def _only_user(node):
    return next(iter(node.users)) if isinstance(node, fx.Node) and len(node.users) == 1 else None


def _norm_of(gemm):
    """(native_layer_norm node, K) when gemm's left operand is the norm's
    output, maybe viewed to [-1, K], used by gemm alone; else None."""
    y = gemm.args[0] if gemm.target is aten.mm.default else gemm.args[1]
    if not isinstance(y, fx.Node) or y.op != "call_function":
        return None
    if y.target in VIEWS:
        if _only_user(y) is not gemm:
            return None
        y = y.args[0]
    if not (isinstance(y, fx.Node) and y.target is operator.getitem and y.args[1] == 0):
        return None
    norm = y.args[0]
    if norm.target is not aten.native_layer_norm.default or len(norm.users) != 1 or len(y.users) != 1:
        return None
    shape = norm.args[1]
    val = norm.args[0].meta.get("val")
    if len(shape) != 1 or not isinstance(shape[0], int) or not isinstance(val, torch.Tensor):
        return None
    if val.dtype != torch.float32 or val.dim() < 1 or val.shape[-1] != shape[0]:
        return None
    return norm, shape[0]


def _plain(gemm) -> bool:
    """alpha = beta = 1 and, for _addmm_activation, ReLU."""
    kw = gemm.kwargs
    return kw.get("alpha", 1) == 1 and kw.get("beta", 1) == 1 and kw.get("use_gelu", False) is False \
        and len(gemm.args) <= 3


def fuse_norm_prologues(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of norms fused into their GEMM.
    Run after the epilogue passes, so a ReLU is already in _addmm_activation."""
    if turned_off("TORCH_OCL_GEMM_EPILOGUES"):
        return 0
    fused = 0
    for gemm in list(gm.graph.nodes):
        if gemm.op != "call_function" or gemm.target not in _GEMMS or not _plain(gemm):
            continue
        found = _norm_of(gemm)
        if found is None:
            continue
        norm, k = found
        x, _, w, b, eps = (list(norm.args) + [None] * 5)[:5]
        wt = gemm.args[1] if gemm.target is aten.mm.default else gemm.args[2]
        bias = None if gemm.target is aten.mm.default else gemm.args[0]
        relu = gemm.target is aten._addmm_activation.default
        y = gemm.args[0] if gemm.target is aten.mm.default else gemm.args[1]
        with gm.graph.inserting_before(gemm):
            x2 = gm.graph.call_function(aten.reshape.default, (x, [-1, k]))
            node = gm.graph.call_function(torch.ops.torch_ocl.norm_linear.default,
                                          (x2, w, b, float(eps), wt, bias, relu))
        node.meta = dict(gemm.meta)
        gemm.replace_all_uses_with(node)
        # the view y may be, the getitem and the norm are dead with the GEMM
        dead = [gemm, y] + ([y.args[0]] if y.target in VIEWS else []) + [norm]
        for n in dead:
            gm.graph.erase_node(n)
        fused += 1
    return rewritten(gm, fused)
