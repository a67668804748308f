"""Register the torch versions of the GPU model runner's Triton kernels (there is no
Triton for OpenCL). Called once per worker process by
OclPlatform.register_triton_kernel_overrides(), before the runner starts.

Kernels that take plain tensors go through vLLM's documented hook,
vllm.triton_utils.dispatcher.register_kernels, which also rebinds every module
that imported them. The two BlockTables kernels read tables through raw data
pointers, so the BlockTables methods that launch them (and the one that builds
the pointer tables) are replaced instead.
"""

from __future__ import annotations

from . import kernels_batch as kb
from . import kernels_sample as ks

_GPU = "vllm.v1.worker.gpu."

OVERRIDES = {
    _GPU + "input_batch._prepare_prefill_inputs_kernel": kb.prepare_prefill_inputs,
    _GPU + "input_batch._prepare_pos_seq_lens_kernel": kb.prepare_pos_seq_lens,
    _GPU + "input_batch._combine_sampled_and_draft_tokens_kernel": kb.combine_sampled_and_draft_tokens,
    _GPU + "input_batch._get_num_sampled_and_rejected_kernel": kb.get_num_sampled_and_rejected,
    _GPU + "input_batch._post_update_kernel": kb.post_update,
    _GPU + "input_batch._post_update_num_computed_tokens_kernel": kb.post_update_num_computed_tokens,
    _GPU + "input_batch._expand_idx_mapping_kernel": kb.expand_idx_mapping,
    _GPU + "buffer_utils._apply_write_kernel": kb.apply_write,
    _GPU + "sample.prompt_logprob._prompt_logprobs_token_ids_kernel": kb.prompt_logprobs_token_ids,
    _GPU + "sample.gumbel._temperature_kernel": ks.apply_temperature,
    _GPU + "sample.gumbel._gumbel_sample_kernel": ks.gumbel_sample,
    _GPU + "sample.gumbel._gumbel_combine_kernel": ks.gumbel_combine,
    _GPU + "sample.min_p._min_p_kernel": ks.apply_min_p,
    _GPU + "sample.penalties._penalties_kernel": ks.apply_penalties,
    _GPU + "sample.penalties._bincount_kernel": ks.bincount,
    _GPU + "sample.logprob._topk_log_softmax_kernel": ks.topk_log_softmax,
    _GPU + "sample.logprob._ranks_kernel": ks.ranks,
    _GPU + "sample.logit_bias._bias_kernel": ks.apply_logit_bias,
    _GPU + "sample.bad_words._bad_words_kernel": ks.apply_bad_words,
    _GPU + "structured_outputs._apply_grammar_bitmask_kernel": ks.apply_grammar_bitmask,
}

_registered = False


def register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    from vllm.triton_utils import triton
    from vllm.triton_utils.dispatcher import register_kernels
    from vllm.v1.worker.gpu.block_table import BlockTables

    if not hasattr(triton, "next_power_of_2"):
        # vLLM's stand-in module for a missing Triton lacks this helper, which the
        # launch wrappers call to size their blocks.
        triton.next_power_of_2 = lambda n: 1 << max(int(n) - 1, 0).bit_length()
    register_kernels(OVERRIDES)
    BlockTables._make_ptr_tensor = kb.make_ptr_tensor
    BlockTables.gather_block_tables = kb.gather_block_tables
    BlockTables.compute_slot_mappings = kb.compute_slot_mappings
