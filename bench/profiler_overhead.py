"""Host cost per op of profiling on ocl: small adds with the profiler off,
with torch.profiler recording CPU ops only, and with ocl device activity too.

    python bench/profiler_overhead.py [--ops 10000] [--reps 5] [--mode strict|fused]

Each op is `x = x + 1` on a 16-element tensor, so the time is host time
(dispatch, the runtime, the enqueue), not device time. The loop and a final
synchronize are timed; the profiler's start and its processing after the
loop are not. The difference between the last two columns is what keeping
the device trace costs per op (an OpenCL event and a record per enqueue);
off is the cost with tracing off, one load and branch per enqueue.

Two figures per column: the main thread's CPU time per op (time.thread_time,
what the host spends; other processes' load barely moves it) and the wall
time per op. The columns are measured in turns, best of --reps each, so a
burst of load on a shared machine hits them alike.
"""

import argparse
import time

import torch
import torch_ocl
from torch.profiler import ProfilerActivity, profile


def loop(n):
    x = torch.zeros(16, device="ocl")
    torch.ocl.synchronize()
    c0, w0 = time.thread_time(), time.perf_counter()
    for _ in range(n):
        x = x + 1.0
    torch.ocl.synchronize()
    cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
    assert x[0].item() == n
    return cpu, wall


def run(n, activities):
    if activities is None:
        return loop(n)
    with profile(activities=activities):
        return loop(n)


CONFIGS = {
    "off": None,
    "CPU profiler": [ProfilerActivity.CPU],
    "CPU + OCL profiler": [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--mode", choices=["strict", "fused"], default="strict")
    ap.add_argument("--only-off", action="store_true", help="measure the off column only (a build without profiler)")
    args = ap.parse_args()
    configs = {"off": None} if args.only_off else CONFIGS
    best = {k: (float("inf"), float("inf")) for k in configs}
    with torch_ocl.eager_mode(args.mode):
        for acts in configs.values():
            run(200, acts)  # build the kernels, start Kineto once
        for _ in range(args.reps):
            for name, acts in configs.items():
                cpu, wall = run(args.ops, acts)
                best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
    print(f"{args.ops} adds of 16 floats, {args.mode} eager, best of {args.reps}: "
          "host us/op (main thread CPU / wall)")
    print("| " + " | ".join(configs) + " |")
    print("|" + "---|" * len(configs))
    print("| " + " | ".join(f"{c / args.ops * 1e6:.2f} / {w / args.ops * 1e6:.2f}" for c, w in best.values()) + " |")


if __name__ == "__main__":
    main()
