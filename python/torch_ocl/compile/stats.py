"""Counters of the compiled path (torch_ocl.compile_stats())."""

import collections
import threading

_lock = threading.Lock()
_stats = {}


def reset_compile_stats() -> None:
    with _lock:
        _stats.clear()
        _stats.update(
            graphs=0,              # ATen graphs compiled (forward, backward and inference each count)
            nodes=0,               # ATen op nodes in them
            pointwise_nodes=0,     # pointwise nodes, merged into generated kernels by fused eager
            native_nodes=0,        # other nodes with an ocl kernel (GEMM, conv, reductions, views, ...)
            fallback_nodes=0,      # nodes whose op has no ocl kernel: they run on the CPU
            fallback_by_op=collections.Counter(),
            extern_nodes=0,        # custom ops (torch.library.custom_op with an ocl kernel): one extern call each
            extern_by_op=collections.Counter(),
            segments_lowered=0,    # runs of pointwise nodes replaced by one generated kernel each
            nodes_fused=0,         # pointwise nodes inside those segments
            segments_fallback=0,   # pointwise nodes or segments the lowering refused: they run node by node
            segment_runtime_fallbacks=0,  # segment calls whose inputs the kernel could not take
            gemm_epilogues=0,      # ReLUs of linear layers fused into the GEMM (epilogues.py)
            gemm_residuals=0,      # residual adds after linear layers fused into the GEMM (epilogues.py)
            gemm_norms=0,          # layer norms feeding only a linear layer, made its prologue (prologues.py)
            cat_pairs=0,           # two cats of one shape made one launch (cat_pairs.py)
            attention_appends=0,   # a KV cache's cat pair and its attention made one launch (attention_append.py)
            position_slices=0,     # embeddings of an arange made slices of the weight (positions.py)
            lowering_errors=0,     # graphs left uncompiled after an internal error
            compile_seconds=0.0,
            cache_loads=0,         # graphs loaded from AOTAutogradCache and lowered again (artifact.py)
            calls=0,               # compiled graphs run
            # mode="reduce-overhead" (replay.py): graphs captured and replayed
            captures=0,            # captures that can be replayed
            captures_refused=0,    # captures that cannot (a host read, a sync, another stream): run normally
            replays=0,             # calls served by enqueuing a recording
            replay_live_outputs=0, # calls run normally because the last replay's outputs were still referenced
        )


def add(**kw) -> None:
    with _lock:
        for k, v in kw.items():
            if k in ("fallback_by_op", "extern_by_op"):
                _stats[k].update(v)
            else:
                _stats[k] += v


def compile_stats() -> dict:
    """A snapshot of the counters since the last reset_compile_stats()."""
    with _lock:
        out = dict(_stats)
        out["fallback_by_op"] = dict(_stats["fallback_by_op"])
        out["extern_by_op"] = dict(_stats["extern_by_op"])
        return out


reset_compile_stats()
