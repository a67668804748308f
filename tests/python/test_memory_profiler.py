"""The allocator reports to torch.profiler: profile_memory shows ocl memory
on the ops that allocate it, export_memory_timeline reads it for ocl:0, and
an out-of-memory error is reported."""

import json

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

ACTIVITY_SETS = [[ProfilerActivity.CPU]]
if ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities():
    ACTIVITY_SETS.append([ProfilerActivity.CPU, ProfilerActivity.PrivateUse1])


def _ids(acts):
    return "+".join(a.name for a in acts)


@pytest.mark.parametrize("activities", ACTIVITY_SETS, ids=_ids)
def test_profile_memory_shows_ocl_allocations(activities):
    with profile(activities=activities, profile_memory=True) as prof:
        x = torch.empty(1 << 18, device="ocl")  # 1 MiB
        y = x.fill_(1.0) * 2
        del x
    row = {e.key: e for e in prof.key_averages()}["aten::empty"]
    assert row.device_memory_usage >= 1 << 20
    assert row.cpu_memory_usage == 0  # device memory, not host memory
    # The free shows up as a negative report ("[memory]" rows sum the frees).
    frees = [e for e in prof.events() if e.name == "[memory]" and e.device_memory_usage < 0]
    assert any(e.device_memory_usage == -(1 << 20) for e in frees)
    del y


def test_nothing_is_reported_without_profile_memory():
    with profile(activities=[ProfilerActivity.CPU], profile_memory=False) as prof:
        x = torch.empty(1 << 18, device="ocl")
        del x
    assert all(e.device_memory_usage == 0 for e in prof.key_averages())


def test_export_memory_timeline_for_ocl(tmp_path):
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                 with_stack=True) as prof:
        w = torch.randn(256, 256, device="ocl", requires_grad=True)
        loss = (w @ w).sum()
        loss.backward()
        del loss
    path = tmp_path / "timeline.json"
    prof.export_memory_timeline(str(path), device="ocl:0")
    times, sizes = json.loads(path.read_text())
    assert len(times) == len(sizes) > 0
    # The timeline holds the bytes of the device's allocations (per category).
    assert max(sum(s) for s in sizes) >= 256 * 256 * 4


def test_out_of_memory_is_reported():
    torch.ocl.synchronize()
    torch.ocl.empty_cache()
    torch.ocl.set_per_process_memory_limit(8 << 20)
    try:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            with pytest.raises(torch.OutOfMemoryError):
                torch.empty(4 << 20, device="ocl")
    finally:
        torch.ocl.set_per_process_memory_limit(0)
    names = {e.name for e in prof.events()}
    assert "[OutOfMemory]" in names
