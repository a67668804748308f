"""Pointwise segments: runs of pointwise ATen nodes lowered to one kernel each.

At compile time the graph is walked in order; pointwise nodes the table
below can express join an open segment, which stays open across other nodes
until one of those reads a value of the segment (the segment's call then has
to come first). Each segment is described per node (IR op, the dtype eager
computes in, the dtype eager stores) and handed to the runtime
(tocl_seg_create, runtime/compile/segment.c), which builds one IR graph; the
graph's nodes are replaced by one call that runs it and returns the
segment's outputs, the values used outside it. Dtypes come from the graph's
FakeTensor metadata, so promotion is PyTorch's own; sizes are never looked
at, so one segment serves every shape of a dynamic graph. Numbers in the
graph are scalar kernel arguments: constants held by the segment, symbolic
ones (a SymInt such as x.shape[0]) passed by each call.

A segment the runtime refuses (too big for one graph: it is halved and
tried again; an op without a formula for a dtype) keeps its nodes, which run
as before, and compile_stats() counts it.
"""

import dataclasses
import functools
import operator
import warnings
from typing import Callable, Dict, List

import torch
import torch.fx as fx

from . import stats

aten = torch.ops.aten

_DTYPES = {torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8", torch.int16: "int16",
           torch.int32: "int32", torch.int64: "int64", torch.float16: "float16", torch.bfloat16: "bfloat16",
           torch.float32: "float32", torch.float64: "float64"}
_OPMATH = {torch.float16: torch.float32, torch.bfloat16: torch.float32}

# Reference kinds of tocl_seg_ref (include/tocl/segment.h).
_REF_NODE, _REF_INPUT, _REF_SCALAR = 0, 1, 2


class Refused(Exception):
    """A node or segment this lowering does not express; it runs as before."""


@dataclasses.dataclass(frozen=True)
class Row:
    kind: str      # how the node becomes IR nodes: a key of _FORMULAS
    ir_op: str     # the IR op (runtime/codegen/ir_ops.c)
    dtypes: frozenset  # common dtypes eager accepts


def _overload(name: str):
    base, _, ov = name.partition(".")
    packet = getattr(aten, base, None)
    return getattr(packet, ov or "default", None) if packet is not None else None


_ALL = frozenset(_DTYPES)
_FLOAT = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})

# Pointwise ops that are not rows of the adapter's pointwise table, each as
# the same formula its eager kernel builds (adapter/aten/ocl_binary_ops.cpp,
# ocl_activation_ops.cpp, ocl_pointwise_ops.cpp).
_EXTRA_ROWS = {
    "add.Tensor": Row("alpha", "add", _ALL),
    "sub.Tensor": Row("alpha", "sub", _ALL - {torch.bool}),
    "mul.Tensor": Row("binary", "mul", _ALL),
    "div.Tensor": Row("binary_float", "div", _ALL),
    "relu": Row("relu", "maximum", _ALL - {torch.bool}),
    "gelu": Row("gelu", "gelu", _FLOAT),
    "gelu_backward": Row("gelu_backward", "gelu_backward", _FLOAT),
    "threshold_backward": Row("threshold_backward", "where", _ALL - {torch.bool}),
    "where.self": Row("where", "where", _ALL),
    "_to_copy": Row("to_copy", "cast", _ALL),  # a dtype conversion on the same device (autocast)
}


@functools.lru_cache(maxsize=1)
def op_table() -> Dict[object, Row]:
    """OpOverload -> Row for every functional overload this lowering takes:
    the adapter's pointwise table (what eager runs as one IR op) plus the
    rows above."""
    from .. import _C

    table = {}
    for name, ir_op, kind, dtypes in _C._pointwise_table():
        op = _overload(name)
        if op is None or op._schema.is_mutable or any(a.is_out for a in op._schema.arguments):
            continue  # in-place and out= forms never reach a functional graph
        table[op] = Row(kind, ir_op, frozenset(getattr(torch, d) for d in dtypes))
    for name, row in _EXTRA_ROWS.items():
        op = _overload(name)
        if op is not None:
            table[op] = row
    return table


_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)


def _meta(a):
    return a.meta.get("val") if isinstance(a, fx.Node) else a


def _number_kind(v):
    """A plain number of v's kind, for type promotion."""
    if isinstance(v, (bool, torch.SymBool)):
        return True
    return 1 if isinstance(v, (int, torch.SymInt)) else 1.0


