"""mode="reduce-overhead": a compiled graph captured once per input
signature and replayed (the CUDA graphs of torch-ocl).

A replay enqueues the kernels, copies and fills that the captured call
enqueued, with the same argument values, from one C call
(torch_ocl._C._Graph, runtime/graph/graph.c): no Python, dispatcher or
launch-time host logic per node. So it must see the same memory:

- Inputs. Parameters and buffers (AOTAutograd's static inputs), inputs
  the graph writes, and inputs that are outputs of a replay (a KV cache
  one decoding step hands the next) are read in place: their addresses are
  part of the signature, and a new address is a new signature. Every other
  tensor input is copied into a placeholder the recording owns before each
  replay (like torch.cuda.graphs' static inputs).
- Memory allocated during the capture stays reserved for the recording
  (the allocator holds it even once freed) until the recording is dropped.
- Outputs are the recording's own tensors, overwritten by its next replay.
  A call made while the previous replay's outputs (or views of them) are
  still referenced runs normally instead, so a value the caller kept is
  never overwritten (counted as replay_live_outputs).

A signature is the graph's integer arguments (the values of its size
symbols) and the static inputs' addresses: a dynamic graph
gets one recording per size it meets (as CUDA graph trees do), up to
TORCH_OCL_GRAPH_RECORDINGS (64) per graph; sizes past that run normally.
The first call of a signature runs normally (building programs); the
second is captured; later ones replay. Only inference graphs are replayed
(training's forward saves activations that its backward reads, so two
forwards before one backward would need a tree of recordings), and only
graphs without random ops (a replay would repeat the capture's draws), CPU
fallbacks or custom ops. A capture that turns out not to be replayable (the
host read a device value, a synchronize, another stream) is logged with the
reason and that signature runs normally from then on.
"""

import os
import sys
import weakref

import torch

from . import stats

_MAX_DEFAULT = 64


def _max_recordings() -> int:
    try:
        return max(0, int(os.environ.get("TORCH_OCL_GRAPH_RECORDINGS", _MAX_DEFAULT)))
    except ValueError:
        return _MAX_DEFAULT


def replay_refusal(gm: torch.fx.GraphModule, kind: str, plan: dict):
    """Why this graph is never replayed (None: it may be)."""
    if plan.get("fallback_nodes"):
        return "ops that run on the CPU: " + ", ".join(sorted(plan["fallback_by_op"]))
    if plan.get("extern_nodes"):
        return "custom ops: " + ", ".join(sorted(plan["extern_by_op"]))
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) \
                and torch.Tag.nondeterministic_seeded in node.target.tags and _draws(node):
            return f"a random op ({node.target.name()}): a replay would repeat the capture's draws"
    return None


def _draws(node) -> bool:
    """Whether a node of an op tagged random draws numbers: attention and
    dropout with a dropout probability of exactly 0 (or not training) do not."""
    schema = node.target._schema
    values = {a.name: (node.args[i] if i < len(node.args) else node.kwargs.get(a.name, a.default_value))
              for i, a in enumerate(schema.arguments)}
    if values.get("train", True) is False:
        return False
    for name in ("dropout_p", "p"):
        if name in values and isinstance(values[name], (int, float)) and values[name] == 0:
            return False
    return True


def _mutated_inputs(gm: torch.fx.GraphModule) -> set:
    """Positions of the placeholders some op writes (copy_ back into an input)."""
    places = {n: i for i, n in enumerate(gm.graph.find_nodes(op="placeholder"))}
    out = set()
    for node in gm.graph.nodes:
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        for arg, a in zip(target._schema.arguments, node.args):
            if arg.alias_info is not None and arg.alias_info.is_write and a in places:
                out.add(places[a])
        for name, a in node.kwargs.items():
            sch = next((x for x in target._schema.arguments if x.name == name), None)
            if sch is not None and sch.alias_info is not None and sch.alias_info.is_write and a in places:
                out.add(places[a])
    return out


def _static_inputs() -> set:
    ctx = torch._guards.TracingContext.try_get()
    meta = getattr(ctx, "fw_metadata", None) if ctx is not None else None
    return set(getattr(meta, "static_input_indices", None) or ())


# Storages the live recordings own (their outputs), by address: an input on
# one of them was made by a replay and sits at a fixed address, so a graph
# reads it in place (keyed by that address) instead of copying it.
_owned = weakref.WeakValueDictionary()


