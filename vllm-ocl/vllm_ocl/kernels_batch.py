"""Step preparation of vLLM's GPU model runner as torch code, for ocl.

The runner (vllm/v1/worker/gpu/input_batch.py, block_table.py, buffer_utils.py)
prepares every step with small Triton kernels that loop over the batch's
requests: token ids of prefills, positions and sequence lengths, where the last
sampled token goes, block tables, slot mappings, and the bookkeeping after
sampling. Here each one is the same computation over the batch, with the
per-request scalars read on the host (a handful of ints per request) and the
token data moved by one gather or scatter on the device.

Each function takes the kernel's arguments in the kernel's order (vLLM's
dispatcher passes them so); strides, block sizes and other launch constants are
accepted and ignored, since torch indexing knows the tensors' strides.
"""

from __future__ import annotations

import numpy as np
import torch

PAD_SLOT_ID = -1  # vllm.v1.attention.backends.utils.PAD_SLOT_ID


def _dev(values, like: torch.Tensor, dtype=None) -> torch.Tensor:
    """A host list/array as a tensor on `like`'s device (one upload)."""
    return torch.as_tensor(np.asarray(values), dtype=dtype or torch.int64).to(like.device)


def prepare_prefill_inputs(input_ids, next_prefill_tokens, next_prefill_tokens_stride, num_lookahead,
                           idx_mapping, query_start_loc, all_token_ids, all_token_ids_stride, prefill_lens,
                           num_computed_tokens, BLOCK_SIZE=None, LOOKAHEAD_BLOCK=None):
    """Prefilling requests: their next prompt chunk into input_ids, and the prompt tokens
    that follow it into next_prefill_tokens[k, req] (0 past the prompt)."""
    n = idx_mapping.shape[0]
    reqs, qsl = idx_mapping.tolist(), query_start_loc[:n + 1].tolist()
    plen, ncomp = prefill_lens.tolist(), num_computed_tokens.tolist()
    for b, r in enumerate(reqs):
        done = ncomp[r]
        if done >= plen[r]:
            continue
        s, e = qsl[b], qsl[b + 1]
        input_ids[s:e].copy_(all_token_ids[r, done:done + e - s])
        if num_lookahead:
            nxt = done + e - s
            m = max(0, min(num_lookahead, plen[r] - nxt))
            next_prefill_tokens[:m, r].copy_(all_token_ids[r, nxt:nxt + m])
            next_prefill_tokens[m:num_lookahead, r] = 0


def prepare_pos_seq_lens(pos, seq_lens, idx_mapping, query_start_loc, num_computed_tokens, max_num_reqs,
                         BLOCK_SIZE=None):
    """positions = computed tokens + offset in the query; seq_len = computed + query length;
    unused seq_lens rows 0."""
    n = idx_mapping.shape[0]
    qsl = np.asarray(query_start_loc[:n + 1].tolist(), dtype=np.int64)
    done = np.asarray(num_computed_tokens.tolist(), dtype=np.int64)[idx_mapping.tolist()] if n else qsl[:0]
    qlen = np.diff(qsl)
    total = int(qsl[-1])
    positions = np.arange(total, dtype=np.int64) + np.repeat(done - qsl[:-1], qlen)
    pos[:total].copy_(_dev(positions, pos))
    lens = np.zeros(seq_lens.shape[0], dtype=np.int64)
    lens[:n] = done + qlen
    seq_lens.copy_(_dev(lens, seq_lens))


def combine_sampled_and_draft_tokens(input_ids, idx_mapping, last_sampled_tokens, query_start_loc, seq_lens,
                                     prefill_len, draft_tokens, draft_tokens_stride, cu_num_logits,
                                     logits_indices, BLOCK_SIZE=None, NUM_NEW_SAMPLED_TOKENS=1):
    """Which tokens get logits (the last num_logits of each query), and each decoding
    request's last sampled token (and drafts) written into input_ids."""
    n = idx_mapping.shape[0]
    reqs, qsl = idx_mapping.tolist(), query_start_loc[:n + 1].tolist()
    cu, lens, plen = cu_num_logits[:n + 1].tolist(), seq_lens[:n].tolist(), prefill_len.tolist()
    index, dst, src = [], [], []
    for b, r in enumerate(reqs):
        num_logits = cu[b + 1] - cu[b]
        start = qsl[b + 1] - num_logits
        index.extend(range(start, start + num_logits))
        if lens[b] <= plen[r]:
            continue  # still in its prompt: nothing sampled yet
        if NUM_NEW_SAMPLED_TOKENS > 0 and lens[b] - num_logits >= plen[r]:
            dst.append(start)
            src.append(r)
        drafts = num_logits - NUM_NEW_SAMPLED_TOKENS
        if drafts > 0:
            input_ids[qsl[b + 1] - drafts:qsl[b + 1]].copy_(draft_tokens[r, :drafts])
    if index:
        logits_indices[:len(index)].copy_(_dev(index, logits_indices))
    if dst:
        input_ids[_dev(dst, input_ids)] = last_sampled_tokens.view(-1)[_dev(src, input_ids)].to(input_ids.dtype)