def _promote(x, y) -> torch.dtype:
    """PyTorch's result type of two tensors or numbers, from dtypes and
    dimensionality alone (0-dim tensors and Python numbers promote less)."""
    p = [torch.empty(() if v.dim() == 0 else (1,), dtype=v.dtype) if isinstance(v, torch.Tensor) else _number_kind(v)
         for v in (_meta(x), _meta(y))]
    if not any(isinstance(v, torch.Tensor) for v in p):
        raise Refused("a comparison of two numbers")
    return torch.result_type(p[0], p[1])


class Builder:
    """One segment's spec as it grows: its tensor inputs (graph nodes), its
    scalars, its nodes and which graph node each value is."""

    def __init__(self):
        self.inputs: List[fx.Node] = []
        self._input_index: Dict[fx.Node, int] = {}
        self.scalars: list = []
        self._scalar_index: Dict[tuple, int] = {}
        self.symbols: List[fx.Node] = []  # graph values given per call (symbolic sizes), after the tensors
        self.nodes: list = []
        self.value: Dict[fx.Node, int] = {}

    def ref(self, a, common: torch.dtype):
        if isinstance(a, fx.Node):
            if a in self.value:
                return (_REF_NODE, self.value[a])
            v = a.meta.get("val")
            if isinstance(v, _SYMBOLIC):
                return self._symbol(a, v, common)
            if not isinstance(v, torch.Tensor):
                raise Refused(f"{a} is neither a tensor nor a number")
            if v.device.type != "ocl" or v.dtype not in _DTYPES:
                raise Refused(f"{a} is a {v.dtype} tensor on {v.device}")
            if a not in self._input_index:
                self._input_index[a] = len(self.inputs)
                self.inputs.append(a)
            return (_REF_INPUT, self._input_index[a])
        if type(a) not in (bool, int, float):
            raise Refused(f"argument {a!r} is neither a tensor nor a number")
        # As eager passes a wrapped number: in the compute dtype, bool as bool.
        # Equal numbers share one kernel argument: each argument is set at
        # every launch (clSetKernelArg), so a chain of 50 "x * 1.0001" pays
        # for one, not fifty. repr keeps -0.0 apart from 0.0.
        scalar = (a, "bool" if type(a) is bool else _DTYPES[_OPMATH.get(common, common)])
        key = (type(a), repr(a), scalar[1])
        if key not in self._scalar_index:
            self._scalar_index[key] = len(self.scalars)
            self.scalars.append(scalar)
        return (_REF_SCALAR, self._scalar_index[key])

    def _symbol(self, a: fx.Node, v, common: torch.dtype):
        """A number known only per call (a SymInt of a dynamic graph): a
        scalar kernel argument the call passes, typed as a Python number of
        its kind would be."""
        key = ("symbol", a, common)
        if key not in self._scalar_index:
            if a not in self.symbols:
                self.symbols.append(a)
            dt = "bool" if isinstance(v, (bool, torch.SymBool)) else _DTYPES[_OPMATH.get(common, common)]
            self._scalar_index[key] = len(self.scalars)
            self.scalars.append((0, dt, self.symbols.index(a)))
        return (_REF_SCALAR, self._scalar_index[key])

    def emit(self, ir_op: str, common: torch.dtype, result: torch.dtype, refs) -> tuple:
        self.nodes.append((ir_op, _DTYPES[common], _DTYPES[result], list(refs)))
        return (_REF_NODE, len(self.nodes) - 1)


def _args(node: fx.Node, n: int, kwargs=()) -> tuple:
    if len(node.args) != n or any(k not in kwargs for k in node.kwargs):
        raise Refused(f"{node.target} with {len(node.args)} arguments and keywords {list(node.kwargs)}")
    return node.args


# kind -> fn(builder, node, row, result dtype) -> the node's value (a ref).
def _unary(b, node, row, out):
    (x,) = _args(node, 1)
    return b.emit(row.ir_op, out, out, [b.ref(x, out)])


def _binary(b, node, row, out):
    x, y = _args(node, 2)
    return b.emit(row.ir_op, out, out, [b.ref(x, out), b.ref(y, out)])


def _compare(b, node, row, out):
    x, y = _args(node, 2)
    common = _check(row, _promote(x, y))
    return b.emit(row.ir_op, common, out, [b.ref(x, common), b.ref(y, common)])


def _alpha(b, node, row, out):
    x, y = _args(node, 2, ("alpha",))
    ry = b.ref(y, out)
    alpha = node.kwargs.get("alpha", 1)
    if alpha != 1:  # alpha * y, unrounded, as run_binary computes it
        ry = b.emit("mul", out, _OPMATH.get(out, out), [b.ref(alpha, out), ry])
    return b.emit(row.ir_op, out, out, [b.ref(x, out), ry])


def _relu(b, node, row, out):
    (x,) = _args(node, 1)
    return b.emit("maximum", out, out, [b.ref(x, out), b.ref(0, out)])