class _Recording:
    """A capture and what its replays need, held in C++
    (torch_ocl._C._ReplayRecording): the placeholders the inputs are copied
    into, the outputs, and the storages the recording owns with their use
    counts while only it refers to them (a higher count: the caller still
    holds the last replay's outputs or views of them). hand_out gives new
    tensors on the outputs, never the recording's own objects, so a
    caller's reference shows in those counts, and autograd may move a
    gradient it alone holds into .grad instead of copying it."""

    def __init__(self, graph, placeholders, outputs, input_storages):
        from .. import _C

        owned = {}
        for t in list(outputs) + [p for _, p in placeholders]:
            if isinstance(t, torch.Tensor) and t.device.type == "ocl":
                ptr = t.untyped_storage().data_ptr()
                if ptr not in input_storages:
                    owned.setdefault(ptr, t)
        self.fast = _C._ReplayRecording(graph, placeholders, list(outputs), list(owned.values()))
        for ptr in owned:
            _owned[ptr] = self


class Replayer:
    """Runs a lowered graph through captured recordings, one per signature."""

    def __init__(self, run, gm: torch.fx.GraphModule, kind: str):
        self.run = run              # run(list_of_inputs) -> outputs, the normal path
        if kind == "backward":
            # The forward's saved tensors (its recording's own buffers when it
            # was replayed) are read in place; only the incoming gradients
            # are copied.
            places = gm.graph.find_nodes(op="placeholder")
            self.static = {i for i, n in enumerate(places) if not n.name.startswith("tangents")}
        else:
            self.static = _static_inputs() | _mutated_inputs(gm)
        self.recordings = {}
        self.seen = set()
        self.refused = set()
        self.cap = _max_recordings()
        self.signature = None       # torch_ocl._C._ReplaySignature, made at the first call
        self.copied_positions = []

    def _key(self, args):
        # Dynamo's guards already fixed every input's dtype, device, and its
        # sizes and strides up to the graph's integer arguments (the values
        # of its symbols), so those and the static inputs' addresses
        # identify a recording (Inductor's cudagraphify keys on the same).
        # Other tensor inputs that a replay made are read in place too, so
        # their addresses join the signature (None: copied).
        if self.signature is None:
            from .. import _C

            positions = [i for i, a in enumerate(args) if not isinstance(a, torch.Tensor)]
            static_positions = sorted(i for i in self.static if i < len(args))
            self.copied_positions = [i for i, a in enumerate(args)
                                     if isinstance(a, torch.Tensor) and i not in self.static]
            self.signature = _C._ReplaySignature(positions, static_positions, self.copied_positions)
        return self.signature(args, _owned)

    def __call__(self, args):
        from .. import _C

        if _C._graph_capturing():  # inside torch.ocl.graph: that capture records this call
            return self.run(args)
        try:
            key = self._key(args)
            hash(key)
        except (TypeError, AttributeError, IndexError):  # an argument that cannot be part of a signature
            return self.run(args)
        rec = self.recordings.get(key)
        if rec is None:
            # Sizes (and static inputs) met before have built their programs:
            # capture, whatever replay-made inputs came with them this time.
            if key in self.refused or key[:2] not in self.seen or len(self.recordings) >= self.cap:
                self.seen.add(key[:2])
                return self.run(args)
            return self._capture(key, args)
        out = rec.fast.run(args)  # copies the inputs, replays, clears args
        if isinstance(out, str):  # "live": the last outputs are still referenced; "shape": an input changed
            if out == "live":
                stats.add(replay_live_outputs=1)
            return self.run(args)
        stats.add(replays=1)
        return out

    def _capture(self, key, args):
        from .. import _C, fusion

        fusion.wait_for_builds()  # capture the fused kernels, not what runs while they build
        inputs = list(args)
        args.clear()
        placeholders = []
        in_place = {i for i, ptr in zip(self.copied_positions, key[2]) if ptr is not None}
        for i, a in enumerate(inputs):
            if isinstance(a, torch.Tensor) and i not in self.static and i not in in_place:
                p = torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device)
                p.copy_(a)
                inputs[i] = p
                placeholders.append((i, p))
        dev = next((a.device for a in inputs if isinstance(a, torch.Tensor) and a.device.type == "ocl"), None)
        if dev is None:
            self.refused.add(key)
            return self.run(inputs)
        input_storages = {a.untyped_storage().data_ptr() for i, a in enumerate(inputs)
                          if isinstance(a, torch.Tensor) and (i in self.static or i in in_place)}
        graph = _C._Graph()
        graph.capture_begin(dev.index if dev.index is not None else torch.ocl.current_device())
        try:
            outs = self.run(list(inputs))
        finally:
            why = graph.capture_end()
        if why is not None:
            graph.reset()
            self.refused.add(key)
            stats.add(captures_refused=1)
            topics = os.environ.get("TORCH_OCL_LOG", "")
            if any(t in ("compile", "all") for t in topics.split(",")):
                print(f"[torch_ocl compile] reduce-overhead: this signature runs without replay: {why}",
                      file=sys.stderr)
            return outs
        rec = _Recording(graph, placeholders, list(outs), input_storages)
        self.recordings[key] = rec
        stats.add(captures=1)
        return rec.fast.hand_out()