def get_num_sampled_and_rejected(num_sampled, num_rejected, seq_lens, cu_num_logits, idx_mapping, prefill_len):
    """Requests still inside a chunked prefill sample nothing and reject nothing."""
    n = idx_mapping.shape[0]
    chunked = seq_lens[:n] < prefill_len[idx_mapping.long()]
    sampled = torch.where(chunked, torch.zeros_like(num_sampled[:n]), num_sampled[:n])
    num_logits = (cu_num_logits[1:n + 1] - cu_num_logits[:n]).to(num_sampled.dtype)
    num_sampled[:n].copy_(sampled)
    num_rejected[:n].copy_(torch.where(chunked, torch.zeros_like(sampled), num_logits - sampled))


def post_update(idx_mapping, num_computed_tokens, last_sampled_tokens, output_bin_counts, output_bin_counts_stride,
                sampled_tokens, sampled_tokens_stride, num_sampled, num_rejected, query_start_loc, all_token_ids,
                all_token_ids_stride, total_len, draft_tokens, draft_tokens_out, num_draft_tokens, num_warps=None):
    """After sampling: append the sampled tokens to each request's token ids, remember the
    last one, count them for penalties, and advance the computed-token counts."""
    n = idx_mapping.shape[0]
    reqs, ns, nrej = idx_mapping.tolist(), num_sampled[:n].tolist(), num_rejected[:n].tolist()
    lens, done = total_len.tolist(), num_computed_tokens.tolist()
    qsl = query_start_loc[:n + 1].tolist() if query_start_loc is not None else None
    rows, cols, toks_b, toks_j, last_b, last_r, len_r, len_v, done_r, done_v = ([] for _ in range(10))
    for b, r in enumerate(reqs):
        if r < 0:
            continue
        if draft_tokens is not None and num_draft_tokens:
            draft_tokens_out[r, :num_draft_tokens].copy_(draft_tokens[b, :num_draft_tokens])
        k = ns[b]
        if k > 0:
            last_b.append(b * sampled_tokens.shape[1] + k - 1)
            last_r.append(r)
            len_r.append(r)
            len_v.append(lens[r] + k)
            for j in range(k):
                rows.append(r)
                cols.append(lens[r] + j)
                toks_b.append(b)
                toks_j.append(j)
        delta = (qsl[b + 1] - qsl[b] if qsl is not None else 0) - nrej[b]
        if delta:
            done_r.append(r)
            done_v.append(done[r] + delta)
    if rows:
        tokens = sampled_tokens[_dev(toks_b, sampled_tokens), _dev(toks_j, sampled_tokens)]
        all_token_ids[_dev(rows, all_token_ids), _dev(cols, all_token_ids)] = tokens.to(all_token_ids.dtype)
        last_sampled_tokens.view(-1)[_dev(last_r, last_sampled_tokens)] = (
            sampled_tokens.reshape(-1)[_dev(last_b, sampled_tokens)].to(last_sampled_tokens.dtype))
        total_len[_dev(len_r, total_len)] = _dev(len_v, total_len, total_len.dtype)
        if output_bin_counts is not None:
            ones = torch.ones(len(rows), dtype=output_bin_counts.dtype, device=output_bin_counts.device)
            output_bin_counts.index_put_((_dev(rows, output_bin_counts), tokens.long()), ones, accumulate=True)
    if done_r:
        num_computed_tokens[_dev(done_r, num_computed_tokens)] = _dev(done_v, num_computed_tokens,
                                                                      num_computed_tokens.dtype)


def post_update_num_computed_tokens(idx_mapping, num_computed_tokens, query_start_loc):
    n = idx_mapping.shape[0]
    reqs, qsl, done = idx_mapping.tolist(), query_start_loc[:n + 1].tolist(), num_computed_tokens.tolist()
    if reqs:
        new = [done[r] + qsl[b + 1] - qsl[b] for b, r in enumerate(reqs)]
        num_computed_tokens[_dev(reqs, num_computed_tokens)] = _dev(new, num_computed_tokens, num_computed_tokens.dtype)


def expand_idx_mapping(idx_mapping, expanded_idx_mapping, expanded_local_pos, cu_num_logits, BLOCK_SIZE=None):
    """One entry per logit: its request's state index and its position within the request."""
    n = idx_mapping.shape[0]
    cu = np.asarray(cu_num_logits[:n + 1].tolist(), dtype=np.int64)
    counts = np.diff(cu)
    total = int(cu[-1])
    reqs = np.repeat(np.asarray(idx_mapping.tolist(), dtype=np.int64), counts)
    local = np.arange(total, dtype=np.int64) - np.repeat(cu[:-1], counts)
    expanded_idx_mapping[:total].copy_(_dev(reqs, expanded_idx_mapping))
    expanded_local_pos[:total].copy_(_dev(local, expanded_local_pos))


