"""OclAttentionBackend: vLLM's paged attention on torch_ocl's native ops.

- KV writes: torch.ops.torch_ocl.reshape_and_cache (new keys/values to their slots;
  negative slots, vLLM's padding, are skipped).
- Attention: torch.ops.torch_ocl.paged_attention, ragged over the block table:
  prefills, chunked prefills and decodes of one step in one launch, GQA, causal
  bottom-right aligned (as vLLM's flash-attention backends), sliding windows.

The KV cache is vLLM's logical [blocks, kv heads, block size, 2 x head size] per
layer (K and V side by side in the last axis), laid out physically as
[blocks, block size, kv heads, 2 x head size] (KVCacheLayout.LBNHC): transposed
and split in two, it is the [blocks, block size, kv heads, head size] pair of
strided views the ops take, with no copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
import torch_ocl  # noqa: F401  (registers torch.ops.torch_ocl)

from vllm.v1.attention.backend import (
    AttentionBackend,
    AttentionImpl,
    AttentionLayer,
    AttentionMetadataBuilder,
    AttentionType,
    CommonAttentionMetadata,
)
from vllm.v1.kv_cache_interface import AttentionSpec, KVCacheLayout

ops = torch.ops.torch_ocl


class OclAttentionBackend(AttentionBackend):
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float32, torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list] = ["auto", "float32", "float16", "bfloat16"]
    # vLLM calls do_kv_cache_update() before forward().
    forward_includes_kv_cache_update: bool = False

    @staticmethod
    def get_name() -> str:
        return "CUSTOM"

    @staticmethod
    def get_impl_cls() -> type[OclAttentionImpl]:
        return OclAttentionImpl

    @staticmethod
    def get_builder_cls() -> type[OclAttentionMetadataBuilder]:
        return OclAttentionMetadataBuilder

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return list(range(1, 257))  # the kernel keeps a head in registers: up to 256

    @classmethod
    def supported_kv_cache_layouts(cls) -> tuple[KVCacheLayout, ...]:
        # One token's heads side by side: a work-item (token, head) reads a short run.
        return (KVCacheLayout.LBNHC, KVCacheLayout.LBHNC)

    @classmethod
    def supports_sliding_window(cls) -> bool:
        return True

    @classmethod
    def supports_non_causal(cls) -> bool:
        return True

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type == AttentionType.DECODER

    @classmethod
    def supports_compute_capability(cls, capability) -> bool:
        return True


@dataclass
class OclAttentionMetadata:
    num_actual_tokens: int  # tokens of the step, without padding
    query_start_loc: torch.Tensor  # [num_reqs + 1] int32 on ocl: cu_seqlens_q
    seq_lens: torch.Tensor  # [num_reqs] int32 on ocl: cached tokens after this step
    block_table: torch.Tensor  # [num_reqs, max blocks] int32 on ocl
    slot_mapping: torch.Tensor  # [num_actual_tokens] int64 on ocl
    causal: bool = True


class OclAttentionMetadataBuilder(AttentionMetadataBuilder[OclAttentionMetadata]):
    def __init__(self, kv_cache_spec: AttentionSpec, layer_names: list[str], vllm_config, device: torch.device):
        super().__init__(kv_cache_spec, layer_names, vllm_config, device)

    def build(self, common_prefix_len: int, common_attn_metadata: CommonAttentionMetadata,
              fast_build: bool = False) -> OclAttentionMetadata:
        m = common_attn_metadata
        n = m.num_reqs
        if isinstance(m.causal, torch.Tensor):
            raise NotImplementedError("vllm-ocl: per-request causality (prefix-LM) is not supported")
        return OclAttentionMetadata(
            num_actual_tokens=m.num_actual_tokens,
            query_start_loc=m.query_start_loc[:n + 1],
            seq_lens=m.seq_lens[:n],
            block_table=m.block_table_tensor[:n],
            slot_mapping=m.slot_mapping[:m.num_actual_tokens],
            causal=bool(m.causal),
        )


def split_kv_cache(kv_cache: torch.Tensor, head_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM's logical [blocks, kv heads, block size, 2D] -> K and V views [blocks, block size, kv heads, D]."""
    return kv_cache.transpose(1, 2).split(head_size, dim=-1)


class OclAttentionImpl(AttentionImpl[OclAttentionMetadata]):
    def __init__(self, num_heads: int, head_size: int, scale: float, num_kv_heads: int,
                 alibi_slopes: list[float] | None, sliding_window: int | None, kv_cache_dtype: str,
                 logits_soft_cap: float | None = None, attn_type: str = AttentionType.DECODER,
                 kv_sharing_target_layer_name: str | None = None, sinks: torch.Tensor | None = None) -> None:
        unsupported = [name for name, v in (("ALiBi", alibi_slopes), ("logits soft cap", logits_soft_cap),
                                            ("attention sinks", sinks)) if v]
        if unsupported or attn_type != AttentionType.DECODER:
            raise NotImplementedError(f"vllm-ocl attention: {', '.join(unsupported) or attn_type} not supported")
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = float(scale)
        self.num_kv_heads = num_kv_heads
        self.window = int(sliding_window or 0)  # keys in (pos - window, pos]; 0: no window
        self.kv_cache_dtype = kv_cache_dtype
        self.kv_sharing_target_layer_name = kv_sharing_target_layer_name
        self.attn_type = attn_type

    def do_kv_cache_update(self, layer: AttentionLayer, key: torch.Tensor, value: torch.Tensor,
                           kv_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
        key_cache, value_cache = split_kv_cache(kv_cache, self.head_size)
        # slot_mapping covers the step's real tokens; key/value may carry padding rows.
        n = slot_mapping.shape[0]
        ops.reshape_and_cache(key[:n], value[:n], key_cache, value_cache, slot_mapping)

    def forward(self, layer: AttentionLayer, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                kv_cache: torch.Tensor, attn_metadata: OclAttentionMetadata | None, output: torch.Tensor,
                output_scale: torch.Tensor | None = None,
                output_block_scale: torch.Tensor | None = None) -> torch.Tensor:
        if output_scale is not None or output_block_scale is not None:
            raise NotImplementedError("vllm-ocl attention: fused output quantization is not supported")
        if attn_metadata is None:  # profiling run: no cache yet
            return output.fill_(0)
        m = attn_metadata
        n = m.num_actual_tokens
        key_cache, value_cache = split_kv_cache(kv_cache, self.head_size)
        out = ops.paged_attention(query[:n], key_cache, value_cache, m.block_table, m.query_start_loc,
                                  m.seq_lens, self.scale, causal=m.causal, window=self.window)
        output[:n].copy_(out.view(output[:n].shape))
        return output