def _gelu(b, node, row, out):
    (x,) = _args(node, 1, ("approximate",))
    approx = node.kwargs.get("approximate", "none")
    if approx not in ("none", "tanh"):
        raise Refused(f"gelu approximate={approx!r}")
    return b.emit("gelu_tanh" if approx == "tanh" else "gelu", out, out, [b.ref(x, out)])


def _gelu_backward(b, node, row, out):
    g, x = _args(node, 2, ("approximate",))
    approx = node.kwargs.get("approximate", "none")
    if approx not in ("none", "tanh"):
        raise Refused(f"gelu_backward approximate={approx!r}")
    op = "gelu_tanh_backward" if approx == "tanh" else "gelu_backward"
    return b.emit(op, out, out, [b.ref(g, out), b.ref(x, out)])


def _threshold_backward(b, node, row, out):
    g, x, th = _args(node, 3)
    if th != 0:  # eager converts the threshold to x's dtype first; only 0 is taken here
        raise Refused("threshold_backward with a threshold other than 0")
    le = b.emit("le", out, torch.bool, [b.ref(x, out), b.ref(0, out)])
    return b.emit("where", out, out, [le, b.ref(0, out), b.ref(g, out)])


def _where(b, node, row, out):
    c, x, y = _args(node, 3)
    if not isinstance(c, fx.Node) or getattr(_meta(c), "dtype", None) != torch.bool:
        raise Refused("where with a condition that is not a bool tensor")
    return b.emit("where", out, out, [b.ref(c, torch.bool), b.ref(x, out), b.ref(y, out)])


def _to_copy(b, node, row, out):
    (x,) = _args(node, 1, ("dtype", "layout", "device", "memory_format", "non_blocking", "pin_memory"))
    kw = node.kwargs
    same_device = kw.get("device") is None or kw["device"] == getattr(_meta(x), "device", None)
    if (kw.get("dtype") is None or kw.get("layout") not in (None, torch.strided) or not same_device
            or kw.get("memory_format") not in (None, torch.preserve_format) or kw.get("pin_memory")):
        raise Refused("_to_copy that is more than a dtype conversion on the device")
    return b.emit("cast", out, out, [b.ref(x, out)])


_FORMULAS: Dict[str, Callable] = {
    "unary": _unary, "unary_float": _unary, "binary": _binary, "binary_float": _binary, "compare": _compare,
    "alpha": _alpha, "relu": _relu, "gelu": _gelu, "gelu_backward": _gelu_backward,
    "threshold_backward": _threshold_backward, "where": _where, "to_copy": _to_copy,
}


def _check(row: Row, common: torch.dtype) -> torch.dtype:
    if common not in row.dtypes:
        raise Refused(f"{row.ir_op} on {common}")
    return common


def lower_node(b: Builder, node: fx.Node) -> None:
    """Append node's IR nodes to b, or raise Refused (b is then unusable)."""
    row = op_table().get(node.target)
    out = getattr(_meta(node), "dtype", None)
    if row is None or out not in _DTYPES:
        raise Refused(f"{node.target} is not a pointwise op of the table")
    if row.kind != "compare":
        _check(row, out)
    b.value[node] = _FORMULAS[row.kind](b, node, row, out)[1]


def _shape_key(node: fx.Node):
    return tuple(str(s) for s in _meta(node).shape)


def _dim_order(node: fx.Node):
    """The order of node's dimensions in memory as the graph was traced
    (outermost first, ties in logical order), or None when a stride has no
    hint. A segment's output must have the traced strides, not a layout of
    its own: a later view of it was traced against them (wav2vec2's
    backward views a segment's output that its transposed input would have
    laid out otherwise)."""
    val = _meta(node)
    hints = []
    for st in val.stride():
        h = st if isinstance(st, int) else getattr(getattr(st, "node", None), "hint", None)
        if not isinstance(h, int):
            return None
        hints.append(h)
    return sorted(range(len(hints)), key=lambda d: -hints[d])


def _outputs(seg: List[fx.Node]) -> List[fx.Node]:
    inside = set(seg)
    return [n for n in seg if not n.users or any(u not in inside for u in n.users)]


