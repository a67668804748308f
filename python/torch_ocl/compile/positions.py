"""Position embeddings from the graph: `embedding(weight, arange(start, end))`
is rows start..end-1 of the weight, so it becomes a slice of it, checked on
the host.

GPT-style models look up their positions this way every step
(`self.pos(torch.arange(start, start + t))`). As an embedding it costs an
arange launch, the index bounds check (a launch and a read back) and a
gather; as a slice it costs nothing on the device: the consumers read the
weight's rows in place. The bounds are host integers (the graph's size
symbols), so the check raises the embedding's own IndexError at once, with
no device round trip.

Rewritten only when the slice cannot be told apart from the embedding's
output: step 1, an integer arange, the lookup not a graph output (a caller
could write into it) and no padding_idx or scale_grad_by_freq (they change
the backward, which reads the saved arange anyway). The values are the
weight's own, bit for bit.
"""

import torch
import torch.fx as fx

from .rewrite import rewritten, turned_off

aten = torch.ops.aten
_ARANGES = (aten.arange.default, aten.arange.start, aten.arange.start_step)


def rows_of(weight, start, end):
    """weight[start:end] (end > start), or the IndexError embedding raises."""
    if end > start and (start < 0 or end > weight.shape[0]):
        raise IndexError("index out of range in self")
    return aten.slice.Tensor(weight, 0, start, end if end > start else start)


def _span(node):
    """(start, end) of an integer arange node with step 1, else None."""
    if not (isinstance(node, fx.Node) and node.op == "call_function" and node.target in _ARANGES):
        return None
    dtype = node.kwargs.get("dtype")
    if dtype not in (None, torch.int64, torch.int32):
        return None
    args = list(node.args)
    if node.target is aten.arange.default:
        args = [0] + args
    if len(args) > 2 and args[2] != 1:
        return None
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor) and (val.dtype.is_floating_point or val.dtype.is_complex):
        return None
    return args[0], args[1]


_EMBEDDING_DEFAULTS = (("padding_idx", -1), ("scale_grad_by_freq", False), ("sparse", False))


def _plain(node) -> bool:
    """An embedding call whose backward a slice's matches: the defaults for
    padding_idx, scale_grad_by_freq and sparse."""
    for i, (name, default) in enumerate(_EMBEDDING_DEFAULTS):
        value = node.args[2 + i] if len(node.args) > 2 + i else node.kwargs.get(name, default)
        if value != default:
            return False
    return True


def slice_position_embeddings(gm: fx.GraphModule) -> int:
    """Rewrite gm in place; returns the number of embeddings made slices.
    TORCH_OCL_POSITION_SLICES=0 turns it off (read at compile time)."""
    if turned_off("TORCH_OCL_POSITION_SLICES"):
        return 0
    done = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.embedding.default or len(node.args) < 2:
            continue
        span = _span(node.args[1])
        if span is None or not _plain(node) or any(u.op == "output" for u in node.users):
            continue
        weight, idx = node.args[0], node.args[1]
        with gm.graph.inserting_before(node):
            rows = gm.graph.call_function(rows_of, (weight,) + tuple(span))
        rows.meta = dict(node.meta)
        node.replace_all_uses_with(rows)
        gm.graph.erase_node(node)
        if not idx.users:
            gm.graph.erase_node(idx)
        done += 1
    return rewritten(gm, done)
