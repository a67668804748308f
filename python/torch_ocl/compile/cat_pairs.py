"""Two cats of one shape in one launch: a decoding step grows each layer's
key and value caches with `cat([cache_k, k], 2)` and `cat([cache_v, v],
2)`; torch_ocl::cat_pair does both (runtime/ops/shape.c,
tocl_shape_cat_pair), four launches fewer per step of a 4-layer model. In a
replayed step each launch costs about 10 us on PoCL.

Paired: two aten.cat nodes along the same dim whose results have one
dtype and the same sizes (compared as the graph's size expressions), four
sources at most between them, every source of the second defined before
the first (so the pair can run where the first cat was). The op checks
again at run time and falls back to two cats, so values are the same bit
for bit either way. TORCH_OCL_CAT_PAIRS=0 turns it off.
"""

import operator

import torch
import torch.fx as fx

from .rewrite import rewritten, turned_off

aten = torch.ops.aten
_MAX_SOURCES = 4  # TOCL_CAT_MAX_SOURCES in include/tocl/index.h


def _signature(cat):
    """(dim, dtype, sizes as text) of a cat the pass may pair, else None."""
    if cat.op != "call_function" or cat.target is not aten.cat.default:
        return None
    srcs = cat.args[0]
    val = cat.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dim() == 0 or val.element_size() > 8 or val.is_complex():
        return None  # complex cats go through the CPU-routed path of aten.cat
    if not all(isinstance(s, fx.Node) for s in srcs) or len(srcs) >= _MAX_SOURCES:
        return None
    for s in srcs:  # each source of the result's rank (a legacy 1-D empty one, which cat skips, is not)
        sv = s.meta.get("val")
        if not isinstance(sv, torch.Tensor) or sv.dim() != val.dim():
            return None
    dim = cat.args[1] if len(cat.args) > 1 else cat.kwargs.get("dim", 0)
    return dim % val.dim(), val.dtype, tuple(str(s) for s in val.shape)


def pair_cats(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of pairs made."""
    if turned_off("TORCH_OCL_CAT_PAIRS"):
        return 0
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    cats = [(n, sig) for n in gm.graph.nodes if (sig := _signature(n)) is not None]
    paired, made = set(), 0
    for i, (a, sig) in enumerate(cats):
        if a in paired:
            continue
        for b, sig_b in cats[i + 1:]:
            if b in paired or sig_b != sig or len(a.args[0]) + len(b.args[0]) > _MAX_SOURCES:
                continue
            if any(order[s] >= order[a] for s in b.args[0]):
                continue
            with gm.graph.inserting_before(a):
                pair = gm.graph.call_function(torch.ops.torch_ocl.cat_pair.default,
                                              (list(a.args[0]), list(b.args[0]), sig[0]))
                pair.meta["val"] = (a.meta["val"], b.meta["val"])
                outs = []
                for j, old in enumerate((a, b)):
                    out = gm.graph.call_function(operator.getitem, (pair, j))
                    out.meta = dict(old.meta)
                    outs.append(out)
            for old, out in zip((a, b), outs):
                old.replace_all_uses_with(out)
                gm.graph.erase_node(old)
            paired |= {a, b}
            made += 1
            break
    return rewritten(gm, made)
