"""What the graph rewrites run before lowering share (epilogues.py,
prologues.py, positions.py, cat_pairs.py, attention_append.py): their off switch, the view ops
F.linear puts around its product, and their ending."""

import os

import torch
import torch.fx as fx

aten = torch.ops.aten
VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def turned_off(var: str) -> bool:
    """An on-by-default rewrite's switch, read at compile time: var=0/false/no/off."""
    return os.environ.get(var, "1").strip().lower() in ("0", "false", "no", "off")


def rewritten(gm: fx.GraphModule, count: int) -> int:
    """After `count` rewrites of gm: check the graph, regenerate its code."""
    if count:
        gm.graph.lint()
        gm.recompile()
    return count
