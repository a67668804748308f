"""What the graph rewrites run before lowering share (epilogues.py,
positions.py): their off switch and their ending."""

import os

import torch.fx as fx


def turned_off(var: str) -> bool:
    """An on-by-default rewrite's switch, read at compile time: var=0/false/no/off."""
    return os.environ.get(var, "1").strip().lower() in ("0", "false", "no", "off")


def rewritten(gm: fx.GraphModule, count: int) -> int:
    """After `count` rewrites of gm: check the graph, regenerate its code."""
    if count:
        gm.graph.lint()
        gm.recompile()
    return count
