"""Caching allocator statistics and control, mirroring torch.cuda.memory."""

from typing import Any, Dict

from . import _C
from .device import _index


def memory_stats(device: Any = None) -> Dict[str, int]:
    """Allocator statistics with torch.cuda's key names where they exist."""
    s = _C._memory_stats(_index(device))
    out = {
        "allocated_bytes.all.current": s["allocated_bytes"],
        "allocated_bytes.all.peak": s["peak_allocated_bytes"],
        "reserved_bytes.all.current": s["reserved_bytes"],
        "reserved_bytes.all.peak": s["peak_reserved_bytes"],
        "requested_bytes.all.current": s["requested_bytes"],
        "active.all.current": s["active_blocks"],
        "segment.all.current": s["segments"],
        "allocation.all.allocated": s["alloc_count"],
        "allocation.all.freed": s["free_count"],
        "num_alloc_retries": s["alloc_retries"],
        "num_ooms": s["ooms"],
        "cache_hits": s["cache_hits"],
        "limit_bytes": s["limit_bytes"],
    }
    return dict(sorted(out.items()))


def memory_allocated(device: Any = None) -> int:
    return _C._memory_stats(_index(device))["allocated_bytes"]


def max_memory_allocated(device: Any = None) -> int:
    return _C._memory_stats(_index(device))["peak_allocated_bytes"]


def memory_reserved(device: Any = None) -> int:
    return _C._memory_stats(_index(device))["reserved_bytes"]


def max_memory_reserved(device: Any = None) -> int:
    return _C._memory_stats(_index(device))["peak_reserved_bytes"]


def reset_peak_memory_stats(device: Any = None) -> None:
    _C._reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device: Any = None) -> None:
    _C._reset_accumulated_memory_stats(_index(device))


def empty_cache() -> None:
    """Release cached blocks that no tensor uses back to the driver."""
    _C._empty_cache()


def mem_get_info(device: Any = None):
    """(free, total) bytes of device memory, as the allocator sees it."""
    return tuple(_C._mem_get_info(_index(device)))


def set_per_process_memory_limit(nbytes: int, device: Any = None) -> None:
    """Cap this process's reserved bytes on a device (0 = device total)."""
    _C._set_memory_limit(_index(device), int(nbytes))


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    idx = _index(device)
    s = _C._memory_stats(idx)
    free, total = mem_get_info(idx)
    rows = [
        ("Allocated memory", _fmt(s["allocated_bytes"]), _fmt(s["peak_allocated_bytes"])),
        ("Reserved memory", _fmt(s["reserved_bytes"]), _fmt(s["peak_reserved_bytes"])),
        ("Requested memory", _fmt(s["requested_bytes"]), ""),
        ("Active blocks", str(s["active_blocks"]), ""),
        ("Segments", str(s["segments"]), ""),
        ("Allocations / frees", f'{s["alloc_count"]} / {s["free_count"]}', ""),
        ("Cache hits", str(s["cache_hits"]), ""),
        ("Retries / OOMs", f'{s["alloc_retries"]} / {s["ooms"]}', ""),
        ("Device free / total", f"{_fmt(free)} / {_fmt(total)}", ""),
    ]
    lines = [f"torch_ocl memory summary, device {idx}", f"{'':24}{'current':>20}{'peak':>14}"]
    lines += [f"{a:24}{b:>20}{c:>14}" for a, b, c in rows]
    return "\n".join(lines)