class _Lowering:
    def __init__(self, gm: fx.GraphModule, strict: bool):
        self.gm, self.strict = gm, strict
        self.lowered = self.fused = self.fallback = 0
        self.count = 0

    def candidate(self, node: fx.Node) -> bool:
        if node.op != "call_function" or node.target not in op_table():
            return False
        try:
            lower_node(Builder(), node)
            return True
        except Refused:
            self.fallback += 1  # an unlowerable pointwise node: its own segment, run as before
            return False

    def lower(self, seg: List[fx.Node]) -> None:
        """Lower seg, halving it where the runtime refuses it as too big and
        splitting it where its outputs' shapes differ (one kernel writes
        every output at the iteration shape)."""
        outs = _outputs(seg)
        shapes = [_shape_key(o) for o in outs]
        if len(set(shapes)) > 1:
            cut = seg.index(next(o for o, s in zip(outs, shapes) if s != shapes[-1])) + 1
            self.lower(seg[:cut])
            self.lower(seg[cut:])
            return
        try:
            b = Builder()
            for n in seg:
                lower_node(b, n)
            from .. import _C

            handle, why = _C._compile_segment([_DTYPES[_meta(i).dtype] for i in b.inputs],
                                              [sc if len(sc) == 3 else sc + (-1,) for sc in b.scalars], b.nodes,
                                              [b.value[o] for o in outs], [_dim_order(o) for o in outs])
        except Refused as e:
            handle, why = None, str(e)
        except Exception as e:  # an internal lowering error
            if self.strict:
                raise
            warnings.warn(f"torch_ocl.compile: lowering a pointwise segment failed ({type(e).__name__}: {e}); "
                          "its nodes run one by one")
            self.fallback += 1
            return
        if handle is None:
            if len(seg) > 1:
                half = len(seg) // 2
                self.lower(seg[:half])
                self.lower(seg[half:])
            else:
                self.fallback += 1
            return
        self._replace(seg, b.inputs + b.symbols, outs, handle)

    def _replace(self, seg, inputs, outs, handle):
        g = self.gm.graph
        fallback = _fallback_module(self.gm, seg, inputs, outs)
        fn = _runner(handle, fallback, f"ocl_segment_{self.count}")
        self.count += 1
        with g.inserting_before(seg[-1]):
            call = g.call_function(fn, tuple(inputs))
            call.meta["val"] = tuple(_meta(o) for o in outs)
            for k, o in enumerate(outs):
                item = g.call_function(operator.getitem, (call, k))
                item.meta["val"] = _meta(o)
                inside = set(seg)
                o.replace_all_uses_with(item, delete_user_cb=lambda u: u not in inside)
        for n in reversed(seg):
            g.erase_node(n)
        self.lowered += 1
        self.fused += len(seg)

    def run(self) -> None:
        seg: List[fx.Node] = []
        for node in list(self.gm.graph.nodes):
            if self.candidate(node):
                seg.append(node)
                continue
            # Another node: the segment stays open across it unless it reads
            # one of the segment's values, or may write memory the segment
            # reads (copy_ into a graph input: the call would come after it).
            if seg and (_writes(node) or any(a in seg for a in node.all_input_nodes)):
                self.lower(seg)
                seg = []
        if seg:
            self.lower(seg)


def _writes(node: fx.Node) -> bool:
    """A node that may mutate a tensor: a mutable ATen op, or any callable
    other than an ATen op, getitem or size arithmetic (its effects are
    unknown)."""
    if node.op != "call_function":
        return False
    if isinstance(node.target, torch._ops.OpOverload):
        return node.target._schema.is_mutable
    # getitem and size arithmetic (operator.mul on SymInts, math.sqrt, sym_*)
    # compute numbers only.
    mod = getattr(node.target, "__module__", None)
    pure = mod in ("_operator", "math") or (mod == "torch" and node.target.__name__.startswith("sym_"))
    return not pure


def _fallback_module(gm, seg, inputs, outs) -> fx.GraphModule:
    """The segment's nodes as a graph of their own, for a call whose inputs
    the kernel cannot take."""
    g = fx.Graph()
    env = {i: g.placeholder(f"in{k}") for k, i in enumerate(inputs)}
    for n in seg:
        env[n] = g.node_copy(n, lambda a: env[a])
    g.output(tuple(env[o] for o in outs))
    return fx.GraphModule(gm, g)


def _runner(handle, fallback: fx.GraphModule, name: str) -> Callable:
    from .. import _C

    run = _C._run_segment

    def segment(*args):
        out = run(handle, args)
        if out is None:
            stats.add(segment_runtime_fallbacks=1)
            return fallback(*args)
        return out

    segment.__name__ = segment.__qualname__ = name
    segment.handle = handle
    return segment


def lower_segments(gm: fx.GraphModule, strict: bool) -> dict:
    """Replace gm's pointwise segments by segment calls (in place)."""
    low = _Lowering(gm, strict)
    try:
        low.run()
    finally:  # the code must match the graph even if a later step raised
        if low.lowered:
            gm.recompile()
    return dict(segments_lowered=low.lowered, nodes_fused=low.fused, segments_fallback=low.fallback)
