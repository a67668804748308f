"""Host cost of the allocator's observer: torch.empty + free on ocl with the
observer removed, installed but idle (the default), with profile_memory on,
and with allocation history recording Python stacks.

  PYTHONPATH=build/<name>/pkg python tools/mem_observer_cost.py [--n 20000]

Prints the best of interleaved runs in microseconds per empty+free pair; the
differences are the cost of each mode (the rest is the dispatcher).
"""

import argparse
import contextlib
import time

import torch
import torch_ocl
from torch.profiler import ProfilerActivity, profile


def per_pair_us(n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        torch.empty(64, device="ocl")
    return (time.perf_counter() - t0) / n * 1e6


def _observer_off():
    torch_ocl._C._set_memory_observer(False)
    return contextlib.nullcontext()


def _history():
    torch.ocl.memory._record_memory_history(stacks="python", max_entries=1000)
    return contextlib.nullcontext()


MODES = [
    ("observer removed", _observer_off),
    ("observer installed, nothing listening (default)", contextlib.nullcontext),
    ("profiler on, profile_memory=False", lambda: profile(activities=[ProfilerActivity.CPU])),
    ("profile_memory=True (CPU activity)",
     lambda: profile(activities=[ProfilerActivity.CPU], profile_memory=True)),
    ("_record_memory_history(stacks='python')", _history),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    torch.empty(64, device="ocl")  # warm the cache
    best = {name: float("inf") for name, _ in MODES}
    # Interleaved rounds, best of each: this machine's load changes by the second.
    for _ in range(args.rounds):
        for name, make in MODES:
            with make():
                best[name] = min(best[name], per_pair_us(args.n))
            torch_ocl._C._set_memory_observer(True)
            torch.ocl.memory._record_memory_history(enabled=None)
    base = best[MODES[0][0]]
    for name, _ in MODES:
        print(f"{name:50s} {best[name]:8.3f} us/pair  ({(best[name] - base) * 1000:+7.0f} ns)")


if __name__ == "__main__":
    main()
