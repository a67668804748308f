"""Native ragged attention for transformers' continuous batching on ocl, through its attention registry.

transformers' continuous batching (5.24) packs every request of a step into
one row of M query tokens and, with `sdpa`, reads each request's keys and
values back from the paged cache into one packed [N + M] row, then runs SDPA
over the whole packed batch with an [M, N + M] block-causal mask: every
query scores every key of every request, and the mask costs M x (N + M)
elements to build and read each step. (Its block-table decode path is
enabled only for flash-attention on CUDA/XPU.)

enable() registers, under the documented `AttentionInterface.register`, an
`sdpa` that, for packed calls on ocl (batch 1 with `cu_seq_lens_q` /
`cu_seq_lens_k`, a causal layer without a sliding window, no softcap or
dropout), runs torch.ops.torch_ocl.paged_attention over the packed keys and
values as a cache of one-token blocks: each query visits only its own
request's keys (bottom-right causal), in one launch for prefills and
decodes together. Every other call goes to transformers'
own sdpa unchanged. `python -m torch_ocl serve` enables it.
"""

from __future__ import annotations

import torch

_original = None
calls = 0  # packed calls served natively (tests read it)


def _packed_ocl_call(module, query, kwargs, dropout) -> bool:
    cu_q, cu_k = kwargs.get("cu_seq_lens_q"), kwargs.get("cu_seq_lens_k")
    return (query.device.type == "ocl" and query.dim() == 4 and query.shape[0] == 1
            and isinstance(cu_q, torch.Tensor) and isinstance(cu_k, torch.Tensor)
            and not dropout and kwargs.get("softcap") is None and not kwargs.get("output_attentions", False)
            # causality comes from the module: continuous batching passes is_causal=False with SDPA
            # because its mask carries it
            and getattr(module, "is_causal", False)
            # sliding layers read a window-limited cache whose order this does not assume
            and not getattr(module, "sliding_window", None) and not kwargs.get("sliding_window")
            and query.shape[-1] <= 256)


def ocl_sdpa(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers' sdpa signature: query [1, Hq, M, D], key/value [1, Hk, N + M, D]; returns ([1, M, Hq, D], None)."""
    global calls
    if not _packed_ocl_call(module, query, kwargs, dropout):
        return _original(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    cu_q = kwargs["cu_seq_lens_q"].to(torch.int32)
    cu_k = kwargs["cu_seq_lens_k"].to(torch.int32)
    lens_k = cu_k[1:] - cu_k[:-1]
    max_k = kwargs.get("max_length_k")
    if not isinstance(max_k, int):
        max_k = int(lens_k.max().item()) if lens_k.numel() else 0
    # One-token blocks: block j of request n is packed row cu_k[n] + j.
    table = cu_k[:-1, None] + torch.arange(max(max_k, 1), dtype=torch.int32, device=query.device)
    q = query[0].transpose(0, 1)
    k = key[0].transpose(0, 1).unsqueeze(1)
    v = value[0].transpose(0, 1).unsqueeze(1)
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    out = torch.ops.torch_ocl.paged_attention(q, k, v, table, cu_q, lens_k, float(scale), True, 0)
    calls += 1
    return out.unsqueeze(0), None


def enable() -> None:
    """Route transformers' `sdpa` through ocl_sdpa (idempotent)."""
    global _original
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if _original is None:
        _original = sdpa_attention_forward
    AttentionInterface.register("sdpa", ocl_sdpa)


def disable() -> None:
    from transformers import AttentionInterface

    if _original is not None:
        AttentionInterface.register("sdpa", _original)
