"""Serving LLMs on ocl with `transformers serve`: paged-cache sizing from the device, offline tiny models.

transformers' continuous batching sizes its paged KV cache from
`continuous_batching.utils.get_device_and_memory_breakdown()`, which knows
cuda, xpu and mps and treats every other device as the host: on ocl it
budgets 90% of host RAM and asks for the whole cache as one tensor, over the
device's largest single allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE, 4-8 GiB on
PoCL), and the run dies with an out-of-memory error.

`cb_config()` returns a `ContinuousBatchingConfig` whose `num_blocks` and
`max_batch_tokens` come from the ocl device instead (`torch.ocl.mem_get_info`
and `get_device_properties().max_alloc`), through the documented knobs that
`transformers serve --cb-num-blocks/--cb-max-batch-tokens` and
`model.init_continuous_batching(continuous_batching_config=...)` take. No
transformers code is patched. `python -m torch_ocl serve` (what `make serve`
runs) passes them, so no flag is needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# Fraction of the free device memory (after the weights) the cache and its per-step
# tensors may take: the rest is for activations, logits and the sampler's temporaries.
MEMORY_FRACTION = 0.5
# Tokens per forward step. transformers' default is 8192, sized for a GPU; a step's
# attention mask is [M, cache tokens + M], so M also bounds the largest allocation.
MAX_BATCH_TOKENS = 512
# Cache capacity cap in tokens: a tiny model would otherwise get millions of slots,
# and the read index and mask scale with capacity whether or not it is used.
MAX_CACHE_TOKENS = 1 << 18


@dataclass
class CacheSizing:
    """What cb_config() decided and why (the server logs it)."""

    page_size: int
    num_blocks: int
    max_batch_tokens: int
    cache_tokens: int
    cache_bytes: int
    largest_bytes: int  # the largest single tensor the cache path allocates
    free_bytes: int
    max_alloc: int
    weights_bytes: int

    def describe(self) -> str:
        mib = 2 ** 20
        return (f"paged KV cache: {self.num_blocks} blocks of {self.page_size} tokens ({self.cache_tokens} tokens, "
                f"{self.cache_bytes / mib:.1f} MiB), {self.max_batch_tokens} tokens per step; largest tensor "
                f"{self.largest_bytes / mib:.1f} MiB of {self.max_alloc / mib:.0f} MiB max allocation, "
                f"device free {self.free_bytes / mib:.0f} MiB, weights {self.weights_bytes / mib:.1f} MiB")


def _head_dim(config) -> int:
    hd = getattr(config, "head_dim", None)
    return int(hd) if hd else config.hidden_size // config.num_attention_heads


def _kv_heads(config) -> int:
    return int(getattr(config, "num_key_value_heads", None) or config.num_attention_heads)


def weights_bytes(config, dtype) -> int:
    """Parameter bytes of the model a config describes, counted on the meta device (no memory)."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters()) * dtype.itemsize


def plan(config, dtype, device: Any = "ocl", page_size: int = 256, max_batch_tokens: int = MAX_BATCH_TOKENS,
         memory_fraction: float = MEMORY_FRACTION, weights: int | None = None,
         free: int | None = None, max_alloc: int | None = None) -> CacheSizing:
    """Size the paged cache for `config` in `dtype` on an ocl device.

    Budget: min(memory_fraction * (free - weights), max_alloc), because transformers allocates the whole
    cache as one tensor. Each cached token costs its K and V in every layer, plus what a step reads back
    per cached token (K and V repeated to the query heads when the attention is sdpa/eager, the int64
    read index) and its column of the [M, N + M] attention mask; the mask alone must also fit max_alloc.
    """
    import torch

    if free is None or max_alloc is None:
        import torch_ocl  # noqa: F401

        f, _ = torch.ocl.mem_get_info(device)
        free = f if free is None else free
        max_alloc = torch.ocl.get_device_properties(device).max_alloc if max_alloc is None else max_alloc
    if weights is None:
        weights = weights_bytes(config, dtype)
    a = dtype.itemsize
    hd, kvh, qh = _head_dim(config), _kv_heads(config), config.num_attention_heads
    layers = config.num_hidden_layers
    m = max_batch_tokens
    cache_per_token = layers * 2 * kvh * hd * a
    masks = 2 if "sliding_attention" in (getattr(config, "layer_types", None) or ()) else 1
    read_per_token = (2 * qh + kvh) * hd * a + 8 + masks * m * a
    # One step's tensors that scale with M: hidden states, q/k/v, fp32 logits of the whole batch.
    step_bytes = m * (4 * config.hidden_size * a + config.vocab_size * 4 + 64)
    budget = min(int(memory_fraction * max(free - weights, 0)), max_alloc) - step_bytes
    tokens = budget // (cache_per_token + read_per_token)
    # The mask [M, N + M] is one allocation too.
    tokens = min(tokens, max_alloc // (m * a) - m, MAX_CACHE_TOKENS)
    # Two blocks of margin: transformers adds two trash sectors and rounds up to whole sectors.
    blocks = tokens // page_size - 2
    if blocks < 1:
        raise MemoryError(
            f"ocl device has too little memory for a paged KV cache: {free} bytes free, {weights} bytes of weights, "
            f"{max_alloc} bytes max allocation; one block of {page_size} tokens needs "
            f"{page_size * (cache_per_token + read_per_token)} bytes. Use a smaller model or dtype, or serve without "
            f"continuous batching.")
    tokens = blocks * page_size
    largest = max(tokens * cache_per_token, m * (tokens + m) * a, (tokens + m) * (2 * qh + kvh) * hd * a)
    return CacheSizing(page_size=page_size, num_blocks=blocks, max_batch_tokens=m, cache_tokens=tokens,
                       cache_bytes=tokens * cache_per_token, largest_bytes=largest, free_bytes=free,
                       max_alloc=max_alloc, weights_bytes=weights)


def cb_config(config, dtype, device: Any = "ocl", **kw):
    """A transformers ContinuousBatchingConfig sized for the ocl device (see plan())."""
    from transformers import ContinuousBatchingConfig

    s = plan(config, dtype, device, **kw)
    return ContinuousBatchingConfig(page_size=s.page_size, num_blocks=s.num_blocks,
                                    max_batch_tokens=s.max_batch_tokens)


def resolve_dtype(config, dtype: str | None):
    import torch

    if dtype in (None, "auto"):
        d = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
        if isinstance(d, str):
            d = getattr(torch, d)
        return d if isinstance(d, torch.dtype) else torch.float32
    return getattr(torch, dtype)
