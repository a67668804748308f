"""Caching allocator statistics and control, mirroring torch.cuda.memory.

``import torch.ocl.memory`` gives this module; history and snapshots live in
``_snapshot.py`` and are re-exported here under torch.cuda.memory's names.
"""

import warnings
from typing import Any, Dict

from . import _C
from ._snapshot import _dump_snapshot, _record_memory_history, _snapshot, memory_snapshot  # noqa: F401
from .device import _index, get_device_properties


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


def _nest(flat: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def memory_stats_as_nested_dict(device: Any = None) -> Dict[str, Any]:
    """memory_stats() with its dotted keys nested: ``d["allocated_bytes"]["all"]["current"]``."""
    return _nest(memory_stats(device))


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


def _reset_peak_warning(name: str) -> None:
    warnings.warn(f"torch.ocl.{name} now calls torch.ocl.reset_peak_memory_stats, which resets /all/ peak "
                  "memory stats.", FutureWarning, stacklevel=3)


def reset_max_memory_allocated(device: Any = None) -> None:
    """Deprecated alias (as on CUDA): resets every peak statistic."""
    _reset_peak_warning("reset_max_memory_allocated")
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    """Deprecated alias (as on CUDA): resets every peak statistic."""
    _reset_peak_warning("reset_max_memory_cached")
    reset_peak_memory_stats(device)


def memory_cached(device: Any = None) -> int:
    """Deprecated CUDA name of memory_reserved()."""
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """Deprecated CUDA name of max_memory_reserved()."""
    return max_memory_reserved(device)


def empty_cache() -> None:
    """Release cached blocks that no tensor uses back to the driver."""
    _C._empty_cache()


def mem_get_info(device: Any = None):
    """(free, total) bytes of device memory, as the allocator sees it."""
    return tuple(_C._mem_get_info(_index(device)))


def set_per_process_memory_limit(nbytes: int, device: Any = None) -> None:
    """Cap this process's reserved bytes on a device (0 = device total)."""
    _C._set_memory_limit(_index(device), int(nbytes))


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Cap this process's reserved bytes on a device at ``fraction`` of its
    memory (as torch.cuda's): an allocation that would pass the cap, after
    the cache is released, raises torch.OutOfMemoryError."""
    if not isinstance(fraction, (float, int)) or isinstance(fraction, bool):
        raise TypeError(f"Invalid type for fraction argument, must be `float`, got {type(fraction).__name__}")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    idx = _index(device)
    total = get_device_properties(idx).total_memory
    # The runtime reads a limit of 0 as "no limit"; fraction 0 means nothing fits.
    _C._set_memory_limit(idx, max(1, int(fraction * total)))


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The cap on reserved bytes as a fraction of the device's memory."""
    idx = _index(device)
    return memory_stats(idx)["limit_bytes"] / get_device_properties(idx).total_memory


def host_memory_stats() -> Dict[str, int]:
    """Pinned host memory statistics, read through the at::HostAllocator
    registered for the device (torch.cuda.host_memory_stats's keys)."""
    return dict(sorted(_C._host_memory_stats()))


def host_memory_stats_as_nested_dict() -> Dict[str, Any]:
    """host_memory_stats() with its dotted keys nested."""
    return _nest(host_memory_stats())


def get_allocator_backend() -> str:
    """"native": torch_ocl's own caching allocator (there is no other backend)."""
    return "native"


def _allocation_traceback(data_ptr: int):
    """The frames of the live allocation starting at ``data_ptr`` (a
    storage's data_ptr), or None if there is none or it was not recorded
    (torch.cuda.memory._allocation_traceback)."""
    for seg in _C._memory_snapshot(False)["segments"]:
        for b in seg["blocks"]:
            if b["address"] == data_ptr and b["state"] == "active_allocated":
                return b["frames"] or None
    return None


def reset_peak_host_memory_stats() -> None:
    _C._reset_host_memory_stats(True)


def reset_accumulated_host_memory_stats() -> None:
    _C._reset_host_memory_stats(False)


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
