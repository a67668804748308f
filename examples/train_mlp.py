"""Train a small MLP on the ocl device: the one-string change is `.to("ocl")`.

Prints the device, trains with a progress bar, checks the loss fell, and
reports which ops still ran on the CPU through the visible fallback.
"""

import argparse
import time

import torch
import torch.nn as nn
from tqdm import tqdm

import torch_ocl


def make_data(n: int, generator: torch.Generator):
    # Two interleaved spirals: not linearly separable, so the MLP must learn.
    t = torch.rand(n, generator=generator) * 2 * torch.pi
    label = torch.randint(0, 2, (n,), generator=generator)
    r = 0.2 + t / (2 * torch.pi)
    angle = t + label * torch.pi
    x = torch.stack([r * torch.cos(angle), r * torch.sin(angle)], dim=1)
    x = x + 0.02 * torch.randn(x.shape, generator=generator)
    return x, label


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--device", default="ocl")
    args = ap.parse_args()

    device = torch.device(args.device)
    if device.type == "ocl":
        props = torch.ocl.get_device_properties(device)
        print(f"device: {device} = {props.name} ({props.platform_name} {props.driver_version}), "
              f"{props.compute_units} compute units, {props.total_memory / 2**30:.1f} GiB")
        # The demo shows the count at the end instead of one warning per op.
        torch_ocl.set_fallback_policy("silent")
        torch_ocl.reset_fallback_stats()

    g = torch.Generator().manual_seed(0)
    x, y = make_data(4096, g)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.CrossEntropyLoss()

    first = last = None
    start = time.perf_counter()
    bar = tqdm(range(args.steps), desc=f"training on {device}", unit="step")
    for step in bar:
        idx = torch.randint(0, x.shape[0], (args.batch,), generator=g).to(device)
        loss = loss_fn(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            last = loss.item()
            first = last if first is None else first
            bar.set_postfix(loss=f"{last:.4f}")
    elapsed = time.perf_counter() - start

    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    print(f"loss {first:.4f} -> {last:.4f}, accuracy {acc:.3f}, {args.steps / elapsed:.1f} steps/s")
    if device.type == "ocl":
        stats = torch_ocl.fallback_stats()
        native = "all ops native" if not stats else f"{len(stats)} op(s) ran on the CPU fallback:"
        print(native)
        for name, n in sorted(stats.items(), key=lambda kv: -kv[1]):
            print(f"  {name}: {n} calls")
    if not last < first:
        raise SystemExit("training did not reduce the loss")


if __name__ == "__main__":
    main()
