"""GFLOP/s of torch.mm on ocl next to torch.mm on the CPU, measured in one run.

    python bench/gemm_bench.py [--sizes 256 512 1024 2048] [--dtypes float32 bfloat16] [--reps 3]

The first ocl product of each size class also builds kernels and (unless
TORCH_OCL_GEMM_TUNE=0) times a few tile configurations once; that warm-up
is reported separately and excluded from the GFLOP/s. Both devices share
the same cores on a PoCL machine, so the columns compare like with like.
"""

import argparse
import time

import torch
import torch_ocl  # noqa: F401  (registers the ocl device)


def best_time(fn, sync, reps):
    """Smallest wall time of reps runs (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    dev = torch.device("ocl")
    print(f"ocl device: {torch.ocl.get_device_name(0)}; torch {torch.__version__}, CPU threads {torch.get_num_threads()}")
    print(f"{'dtype':>9} {'n':>5} {'ocl GFLOP/s':>12} {'cpu GFLOP/s':>12} {'ocl/cpu':>8} {'ocl warm-up s':>14} {'max |err|':>10}")
    for name in args.dtypes:
        dtype = getattr(torch, name)
        for n in args.sizes:
            flop = 2.0 * n * n * n
            a = torch.randn(n, n).to(dtype)
            b = torch.randn(n, n).to(dtype)
            da, db = a.to(dev), b.to(dev)
            t0 = time.perf_counter()
            dc = torch.mm(da, db)
            torch.ocl.synchronize()
            warm = time.perf_counter() - t0
            t_ocl = best_time(lambda: torch.mm(da, db), torch.ocl.synchronize, args.reps)
            c = torch.mm(a, b)
            t_cpu = best_time(lambda: torch.mm(a, b), lambda: None, args.reps)
            err = (dc.cpu().float() - c.float()).abs().max().item()
            g_ocl, g_cpu = flop / t_ocl / 1e9, flop / t_cpu / 1e9
            print(f"{name:>9} {n:>5} {g_ocl:>12.1f} {g_cpu:>12.1f} {g_ocl / g_cpu:>8.2f} {warm:>14.2f} {err:>10.3g}")


if __name__ == "__main__":
    main()
