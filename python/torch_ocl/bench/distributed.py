"""Distributed benchmarks: two ranks on ocl:0 and ocl:1 over loopback.

- All-reduce bus bandwidth, 1 KiB to 64 MiB: ocl tensors through oclgloo
  (with and without the cross-rank agreement check) against Gloo on CPU
  tensors of the same size, alternating in one run.
- A DDP train step on 2 ranks: the share of all-reduce time hidden behind
  backward (from the backend's timeline), and the step time against the
  same model trained locally on each rank with the same per-rank batch
  (both ranks busy in both cases, so contention is the same).
"""

import os
import statistics
import tempfile
import time
from typing import Dict, List

import torch

KIB = 1024


def _sizes(quick):
    top = 4 * KIB * KIB if quick else 64 * KIB * KIB
    s, out = KIB, []
    while s <= top:
        out.append(s)
        s *= 4
    return out


def _time(fn, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _busbw(nbytes, seconds, ws):
    return nbytes * 2 * (ws - 1) / ws / seconds / 1e9


def _allreduce_rows(rank, ws, quick):
    import torch.distributed as dist

    dev = torch.device("ocl", rank)
    os.environ["TORCH_OCL_DIST_CHECK"] = "0"
    unchecked = dist.new_group(backend="cpu:gloo,ocl:oclgloo")
    os.environ.pop("TORCH_OCL_DIST_CHECK")
    rows = []
    for nbytes in _sizes(quick):
        n = nbytes // 4
        cpu, ocl = torch.ones(n), torch.ones(n, device=dev)
        reps = 20 if nbytes <= 256 * KIB else (8 if nbytes <= 4 * KIB * KIB else 4)
        times = {"cpu": [], "ocl": [], "ocl_unchecked": []}
        for fn in (lambda: dist.all_reduce(cpu), lambda: dist.all_reduce(ocl),
                   lambda: dist.all_reduce(ocl, group=unchecked)):
            fn()  # warm-up: connections, kernels, staging buffers
        for _ in range(reps):  # alternate, so load changes hit all three alike
            times["cpu"].append(_time(lambda: dist.all_reduce(cpu), 1))
            times["ocl"].append(_time(lambda: dist.all_reduce(ocl), 1))
            times["ocl_unchecked"].append(_time(lambda: dist.all_reduce(ocl, group=unchecked), 1))
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append({"bytes": nbytes, **{f"{k}_ms": round(v * 1e3, 3) for k, v in med.items()},
                     **{f"{k}_busbw_gbs": round(_busbw(nbytes, v, ws), 3) for k, v in med.items()},
                     "ratio": round(med["cpu"] / med["ocl"], 3),
                     "ratio_unchecked": round(med["cpu"] / med["ocl_unchecked"], 3)})
    return rows


def _union(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def _ddp_rows(rank, ws, quick):
    import copy

    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = torch.device("ocl", rank)
    width, depth, batch = (256, 6, 32) if quick else (512, 8, 64)
    torch.manual_seed(0)
    base = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU()) for _ in range(depth)])
    local, ddp_model = copy.deepcopy(base).to(dev), copy.deepcopy(base).to(dev)
    ddp = DDP(ddp_model, device_ids=[rank], bucket_cap_mb=1)
    opt_l = torch.optim.SGD(local.parameters(), lr=1e-3)
    opt_d = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device=dev)
    backend = dist.group.WORLD._get_backend(dev)

    def step(m, opt):
        opt.zero_grad(set_to_none=True)
        m(x).square().mean().backward()
        opt.step()
        torch.ocl.synchronize()

    for _ in range(3):
        step(local, opt_l)
        step(ddp, opt_d)
    reps = 5 if quick else 10
    t_local, t_ddp, hidden = [], [], []
    for _ in range(reps):
        dist.barrier()
        t_local.append(_time(lambda: step(local, opt_l), 1))
        dist.barrier()
        backend._timeline(clear=True)
        t_ddp.append(_time(lambda: step(ddp, opt_d), 1))
        spans = [s for s in backend._timeline() if s[0] == "oclgloo:all_reduce"]
        if spans:
            # A bucket is issued once its gradients exist on the device: the
            # last issue is when backward's last gradient was ready.
            compute_end = max(s[2] for s in spans)
            comm = [(s[2], s[3]) for s in spans]
            before = [(a, min(b, compute_end)) for a, b in comm if a < compute_end]
            total = _union(comm)
            hidden.append(_union(before) / total if total else 0.0)
    return [{"name": f"DDP train step, {depth}x Linear({width}) + GELU, batch {batch} per rank, 2 ranks",
             "local_ms": round(statistics.median(t_local) * 1e3, 2),
             "ddp_ms": round(statistics.median(t_ddp) * 1e3, 2),
             "scaling_efficiency": round(statistics.median(t_local) / statistics.median(t_ddp), 3),
             "hidden_share": round(statistics.median(hidden), 3) if hidden else None,
             "buckets": len(spans)}]


