"""Train a ResNet-18 style CNN on 32x32 images on the ocl device, then evaluate.

The network is ResNet-18's layout for CIFAR-sized inputs (3x3 stem, four
stages of two basic blocks with batch norm, global average pool, linear
head); `--width 64` is the real ResNet-18 (11M parameters), the demo and test
settings use narrower stages. The data are synthetic images: each class is a
coloured oriented stripe pattern plus noise, so the network must learn
spatial filters. SGD with momentum and weight decay; evaluation in eval mode
(running batch-norm statistics).

    python examples/train_cnn.py [--preset full|demo|test] [--steps N] [--device ocl|cpu]
"""

import argparse
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

# name: (width, batch, steps, lr)
PRESETS = {
    "full": (64, 64, 100, 0.05),
    "demo": (16, 32, 60, 0.05),
    "test": (4, 8, 4, 0.05),
}
CLASSES = 10


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.short(x))


class ResNet18(nn.Module):
    def __init__(self, width=64, classes=CLASSES):
        super().__init__()
        w = [width, 2 * width, 4 * width, 8 * width]
        self.stem = nn.Sequential(nn.Conv2d(3, w[0], 3, 1, 1, bias=False), nn.BatchNorm2d(w[0]), nn.ReLU())
        layers, cin = [], w[0]
        for i, cout in enumerate(w):
            layers += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(w[3], classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def make_images(n, generator):
    """Class c: stripes at angle c*pi/10 with a class colour, random phase, noise."""
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    yy, xx = torch.meshgrid(torch.arange(32.0), torch.arange(32.0), indexing="ij")
    angle = labels.float() * math.pi / CLASSES
    phase = torch.rand(n, generator=generator) * 2 * math.pi
    proj = xx * torch.cos(angle)[:, None, None] + yy * torch.sin(angle)[:, None, None]
    stripes = torch.sin(proj * 0.8 + phase[:, None, None])
    colour = torch.stack([torch.cos(angle), torch.sin(angle), torch.cos(2 * angle)], 1)
    img = stripes[:, None] * colour[:, :, None, None]
    img = img + 0.5 * torch.randn(img.shape, generator=generator)
    return img, labels


def train(device="ocl", preset="demo", steps=None, progress=True, seed=0, eval_images=256, compile=False):
    """Train; return (per-step losses, eval accuracy).
    compile: run the model under torch.compile (backend "ocl" on ocl)."""
    device = torch.device(device)
    width, batch, default_steps, lr = PRESETS[preset]
    steps = steps or default_steps
    torch.manual_seed(seed)
    model = ResNet18(width)
    n_params = sum(p.numel() for p in model.parameters())
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    fwd = compiled(model, device) if compile else model
    bar = tqdm(range(steps), desc=f"ResNet-18 (width {width}, {n_params / 1e6:.2f}M params) on {device}",
               unit="step", disable=not progress)
    for _ in bar:
        x, y = make_images(batch, g)
        loss = F.cross_entropy(fwd(x.to(device)), y.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
    model.eval()
    x, y = make_images(eval_images, torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        acc = (model(x.to(device)).argmax(1).cpu() == y).float().mean().item()
    return losses, acc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="demo")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--device", default="ocl")
    ap.add_argument("--compile", action="store_true", help="run the model under torch.compile")
    args = ap.parse_args()
    device = torch.device(args.device)
    describe(device)
    quiet_fallbacks(device)
    t0 = time.perf_counter()
    losses, acc = train(device, args.preset, args.steps, compile=args.compile)
    elapsed = time.perf_counter() - t0
    first, last, _ = loss_progress(losses)
    print(f"loss {first:.3f} -> {last:.3f}, eval accuracy {acc:.3f} (chance {1 / CLASSES:.2f}), "
          f"{len(losses) / elapsed:.2f} steps/s")
    report_fallbacks(device)
    require_progress(first, last)


if __name__ == "__main__":
    main()
