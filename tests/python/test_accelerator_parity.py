"""torch.accelerator on ocl (every public callable, none may crash), the host
allocator behind it, device capabilities, and the torch.cuda names torch.ocl
gained: memory fraction, nested stats, deprecated resets, nvtx ranges,
streams, submodules."""

import subprocess
import sys

import pytest
import torch
from torch_ocl import parity


def test_every_accelerator_callable_returns_or_raises():
    """Each public callable of torch.accelerator (enumerated with dir(), not
    picked) is called on ocl in a child process; a crash or a hang fails."""
    results = parity.probe_accelerator()
    names = [n for n, _ in parity.accelerator_targets()]
    assert [r["name"] for r in results] == names and len(names) >= 20
    bad = [r for r in results if r["outcome"] in ("crashes", "hangs")]
    assert not bad, bad
    by_name = {r["name"]: r for r in results}
    # The two that used to crash or refuse.
    assert by_name["torch.accelerator.empty_host_cache"]["outcome"] == "works"
    assert by_name["torch.accelerator.get_device_capability"]["outcome"] == "works"
    # Functions needing an argument the table lacks would be "not called": none do today.
    assert not [r for r in results if r["outcome"] == "not called"]


def test_probe_reports_a_crash_and_goes_on(tmp_path, monkeypatch):
    """The harness itself: a function that kills its process is reported as
    crashing, and the functions after it still run."""
    (tmp_path / "fake_targets.py").write_text(
        "import os\n"
        "def targets():\n"
        "    return [('ok_before', lambda: 1), ('kills', lambda: os._exit(139)), ('ok_after', lambda: 2)]\n")
    monkeypatch.setenv("PYTHONPATH", ":".join([str(tmp_path)] + sys.path))
    results = parity.probe_accelerator(env={"TORCH_OCL_PARITY_TARGETS": "fake_targets:targets"})
    assert [r["name"] for r in results] == ["ok_before", "kills", "ok_after"]
    assert [r["outcome"] for r in results] == ["works", "crashes", "works"]
    assert "exit status 139" in results[1]["detail"]


def test_pinned_memory_through_the_host_allocator():
    before = torch.ocl.host_memory_stats()
    x = torch.arange(4096, dtype=torch.float32).pin_memory()
    assert x.is_pinned()
    during = torch.ocl.host_memory_stats()
    assert during["active_requests.current"] == before["active_requests.current"] + 1
    assert during["active_bytes.current"] >= before["active_bytes.current"] + x.nbytes
    assert during["num_host_alloc"] == before["num_host_alloc"] + 1
    y = x.to("ocl", non_blocking=True)
    del x
    torch.ocl.synchronize()
    torch.accelerator.empty_host_cache()  # releases the block its copy kept alive
    after = torch.ocl.host_memory_stats()
    assert after["active_requests.current"] == before["active_requests.current"]
    assert after["allocations.current"] == before["allocations.current"]
    assert torch.equal(y.cpu(), torch.arange(4096, dtype=torch.float32))
    torch.ocl.reset_peak_host_memory_stats()
    assert torch.ocl.host_memory_stats()["active_bytes.peak"] == after["active_bytes.current"]
    torch.ocl.reset_accumulated_host_memory_stats()
    assert torch.ocl.host_memory_stats()["num_host_alloc"] == 0


def test_accelerator_device_capability_lists_dtypes():
    for i in range(torch.ocl.device_count()):
        dtypes = torch.accelerator.get_device_capability(i)["supported_dtypes"]
        for dt in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.uint8, torch.bool):
            assert dt in dtypes
        fp64 = torch.ocl.get_device_properties(i).has_fp64
        assert (torch.float64 in dtypes) == fp64 and (torch.complex128 in dtypes) == fp64
        assert torch.complex64 in dtypes
        assert torch.complex32 not in dtypes and torch.qint8 not in dtypes and torch.uint32 not in dtypes


def test_ocl_device_capability_is_cuda_shaped():
    cap = torch.ocl.get_device_capability()
    assert isinstance(cap, tuple) and len(cap) == 2 and all(isinstance(v, int) for v in cap)
    text = torch.ocl.get_device_properties().opencl_c_version  # "OpenCL C 1.2 pocl"
    assert text.split()[2].startswith(f"{cap[0]}.{cap[1]}")
    feats = torch.ocl.get_device_features()
    assert set(feats) == {"fp64", "fp16", "opencl_version"}
    assert feats["fp64"] == torch.ocl.get_device_properties().has_fp64


