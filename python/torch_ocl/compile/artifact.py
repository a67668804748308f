"""The compiled graph as an artifact AOTAutogradCache can hold.

AOTAutograd's tracing and min-cut partitioning are most of a warm compile
(about 70% of the bench's GPT train step compile with a warm program cache,
cProfile); our lowering is about 1%. AOTAutogradCache skips them on a hit,
but only for a compiler that returns an ``OutputCode`` it can pickle, and it
keys entries without naming the backend. So each graph compiles to an
``OclArtifact``: the graph AOTAutograd handed over, pickled with its fake
tensor metadata by ``torch.fx._graph_pickler.GraphPickler`` before the
lowering passes mutate it, beside the lowered graph. The pickle keeps the
graph; a hit loads it under the new compile's fake mode and lowers it again
(milliseconds; the program cache has the kernels), so an artifact never
holds lowering output that a newer torch_ocl would lower differently.

Our entries are told apart from Inductor's and from other torch_ocl builds
by ``torch.compiler.config.cache_key_tag`` (torch_ocl's version and the
decomposition table), set only while this backend compiles, after any tag of
the user's. Entries are bundled (``bundled_autograd_cache``) and the
backward is compiled with the forward (``force_non_lazy_backward_lowering``)
so that the entry is saved inside that same window. It is on with
TORCH_OCL_COMPILE_CACHE=1 (where this torch has all of it).

Why it is off by default: computing AOTAutogradCache's key imports parts of
Inductor and queries the system once per process (about 0.95 s here, triton
installed), and a miss pickles each graph; our compiles are short, so that
is often more than the tracing a hit saves. Compile + first step in fresh
processes, warm program cache: a 12-layer GPT-style train step 4.04-4.10 s
uncached, 5.19 s on a miss, 2.93 s on a hit; the bench's 4-layer one 1.93 s
uncached, 2.6 s on a miss, 1.83 s on a hit; `make models` with it on took
157 s for torchvision (106 s off; resnet18's compile 1.4 -> 2.3 s) and 164 s
for Hugging Face (92 s off), every model compiling once, in its own process.
Turn it on for large models compiled again and again (restarted training,
serving processes).
"""

import contextlib
import functools
import hashlib
import os

import torch

from . import stats
from .lowering import compile_graph

try:
    from torch._functorch._aot_autograd.schemas import SerializableAOTDispatchCompiler
    from torch._inductor.output_code import OutputCode
    from torch.fx._graph_pickler import GraphPickler

    _AVAILABLE = all(hasattr(torch._functorch.config, k)
                     for k in ("bundled_autograd_cache", "force_non_lazy_backward_lowering",
                               "enable_autograd_cache")) and hasattr(torch.compiler.config, "cache_key_tag")
except ImportError:  # an older torch: no cacheable compiler
    OutputCode = object
    _AVAILABLE = False


def available() -> bool:
    """This torch has what caching a backend's graphs needs."""
    return _AVAILABLE


def enabled() -> bool:
    """TORCH_OCL_COMPILE_CACHE=1 and this torch can cache our graphs (off by
    default: see the price above). torch.compiler.config.force_disable_caches
    turns AOTAutogradCache off as well."""
    return available() and os.environ.get("TORCH_OCL_COMPILE_CACHE", "0") not in ("", "0")


class OclArtifact(OutputCode):
    """One lowered graph (forward, backward or inference) and the pickled
    graph it came from. Boxed calling convention, as CompiledGraph."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs, kind: str, replay: bool):
        self.kind = kind
        self.replay = replay
        try:
            self.graph_bytes = GraphPickler.dumps(gm)
        except Exception as e:  # a graph the pickler cannot take: this entry is not saved
            self.graph_bytes = None
            self.unpicklable = f"{type(e).__name__}: {e}"
        self.compiled = compile_graph(gm, example_inputs, kind=kind, replay=replay)
        self._boxed_call = True

    def __call__(self, args):
        return self.compiled(args)

    def prepare_for_serialization(self) -> None:
        if self.graph_bytes is None:
            from torch._functorch._aot_autograd.autograd_cache import BypassAOTAutogradCache

            raise BypassAOTAutogradCache(f"torch_ocl: the {self.kind} graph cannot be pickled ({self.unpicklable})")
        self.compiled = None  # lowered again on load

    def post_compile(self, example_inputs, constants, graph_kwargs) -> None:
        """On a cache hit: the graph back under this compile's fake mode, lowered."""
        if self.compiled is not None:
            return
        fake_mode = torch._guards.detect_fake_mode(example_inputs)
        if fake_mode is None:
            fake_mode = torch._guards.TracingContext.get().fake_mode
        gm = GraphPickler.loads(self.graph_bytes, fake_mode)
        gm.recompile()  # the unpickled module has a graph but no forward yet
        self.compiled = compile_graph(gm, None, kind=self.kind, replay=self.replay)
        stats.add(cache_loads=1)

    def set_triton_bundle(self, triton_bundle) -> None:
        pass


def serializable_compiler(kind: str, replay: bool):
    """AOTAutograd's compiler for one kind of graph, returning OclArtifacts."""
    return SerializableAOTDispatchCompiler(
        OclArtifact, functools.partial(_compile, kind=kind, replay=replay))


def _compile(gm, example_inputs, kind, replay):
    return OclArtifact(gm, example_inputs, kind, replay)


@functools.lru_cache(maxsize=4)
def _tag(decomposition_names: tuple, replay: bool) -> str:
    from .. import __version__

    digest = hashlib.sha256("\n".join(decomposition_names).encode()).hexdigest()[:16]
    return f"torch_ocl-{__version__}-{digest}{'-replay' if replay else ''}"


@contextlib.contextmanager
def caching(decompositions: dict, replay: bool):
    """The settings under which AOTAutogradCache saves and loads our entries
    (replay: mode="reduce-overhead", whose artifacts replay)."""
    if not enabled():
        yield
        return
    tag = _tag(tuple(sorted(str(op) for op in decompositions)), replay)
    user = torch.compiler.config.cache_key_tag
    with torch._functorch.config.patch(bundled_autograd_cache=True, force_non_lazy_backward_lowering=True), \
            torch.compiler.config.patch(cache_key_tag=f"{user}+{tag}" if user else tag):
        yield