def apply_write(output, output_stride, write_indices, write_starts, write_contents, write_cu_lens, write_group_ids,
                BLOCK_SIZE=None, MULTI_GROUP=False):
    """Staged row writes (new block ids of a request into its block-table row): write w
    puts contents[cu[w-1]:cu[w]] at output[index[w], start[w]:]."""
    if MULTI_GROUP:
        # Several KV cache groups (hybrid models) pass a table of raw pointers.
        raise NotImplementedError("vllm-ocl: models with several KV cache groups are not supported")
    cu = np.asarray(write_cu_lens.tolist(), dtype=np.int64)
    if not len(cu):
        return
    counts = np.diff(cu, prepend=0)
    base = np.asarray(write_indices.tolist(), dtype=np.int64) * output.stride(0) + np.asarray(
        write_starts.tolist(), dtype=np.int64)
    flat = np.repeat(base, counts) + np.arange(int(cu[-1])) - np.repeat(cu - counts, counts)
    output.view(-1)[_dev(flat, output)] = write_contents[:int(cu[-1])].to(output.dtype)


# -- BlockTables (vllm/v1/worker/gpu/block_table.py) --
# Its two kernels read the block tables through a tensor of raw data pointers, which
# torch code cannot follow, so the two methods that launch them are replaced instead.


def make_ptr_tensor(self, tensors):
    """vLLM keeps the tables' raw pointers (uint64, which ocl has no kernels for) for its
    kernels; the replacements below index the tables themselves, so none is kept."""
    return None


def gather_block_tables(self, idx_mapping, num_reqs_padded, out=None, out_ptrs=None, num_computed_tokens=None):
    """The batch's rows of each group's block table, in batch order; padded rows zero.
    Sliding-window groups get entries wholly below the window of the request's first
    scheduled token nulled (block 0), as vLLM's kernel does."""
    if self.num_kv_cache_groups == 0:
        return ()
    n = idx_mapping.shape[0]
    num_rows = num_reqs_padded
    if out is None:
        out = tuple(self.input_block_tables)
        num_rows = max(num_rows, self._num_dirty_rows)
        self._num_dirty_rows = n
    idx = idx_mapping.long()
    for g, (src, dst) in enumerate(zip(self.block_tables, out)):
        rows = src.gpu[idx]
        reach = self._sliding_window_reach[g]
        if reach > 0 and num_computed_tokens is not None:
            first = num_computed_tokens[idx].long()
            null = torch.clamp(first - reach, min=0) // self.block_sizes[g]
            cols = torch.arange(rows.shape[1], device=rows.device)
            rows = torch.where(cols[None, :] < null[:, None], torch.zeros_like(rows), rows)
        dst[:n].copy_(rows)
        if num_rows > n:
            dst[n:num_rows].zero_()
    return tuple(bt[:num_reqs_padded] for bt in out)


def compute_slot_mappings(self, idx_mapping, query_start_loc, positions, num_tokens_padded, out=None):
    """Each token's cache slot: block_table[req, pos // block] * block + pos % block;
    padding tokens and dummy requests (index < 0) get PAD_SLOT_ID."""
    slot_mappings = self.slot_mappings if out is None else out
    if self.num_kv_cache_groups == 0:
        return slot_mappings[:, :num_tokens_padded]
    if self.cp_size != 1:
        raise NotImplementedError("vllm-ocl: context parallelism is not supported")
    n = idx_mapping.shape[0]
    qsl = np.asarray(query_start_loc[:n + 1].tolist(), dtype=np.int64)
    total = int(qsl[-1])
    reqs = np.repeat(np.asarray(idx_mapping.tolist(), dtype=np.int64), np.diff(qsl))
    slot_mappings[:, total:] = PAD_SLOT_ID
    if not total:
        return slot_mappings[:, :num_tokens_padded]
    req = _dev(reqs, positions)
    real = req >= 0
    pos = positions[:total].long()
    for g, table in enumerate(self.block_tables):
        if not self._slot_mapping_enabled[g]:
            slot_mappings[g, :total] = PAD_SLOT_ID
            continue
        bs = self.block_sizes[g]
        blocks = table.gpu[req.clamp(min=0), pos // bs].long()
        slots = torch.where(real, blocks * bs + pos % bs, torch.full_like(pos, PAD_SLOT_ID))
        slot_mappings[g, :total].copy_(slots)
    return slot_mappings[:, :num_tokens_padded]


def prompt_logprobs_token_ids(out, query_start_loc, idx_mapping, num_computed_tokens, all_token_ids,
                              all_token_ids_stride, BLOCK_SIZE=None):
    """For prompt logprobs: the token after each query token (the one its logits predict)."""
    n = idx_mapping.shape[0]
    reqs, qsl, done = idx_mapping.tolist(), query_start_loc[:n + 1].tolist(), num_computed_tokens.tolist()
    for b, r in enumerate(reqs):
        s, e = qsl[b], qsl[b + 1]
        nxt = all_token_ids[r, done[r] + 1:done[r] + 1 + e - s]
        out[s:s + nxt.shape[0]].copy_(nxt)
