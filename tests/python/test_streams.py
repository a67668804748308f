"""Streams (in-order queues) and events: ordering, query, timing."""

import pytest
import torch

import torch_ocl  # noqa: F401


def test_current_default_and_pool():
    assert torch.ocl.current_stream().stream_id == 0
    assert torch.ocl.default_stream().stream_id == 0
    s = torch.ocl.Stream()
    assert s.stream_id != 0 and s.device.type == "ocl"
    g = torch.Stream(device="ocl")
    assert g.device_type == s.device_type


def test_stream_context_and_accelerator_api():
    s = torch.ocl.Stream()
    with torch.ocl.stream(s):
        assert torch.ocl.current_stream() == s
        assert torch.accelerator.current_stream().stream_id == s.stream_id
    assert torch.ocl.current_stream().stream_id == 0
    torch.accelerator.set_stream(s)
    try:
        assert torch.ocl.current_stream().stream_id == s.stream_id
    finally:
        torch.ocl.set_stream(torch.ocl.default_stream())
    torch.accelerator.synchronize()


def test_work_on_side_stream_ordered_by_event():
    x = torch.ones(1 << 20, device="ocl")
    s = torch.ocl.Stream()
    e = torch.ocl.Event()
    # As with CUDA, x was written on the current stream, so the side stream must
    # wait for it before reading it.
    s.wait_stream(torch.ocl.current_stream())
    with torch.ocl.stream(s):
        y = x * 3
        e.record(s)
    torch.ocl.current_stream().wait_event(e)
    z = y + 1
    assert torch.equal(z.cpu(), torch.full((1 << 20,), 4.0))
    assert e.query()


def test_event_timing_and_sync():
    a = torch.ocl.Event(enable_timing=True)
    b = torch.ocl.Event(enable_timing=True)
    x = torch.ones(1 << 22, device="ocl")
    a.record()
    for _ in range(5):
        x = x + 1
    b.record()
    b.synchronize()
    assert b.query()
    ms = a.elapsed_time(b)
    assert ms >= 0.0
    s = torch.ocl.Stream()
    s.synchronize()
    assert s.query()


def test_record_stream_keeps_block_until_side_stream_done():
    s = torch.ocl.Stream()
    x = torch.ones(1 << 20, device="ocl")
    with torch.ocl.stream(s):
        y = x * 2
    x.record_stream(s)
    del x
    z = torch.zeros(1 << 20, device="ocl")  # must not clobber x while s may read it
    torch.ocl.synchronize()
    assert torch.equal(y.cpu(), torch.full((1 << 20,), 2.0))
    assert torch.equal(z.cpu(), torch.zeros(1 << 20))


def test_per_device_streams(two_devices):
    s1 = torch.ocl.Stream("ocl:1")
    assert s1.device_index == 1
    with torch.ocl.device(1), torch.ocl.stream(s1):
        x = torch.ones(10, device="ocl:1") * 2
    torch.ocl.synchronize(1)
    assert torch.equal(x.cpu(), torch.full((10,), 2.0))
