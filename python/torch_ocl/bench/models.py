"""Model figures: the same model code, weights and inputs on every device."""

import copy
from typing import Dict, List

import torch
import torch.nn as nn

from .micro import _fallbacks_during
from .timing import measure


class TinyGPT(nn.Module):
    """A GPT-style decoder: embeddings, pre-norm causal self-attention blocks, LM head."""

    def __init__(self, vocab=1024, d=256, layers=4, heads=4, ctx=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        h = self.blocks(self.tok(idx) + self.pos(pos), mask=mask, is_causal=True)
        return self.head(self.norm(h))

    def forward_cached(self, idx, cache=None, start: int = 0):
        """Decoding with a KV cache, on the same weights as forward: idx holds
        the tokens at positions start.. (batch 1), cache each block's keys and
        values so far (None for the prompt). Returns the last position's
        logits and the grown cache: forward's tokens, one position at a time."""
        t, d = idx.shape[1], self.tok.embedding_dim
        h = self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))
        grown = []
        for i, blk in enumerate(self.blocks.layers):
            a = blk.self_attn
            heads = a.num_heads
            q, k, v = nn.functional.linear(blk.norm1(h), a.in_proj_weight, a.in_proj_bias).chunk(3, -1)
            q, k, v = (z.view(1, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            if cache is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            grown.append((k, v))
            o = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
            h = h + a.out_proj(o.transpose(1, 2).reshape(1, t, d))
            h = h + blk.linear2(blk.activation(blk.linear1(blk.norm2(h))))
        return self.head(self.norm(h[:, -1])), grown


def _train_step(model, opt, x, y, loss_fn, amp=None):
    """One optimiser step; amp: the device type to run the forward under
    bfloat16 autocast (as a user would write it), None for float32."""
    def step():
        opt.zero_grad(set_to_none=True)
        if amp is None:
            loss = loss_fn(model(x), y)
        else:
            with torch.autocast(amp, dtype=torch.bfloat16):
                loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def _fig(name, unit, value, m, fb, items):
    return {"name": name, "value": value, "unit": unit, "method": m.method, "spread": round(m.spread, 3),
            "note": "", "fallback_ops": fb, "items_per_run": items, "limit": None}


def run(device: torch.device, quick: bool) -> List[Dict]:
    torch.manual_seed(0)
    reps = 3 if quick else 5
    figs = []

    # MLP train step.
    b = 256
    mlp = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    m_ = copy.deepcopy(mlp).to(device)
    x, y = torch.randn(b, 512).to(device), torch.randint(0, 10, (b,)).to(device)
    opt = torch.optim.SGD(m_.parameters(), lr=0.01)
    step = _train_step(m_, opt, x, y, nn.functional.cross_entropy)
    fb = _fallbacks_during(step, device)
    m = measure(step, device, reps=reps, use_events=False)
    figs.append(_fig(f"MLP train step (batch {b})", "samples/s", b / (m.median_ms * 1e-3), m, fb, b))

    # ResNet-18.
    try:
        import torchvision

        res = torchvision.models.resnet18(num_classes=10)
        hw = 64 if quick else 224
        bs = 4 if quick else 16
        r = copy.deepcopy(res).to(device)
        img = torch.randn(bs, 3, hw, hw).to(device)
        lbl = torch.randint(0, 10, (bs,)).to(device)
        opt = torch.optim.SGD(r.parameters(), lr=0.01, momentum=0.9)
        step = _train_step(r, opt, img, lbl, nn.functional.cross_entropy)
        fb = _fallbacks_during(step, device)
        m = measure(step, device, reps=reps, warmup=1, use_events=False)
        figs.append(_fig(f"ResNet-18 train step ({bs}x3x{hw}x{hw})", "images/s", bs / (m.median_ms * 1e-3), m, fb,
                         bs))
        # bfloat16 autocast: convolutions and products in bfloat16 (on a
        # host with AMX, the tile kernels on ocl and oneDNN's on the CPU)
        step = _train_step(r, opt, img, lbl, nn.functional.cross_entropy, amp=device.type)
        fb = _fallbacks_during(step, device)
        m = measure(step, device, reps=reps, warmup=1, use_events=False)
        figs.append(_fig(f"ResNet-18 train step ({bs}x3x{hw}x{hw}), bfloat16 autocast", "images/s",
                         bs / (m.median_ms * 1e-3), m, fb, bs))
        r.eval()
        with torch.no_grad():
            f = lambda: r(img)  # noqa: E731
            fb = _fallbacks_during(f, device)
            m = measure(f, device, reps=reps, warmup=1, use_events=False)
        figs.append(_fig(f"ResNet-18 inference ({bs}x3x{hw}x{hw})", "images/s", bs / (m.median_ms * 1e-3), m, fb,
                         bs))
    except ImportError:
        pass

    # GPT-style decoder: train step and greedy generation.
    ctx = 64 if quick else 128
    gpt = TinyGPT(d=128 if quick else 256, layers=2 if quick else 4, ctx=ctx + 32)
    g = copy.deepcopy(gpt).to(device)
    bs = 4 if quick else 8
    tokens = torch.randint(0, 1024, (bs, ctx + 1))
    x, y = tokens[:, :-1].to(device), tokens[:, 1:].to(device)
    opt = torch.optim.AdamW(g.parameters(), lr=1e-3)
    lm_loss = lambda logits, t: nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t.reshape(-1))  # noqa: E731
    step = _train_step(g, opt, x, y, lm_loss)
    fb = _fallbacks_during(step, device)
    m = measure(step, device, reps=reps, warmup=1, use_events=False)
    figs.append(_fig(f"GPT decoder train step ({bs}x{ctx} tokens)", "tokens/s", bs * ctx / (m.median_ms * 1e-3), m,
                     fb, bs * ctx))
    step = _train_step(g, opt, x, y, lm_loss, amp=device.type)
    fb = _fallbacks_during(step, device)
    m = measure(step, device, reps=reps, warmup=1, use_events=False)
    figs.append(_fig(f"GPT decoder train step ({bs}x{ctx} tokens), bfloat16 autocast", "tokens/s",
                     bs * ctx / (m.median_ms * 1e-3), m, fb, bs * ctx))
    g.eval()
    new = 8 if quick else 32
    for batch in (1, 8):
        prompt = tokens[:batch, :16].to(device)

        def generate():
            with torch.no_grad():
                seq = prompt
                for _ in range(new):
                    nxt = g(seq)[:, -1].argmax(-1, keepdim=True)
                    seq = torch.cat([seq, nxt], 1)
                return seq
        fb = _fallbacks_during(generate, device)
        m = measure(generate, device, reps=reps, warmup=1, use_events=False)
        figs.append(_fig(f"GPT greedy generation, batch {batch}", "tokens/s", batch * new / (m.median_ms * 1e-3), m,
                         fb, batch * new))

    # BERT-style encoder inference.
    d = 128 if quick else 256
    layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2 if quick else 4, enable_nested_tensor=False).eval()
    e = copy.deepcopy(enc).to(device)
    seqs = 8
    xs = torch.randn(seqs, 128, d).to(device)
    with torch.no_grad():
        f = lambda: e(xs)  # noqa: E731
        fb = _fallbacks_during(f, device)
        m = measure(f, device, reps=reps, warmup=1, use_events=False)
    figs.append(_fig(f"BERT-style encoder inference ({seqs}x128)", "sequences/s", seqs / (m.median_ms * 1e-3), m, fb,
                     seqs))
    return figs
