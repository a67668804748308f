"""Allocation history and memory snapshots in torch.cuda.memory's shape:
_record_memory_history, _snapshot, _dump_snapshot, memory_snapshot, and
torch.cuda._memory_viz reading an ocl snapshot."""

import pickle

import pytest
import torch
import torch.cuda._memory_viz as memory_viz

SEGMENT_KEYS = {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"}
BLOCK_KEYS = {"address", "size", "requested_size", "state", "frames"}
TRACE_KEYS = {"action", "addr", "size", "stream", "time_us", "frames"}


@pytest.fixture
def history():
    """Record with Python stacks for one test, then stop (and drop the history)."""
    torch.ocl.synchronize()
    torch.ocl.empty_cache()

    def start(**kw):
        args = dict(enabled="all", context="all", stacks="python", max_entries=100000)
        args.update(kw)
        torch.ocl.memory._record_memory_history(**args)

    yield start
    torch.ocl.memory._record_memory_history(enabled=None)


def _names(frames):
    return {f["name"] for f in frames}


def test_history_alloc_and_free_with_python_frames(history):
    history()
    x = torch.empty(1 << 18, device="ocl")  # 1 MiB
    addr = x.data_ptr()
    del x
    snap = torch.ocl.memory._snapshot()
    trace = snap["device_traces"][0]
    assert len(snap["device_traces"]) == torch.ocl.device_count()
    mine = [e for e in trace if e["addr"] == addr]
    actions = [e["action"] for e in mine]
    assert actions[-3:] == ["alloc", "free_requested", "free_completed"]
    alloc, _, done = mine[-3:]
    for e in mine[-3:]:
        assert set(e) >= TRACE_KEYS
        assert e["size"] == 1 << 20 and e["stream"] == 0
    assert "test_history_alloc_and_free_with_python_frames" in _names(alloc["frames"])
    assert any(f["filename"].endswith("test_memory_snapshot.py") for f in alloc["frames"])
    # context="all": the free keeps its own stack, also naming this test.
    assert "test_history_alloc_and_free_with_python_frames" in _names(done["frames"])
    assert alloc["time_us"] <= done["time_us"]
    # A fresh allocator made a segment for it first.
    assert any(e["action"] == "segment_alloc" for e in trace)


def test_snapshot_segments_and_blocks(history):
    history()
    keep = torch.empty(1000, device="ocl")  # 4000 bytes asked, a 4096-byte block
    snap = torch.ocl.memory._snapshot()
    segs = snap["segments"]
    assert segs and all(set(s) >= SEGMENT_KEYS for s in segs)
    found = [(s, b) for s in segs for b in s["blocks"] if b["address"] == keep.data_ptr()]
    assert len(found) == 1
    seg, blk = found[0]
    assert set(blk) >= BLOCK_KEYS
    assert blk["state"] == "active_allocated" and blk["requested_size"] == 4000 and blk["size"] == 4096
    assert "test_snapshot_segments_and_blocks" in _names(blk["frames"])
    assert seg["device"] == keep.device.index and seg["segment_type"] == "small"
    assert seg["allocated_size"] >= 4096 and seg["active_size"] >= seg["allocated_size"]
    assert seg["address"] <= blk["address"] < seg["address"] + seg["total_size"]
    # Blocks tile the segment (in guard mode the canaries are inactive blocks).
    at = seg["address"]
    for b in seg["blocks"]:
        assert b["address"] == at
        at += b["size"]
    assert at == seg["address"] + seg["total_size"]
    # memory_snapshot() is the segment list, as torch.cuda.memory_snapshot().
    assert [s["address"] for s in torch.ocl.memory_snapshot()] == [s["address"] for s in segs]
    assert torch.ocl.memory_snapshot is torch.ocl.memory.memory_snapshot
    del keep


def test_memory_viz_reads_the_snapshot(history, tmp_path):
    history()
    a = torch.randn(64, 64, device="ocl")
    b = a @ a
    del a
    snap = torch.ocl.memory._snapshot()
    for render in (memory_viz.trace_plot, memory_viz.segment_plot):
        html = render(snap)
        assert isinstance(html, str) and "MemoryViz.js" in html
    # These walk every segment, block, frame and trace entry in Python.
    assert "total_reserved" in memory_viz.segsum(snap)  # it also checks that the blocks add up
    assert memory_viz.trace(snap)
    # The flamegraph inputs (rendering them would download flamegraph.pl).
    lines = memory_viz.memory(snap, format_flamegraph=lambda text: text)
    assert "test_memory_viz_reads_the_snapshot" in lines
    assert "test_memory_viz_reads_the_snapshot" in memory_viz.segments(snap, format_flamegraph=lambda text: text)
    path = tmp_path / "snap.pickle"
    torch.ocl.memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        loaded = pickle.load(f)
    assert set(loaded) >= {"segments", "device_traces"}
    assert any(e["action"] == "alloc" for e in loaded["device_traces"][0])
    del b


def test_context_levels_and_state_only(history):
    history(enabled="state", context="state")
    x = torch.empty(300, device="ocl")
    snap = torch.ocl.memory._snapshot()
    assert snap["device_traces"][0] == []  # "state" keeps no event history
    blk = [b for s in snap["segments"] for b in s["blocks"] if b["address"] == x.data_ptr()][0]
    assert "test_context_levels_and_state_only" in _names(blk["frames"])
    del x
    history(context=None, clear_history=True)
    y = torch.empty(300, device="ocl")
    del y
    trace = torch.ocl.memory._snapshot()["device_traces"][0]
    assert trace and all(e["frames"] == [] for e in trace)


def test_skip_actions_and_ring_size(history):
    history(skip_actions=["free_requested"])
    x = torch.empty(100, device="ocl")
    del x
    acts = {e["action"] for e in torch.ocl.memory._snapshot()["device_traces"][0]}
    assert "alloc" in acts and "free_completed" in acts and "free_requested" not in acts
    history(max_entries=4, clear_history=True)
    for _ in range(10):
        t = torch.empty(100, device="ocl")
        last = t.data_ptr()
        del t
    trace = torch.ocl.memory._snapshot()["device_traces"][0]
    assert len(trace) == 4  # the newest four, oldest first
    assert trace[-1]["action"] == "free_completed" and trace[-1]["addr"] == last


def test_stopping_drops_history(history):
    history()
    x = torch.empty(100, device="ocl")
    del x
    torch.ocl.memory._record_memory_history(enabled=None)
    y = torch.empty(100, device="ocl")
    snap = torch.ocl.memory._snapshot()
    assert snap["device_traces"][0] == []
    blk = [b for s in snap["segments"] for b in s["blocks"] if b["address"] == y.data_ptr()][0]
    assert blk["frames"] == []  # allocated while not recording
    del y


def test_oom_is_recorded(history):
    history()
    limit = 8 << 20
    torch.ocl.set_per_process_memory_limit(limit)
    try:
        with pytest.raises(torch.OutOfMemoryError):
            torch.empty(4 << 20, device="ocl")  # 16 MiB
    finally:
        torch.ocl.set_per_process_memory_limit(0)
    ooms = [e for e in torch.ocl.memory._snapshot()["device_traces"][0] if e["action"] == "oom"]
    assert ooms and ooms[-1]["size"] == 16 << 20 and 0 <= ooms[-1]["device_free"] <= limit
    assert "test_oom_is_recorded" in _names(ooms[-1]["frames"])


def test_legacy_boolean_form(history):
    torch.ocl.memory._record_memory_history(True, trace_alloc_max_entries=1000)
    x = torch.empty(100, device="ocl")
    del x
    assert any(e["action"] == "alloc" for e in torch.ocl.memory._snapshot()["device_traces"][0])
    torch.ocl.memory._record_memory_history(False)
    assert torch.ocl.memory._snapshot()["device_traces"][0] == []


def test_bad_arguments_raise():
    rec = torch.ocl.memory._record_memory_history
    with pytest.raises(ValueError, match="enabled"):
        rec(enabled="alloc")
    with pytest.raises(ValueError, match="context"):
        rec(context="sometimes")
    with pytest.raises(ValueError, match="stacks"):
        rec(stacks="cpp")
    with pytest.raises(ValueError, match="unknown action"):
        rec(skip_actions=["allocate"])
    with pytest.raises(ValueError, match="max_entries"):
        rec(max_entries=-1)
    with pytest.raises(NotImplementedError, match="record_pinned_host_memory"):
        rec(record_pinned_host_memory=True)
    with pytest.raises(TypeError, match="unexpected"):
        rec(enabled="all", no_such_option=1)
    with pytest.raises(ValueError, match="one memory pool"):
        torch.ocl.memory_snapshot(mempool_id=(1, 2))
    torch.ocl.memory._record_memory_history(enabled=None)


def test_cpp_stacks(history):
    history(stacks="all", max_entries=16)
    x = torch.empty(100, device="ocl")
    snap = torch.ocl.memory._snapshot()
    alloc = [e for e in snap["device_traces"][0] if e["action"] == "alloc" and e["addr"] == x.data_ptr()][-1]
    names = _names(alloc["frames"])
    assert "test_cpp_stacks" in names
    assert len(alloc["frames"]) > len([f for f in alloc["frames"] if f["filename"].endswith(".py")])
    del x


def test_history_in_a_subprocess_exits_cleanly():
    """Recording left on at exit must not crash the interpreter's shutdown."""
    import subprocess
    import sys

    code = ("import torch, torch_ocl; torch.ocl.memory._record_memory_history(stacks='python');"
            "xs = [torch.ones(100, device='ocl') for _ in range(10)]")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
