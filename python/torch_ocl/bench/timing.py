"""Timing that is correct on every device: device events where the device has
them (ocl, cuda), otherwise a host clock around a synchronise."""

import statistics
import time
from dataclasses import dataclass
from typing import Callable, List

import torch


def synchronize(device: torch.device) -> None:
    if device.type == "ocl":
        torch.ocl.synchronize(device)
    elif device.type == "cuda":
        torch.cuda.synchronize(device)


def _events(device: torch.device):
    if device.type == "ocl":
        return torch.ocl.Event(enable_timing=True), torch.ocl.Event(enable_timing=True)
    if device.type == "cuda":
        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    return None


@dataclass
class Measurement:
    times_ms: List[float]  # one per timed repetition (each of `inner` calls)
    inner: int
    method: str  # "device events" or "host clock + sync"

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) / self.inner

    @property
    def spread(self) -> float:
        """Relative spread: (max - min) / median over the repetitions."""
        m = statistics.median(self.times_ms)
        return (max(self.times_ms) - min(self.times_ms)) / m if m else 0.0


def measure(fn: Callable[[], object], device: torch.device, reps: int = 5, inner: int = 1,
            warmup: int = 2, use_events: bool = True) -> Measurement:
    """Run fn inner times per repetition; warm-up runs are excluded."""
    for _ in range(warmup):
        for _ in range(inner):
            fn()
    synchronize(device)
    ev = _events(device) if use_events else None
    times = []
    for _ in range(reps):
        if ev:
            ev[0].record()
            for _ in range(inner):
                fn()
            ev[1].record()
            ev[1].synchronize()
            times.append(ev[0].elapsed_time(ev[1]))
        else:
            synchronize(device)
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            synchronize(device)
            times.append((time.perf_counter() - t0) * 1e3)
    return Measurement(times, inner, "device events" if ev else "host clock + sync")
