"""Sampling kernels of vLLM's GPU model runner as torch code, for ocl.

vLLM samples with Gumbel-max: each token's logit (over the temperature) plus
noise -log(-log u), argmax; temperature 0 is plain argmax (greedy). The noise u
is a murmur3 hash of (request seed, position, token id), so a seeded request
draws the same tokens on any device; it is computed the same way here, in int64
arithmetic kept to 32 bits. The kernels work per vocabulary block of
BLOCK_SIZE tokens (a max per block, then a max over blocks); the same two
stages are kept so the wrappers' buffers keep their meaning.
"""

from __future__ import annotations

import torch

M32 = 0xFFFFFFFF


def _rotl(v: torch.Tensor, s: int) -> torch.Tensor:
    return ((v << s) | (v >> (32 - s))) & M32


def _mix(h: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    key = _rotl((key * 0xCC9E2D51) & M32, 15)
    key = (key * 0x1B873593) & M32
    h = _rotl(h ^ key, 13)
    return (h * 5 + 0xE6546B64) & M32


def _fmix(h: torch.Tensor) -> torch.Tensor:
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & M32
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def murmur3_hash32(seed: torch.Tensor, pos: torch.Tensor, offset: torch.Tensor, domain: int = 0) -> torch.Tensor:
    """vLLM's murmur3_hash32 (gumbel.py): [rows] seeds and positions x [cols] offsets -> uint32 in int64."""
    seed, pos = seed.long()[:, None], pos.long()[:, None]
    h = torch.full_like(seed, domain)
    h = _mix(h, seed & M32)
    h = _mix(h, (seed >> 32) & M32)
    h = _mix(h, pos & M32)
    h = _mix(h, offset.long()[None, :] & M32)
    return _fmix(h ^ 16)


def murmur3_uniform(seed, pos, offset, fp64: bool) -> torch.Tensor:
    """Uniform in (0, 1), as vLLM's murmur3_uniform32 / murmur3_uniform64."""
    lo = murmur3_hash32(seed, pos, offset)
    if not fp64:
        return (lo >> 16).float() * 1.52587890625e-05 + ((lo & 0xFFFF).float() + 0.5) * 2.3283064365386963e-10
    hi = murmur3_hash32(seed, pos, offset, domain=0x9E3779B9)
    r53 = ((hi << 32) | lo) >> 11  # hi < 2^32, so the shift stays inside int64
    u = (r53.double() + 0.5) * 1.1102230246251565e-16
    return torch.where(u == 1.0, u - 1.1102230246251565e-16, u)


def apply_temperature(logits, logits_stride, expanded_idx_mapping, temperature, vocab_size, BLOCK_SIZE=None):
    """logits /= temperature of each row's request (0 and 1 leave the row unchanged)."""
    t = temperature[expanded_idx_mapping.long()].float()
    t = torch.where((t == 0) | (t == 1), torch.ones_like(t), t)
    logits.copy_((logits.float() / t[:, None]).to(logits.dtype))


DRAFT_NOISE_SALT = 1 << 30


def gumbel_sample(local_argmax, local_argmax_stride, local_max, local_max_stride, logits_cache,
                  logits_cache_stride_0, logits_cache_stride_1, logits_cache_col, logits_cache_source,
                  logits_cache_source_stride, logits_cache_row_mapping, logits, logits_stride, bias, bias_stride,
                  expanded_idx_mapping, seeds, pos, temp, vocab_size, BLOCK_SIZE=1024, IS_DRAFTING=False,
                  APPLY_TEMPERATURE=False, USE_FP64=False, PER_TOKEN_COL=False, HAS_BIAS=False):
    """Per vocabulary block: the Gumbel-max winner and its value (plain argmax at temperature 0)."""
    if logits_cache is not None:
        raise NotImplementedError("vllm-ocl: speculative decoding is not supported")
    x = logits
    if HAS_BIAS:
        x = (x.float() + bias.float()).to(logits.dtype)  # rounded to the logits dtype, as vLLM does
    x = x.double() if USE_FP64 else x.float()
    req = expanded_idx_mapping.long()
    valid = req >= 0
    t = torch.where(valid, temp[req.clamp(min=0)].float(), torch.zeros_like(req, dtype=torch.float32))
    sampled_rows = t != 0
    if APPLY_TEMPERATURE:
        x = torch.where(sampled_rows[:, None], x / torch.where(sampled_rows, t, 1.0).to(x.dtype)[:, None], x)
    if bool(sampled_rows.any()):
        seed = torch.where(valid, seeds[req.clamp(min=0)].long(), torch.zeros_like(req))
        p = pos.long() + (DRAFT_NOISE_SALT if IS_DRAFTING else 0)
        u = murmur3_uniform(seed, p, torch.arange(x.shape[1], device=x.device), USE_FP64).to(x.dtype)
        x = torch.where(sampled_rows[:, None], x - torch.log(-torch.log1p(-u)), x)
    num_blocks = local_argmax.shape[1]
    pad = num_blocks * BLOCK_SIZE - x.shape[1]
    if pad:
        x = torch.nn.functional.pad(x, (0, pad), value=float("-inf"))
    values, index = x.view(x.shape[0], num_blocks, BLOCK_SIZE).max(dim=-1)
    local_max.copy_(values.to(local_max.dtype))
    offsets = torch.arange(num_blocks, device=x.device, dtype=torch.int64) * BLOCK_SIZE
    local_argmax.copy_(index + offsets[None, :])


def gumbel_combine(local_argmax, local_argmax_stride, local_max, local_max_stride, sampled, num_blocks,
                   PADDED_NUM_BLOCKS=None):
    """The winning block of each row (the first NaN, else the first maximum)."""
    values = local_max[:, :num_blocks]
    winner = torch.where(torch.isnan(values), torch.full_like(values, float("inf")), values).argmax(dim=-1)
    sampled.copy_(local_argmax.gather(1, winner[:, None]).squeeze(1))


def apply_min_p(logits, logits_stride, expanded_idx_mapping, min_p, vocab_size, BLOCK_SIZE=None):
    """Drop tokens whose probability is below min_p x the top token's (min_p 0: no-op)."""
    p = min_p[expanded_idx_mapping.long()].float()
    x = logits.float()
    threshold = x.max(dim=-1).values + torch.log(torch.where(p > 0, p, torch.ones_like(p)))
    drop = (p > 0)[:, None] & (x < threshold[:, None])
    logits.masked_fill_(drop, float("-inf"))


def _unpack_bits(packed: torch.Tensor, n: int) -> torch.Tensor:
    """[rows, ceil(n/32)] int32 bit masks -> [rows, n] bool (bit b of word w is token 32w+b)."""
    bits = (packed.long()[:, :, None] >> torch.arange(32, device=packed.device)) & 1
    return bits.reshape(packed.shape[0], -1)[:, :n].bool()


def apply_penalties(logits, logits_stride, expanded_idx_mapping, token_ids, expanded_local_pos, repetition_penalty,
                    frequency_penalty, presence_penalty, prompt_bin_mask, prompt_bin_mask_stride, output_bin_counts,
                    output_bin_counts_stride, vocab_size, BLOCK_SIZE=None):
    """Repetition (tokens in the prompt or output), frequency and presence penalties, as
    vLLM's _penalties_kernel; draft tokens before a logit count as output."""
    req = expanded_idx_mapping.long()
    rep, freq, pres = (t[req].float()[:, None] for t in (repetition_penalty, frequency_penalty, presence_penalty))
    counts = output_bin_counts[req, :vocab_size].clone()
    local = expanded_local_pos.tolist()
    if any(local):
        ids = token_ids.tolist()
        for t, p in enumerate(local):
            for prev in range(p):
                counts[t, ids[t - p + prev + 1]] += 1
    seen = counts > 0
    x = logits.float()
    scale = torch.where(_unpack_bits(prompt_bin_mask[req], vocab_size) | seen, rep, torch.ones_like(rep))
    x = x * torch.where(x > 0, 1.0 / scale, scale) - freq * counts.float() - pres * seen.float()
    used = (rep != 1) | (freq != 0) | (pres != 0)
    logits.copy_(torch.where(used, x, logits.float()).to(logits.dtype))


def bincount(expanded_idx_mapping, all_token_ids, all_token_ids_stride, prompt_len, prefill_len, prompt_bin_mask,
             prompt_bin_mask_stride, output_bin_counts, output_bin_counts_stride, BLOCK_SIZE=None):
    """For newly added requests: the prompt's tokens as a bit mask, and counts of the tokens
    after the prompt (a resumed request's earlier output). Done on the host: once per request."""
    import numpy as np

    words = prompt_bin_mask.shape[1]
    for r in expanded_idx_mapping.tolist():
        n_prompt, n_prefill = int(prompt_len[r]), int(prefill_len[r])
        tokens = np.asarray(all_token_ids[r, :n_prefill].tolist(), dtype=np.int64)
        bits = np.zeros(words * 32, dtype=np.uint64)
        bits[tokens[:n_prompt]] = 1
        packed = (bits.reshape(words, 32) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
        prompt_bin_mask[r].copy_(torch.from_numpy(packed.view(np.int32)))
        counts = np.bincount(tokens[n_prompt:], minlength=output_bin_counts.shape[1])
        output_bin_counts[r].copy_(torch.from_numpy(counts.astype(np.int32)))


def topk_log_softmax(output, logits, logits_stride, topk_ids, topk_ids_stride, topk, vocab_size, BLOCK_SIZE=None,
                     TOPK_BLOCK_SIZE=None):
    """Log-probabilities of the listed token ids of each row."""
    lp = torch.log_softmax(logits[:, :vocab_size].float(), dim=-1)
    output.view(-1, topk).copy_(lp.gather(1, topk_ids[:, :topk].long()))


def ranks(output, logits, logits_stride, token_ids, vocab_size, BLOCK_SIZE=None):
    """Rank of each row's token: how many logits are >= its own."""
    x = logits[:, :vocab_size]
    own = x.gather(1, token_ids.long()[:, None])
    output.copy_((x >= own).sum(dim=-1).to(output.dtype))


def apply_logit_bias(logits, logits_stride, vocab_size, expanded_idx_mapping, num_allowed_token_ids,
                     allowed_token_ids, allowed_token_ids_stride, num_logit_bias, bias_token_ids,
                     bias_token_ids_stride, bias, bias_stride, pos, min_lens, num_stop_token_ids,
                     restore_when_all_masked, stop_token_ids, stop_token_ids_stride, BLOCK_SIZE=None,
                     LOGITS_BLOCK_SIZE=None, CHECK_ALL_MASKED_ROWS=False):
    """Per row, as vLLM's _bias_kernel: keep only allowed token ids, add logit biases, and
    mask stop tokens until min_tokens are generated (restoring them if that masks the
    whole row and the request asks for it). Row by row: few requests use these."""
    reqs, positions = expanded_idx_mapping.tolist(), pos.tolist()
    n_allowed, n_bias, n_stop = num_allowed_token_ids.tolist(), num_logit_bias.tolist(), num_stop_token_ids.tolist()
    min_len, restore = min_lens.tolist(), restore_when_all_masked.tolist()
    for t, r in enumerate(reqs):
        row = logits[t, :vocab_size]
        if n_allowed[r] > 0:
            ids = allowed_token_ids[r, :n_allowed[r]].long()
            kept = row[ids].clone()
            row.fill_(float("-inf"))
            row[ids] = kept
        if n_bias[r] > 0:
            ids = bias_token_ids[r, :n_bias[r]].long()
            row[ids] = row[ids] + bias[r, :n_bias[r]].to(row.dtype)
        if n_stop[r] > 0 and positions[t] + 1 < min_len[r]:
            ids = stop_token_ids[r, :n_stop[r]].long()
            saved = row[ids].clone()
            row[ids] = float("-inf")
            if CHECK_ALL_MASKED_ROWS and restore[r] and bool(torch.isneginf(row).all()):
                row[ids] = torch.where(torch.isfinite(saved), saved, row[ids])


def apply_bad_words(logits, logits_stride, expanded_idx_mapping, bad_word_token_ids, bad_word_token_ids_stride,
                    bad_word_offsets, bad_word_offsets_stride, num_bad_words, all_token_ids, all_token_ids_stride,
                    prompt_len, total_len, input_ids, expanded_local_pos):
    """Ban the last token of each bad word whose other tokens end the output so far (draft
    tokens of this step included), as vLLM's _bad_words_kernel. On the host: few requests
    have bad words, and the match needs their recent tokens only."""
    reqs, counts = expanded_idx_mapping.tolist(), num_bad_words.tolist()
    rows = [t for t, r in enumerate(reqs) if r >= 0 and counts[r] > 0]
    if not rows:
        return
    local, plen, tlen = expanded_local_pos.tolist(), prompt_len.tolist(), total_len.tolist()
    ban_t, ban_tok = [], []
    for t in rows:
        r, p = reqs[t], local[t]
        offsets = bad_word_offsets[r, :counts[r] + 1].tolist()
        words = bad_word_token_ids[r, :offsets[-1]].tolist()
        out_len = tlen[r] - plen[r]
        longest = max(b - a for a, b in zip(offsets, offsets[1:])) - 1
        start = max(0, out_len - longest)
        history = all_token_ids[r, plen[r] + start:plen[r] + out_len].tolist()
        history += input_ids[t - p + 1:t + 1].tolist()  # this step's drafts before token t
        for a, b in zip(offsets, offsets[1:]):
            prefix = words[a:b - 1]
            if len(prefix) <= out_len + p - start and (not prefix or history[len(history) - len(prefix):] == prefix):
                ban_t.append(t)
                ban_tok.append(words[b - 1])
    if ban_t:
        logits[torch.tensor(ban_t, device=logits.device), torch.tensor(ban_tok, device=logits.device)] = float("-inf")


def apply_grammar_bitmask(logits, logits_stride, logits_indices, cu_num_logits, bitmask, bitmask_stride, vocab_size,
                          MASK_STRIDE=1, BLOCK_SIZE=None):
    """Structured output: tokens whose bit is 0 in the grammar's mask are set to -inf."""
    mapping = logits_indices[:bitmask.shape[0]].tolist()
    cu = cu_num_logits.tolist()
    rows, masks = [], []
    for m, idx in enumerate(mapping):
        req, position = divmod(idx, MASK_STRIDE)
        if position < cu[req + 1] - cu[req]:
            rows.append(cu[req] + position)
            masks.append(m)
    if rows:
        device = logits.device
        banned = ~_unpack_bits(bitmask[torch.tensor(masks, device=device)], vocab_size)
        rows_t = torch.tensor(rows, device=device)
        logits[rows_t, :vocab_size] = logits[rows_t, :vocab_size].masked_fill(banned, float("-inf"))
