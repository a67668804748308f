"""Micro figures: bandwidth of a plain copy (the physical limit) and of
pointwise and reduction ops as a fraction of it, host cost per op, GEMM,
conv2d, SDPA and program-cache start-up."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

import torch

from .timing import measure, synchronize


def _fallbacks_during(fn, device):
    """Run fn; return the aten ops that left the device meanwhile (ocl only)."""
    if device.type != "ocl":
        fn()
        return []
    import torch_ocl

    old = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("silent")
    torch_ocl.reset_fallback_stats()
    try:
        fn()
        synchronize(device)
        return sorted(torch_ocl.fallback_stats())
    finally:
        torch_ocl.set_fallback_policy(old)


def _figure(name, value, unit, m=None, note="", fallbacks=(), limit=None):
    return {"name": name, "value": value, "unit": unit, "method": m.method if m else "host clock",
            "spread": round(m.spread, 3) if m else None, "note": note, "fallback_ops": list(fallbacks),
            "limit": limit}


def bandwidth(device, mib: int, reps: int) -> List[Dict]:
    n = mib * 2**20 // 4
    a = torch.rand(n, device=device)
    b = torch.rand(n, device=device)
    c = torch.empty(n, device=device)
    out = []
    m = measure(lambda: c.copy_(a), device, reps=reps, inner=3)
    copy = 2 * n * 4 / (m.median_ms * 1e-3) / 1e9
    out.append(_figure(f"copy {mib} MiB fp32", copy, "GB/s", m, "the device's practical bandwidth limit"))
    fb = _fallbacks_during(lambda: torch.add(a, b, out=c), device)
    m = measure(lambda: torch.add(a, b, out=c), device, reps=reps, inner=3)
    add = 3 * n * 4 / (m.median_ms * 1e-3) / 1e9
    out.append(_figure(f"add {mib} MiB fp32", add, "GB/s", m, f"{add / copy:.0%} of copy", fb, copy))
    fb = _fallbacks_during(lambda: a.sum(), device)
    m = measure(lambda: a.sum(), device, reps=reps, inner=3)
    red = n * 4 / (m.median_ms * 1e-3) / 1e9
    out.append(_figure(f"sum {mib} MiB fp32", red, "GB/s", m, f"{red / copy:.0%} of copy", fb, copy))
    return out


def host_cost(device, ops: int, mode: str = "", flush=None) -> List[Dict]:
    """Host time to queue one small op (no wait), and one op + synchronise.
    `mode` names the eager mode in the figure's name (ocl's default rows are
    strict); `flush`, when given, is timed with each chunk of ops, so fused
    eager's grouping and launching of the recorded ops counts, not only the
    recording."""
    x = torch.rand(1024, device=device)
    y = torch.rand(1024, device=device)
    z = torch.empty(1024, device=device)
    fb = _fallbacks_during(lambda: torch.add(x, y, out=z), device)
    for _ in range(200):
        torch.add(x, y, out=z)
    synchronize(device)
    chunks = []
    per = max(ops // 10, 1)
    for _ in range(10):
        t0 = time.perf_counter()
        for _ in range(per):
            torch.add(x, y, out=z)
        if flush:
            flush()
        chunks.append((time.perf_counter() - t0) / per * 1e6)
        synchronize(device)
    queued = statistics.median(chunks)
    samples = []
    for _ in range(200):
        t0 = time.perf_counter()
        torch.add(x, y, out=z)
        synchronize(device)
        samples.append((time.perf_counter() - t0) * 1e6)
    return [
        {"name": f"small op, queued (no wait){mode}", "value": queued, "unit": "us", "method": "host clock",
         "spread": round((max(chunks) - min(chunks)) / queued, 3) if queued else None,
         "note": f"median over {per * 10} ops", "fallback_ops": fb, "limit": None},
        {"name": f"small op + synchronize{mode}", "value": statistics.median(samples), "unit": "us",
         "method": "host clock", "spread": None, "note": "median over 200", "fallback_ops": fb, "limit": None},
    ]


def gemm(device, sizes, dtypes, reps) -> List[Dict]:
    out = []
    for dt in dtypes:
        for n in sizes:
            a = torch.rand(n, n, device=device, dtype=dt)
            b = torch.rand(n, n, device=device, dtype=dt)
            c = torch.empty(n, n, device=device, dtype=dt)
            try:
                fb = _fallbacks_during(lambda: torch.mm(a, b, out=c), device)
                m = measure(lambda: torch.mm(a, b, out=c), device, reps=reps, inner=1)
            except RuntimeError as e:  # e.g. a dtype the CPU build cannot multiply
                out.append(_figure(f"mm {n} {str(dt)[6:]}", None, "GFLOP/s", note=str(e)[:80]))
                continue
            out.append(_figure(f"mm {n} {str(dt)[6:]}", 2 * n**3 / (m.median_ms * 1e-3) / 1e9, "GFLOP/s", m,
                               fallbacks=fb))
    return out


def gemm_transformer(device, reps, quick) -> List[Dict]:
    """A transformer MLP projection: (tokens x 768) @ (768 x 3072), fp32."""
    m_, k, n = (1024 if quick else 4096), 768, 3072
    a = torch.rand(m_, k, device=device)
    b = torch.rand(k, n, device=device)
    c = torch.empty(m_, n, device=device)
    fb = _fallbacks_during(lambda: torch.mm(a, b, out=c), device)
    m = measure(lambda: torch.mm(a, b, out=c), device, reps=reps, inner=1)
    return [_figure(f"mm {m_}x{k}x{n} float32", 2 * m_ * k * n / (m.median_ms * 1e-3) / 1e9, "GFLOP/s", m,
                    fallbacks=fb)]


# ResNet-style convolutions (name, in ch, out ch, size, kernel, stride, groups),
# each forward and backward (input and weight gradients), and the 3x3 also
# with bfloat16 storage. Flops: 2 per multiply-add of the product, backward
# twice the forward.
CONV_ROWS = [("3x3 64ch 56x56", 64, 64, 56, 3, 1, 1), ("1x1 64->256ch 56x56", 64, 256, 56, 1, 1, 1),
             ("3x3 stride 2 128ch 56x56", 128, 128, 56, 3, 2, 1), ("3x3 depthwise 256ch 28x28", 256, 256, 28, 3, 1, 256),
             ("7x7 stride 2 stem 3->64ch 224x224", 3, 64, 224, 7, 2, 1)]


def conv(device, reps, quick) -> List[Dict]:
    out = []
    for name, cin, cout, hw, k, s, g in CONV_ROWS[:1] if quick else CONV_ROWS:
        b = 2 if quick else (2 if hw > 100 else 8)
        for dtype in (torch.float32, torch.bfloat16) if k == 3 and s == 1 and g == 1 else (torch.float32,):
            for backward in (False, True):
                x = torch.rand(b, cin, hw, hw, device=device, dtype=dtype, requires_grad=backward)
                w = torch.rand(cout, cin // g, k, k, device=device, dtype=dtype, requires_grad=backward)
                conv2d = lambda: torch.nn.functional.conv2d(x, w, stride=s, padding=k // 2, groups=g)  # noqa: E731
                f = conv2d
                if backward:
                    y = conv2d()
                    gy = torch.rand_like(y)
                    f = lambda: torch.autograd.grad(y, (x, w), gy, retain_graph=True)  # noqa: E731
                ho = (hw + 2 * (k // 2) - k) // s + 1
                flops = 2 * b * cout * (cin // g) * k * k * ho * ho * (2 if backward else 1)
                fb = _fallbacks_during(f, device)
                m = measure(f, device, reps=reps)
                label = f"conv2d {name} batch {b}" + (" backward" if backward else "") + \
                    (" bfloat16" if dtype == torch.bfloat16 else "")
                out.append(_figure(label, flops / (m.median_ms * 1e-3) / 1e9, "GFLOP/s", m, fallbacks=fb))
    return out


def conv_sdpa(device, reps, quick) -> List[Dict]:
    return conv(device, reps, quick) + sdpa(device, reps, quick)


# (L, d, causal, backward) of the attention rows, batch 2 x 8 heads.
SDPA_ROWS = [(512, 64, True, False), (128, 64, False, False), (2048, 64, True, False), (512, 128, False, False),
             (512, 64, True, True), (1024, 64, True, False), (2048, 128, False, False)]


def sdpa(device, reps, quick) -> List[Dict]:
    """scaled_dot_product_attention, q k v of [2, 8, L, d]. Flops count the products that
    a causal mask does not skip: 4 L^2 d per head forward (halved for causal), 2.5x that
    backward (five products)."""
    out = []
    for L, d, causal, backward in SDPA_ROWS[:2] if quick else SDPA_ROWS:
        if quick:
            L = min(L, 128)
        q, k, v = (torch.rand(2, 8, L, d, device=device, requires_grad=backward) for _ in range(3))
        F = torch.nn.functional.scaled_dot_product_attention
        if backward:
            o = F(q, k, v, is_causal=causal)
            go = torch.rand_like(o)
            f = lambda: torch.autograd.grad(o, (q, k, v), go, retain_graph=True)  # noqa: E731
        else:
            f = lambda: F(q, k, v, is_causal=causal)  # noqa: E731
        fb = _fallbacks_during(f, device)
        m = measure(f, device, reps=reps)
        flops = 4 * 2 * 8 * L * L * d * (0.5 if causal else 1) * (2.5 if backward else 1)
        name = "sdpa" + (" backward" if backward else "") + (" causal" if causal else "") + f" L={L} d={d}"
        out.append(_figure(name, flops / (m.median_ms * 1e-3) / 1e9, "GFLOP/s", m, fallbacks=fb))
    return out


def linalg_fft(device, reps, quick) -> List[Dict]:
    """Issue 21's figures: batched 64x64 Cholesky and solve, a batch of 4096-point
    complex FFTs, and a 1-second 16 kHz stft (n_fft 400, hop 160)."""
    out = []
    b = 16 if quick else 64
    g = torch.Generator().manual_seed(0)
    a = torch.randn(b, 64, 64, generator=g)
    spd = (a @ a.mT + 64 * torch.eye(64)).to(device)
    rhs = torch.randn(b, 64, 8, generator=g).to(device)
    for name, f in (("cholesky", lambda: torch.linalg.cholesky(spd)),
                    ("solve", lambda: torch.linalg.solve(spd, rhs))):
        fb = _fallbacks_during(f, device)
        m = measure(f, device, reps=reps)
        out.append(_figure(f"linalg.{name} {b}x64x64 float32", m.median_ms, "ms", m, fallbacks=fb))
    nb = 8 if quick else 64
    z = torch.randn(nb, 4096, dtype=torch.complex64, generator=g).to(device)
    f = lambda: torch.fft.fft(z)  # noqa: E731
    fb = _fallbacks_during(f, device)
    m = measure(f, device, reps=reps)
    out.append(_figure(f"fft {nb}x4096 complex64", 5 * nb * 4096 * 12 / (m.median_ms * 1e-3) / 1e9, "GFLOP/s", m,
                       "5 n log2 n flops per transform", fb))
    sig = torch.randn(16000, generator=g).to(device)
    win = torch.hann_window(400).to(device)
    f = lambda: torch.stft(sig, 400, 160, window=win, return_complex=True)  # noqa: E731
    fb = _fallbacks_during(f, device)
    m = measure(f, device, reps=reps)
    out.append(_figure("stft 1 s at 16 kHz, n_fft 400, hop 160", m.median_ms, "ms", m, fallbacks=fb))
    return out


_CHILD = ("import time, torch, torch_ocl\n"
          "t0 = time.perf_counter()\n"
          "x = torch.ones(1000, device='ocl', dtype=torch.float64) * 3 - 1\n"
          "torch.ocl.synchronize()\n"
          "print((time.perf_counter() - t0) * 1e3)\n"
          "torch_ocl.save_program_cache()\n")  # CPU devices save when builds go quiet, after this ends


def program_cache(device) -> List[Dict]:
    """First op of a fresh process: with an empty program cache, then warm."""
    if device.type != "ocl":
        return []
    env = dict(os.environ, TORCH_OCL_FALLBACK="silent")
    env["TORCH_OCL_DEVICES"] = str(device.index)
    with tempfile.TemporaryDirectory() as d:
        env["TORCH_OCL_CACHE_DIR"] = d
        runs = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
            runs.append(float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else None)
    return [_figure("first op in a process, cold program cache", runs[0], "ms", note="builds its programs"),
            _figure("first op in a process, warm program cache", runs[1], "ms", note="loads cached binaries")]


# The demo's first training step in a fresh process (examples/train_gpt.py,
# found from the repository root, where `make bench` runs).
_DEMO = ("import json, sys, time\n"
         "sys.path.insert(0, 'examples')\n"
         "import torch, torch_ocl, train_gpt\n"
         "marks = []\n"
         "t0 = time.perf_counter()\n"
         "train_gpt.train('ocl', 'demo', steps=2, progress=False, on_step=lambda *a: marks.append(time.perf_counter()))\n"
         "s = torch_ocl._C._program_stats()\n"
         "print(json.dumps({'first': marks[0] - t0, 'builds': s['builds'], 'disk_hits': s['disk_hits']}))\n"
         "torch_ocl.save_program_cache()\n")


def demo_first_step(device) -> List[Dict]:
    """Cold start as a new user meets it: the demo's first step with both
    program caches empty (ours and PoCL's); for comparison with programs saved
    at build time and with PoCL's whole opencl-c.h in every build (the old
    defaults); and again with the caches the first run left."""
    if device.type != "ocl" or not os.path.exists(os.path.join("examples", "train_gpt.py")):
        return []
    rows = []
    with tempfile.TemporaryDirectory() as d:
        base = dict(os.environ, TORCH_OCL_FALLBACK="silent", TORCH_OCL_DEVICES=str(device.index))
        runs = (("cold program caches", "cold", {}),
                ("cold program caches, saved at build time (TORCH_OCL_CACHE_SAVE=now)", "cold-now",
                 {"TORCH_OCL_CACHE_SAVE": "now"}),
                ("cold program caches, built behind the whole opencl-c.h (TORCH_OCL_LEAN_HEADER=0)", "cold-full",
                 {"TORCH_OCL_LEAN_HEADER": "0"}),
                ("warm program caches", "cold", {}))
        for label, sub, extra in runs:
            env = dict(base, TORCH_OCL_CACHE_DIR=os.path.join(d, sub, "tocl"),
                       POCL_CACHE_DIR=os.path.join(d, sub, "pocl"), **extra)
            r = subprocess.run([sys.executable, "-c", _DEMO], env=env, capture_output=True, text=True, timeout=600)
            out = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else None
            note = (f"{out['builds']} programs built, {out['disk_hits']} loaded" if out else r.stderr[-300:])
            rows.append(_figure(f"demo's first train step, {label}", out["first"] if out else None, "s",
                                note=note))
    return rows


def run(device, quick: bool) -> List[Dict]:
    # Kernel figures in strict eager mode on ocl: fused mode (the default)
    # would skip the repeated writes of c.copy_(a) that a later repetition
    # overwrites, and report bandwidth that no kernel achieved.
    # Host cost is also reported in fused mode, the default, where an op is
    # recorded and many are launched together (flushes included in the time);
    # on the CPU the same loop, so the row has a ratio.
    fused = " (fused eager, the default)"
    ops = 2000 if quick else 10000
    if device.type == "ocl":
        from .. import fusion

        with fusion.eager_mode("strict"):
            figs = _run(device, quick)
        with fusion.eager_mode("fused"):
            return figs + host_cost(device, ops, fused, flush=fusion.flush)[:1]
    return _run(device, quick) + host_cost(device, ops, fused)[:1]


def _run(device, quick: bool) -> List[Dict]:
    reps = 3 if quick else 7
    figs = bandwidth(device, 16 if quick else 64, reps)
    figs += host_cost(device, 2000 if quick else 10000)
    figs += gemm(device, [256, 512] if quick else [256, 512, 1024, 2048],
                 [torch.float32] if quick else [torch.float32, torch.bfloat16], reps)
    figs += gemm_transformer(device, reps, quick)
    figs += conv_sdpa(device, reps, quick)
    figs += linalg_fft(device, reps, quick)
    figs += program_cache(device)
    figs += demo_first_step(device)
    return figs