def test_cuda_names_torch_ocl_now_has():
    have = {r["name"] for r in parity.cuda_parity() if r["ocl"]}
    for name in ("memory_stats_as_nested_dict", "reset_max_memory_allocated", "reset_max_memory_cached",
                 "set_per_process_memory_fraction", "ExternalStream", "is_current_stream_capturing",
                 "memory_snapshot", "host_memory_stats", "_record_memory_history", "_snapshot", "_dump_snapshot"):
        assert name in have, name


def test_memory_fraction_is_enforced():
    torch.ocl.synchronize()
    torch.ocl.empty_cache()
    total = torch.ocl.get_device_properties(0).total_memory
    frac = (64 << 20) / total  # a 64 MiB cap
    torch.ocl.set_per_process_memory_fraction(frac, 0)
    try:
        assert abs(torch.ocl.get_per_process_memory_fraction(0) - frac) < 1e-9
        small = torch.empty(4 << 20, device="ocl:0")  # 16 MiB fits
        with pytest.raises(torch.OutOfMemoryError, match="out of memory"):
            torch.empty(32 << 20, device="ocl:0")  # 128 MiB does not
        del small
    finally:
        torch.ocl.set_per_process_memory_limit(0, 0)
    big = torch.empty(32 << 20, device="ocl:0")  # fits again without the cap
    del big
    with pytest.raises(ValueError, match="fraction"):
        torch.ocl.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError, match="float"):
        torch.ocl.set_per_process_memory_fraction("half")


def test_nested_stats_and_deprecated_resets():
    x = torch.empty(1000, device="ocl")
    nested = torch.ocl.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == torch.ocl.memory_allocated()
    assert nested["num_ooms"] == torch.ocl.memory_stats()["num_ooms"]
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        torch.ocl.reset_max_memory_allocated()
    assert torch.ocl.max_memory_allocated() == torch.ocl.memory_allocated()
    with pytest.warns(FutureWarning):
        torch.ocl.reset_max_memory_cached()
    assert torch.ocl.max_memory_cached() == torch.ocl.memory_cached() == torch.ocl.memory_reserved()
    del x


def test_streams_names():
    assert torch.ocl.is_current_stream_capturing() is False
    with pytest.raises(NotImplementedError, match="ExternalStream"):
        torch.ocl.ExternalStream(0)


def test_nvtx_ranges_show_in_the_profiler():
    nvtx = torch.ocl.nvtx
    assert nvtx.range_pop() == -1  # nothing open
    x = torch.ones(8, device="ocl")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        with nvtx.range("block {}", 7):
            assert nvtx.range_push("inner") == 1
            x = x + 1
            assert nvtx.range_pop() == 1
        nvtx.mark("marker")
    names = {e.name for e in prof.events()}
    assert {"block 7", "inner", "marker"} <= names
    with pytest.raises(NotImplementedError):
        nvtx.range_start("unnested")


def test_submodules_import_like_cuda():
    code = ("import torch\n"
            "import torch.ocl.memory, torch.ocl.streams, torch.ocl.nvtx, torch.ocl.random\n"
            "from torch.ocl.memory import _record_memory_history, _snapshot, _dump_snapshot\n"
            "from torch.ocl.streams import Stream, ExternalStream\n"
            "assert torch.ocl.memory.memory_allocated() >= 0\n"
            "assert torch.ocl.nvtx.range_push('a') == 0 and torch.ocl.nvtx.range_pop() == 0\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_smaller_cuda_names():
    assert torch.ocl.get_allocator_backend() == "native"
    assert torch.ocl.is_tf32_supported() is False
    nested = torch.ocl.host_memory_stats_as_nested_dict()
    assert nested["active_requests"]["current"] == torch.ocl.host_memory_stats()["active_requests.current"]
    s = torch.ocl.Stream()
    before = torch.ocl.current_stream()
    with torch.ocl.StreamContext(s) as entered:
        assert entered is s and torch.ocl.current_stream() == s
    assert torch.ocl.current_stream() == before
    with torch.ocl.StreamContext(None):
        assert torch.ocl.current_stream() == before


def test_allocation_traceback():
    torch.ocl.memory._record_memory_history(stacks="python")
    try:
        x = torch.empty(100, device="ocl")
        frames = torch.ocl.memory._allocation_traceback(x.untyped_storage().data_ptr())
        assert frames and "test_allocation_traceback" in {f["name"] for f in frames}
        assert torch.ocl.memory._allocation_traceback(x.data_ptr() + 4) is None  # not a block's start
    finally:
        torch.ocl.memory._record_memory_history(enabled=None)
