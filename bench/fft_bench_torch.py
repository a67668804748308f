"""fft_bench_torch.py - torch.fft on the CPU (pocketfft) on the shapes of
bench/fft_bench.c: best wall time of several calls, with 1 and 2 threads.

    python bench/fft_bench_torch.py [turns]
"""
import sys
import time

import torch


def best_ms(f, turns):
    f()
    best = float("inf")
    for _ in range(turns):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    c64 = lambda *s: torch.randn(*s, dtype=torch.complex64)
    cases = [
        ("c2c 64x4096 f32", lambda x: torch.fft.fft(x), c64(64, 4096)),
        ("c2c 64x4096 f64", lambda x: torch.fft.fft(x), torch.randn(64, 4096, dtype=torch.complex128)),
        ("r2c 100x400 f32 onesided", lambda x: torch.fft.rfft(x), torch.randn(100, 400)),
        ("c2r 100x201 -> 400 f32", lambda x: torch.fft.irfft(x, 400), c64(100, 201)),
        ("c2c 64x4099 f32 (Bluestein)", lambda x: torch.fft.fft(x), c64(64, 4099)),
        ("c2c 4096x64 f32 along dim 0", lambda x: torch.fft.fft(x, dim=0), c64(4096, 64)),
        ("c2c 4x65536 f32 (split)", lambda x: torch.fft.fft(x), c64(4, 65536)),
        ("c2c 4096x64 f32 (n = 64)", lambda x: torch.fft.fft(x), c64(4096, 64)),
    ]
    for threads in (1, 2):
        torch.set_num_threads(threads)
        print(f"torch {torch.__version__}, {threads} thread(s)")
        for name, f, x in cases:
            print(f"{name:34s} {best_ms(lambda: f(x), turns):8.3f} ms")


if __name__ == "__main__":
    main()
