"""Train a small MLP on the ocl device: the one-string change is `.to("ocl")`.

Prints the device, trains with a progress bar, checks the loss fell, and
reports which ops still ran on the CPU through the visible fallback.

    python examples/train_mlp.py [--steps N] [--device ocl|cpu]
"""

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
from tqdm import tqdm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import compiled, describe, quiet_fallbacks, report_fallbacks, require_progress  # noqa: E402


def make_data(n: int, generator: torch.Generator):
    # Two interleaved spirals: not linearly separable, so the MLP must learn.
    t = torch.rand(n, generator=generator) * 2 * torch.pi
    label = torch.randint(0, 2, (n,), generator=generator)
    r = 0.2 + t / (2 * torch.pi)
    angle = t + label * torch.pi
    x = torch.stack([r * torch.cos(angle), r * torch.sin(angle)], dim=1)
    x = x + 0.02 * torch.randn(x.shape, generator=generator)
    return x, label


def train(device="ocl", steps=300, batch=256, progress=True, seed=0, compile=False):
    """Train; return (per-step losses, accuracy on the whole data set).
    compile: run the model under torch.compile (backend "ocl" on ocl)."""
    device = torch.device(device)
    g = torch.Generator().manual_seed(seed)
    x, y = make_data(4096, g)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.CrossEntropyLoss()
    fwd = compiled(model, device) if compile else model
    losses = []
    bar = tqdm(range(steps), desc=f"MLP on {device}", unit="step", disable=not progress)
    for step in bar:
        idx = torch.randint(0, x.shape[0], (batch,), generator=g).to(device)
        loss = loss_fn(fwd(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 10 == 0:
            bar.set_postfix(loss=f"{losses[-1]:.4f}")
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    return losses, acc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--device", default="ocl")
    ap.add_argument("--compile", action="store_true", help="run the model under torch.compile")
    args = ap.parse_args()
    device = torch.device(args.device)
    describe(device)
    quiet_fallbacks(device)
    start = time.perf_counter()
    losses, acc = train(device, args.steps, args.batch, compile=args.compile)
    elapsed = time.perf_counter() - start
    first, last = losses[0], losses[-1]
    print(f"loss {first:.4f} -> {last:.4f}, accuracy {acc:.3f}, {args.steps / elapsed:.1f} steps/s")
    report_fallbacks(device)
    require_progress(first, last)


if __name__ == "__main__":
    main()
