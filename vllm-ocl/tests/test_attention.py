"""The plugin's attention backend on a mixed step (a prefill, a chunked prefill, decodes)
through vLLM's KV cache layout, against attention in float64 over the whole sequences.
The ops themselves are tested against a reference in tests/python/test_paged_attention.py;
this checks how the backend calls them: the cache view it is handed, the slot mapping,
the block table, causal alignment and GQA."""

import math

import pytest
import torch

import torch_ocl  # noqa: F401

from vllm_ocl.attention import OclAttentionImpl, OclAttentionMetadata

D = "ocl"


def reference(q, k, v, scale, window=0):
    """Causal attention of the last q.shape[0] positions of one sequence, float64."""
    q, k, v = q.double(), k.double(), v.double()
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = torch.einsum("qhd,khd->hqk", q, k) * scale
    pos = k.shape[0] - q.shape[0] + torch.arange(q.shape[0])
    j = torch.arange(k.shape[0])
    vis = j[None, :] <= pos[:, None]
    if window:
        vis &= j[None, :] > pos[:, None] - window
    return torch.einsum("hqk,khd->qhd", torch.softmax(s.masked_fill(~vis, -math.inf), -1), v)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-5), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("window", [0, 5])
def test_mixed_step_through_backend(dtype, tol, window):
    g = torch.Generator().manual_seed(0)
    H, Hk, Dh, block, nblocks = 4, 2, 16, 8, 16
    # (tokens already cached, tokens this step): a prefill, a chunked prefill, two decodes
    seqs = [(0, 7), (9, 4), (20, 1), (3, 1)]
    impl = OclAttentionImpl(H, Dh, Dh ** -0.5, Hk, None, window or None, "auto")
    # vLLM allocates the LBNHC layout [blocks, block, kv heads, 2 x head] and hands each
    # layer the logical view [blocks, kv heads, block, 2 x head].
    physical = torch.zeros(nblocks, block, Hk, 2 * Dh, dtype=dtype, device=D)
    kv_cache = physical.permute(0, 2, 1, 3)
    perm = torch.randperm(nblocks, generator=g).tolist()
    tables, full_k, full_v = [], [], []
    for n, (cached, new) in enumerate(seqs):
        need = math.ceil((cached + new) / block)
        tables.append([perm.pop() for _ in range(need)])
        full_k.append(torch.randn(cached + new, Hk, Dh, generator=g).to(dtype))
        full_v.append(torch.randn(cached + new, Hk, Dh, generator=g).to(dtype))
    width = max(map(len, tables))
    block_table = torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.int32)

    def slots(n, lo, hi):
        return [tables[n][p // block] * block + p % block for p in range(lo, hi)]

    # The context from earlier steps goes in through the same update path.
    for n, (cached, new) in enumerate(seqs):
        if cached:
            impl.do_kv_cache_update(None, full_k[n][:cached].to(D), full_v[n][:cached].to(D), kv_cache,
                                    torch.tensor(slots(n, 0, cached), device=D))
    # This step: new tokens of every sequence packed, plus two padding rows (slot -1).
    k_new = torch.cat([full_k[n][c:] for n, (c, _) in enumerate(seqs)])
    v_new = torch.cat([full_v[n][c:] for n, (c, _) in enumerate(seqs)])
    q_new = torch.randn(k_new.shape[0], H, Dh, generator=g).to(dtype)
    T = k_new.shape[0]
    pad = lambda x: torch.cat([x, torch.zeros(2, *x.shape[1:], dtype=x.dtype)])  # noqa: E731
    slot_mapping = torch.tensor(sum((slots(n, c, c + w) for n, (c, w) in enumerate(seqs)), []) + [-1, -1])
    impl.do_kv_cache_update(None, pad(k_new).to(D), pad(v_new).to(D), kv_cache, slot_mapping.to(D))
    cu = torch.tensor([0] + torch.tensor([w for _, w in seqs]).cumsum(0).tolist(), dtype=torch.int32)
    meta = OclAttentionMetadata(num_actual_tokens=T, query_start_loc=cu.to(D),
                                seq_lens=torch.tensor([c + w for c, w in seqs], dtype=torch.int32, device=D),
                                block_table=block_table.to(D), slot_mapping=slot_mapping[:T].to(D))
    output = torch.full((T + 2, H * Dh), 7.0, dtype=dtype, device=D)
    impl.forward(None, pad(q_new).to(D), None, None, kv_cache, meta, output)
    out = output.cpu()
    assert torch.equal(out[T:], torch.full((2, H * Dh), 7.0, dtype=dtype))  # padding rows untouched
    for n, (c, w) in enumerate(seqs):
        ref = reference(q_new[cu[n]:cu[n + 1]], full_k[n], full_v[n], Dh ** -0.5, window)
        torch.testing.assert_close(out[cu[n]:cu[n + 1]].view(w, H, Dh).double(), ref, atol=tol, rtol=tol)
