"""torch.ops.torch_ocl.reshape_and_cache and paged_attention against a float64 reference on the CPU:
random block tables, ragged lengths, prefill and decode mixed in one call, GQA, causal and sliding
windows, float32/float16/bfloat16 storage, empty and single-token sequences."""

import math

import pytest
import torch

import torch_ocl  # noqa: F401

D = "ocl"
ops = torch.ops.torch_ocl
TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _batch(q_lens, kv_lens, Hq, Hk, Dh, block, dtype, seed=0, extra_blocks=3):
    """Random caches, a shuffled block table and packed queries for sequences of (q_len, kv_len)."""
    g = torch.Generator().manual_seed(seed)
    need = [max(1, math.ceil(k / block)) for k in kv_lens]
    nblocks = sum(need) + extra_blocks
    perm = torch.randperm(nblocks, generator=g)
    mb = max(need) + 1
    bt = torch.full((len(q_lens), mb), -1, dtype=torch.int32)
    i = 0
    for n, k in enumerate(need):
        bt[n, :k] = perm[i:i + k].to(torch.int32)
        i += k
    kc = torch.randn(nblocks, block, Hk, Dh, generator=g).to(dtype)
    vc = torch.randn(nblocks, block, Hk, Dh, generator=g).to(dtype)
    T = sum(q_lens)
    q = torch.randn(T, Hq, Dh, generator=g).to(dtype)
    cu = torch.tensor([0] + list(torch.tensor(q_lens).cumsum(0).tolist()), dtype=torch.int32)
    return q, kc, vc, bt, cu, torch.tensor(kv_lens, dtype=torch.int32)


