"""Fused eager against strict eager on one ocl device, measured side by side.

Each workload runs in both modes, alternating strict and fused repetition by
repetition so that machine noise hits both alike; the figure is the ratio of
the medians (strict time / fused time, so > 1 means fused is faster). Fused
kernels are built during warm-up (the builder thread is waited for), as in
the steady state of a training loop.
"""

import copy
import statistics
import time
from typing import Callable, Dict, List

import torch
import torch.nn as nn

from .. import fusion
from .models import TinyGPT
from .timing import synchronize


# Arithmetic with scalars and cheap activations (no libm call): what a
# model's glue code does between matmuls.
_CHEAP = [lambda x: x * 1.0001, lambda x: x + 0.001, torch.relu, lambda x: x * 0.5, lambda x: x - 0.25,
          torch.abs, lambda x: x.clamp(-2, 2), lambda x: x * x, lambda x: x + 0.1, lambda x: torch.maximum(x, -x)]
# The same with one libm activation in five (tanh, sigmoid).
_LIBM = [lambda x: x * 1.0001, lambda x: x + 0.001, torch.tanh, lambda x: x * 0.5, lambda x: x + 0.25,
         torch.sigmoid, lambda x: x - 0.1, torch.abs, torch.relu, lambda x: x * x]


def _chain50(x, ops=_CHEAP):
    """50 pointwise ops cycling through `ops`."""
    for k in range(50):
        x = ops[k % len(ops)](x)
    return x


def _timed(fn, device) -> float:
    synchronize(device)
    t0 = time.perf_counter()
    fn()
    synchronize(device)
    return (time.perf_counter() - t0) * 1e3


def compare(fn: Callable[[], object], device, reps: int, warmup: int = 2) -> Dict:
    """Median ms of fn in strict and fused mode, alternating."""
    with fusion.eager_mode("fused"):
        for _ in range(warmup):
            fn()
        synchronize(device)
        fusion.wait_for_builds()
        fn()
    with fusion.eager_mode("strict"):
        for _ in range(warmup):
            fn()
    strict, fused = [], []
    for _ in range(reps):
        with fusion.eager_mode("strict"):
            strict.append(_timed(fn, device))
        with fusion.eager_mode("fused"):
            fusion.reset_fusion_stats()
            fused.append(_timed(fn, device))
            stats = fusion.fusion_stats()
    s, f = statistics.median(strict), statistics.median(fused)
    return {"strict_ms": round(s, 3), "fused_ms": round(f, 3), "speedup": round(s / f, 3) if f else None,
            "spread_strict": round((max(strict) - min(strict)) / s, 3) if s else 0.0,
            "spread_fused": round((max(fused) - min(fused)) / f, 3) if f else 0.0,
            "kernels_fused_mode": stats["kernels_launched"], "ops_recorded": stats["ops_recorded"],
            "reductions_fused": stats["reductions_fused"],
            "ops_run_separately": stats["ops_run_separately"]}


def run(device: torch.device, quick: bool) -> List[Dict]:
    if device.type != "ocl":
        return []
    torch.manual_seed(0)
    reps = 3 if quick else 7
    rows = []

    n = (1 << 20) if quick else (4 << 20)  # 16 MiB of float32 in the full run
    x = torch.randn(n, device=device)
    keep = []  # the result stays alive, so fused mode must store it

    for label, ops, goal in (("arithmetic and relu/abs/clamp", _CHEAP, 2.0),
                             ("with 10 tanh/sigmoid among them", _LIBM, None)):
        def chain(ops=ops):
            keep[:] = [_chain50(x, ops)]
        rows.append({"name": f"50 pointwise ops ({label}), {n * 4 >> 20} MiB float32", "goal": goal,
                     **compare(chain, device, reps)})

    y = torch.randn(n, device=device)
    out = []

    def sq_diff_mean():
        out[:] = [((x - y) ** 2).mean()]
    rows.append({"name": f"((x - y) ** 2).mean() (reduction with a pointwise prologue), {n * 4 >> 20} MiB float32",
                 "goal": None, **compare(sq_diff_mean, device, reps)})

    gpt = TinyGPT(d=128 if quick else 256, layers=2 if quick else 4).to(device)
    for p in gpt.parameters():
        p.grad = torch.randn_like(p) * 1e-3
    opt = torch.optim.AdamW(gpt.parameters(), lr=1e-4, foreach=True)
    rows.append({"name": f"AdamW step, GPT-style model ({sum(p.numel() for p in gpt.parameters()) / 1e6:.1f}M "
                 "params, foreach)", "goal": 1.5, **compare(opt.step, device, reps)})

    def train_step(model, opt, x, y, loss_fn):
        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
        return step

    gpt2 = copy.deepcopy(gpt)
    opt2 = torch.optim.AdamW(gpt2.parameters(), lr=1e-4, foreach=True)
    idx = torch.randint(0, 1024, (4 if quick else 8, 64 if quick else 128), device=device)
    ce = lambda logits, y: nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())  # noqa: E731
    rows.append({"name": "GPT-style train step", "goal": 1.3,
                 **compare(train_step(gpt2, opt2, idx, idx, ce), device, reps)})

    mlp = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 10))
    mlp = mlp.to(device)
    xm, ym = torch.randn(128, 512, device=device), torch.randint(0, 10, (128,), device=device)
    rows.append({"name": "MLP train step (SGD momentum)", "goal": 0.95,
                 **compare(train_step(mlp, torch.optim.SGD(mlp.parameters(), lr=1e-2, momentum=0.9, foreach=True),
                                      xm, ym, nn.functional.cross_entropy), device, reps)})

    cnn = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1),
                        nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
    cnn = cnn.to(device)
    xc, yc = torch.randn(16, 3, 32, 32, device=device), torch.randint(0, 10, (16,), device=device)
    rows.append({"name": "CNN train step (conv, batch norm, SGD)", "goal": 0.95,
                 **compare(train_step(cnn, torch.optim.SGD(cnn.parameters(), lr=1e-2, momentum=0.9, foreach=True),
                                      xc, yc, nn.functional.cross_entropy), device, reps)})
    return rows


def markdown(rows: List[Dict]) -> List[str]:
    """The fused-vs-strict table (goal: the least speedup asked; 0.95 = at most 5% slower; none: reported only)."""
    if not rows:
        return []
    out = ["| workload | strict ms | fused ms | speedup | goal | met | elementwise kernels per run (fused) | "
           "reductions with a fused prologue |",
           "|---|---:|---:|---:|---:|:-:|---:|---:|"]
    for r in rows:
        goal = r.get("goal")
        met = "" if goal is None else ("yes" if r["speedup"] is not None and r["speedup"] >= goal else "no")
        goal_s = "" if goal is None else f"{goal:.2f}x"
        out.append(f"| {r['name']} | {r['strict_ms']:.3f} | {r['fused_ms']:.3f} | {r['speedup']:.2f}x | "
                   f"{goal_s} | {met} | {r['kernels_fused_mode']} | {r.get('reductions_fused', 0)} |")
    return out