def _world(rank, ws, quick, out_path):
    import json

    import torch.distributed as dist

    torch.ocl.set_device(rank)
    rows = {"allreduce": _allreduce_rows(rank, ws, quick), "ddp": _ddp_rows(rank, ws, quick)}
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(rows, f)
    dist.barrier()


def _entry(rank, ws, store, quick, out_path):
    import datetime

    import torch.distributed as dist

    torch.ocl.set_device(rank)
    dist.init_process_group("cpu:gloo,ocl:oclgloo", init_method=f"file://{store}", rank=rank, world_size=ws,
                            timeout=datetime.timedelta(seconds=300))
    try:
        _world(rank, ws, quick, out_path)
    finally:
        dist.destroy_process_group()


def run(device: torch.device, quick: bool) -> List[Dict]:
    """Once, on ocl:0 (the world uses ocl:0 and ocl:1)."""
    import json

    import torch.multiprocessing as mp

    if device.type != "ocl" or device.index not in (0, None) or torch.ocl.device_count() < 2:
        return []
    if not torch.distributed.is_available():
        return []
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    with tempfile.TemporaryDirectory(prefix="tocl-bench-dist-") as tmp:
        out = os.path.join(tmp, "rows.json")
        mp.start_processes(_entry, args=(2, os.path.join(tmp, "store"), quick, out), nprocs=2,
                           start_method="spawn")
        with open(out) as f:
            rows = json.load(f)
    return [{"kind": "allreduce", **r} for r in rows["allreduce"]] + [{"kind": "ddp", **r} for r in rows["ddp"]]


def _size(n):
    return f"{n // (KIB * KIB)} MiB" if n >= KIB * KIB else f"{n // KIB} KiB"


def markdown(rows: List[Dict]) -> List[str]:
    if not rows:
        return []
    out = ["| all-reduce, float32 | CPU Gloo ms | ocl ms | ocl ms, no agreement check | CPU busbw GB/s | "
           "ocl busbw GB/s | ocl / CPU Gloo | same, no check | goal (>= 1 MiB) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    for r in (r for r in rows if r["kind"] == "allreduce"):
        goal = "" if r["bytes"] < KIB * KIB else ("met" if r["ratio"] >= 0.8 else "not met")
        out.append(f"| {_size(r['bytes'])} | {r['cpu_ms']} | {r['ocl_ms']} | {r['ocl_unchecked_ms']} | "
                   f"{r['cpu_busbw_gbs']} | {r['ocl_busbw_gbs']} | {r['ratio']:.2f}x | "
                   f"{r['ratio_unchecked']:.2f}x | {goal} |")
    ddp = [r for r in rows if r["kind"] == "ddp"]
    if ddp:
        out += ["", "| DDP workload | 1 rank (local) ms | 2 ranks (DDP) ms | local / DDP | all-reduce hidden "
                "behind backward | goal (hidden) |", "|---|---:|---:|---:|---:|:-:|"]
        for r in ddp:
            h = r["hidden_share"]
            out.append(f"| {r['name']} ({r['buckets']} buckets) | {r['local_ms']} | {r['ddp_ms']} | "
                       f"{r['scaling_efficiency']:.2f} | {'' if h is None else f'{h:.0%}'} | "
                       f"{'' if h is None else ('met' if h > 0.5 else 'not met')} (> 50%) |")
    return out
