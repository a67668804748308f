"""Train a small GPT-style character model on the ocl device, then sample text.

A decoder-only transformer (token and position embeddings, pre-norm blocks
with causal scaled_dot_product_attention and a GELU MLP, tied output head)
trained with AdamW under bfloat16 autocast and gradient clipping on the text
in examples/data/river.txt. The full setting has about 10M parameters; the
demo and test settings are smaller so they finish in seconds on a CPU-backed
OpenCL device.

    python examples/train_gpt.py [--preset full|demo|test] [--steps N] [--device ocl|cpu] [--profile PATH]
    torchrun --standalone --nproc-per-node=2 examples/train_gpt.py --parallel ddp|fsdp

--parallel trains data-parallel over the ranks torchrun starts (rank r on
ocl:LOCAL_RANK, collectives through the oclgloo backend): each rank takes its
slice of the same global batch, so the loss curve is the single-process one.

--profile PATH profiles one training step (the third, after kernels are
built) with torch.profiler, writes its Chrome trace to PATH (open it in
Perfetto or chrome://tracing) and prints the busiest ops.
"""

import argparse
import contextlib
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import compiled, describe, loss_progress, quiet_fallbacks, report_fallbacks, require_progress  # noqa: E402,E501

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "river.txt")

# name: (width, layers, heads, context, batch, steps, lr)
PRESETS = {
    "full": (384, 6, 6, 128, 16, 300, 1e-3),   # ~10.7M parameters
    "demo": (128, 2, 4, 64, 16, 120, 3e-3),
    "test": (64, 2, 2, 32, 8, 6, 3e-3),
}


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, width, layers, heads, context):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied embeddings
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def load_text():
    with open(TEXT, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    data = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
    return chars, data


@torch.no_grad()
def sample(model, chars, device, n, prompt="The river"):
    idx = torch.tensor([[chars.index(c) for c in prompt]], device=device)
    for _ in range(n):
        logits = model(idx[:, -model.context:])[:, -1].float()
        nxt = torch.multinomial(F.softmax(logits / 0.8, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return "".join(chars[i] for i in idx[0].tolist())


def profiled(device, path, fn):
    """Run fn under torch.profiler (CPU ops, and ocl kernels and copies);
    write the Chrome trace to path and print the busiest ops."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.PrivateUse1] if device.type == "ocl" else [])
    with profile(activities=acts) as prof:
        fn()
    prof.export_chrome_trace(path)
    key = "self_device_time_total" if device.type == "ocl" else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=key, row_limit=15))
    print(f"Chrome trace of one step written to {path}")


def init_parallel(device):
    """Join the process group torchrun describes (RANK, WORLD_SIZE,
    LOCAL_RANK, MASTER_ADDR/PORT in the environment); return the rank's
    device, rank and world size."""
    import torch.distributed as dist

    if "RANK" not in os.environ:
        sys.exit("--parallel needs the environment torchrun sets: "
                 "torchrun --standalone --nproc-per-node=2 examples/train_gpt.py --parallel ddp")
    local = int(os.environ.get("LOCAL_RANK", 0))
    if device.type != "cpu":
        device = torch.device(device.type, local)
        torch.accelerator.set_device_index(local)
    # No backend named: the device's default (ocl -> oclgloo, for CPU tensors too).
    dist.init_process_group(device_id=device if device.type != "cpu" else None)
    return device, dist.get_rank(), dist.get_world_size()


def wrap_parallel(model, mode, device):
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        return DDP(model, device_ids=[device.index] if device.type != "cpu" else None)
    from torch.distributed.fsdp import fully_shard

    for blk in model.blocks:
        fully_shard(blk)
    return fully_shard(model)


def train(device="ocl", preset="demo", steps=None, amp=True, progress=True, seed=0, sample_chars=0,
          profile_path=None, compile=False, parallel=None, on_step=None):
    """Train; return the list of per-step losses (and print a sample if asked).
    on_step(step, loss): called after each step (the soak samples memory there).
    With profile_path, the third step (or the last, if fewer) is profiled.
    compile: run the model under torch.compile (backend "ocl" on ocl).
    parallel: "ddp" or "fsdp" inside a torchrun launch; losses are the
    global batch's (the mean over ranks)."""
    device = torch.device(device)
    rank, world = 0, 1
    if parallel:
        device, rank, world = init_parallel(device)
        progress = progress and rank == 0
    width, layers, heads, context, batch, default_steps, lr = PRESETS[preset]
    steps = steps or default_steps
    chars, data = load_text()
    torch.manual_seed(seed)
    model = GPT(len(chars), width, layers, heads, context)
    n_params = sum(p.numel() for p in model.parameters())
    model = model.to(device)
    if parallel:
        assert batch % world == 0, f"the batch of {batch} does not split over {world} ranks"
        model = wrap_parallel(model, parallel, device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    fwd = compiled(model, device) if compile else model
    g = torch.Generator().manual_seed(seed)
    losses = []
    bar = tqdm(range(steps), desc=f"GPT {n_params / 1e6:.2f}M params on {device}", unit="step",
               disable=not progress)
    profile_step = min(2, steps - 1) if profile_path else -1

    def one_step(step):
        starts = torch.randint(0, len(data) - context - 1, (batch,), generator=g)
        starts = starts.chunk(world)[rank]  # this rank's slice of the global batch
        x = torch.stack([data[s:s + context] for s in starts]).to(device)
        y = torch.stack([data[s + 1:s + context + 1] for s in starts]).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16) if amp else contextlib.nullcontext():
            logits = fwd(x)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # cosine learning-rate decay to a tenth
        for grp in opt.param_groups:
            grp["lr"] = lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps)))
        opt.step()
        if world > 1:
            loss = loss.detach().clone()
            torch.distributed.all_reduce(loss, op=torch.distributed.ReduceOp.AVG)
        losses.append(loss.item())

    for step in bar:
        if step == profile_step:
            profiled(device, profile_path, lambda: one_step(step))
        else:
            one_step(step)
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if on_step:
            on_step(step, losses[-1])
    if parallel:
        torch.distributed.destroy_process_group()
    elif sample_chars:
        model.eval()
        print("sample:", repr(sample(model, chars, device, sample_chars)))
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="full")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--device", default="ocl")
    ap.add_argument("--no-amp", action="store_true", help="train in float32 instead of bfloat16 autocast")
    ap.add_argument("--compile", action="store_true", help="run the model under torch.compile")
    ap.add_argument("--profile", metavar="PATH", help="profile one step; write its Chrome trace to PATH")
    ap.add_argument("--parallel", choices=["ddp", "fsdp"], help="data-parallel over torchrun's ranks")
    ap.add_argument("--losses-json", metavar="PATH", help="write the per-step losses to PATH (rank 0)")
    args = ap.parse_args()
    device = torch.device(args.device)
    describe(device)
    quiet_fallbacks(device)
    t0 = time.perf_counter()
    losses = train(device, args.preset, args.steps, amp=not args.no_amp, sample_chars=120, profile_path=args.profile,
                   compile=args.compile, parallel=args.parallel)
    elapsed = time.perf_counter() - t0
    if args.parallel and int(os.environ.get("RANK", 0)) != 0:
        return
    if args.losses_json:
        import json

        with open(args.losses_json, "w") as f:
            json.dump(losses, f)
    first, last, k = loss_progress(losses)
    print(f"loss {first:.3f} -> {last:.3f} (mean of first and last {k} steps), "
          f"{len(losses) / elapsed:.2f} steps/s")
    report_fallbacks(device)
    require_progress(first, last)


if __name__ == "__main__":
    main()
