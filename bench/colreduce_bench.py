"""Column reductions (a kept innermost dim, reduced outer dims) on ocl next to
the CPU, in one process: median wall time of `reps` runs after a warm-up.
ocl is timed with the column kernel (TORCH_OCL_RED_COLUMN unset) and without
(=0), the CPU with torch's threads (--threads, default 2).

    python bench/colreduce_bench.py [--reps 15] [--threads 2]
"""

import argparse
import os
import statistics
import time

import torch
import torch_ocl  # noqa: F401

CASES = [
    ("[1024,1024].sum(0)", (1024, 1024), None, lambda x: x.sum(0)),
    ("[1024,768].sum(0)", (1024, 768), None, lambda x: x.sum(0)),
    ("[8,128,1024].sum((0,1))", (8, 128, 1024), None, lambda x: x.sum((0, 1))),
    ("[1024,1024].mean(0)", (1024, 1024), None, lambda x: x.mean(0)),
    ("[64,64,56,56] cl .sum((0,2,3))", (64, 64, 56, 56), "cl", lambda x: x.sum((0, 2, 3))),
    ("[64,64,56,56].sum((0,2,3))", (64, 64, 56, 56), None, lambda x: x.sum((0, 2, 3))),
    ("[4096,32].sum(0)", (4096, 32), None, lambda x: x.sum(0)),
    ("[1024,1024].amax(0)", (1024, 1024), None, lambda x: x.amax(0)),
    ("[1024,1024] (x*x).sum(0)", (1024, 1024), None, lambda x: (x * x).sum(0)),
]


def median_time(fn, sync, reps):
    fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float16", "bfloat16", "float64"])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    sync = torch.ocl.synchronize
    print(f"{'case':>32} {'dtype':>9} {'ocl ms':>8} {'old ms':>8} {'cpu ms':>8} {'ocl/cpu':>8}")
    for dn in a.dtypes:
        dt = getattr(torch, dn)
        for name, shape, fmt, f in CASES:
            x = torch.randn(shape, dtype=dt)
            if fmt == "cl":
                x = x.to(memory_format=torch.channels_last)
            xo = x.to("ocl")
            os.environ.pop("TORCH_OCL_RED_COLUMN", None)
            t_new = median_time(lambda: f(xo), sync, a.reps)
            os.environ["TORCH_OCL_RED_COLUMN"] = "0"
            t_old = median_time(lambda: f(xo), sync, a.reps)
            os.environ.pop("TORCH_OCL_RED_COLUMN", None)
            t_cpu = median_time(lambda: f(x), lambda: None, a.reps)
            print(f"{name:>32} {dn:>9} {t_new*1e3:8.3f} {t_old*1e3:8.3f} {t_cpu*1e3:8.3f} {t_new/t_cpu:8.2f}", flush=True)


if __name__ == "__main__":
    main()
