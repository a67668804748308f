"""Caching allocator statistics and behaviour as seen from Python."""

import gc

import pytest
import torch

import torch_ocl  # noqa: F401


def test_allocated_deltas_and_peak():
    # garbage from earlier tests in this worker (tensors in reference
    # cycles) must not be collected between the readings below
    gc.collect()
    gc.disable()
    try:
        _allocated_deltas_and_peak()
    finally:
        gc.enable()


def _allocated_deltas_and_peak():
    torch.ocl.synchronize()
    base = torch.ocl.memory_allocated()
    x = torch.empty(1024, 1024, device="ocl")  # 4 MiB
    assert torch.ocl.memory_allocated() - base >= 4 * 2**20
    assert torch.accelerator.memory_allocated() == torch.ocl.memory_allocated()
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()
    peak = torch.ocl.max_memory_allocated()
    del x
    assert torch.ocl.memory_allocated() == base
    assert torch.ocl.max_memory_allocated() == peak
    torch.ocl.reset_peak_memory_stats()
    assert torch.ocl.max_memory_allocated() == base


def test_cache_reuse_and_empty_cache():
    x = torch.empty(3 * 2**20, device="ocl")
    del x
    reserved = torch.ocl.memory_reserved()
    hits = torch.ocl.memory_stats()["cache_hits"]
    y = torch.empty(3 * 2**20, device="ocl")
    assert torch.ocl.memory_reserved() == reserved  # served from the cache
    assert torch.ocl.memory_stats()["cache_hits"] == hits + 1
    del y
    torch.ocl.empty_cache()
    assert torch.ocl.memory_reserved() < reserved


def test_stats_and_summary_and_info():
    s = torch.ocl.memory_stats()
    assert "allocated_bytes.all.current" in s and "num_ooms" in s
    free, total = torch.ocl.mem_get_info()
    assert 0 <= free <= total and total == torch.ocl.get_device_properties().total_memory
    assert "Allocated memory" in torch.ocl.memory_summary()
    # Tensors kept alive by reference cycles of earlier tests may be freed by a
    # garbage collection between the two reads: collect first, then hold it off.
    gc.collect()
    gc.disable()
    try:
        st = torch.accelerator.memory_stats()
        assert st["allocated_bytes.all.current"] == torch.ocl.memory_allocated()
    finally:
        gc.enable()


def test_oom_is_torch_out_of_memory_and_recoverable():
    torch.ocl.empty_cache()
    torch.ocl.set_per_process_memory_limit(64 * 2**20)
    try:
        with pytest.raises(torch.OutOfMemoryError) as e:
            torch.empty(256 * 2**20, dtype=torch.uint8, device="ocl")
        msg = str(e.value)
        assert "out of memory" in msg and "allocated" in msg and "reserved" in msg
        assert torch.ocl.memory_stats()["num_ooms"] >= 1
        ok = torch.ones(1024, device="ocl")  # still usable
        assert ok.sum().item() == 1024
    finally:
        torch.ocl.set_per_process_memory_limit(0)


def test_data_ptr_maps_back_to_device():
    x = torch.empty(100, device="ocl")
    y = x[10:]
    assert y.data_ptr() == x.data_ptr() + 10 * x.element_size()


def test_resize_grows_on_device():
    x = torch.arange(6, dtype=torch.float32).to("ocl")
    x.resize_(20)
    assert x.shape == (20,)
    assert torch.equal(x[:6].cpu(), torch.arange(6, dtype=torch.float32))
    s = torch.empty(0, device="ocl").untyped_storage()
    s.resize_(64)
    assert s.nbytes() == 64 and s.device.type == "ocl"
