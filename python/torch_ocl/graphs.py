"""Graph capture and replay: torch.ocl.OCLGraph and torch.ocl.graph, the
shape of torch.cuda.CUDAGraph and torch.cuda.graph.

Inside ``with torch.ocl.graph(g):`` the work runs as usual and every
command it enqueues on the current stream is recorded (runtime/graph/);
``g.replay()`` enqueues the recorded commands again from one C call, on the
same memory: refill the captured inputs in place (``static_x.copy_(x)``)
and read the captured outputs, which each replay overwrites. Memory the
capture allocated stays reserved for the graph until ``g.reset()`` or the
graph is freed.

What CUDA refuses inside a capture, ocl refuses at the end of it, with the
reason (the work itself ran): reading a device value on the host
(``.item()``, ``.cpu()``, a synchronize), waiting on another stream, and
random ops (a replay would repeat the capture's numbers). Index ops check
their bounds at every replay, as they do in eager. ``pool`` sharing between
graphs is not supported.
"""

from typing import Optional

import torch

from . import _C


def is_capturing() -> bool:
    """Whether this thread captures (torch.ocl.graph, torch.accelerator.Graph
    or a reduce-overhead capture)."""
    return _C._graph_capturing()


class OCLGraph:
    """A captured sequence of ocl work (torch.cuda.CUDAGraph's API)."""

    def __init__(self, keep_graph: bool = False):
        self._graph = _C._Graph()
        self._captured = False

    def capture_begin(self, pool=None, capture_error_mode: str = "global") -> None:
        if pool is not None:
            raise NotImplementedError("torch.ocl.OCLGraph: sharing a memory pool between graphs is not supported")
        if self._captured:
            raise RuntimeError("this OCLGraph already holds a capture; call reset() before capturing again")
        self._graph.capture_begin(torch.ocl.current_device())

    def capture_end(self) -> None:
        why = self._graph.capture_end()
        self._captured = True
        if why is not None:
            self.reset()
            raise RuntimeError(f"torch.ocl.graph: the captured work cannot be replayed: {why}")

    def replay(self) -> None:
        if not self._captured:
            raise RuntimeError("torch.ocl.OCLGraph.replay: nothing was captured")
        self._graph.replay()

    def reset(self) -> None:
        """Drop the capture; the memory it held goes back to the allocator."""
        self._graph.reset()
        self._captured = False

    def pool(self):
        raise NotImplementedError("torch.ocl.OCLGraph: memory pools are not shared between graphs")

    def commands(self) -> int:
        """Commands the capture recorded (kernels, copies, fills, writes, bounds checks)."""
        return self._graph.commands()


class graph:
    """``with torch.ocl.graph(g): ...`` captures the block into g.

    ``stream``: capture on that stream (the current one if None)."""

    def __init__(self, ocl_graph: OCLGraph, pool=None, stream: Optional[torch.Stream] = None,
                 capture_error_mode: str = "global"):
        self.ocl_graph = ocl_graph
        self.pool = pool
        self.stream = stream
        self._ctx = None

    def __enter__(self):
        from . import fusion

        fusion.wait_for_builds()  # record the fused kernels, not what runs while they build
        if self.stream is not None:
            self._ctx = torch.ocl.stream(self.stream)
            self._ctx.__enter__()
        self.ocl_graph.capture_begin(pool=self.pool)
        return self.ocl_graph

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.ocl_graph.capture_end()
            else:
                try:
                    self.ocl_graph.capture_end()
                except RuntimeError:
                    pass
                self.ocl_graph.reset()
        finally:
            if self._ctx is not None:
                self._ctx.__exit__(exc_type, exc, tb)
        return False
