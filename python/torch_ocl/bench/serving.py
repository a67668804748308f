"""Serving figures: paged-attention decode, and continuous batching of 8 concurrent requests.

Paged-attention decode (one query token per sequence over 1k cached tokens,
8 sequences, GQA): torch.ops.torch_ocl.paged_attention, which reads the
cache through the block table, against what transformers' continuous
batching does without it: index_select of every cached token of the batch,
then scaled_dot_product_attention with a block-diagonal mask. The gather row
runs on every device; the native row only on ocl.

Continuous batching: the tiny offline Llama of `python -m torch_ocl serve`,
8 requests of 64 new tokens added at once to transformers' continuous
batching engine (what the server runs behind its HTTP layer), with the same
cache settings on every device (transformers' sdpa), and on ocl also with
the native attention the server enables (torch_ocl.serving.attention); tokens/s over the whole batch and the
median time to first token.
"""

import statistics
import time
from typing import Dict, List

import torch

from .timing import measure

CTX, SEQS, HQ, HK, DH, BLOCK = 1024, 8, 8, 2, 64, 16


def _paged_inputs(device, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    nb = SEQS * CTX // BLOCK
    kc = torch.randn(nb, BLOCK, HK, DH, generator=g).to(dtype)
    vc = torch.randn(nb, BLOCK, HK, DH, generator=g).to(dtype)
    bt = torch.randperm(nb, generator=g).to(torch.int32).view(SEQS, CTX // BLOCK)
    q = torch.randn(SEQS, HQ, DH, generator=g).to(dtype)
    slots = (bt.long()[:, :, None] * BLOCK + torch.arange(BLOCK)).view(SEQS, CTX)  # token -> cache row
    return [t.to(device) for t in (q, kc, vc, bt, slots)]


def _gather_decode(q, kc, vc, slots):
    """transformers' index path: gather each sequence's keys/values, one SDPA over the packed batch."""
    k = kc.view(-1, HK, DH).index_select(0, slots.reshape(-1))  # [SEQS * CTX, HK, DH]
    v = vc.view(-1, HK, DH).index_select(0, slots.reshape(-1))
    mask = torch.full((SEQS, SEQS * CTX), float("-inf"), device=q.device)
    for n in range(SEQS):
        mask[n, n * CTX:(n + 1) * CTX] = 0
    qh = q.transpose(0, 1)[None]  # [1, HQ, SEQS, DH]
    kh, vh = k.transpose(0, 1)[None], v.transpose(0, 1)[None]
    return torch.nn.functional.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, enable_gqa=True)


def _decode_rows(device, quick) -> List[Dict]:
    q, kc, vc, bt, slots = _paged_inputs(device)
    reps = 3 if quick else 7
    name = f"paged-attention decode, {SEQS} seqs x {CTX} cached tokens, {HQ}/{HK} heads x {DH}"
    rows = [{"name": name + ": index_select + SDPA (transformers' path)", "unit": "ms",
             "value": round(measure(lambda: _gather_decode(q, kc, vc, slots), device, reps=reps).median_ms, 3)}]
    if device.type == "ocl":
        cu = torch.arange(SEQS + 1, dtype=torch.int32, device=device)
        lens = torch.full((SEQS,), CTX, dtype=torch.int32, device=device)
        fn = lambda: torch.ops.torch_ocl.paged_attention(q, kc, vc, bt, cu, lens, DH ** -0.5)  # noqa: E731
        rows.append({"name": name + ": torch_ocl.paged_attention (native)", "unit": "ms",
                     "value": round(measure(fn, device, reps=reps).median_ms, 3)})
    return rows


def _cb_rows(device, quick, native=False) -> List[Dict]:
    import os
    import tempfile

    from transformers import AutoModelForCausalLM, ContinuousBatchingConfig, GenerationConfig

    from ..serving import tiny

    new = 16 if quick else 64
    path = os.path.join(tempfile.gettempdir(), f"torch_ocl_bench_tiny_llama_{os.getuid()}")
    if not os.path.exists(os.path.join(path, "config.json")):
        tiny.build(path, "llama")
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device).eval()
    tok = tiny.tokenizer()
    prompts = [tok(f"request {i}: the quick brown fox")["input_ids"] for i in range(8)]
    gen = GenerationConfig(max_new_tokens=new, do_sample=False, eos_token_id=-1, pad_token_id=0)
    cb = ContinuousBatchingConfig(page_size=256, num_blocks=16, max_batch_tokens=512)
    from ..serving import attention

    if native:  # as `python -m torch_ocl serve` runs it on ocl
        attention.enable()
    best = None
    for _ in range(1 if quick else 2):  # the first pass also builds kernels
        t0 = time.perf_counter()
        outs = model.generate_batch(prompts, generation_config=gen, continuous_batching_config=cb,
                                    record_timestamps=True, progress_bar=False)
        wall = time.perf_counter() - t0
        ntok = sum(len(o.generated_tokens) for o in outs.values())
        ttft = statistics.median(o.timestamps[0] - o.created_time for o in outs.values() if o.timestamps)
        if best is None or wall < best[0]:
            best = (wall, ntok, ttft)
    if native:
        attention.disable()
    wall, ntok, ttft = best
    name = f"continuous batching, tiny Llama, 8 concurrent requests x {new} new tokens"
    if native:
        name += " (torch_ocl attention, as serve runs it)"
    return [{"name": name + ": throughput", "unit": "tokens/s", "value": round(ntok / wall, 1)},
            {"name": name + ": time to first token (median)", "unit": "ms", "value": round(ttft * 1e3, 1)}]


def run(device: torch.device, quick: bool) -> List[Dict]:
    if device.type not in ("cpu", "ocl"):
        return []
    rows = _decode_rows(device, quick) + _cb_rows(device, quick)
    if device.type == "ocl":
        rows += _cb_rows(device, quick, native=True)
    return rows