def _reference(q, kc, vc, bt, cu, kv, scale, causal=True, window=0):
    """float64, one sequence at a time: gather the context through the block table, mask, softmax."""
    q, kc, vc = q.double(), kc.double(), vc.double()
    Hq, Hk, block = q.shape[1], kc.shape[2], kc.shape[1]
    out = torch.zeros_like(q)
    for n in range(bt.shape[0]):
        q0, q1, klen = int(cu[n]), int(cu[n + 1]), int(kv[n])
        if q1 == q0 or klen == 0:
            continue
        slots = torch.arange(klen)
        blocks = bt[n, slots // block].long()
        k = kc[blocks, slots % block]  # [klen, Hk, D]
        v = vc[blocks, slots % block]
        k = k.repeat_interleave(Hq // Hk, dim=1)
        v = v.repeat_interleave(Hq // Hk, dim=1)
        s = torch.einsum("qhd,khd->hqk", q[q0:q1], k) * scale
        pos = klen - (q1 - q0) + torch.arange(q1 - q0)
        j = torch.arange(klen)
        if causal:
            vis = j[None, :] <= pos[:, None]
            if window > 0:
                vis &= j[None, :] > pos[:, None] - window
            s = s.masked_fill(~vis[None], -math.inf)
        p = torch.softmax(s, -1).nan_to_num(0.0)
        out[q0:q1] = torch.einsum("hqk,khd->qhd", p, v)
    return out


def _run(q, kc, vc, bt, cu, kv, scale, **kw):
    return ops.paged_attention(q.to(D), kc.to(D), vc.to(D), bt.to(D), cu.to(D), kv.to(D), scale, **kw).cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("Hq,Hk", [(4, 4), (8, 2)])
def test_mixed_prefill_decode(no_fallback, dtype, Hq, Hk):
    # prefills (q == kv), chunked prefill (q < kv), decodes (q == 1), a single-token sequence
    q_lens, kv_lens = [5, 1, 3, 1, 1, 7], [5, 33, 20, 1, 17, 7]
    q, kc, vc, bt, cu, kv = _batch(q_lens, kv_lens, Hq, Hk, 16, 8, dtype)
    scale = 16 ** -0.5
    got = _run(q, kc, vc, bt, cu, kv, scale)
    ref = _reference(q, kc, vc, bt, cu, kv, scale)
    assert got.dtype == dtype
    torch.testing.assert_close(got.double(), ref, atol=TOL[dtype], rtol=TOL[dtype])


@pytest.mark.parametrize("window", [1, 4, 64])
def test_sliding_window(no_fallback, window):
    q_lens, kv_lens = [6, 1, 2], [6, 40, 13]
    q, kc, vc, bt, cu, kv = _batch(q_lens, kv_lens, 4, 2, 32, 16, torch.float32, seed=1)
    got = _run(q, kc, vc, bt, cu, kv, 0.2, window=window)
    torch.testing.assert_close(got.double(), _reference(q, kc, vc, bt, cu, kv, 0.2, window=window),
                               atol=2e-5, rtol=2e-5)


def test_not_causal_and_head_dims(no_fallback):
    for Dh in (8, 72, 128):
        q, kc, vc, bt, cu, kv = _batch([3, 2], [9, 4], 2, 1, Dh, 4, torch.float32, seed=Dh)
        got = _run(q, kc, vc, bt, cu, kv, 0.1, causal=False)
        torch.testing.assert_close(got.double(), _reference(q, kc, vc, bt, cu, kv, 0.1, causal=False),
                                   atol=2e-5, rtol=2e-5)


def test_empty_sequences_and_batches(no_fallback):
    # A sequence with no query tokens between others, and one call with no tokens at all.
    q, kc, vc, bt, cu, kv = _batch([2, 0, 1], [2, 5, 9], 4, 2, 16, 4, torch.float32, seed=3)
    got = _run(q, kc, vc, bt, cu, kv, 0.25)
    torch.testing.assert_close(got.double(), _reference(q, kc, vc, bt, cu, kv, 0.25), atol=2e-5, rtol=2e-5)
    q0 = torch.empty(0, 4, 16)
    out = _run(q0, kc, vc, bt, torch.zeros(4, dtype=torch.int32), kv, 0.25)
    assert out.shape == (0, 4, 16)


def test_reshape_and_cache(no_fallback):
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        g = torch.Generator().manual_seed(0)
        kc = torch.zeros(6, 4, 2, 16, dtype=dtype)
        vc = torch.zeros(6, 4, 2, 16, dtype=dtype)
        k = torch.randn(5, 2, 16, generator=g).to(dtype)
        v = torch.randn(5, 2, 16, generator=g).to(dtype)
        slots = torch.tensor([3, 17, -1, 0, 22])  # -1: a padding token, skipped
        kcd, vcd = kc.to(D), vc.to(D)
        ops.reshape_and_cache(k.to(D), v.to(D), kcd, vcd, slots.to(D))
        ref_k, ref_v = kc.clone().view(-1, 2, 16), vc.clone().view(-1, 2, 16)
        keep = slots >= 0
        ref_k[slots[keep]] = k[keep]
        ref_v[slots[keep]] = v[keep]
        assert torch.equal(kcd.cpu().view(-1, 2, 16), ref_k)
        assert torch.equal(vcd.cpu().view(-1, 2, 16), ref_v)


def test_strided_caches_like_transformers(no_fallback):
    """transformers' paged cache interleaves K and V pages of every layer in one tensor: cache views
    with a page stride of 2 pages work, written by reshape_and_cache and read by paged_attention."""
    block, Hk, Dh, pages = 8, 2, 16, 10
    flat = torch.zeros(pages * 2 * block, Hk, Dh, device=D)
    kc = flat.view(pages, 2, block, Hk, Dh)[:, 0]
    vc = flat.view(pages, 2, block, Hk, Dh)[:, 1]
    assert not kc.is_contiguous()
    g = torch.Generator().manual_seed(4)
    kv_len = 19
    bt = torch.tensor([[7, 2, 5]], dtype=torch.int32)
    slots = (bt[0, torch.arange(kv_len) // block].long() * block + torch.arange(kv_len) % block)
    k = torch.randn(kv_len, Hk, Dh, generator=g)
    v = torch.randn(kv_len, Hk, Dh, generator=g)
    ops.reshape_and_cache(k.to(D), v.to(D), kc, vc, slots.to(D))
    q = torch.randn(3, 4, Dh, generator=g)
    cu = torch.tensor([0, 3], dtype=torch.int32)
    kvl = torch.tensor([kv_len], dtype=torch.int32)
    got = ops.paged_attention(q.to(D), kc, vc, bt.to(D), cu.to(D), kvl.to(D), 0.25).cpu()
    torch.testing.assert_close(got.double(), _reference(q, kc.cpu(), vc.cpu(), bt, cu, kvl, 0.25),
                               atol=2e-5, rtol=2e-5)


def test_errors():
    q = torch.randn(2, 3, 16, device=D)
    kc = torch.randn(4, 8, 2, 16, device=D)
    bt = torch.zeros(1, 2, dtype=torch.int32, device=D)
    cu = torch.tensor([0, 2], dtype=torch.int32, device=D)
    kv = torch.tensor([2], dtype=torch.int32, device=D)
    with pytest.raises(RuntimeError, match="multiple of kv heads"):
        ops.paged_attention(q, kc, kc, bt, cu, kv, 1.0)
    with pytest.raises(RuntimeError, match="cu_seqlens_q"):
        ops.paged_attention(torch.randn(2, 4, 16, device=D), kc, kc, bt, cu[:1], kv, 1.0)
    with pytest.raises(RuntimeError, match="dtype"):
        ops.paged_attention(torch.randn(2, 4, 16, device=D).half(), kc, kc, bt, cu, kv, 1.0)


def test_bench_paths_agree(no_fallback):
    """The two rows of the serving benchmark compute the same decode attention."""
    from torch_ocl.bench import serving as sb

    q, kc, vc, bt, slots = sb._paged_inputs(D)
    cu = torch.arange(sb.SEQS + 1, dtype=torch.int32, device=D)
    lens = torch.full((sb.SEQS,), sb.CTX, dtype=torch.int32, device=D)
    native = torch.ops.torch_ocl.paged_attention(q, kc, vc, bt, cu, lens, sb.DH ** -0.5)
    gathered = sb._gather_decode(q, kc, vc, slots)[0].transpose(0, 1)
    torch.testing.assert_close(native.cpu(), gathered.cpu(), atol=1e-4, rtol=1e-4)


def test_transformers_continuous_batching_uses_native_attention(no_fallback):
    """generate_batch on ocl with torch_ocl.serving.attention enabled: the packed sdpa calls run
    paged_attention, and greedy tokens equal HF generate on the CPU."""
    transformers = pytest.importorskip("transformers")
    from torch_ocl.serving import attention, tiny

    torch.manual_seed(0)
    cpu = transformers.AutoModelForCausalLM.from_config(tiny.config("llama"), attn_implementation="sdpa").eval()
    with torch.no_grad():
        for p in cpu.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.15)
    prompts = [[1, 40, 41, 42, 43, 44], [1, 50], [1, 60, 61, 62]]
    ref = []
    for p in prompts:
        out = cpu.generate(torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long),
                           max_new_tokens=8, do_sample=False, eos_token_id=None, pad_token_id=0)
        ref.append(out[0, len(p):].tolist())
    model = cpu.to(D)
    gen = transformers.GenerationConfig(max_new_tokens=8, do_sample=False, eos_token_id=-1, pad_token_id=0)
    cb = transformers.ContinuousBatchingConfig(page_size=16, num_blocks=16, max_batch_tokens=64)
    attention.enable()
    try:
        before = attention.calls
        outs = model.generate_batch(prompts, generation_config=gen, continuous_batching_config=cb)
        assert attention.calls > before
    finally:
        attention.disable()
    got = [o.generated_tokens for o in sorted(outs.values(), key=lambda o: int(o.request_id.split("_")[-1]))]
    assert got == ref
