"""A decoding step's cache growth and its attention in one launch.

After cat_pairs.py, each layer of a step with a KV cache reads

    k, v = cat_pair([cache_k, k_new], [cache_v, v_new], 2)
    out = _scaled_dot_product_fused_attention_overrideable(q, k, v)[0]

and returns k and v as the grown cache. torch_ocl::attention_append does
both: the one-row attention kernel reads the cache and the new position
where they lie and writes the cat as it goes (runtime/ops/attention.c,
tocl_attn_forward_append), one launch of the two per layer; 4 fewer per
step of a 4-layer model, each about 11 us on PoCL (6.7 of the cat's kernel
and the command's own cost).

Rewritten: an attention with no mask, no dropout, not causal, no debug
mask, whose only used output is the first, over the two results of one
cat_pair of two sources each along dim 2, when every other user of those
results comes after the attention. The op checks the case at run time
(tocl_attn_append_usable: a CPU device, 1..4 query rows, ...) and runs the
cat pair and the attention otherwise, the same bits either way.
TORCH_OCL_ATTENTION_APPEND=0 turns it off.
"""

import operator

import torch
import torch.fx as fx

from .rewrite import rewritten, turned_off

aten = torch.ops.aten
_SDPA = aten._scaled_dot_product_fused_attention_overrideable.default
_DEFAULTS = (None, 0.0, False, False)  # attn_bias, dropout_p, is_causal, return_debug_mask


def _plain_attention(node):
    """(q, k, v, scale) of an attention the op covers, else None."""
    if node.op != "call_function" or node.target is not _SDPA:
        return None
    names = ("attn_bias", "dropout_p", "is_causal", "return_debug_mask")
    extra = list(node.args[3:7]) + [node.kwargs.get(n, d) for n, d in zip(names, _DEFAULTS)][len(node.args[3:7]):]
    if extra != list(_DEFAULTS) or len(node.args) > 8:
        return None
    scale = node.args[7] if len(node.args) > 7 else node.kwargs.get("scale")
    if not node.users or not all(u.op == "call_function" and u.target is operator.getitem and u.args[1] == 0
                                 for u in node.users):
        return None
    return node.args[0], node.args[1], node.args[2], scale


def _pair_source(k, v):
    """The cat_pair node both k and v come from as its results 0 and 1,
    two sources each along dim 2; else None."""
    if not all(isinstance(x, fx.Node) and x.target is operator.getitem for x in (k, v)):
        return None
    pair = k.args[0]
    if pair is not v.args[0] or (k.args[1], v.args[1]) != (0, 1):
        return None
    if pair.target is not torch.ops.torch_ocl.cat_pair.default or len(pair.args) < 3 or pair.args[2] != 2:
        return None  # (cat_pairs.py writes the dim non-negative)
    return pair if len(pair.args[0]) == 2 and len(pair.args[1]) == 2 else None


def fuse_attention_appends(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of attentions fused."""
    if turned_off("TORCH_OCL_ATTENTION_APPEND"):
        return 0
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    made = 0
    for sdpa in list(gm.graph.nodes):
        found = _plain_attention(sdpa)
        if found is None:
            continue
        q, k, v, scale = found
        pair = _pair_source(k, v)
        if pair is None or any(order[u] < order[sdpa] for x in (k, v) for u in x.users if u is not sdpa):
            continue
        (kc, kn), (vc, vn) = pair.args[0], pair.args[1]
        if not all(isinstance(t, fx.Node) and isinstance(t.meta.get("val"), torch.Tensor) and t.meta["val"].dim() == 4
                   for t in (q, kc, kn, vc, vn)):
            continue
        out0 = next(iter(sdpa.users))
        with gm.graph.inserting_before(sdpa):
            fused = gm.graph.call_function(torch.ops.torch_ocl.attention_append.default, (q, kc, kn, vc, vn, scale))
            fused.meta["val"] = (out0.meta["val"], k.meta["val"], v.meta["val"])
            results = []
            for j, old in enumerate((out0, k, v)):
                r = gm.graph.call_function(operator.getitem, (fused, j))
                r.meta = dict(old.meta)
                results.append(r)
        for old in list(sdpa.users):
            old.replace_all_uses_with(results[0])
            gm.graph.erase_node(old)
        gm.graph.erase_node(sdpa)
        k.replace_all_uses_with(results[1])
        v.replace_all_uses_with(results[2])
        for x in (k, v):
            gm.graph.erase_node(x)
        if not pair.users:
            gm.graph.erase_node(pair)
        made += 1
    return rewritten(gm, made)
