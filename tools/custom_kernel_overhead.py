"""Host cost of launching a custom kernel (torch_ocl.compile_kernel) beside
a built-in op doing the same work: y += 2 * x over a small float32 tensor,
in strict eager (one kernel per call either way), and the same kernel as a
torch.library custom op.

  python tools/custom_kernel_overhead.py [--n 5000] [--size 1024] [--rounds 5]

Prints the best of interleaved rounds in microseconds per call: the time to
enqueue, with one synchronisation at the end of each round (so queued
kernels finish inside the round; on a 2-core CPU device the kernels and the
host share the cores).
"""

import argparse
import time

import torch
import torch_ocl

SOURCE = r"""
__kernel void axpy(__global float *y, __global const float *x, float a, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] += a * x[i];
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    torch_ocl.set_eager_mode("strict")
    lib = torch_ocl.compile_kernel(SOURCE)
    x = torch.randn(a.size, device="ocl")
    y = torch.zeros(a.size, device="ocl")
    size = a.size

    @torch.library.custom_op("overhead::axpy_", mutates_args=("y",), device_types="ocl")
    def axpy_op(y: torch.Tensor, x: torch.Tensor, alpha: float) -> None:
        lib.axpy(y, x, alpha, y.numel())

    y0, x0 = y[:0], x[:0]
    cases = {
        "built-in, empty tensors (host path only)": lambda: y0.add_(x0, alpha=2.0),
        "custom kernel, threads=0 (host path only)": lambda: lib.axpy(y, x, 2.0, size, threads=0),
        "built-in y.add_(x, alpha=2)": lambda: y.add_(x, alpha=2.0),
        "custom kernel lib.axpy(y, x, 2.0, n)": lambda: lib.axpy(y, x, 2.0, size),
        "custom kernel, explicit threads/group_size": lambda: lib.axpy(y, x, 2.0, size, threads=size,
                                                                       group_size=64),
        "custom op (torch.library) around it": lambda: axpy_op(y, x, 2.0),
    }
    best = {k: float("inf") for k in cases}
    for fn in cases.values():
        fn()
    torch.ocl.synchronize()
    for _ in range(a.rounds):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            for _ in range(a.n):
                fn()
            torch.ocl.synchronize()
            best[name] = min(best[name], (time.perf_counter() - t0) / a.n * 1e6)
    for name, us in best.items():
        print(f"{us:8.2f} us/call  {name}")


if __name__ == "__main__":
    main()
