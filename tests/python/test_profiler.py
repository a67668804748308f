"""torch.profiler on ocl: kernel, memcpy and memset rows from the device (the
Kineto activity profiler in adapter/profiler/), their link to the op that
issued them, the Chrome trace, and the legacy use_device="ocl" route.

Traces are written to files and read back as JSON, as a user's viewer would.
"""

import json
import os
import subprocess
import sys

import pytest
import torch
import torch_ocl
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile
from torch_ocl._profiler_support import DEVICE_ACTIVITIES

pytestmark = pytest.mark.skipif(not DEVICE_ACTIVITIES, reason="this torch has no PrivateUse1 profiler registry "
                                "(torch 2.11): ocl device rows need a newer torch")

DEV = "ocl"
ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]

# Device and host clocks are matched once per trace with marker events
# (runtime/queue/trace.c), good to about a microsecond on PoCL: a kernel may
# seem to start up to this much before the op that issued it.
CLOCK_SLACK_US = 10.0


def _device_events(prof):
    return [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


def _mm_add_copy():
    a = torch.randn(64, 64, device=DEV)
    b = torch.randn(64, 64, device=DEV)
    torch.ocl.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        c = a @ b
        d = c + 1.0
        host = d.cpu()
    torch.testing.assert_close(host, (a.cpu() @ b.cpu()) + 1.0, rtol=1e-4, atol=1e-4)
    return prof


def _trace(prof, tmp_path, name="trace.json"):
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)


def test_kernel_rows_named_after_kernels():
    prof = _mm_add_copy()
    names = [e.name for e in _device_events(prof)]
    kernels = [n for n in names if n.startswith("tocl_")]
    assert any(n.startswith("tocl_gemm") or "gemm" in n for n in kernels), names
    assert any(n.startswith("tocl_ew[") and "add" in n for n in kernels), names
    assert any(n.startswith("Memcpy DtoH") for n in names), names


def test_mm_has_self_device_time():
    prof = _mm_add_copy()
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["aten::mm"].self_device_time_total > 0
    assert rows["aten::mm"].device_time_total > 0
    table = prof.key_averages().table(sort_by="self_device_time_total", row_limit=10)
    assert "Self OCL" in table and "OCL total" in table, table


def test_memcpy_rows_carry_bytes(tmp_path):
    a = torch.arange(1000, dtype=torch.float32).to(DEV)
    torch.ocl.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        b = torch.arange(256, dtype=torch.float32).to(DEV)  # host -> device
        host = a.cpu()                                       # device -> host
        c = a.clone()                                        # device -> device
    assert torch.equal(host, torch.arange(1000, dtype=torch.float32))
    del b, c
    trace = _trace(prof, tmp_path)
    copies = [e for e in trace["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    by_name = {}
    for e in copies:
        by_name.setdefault(e["name"], []).append(e["args"]["bytes"])
    assert 1024 in by_name.get("Memcpy HtoD", []), by_name
    assert 4000 in by_name.get("Memcpy DtoH", []), by_name


def test_fill_is_a_memset_row(tmp_path):
    with profile(activities=ACTIVITIES) as prof:
        z = torch.zeros(4096, device=DEV)
        torch.ocl.synchronize()
    assert z.sum().item() == 0
    trace = _trace(prof, tmp_path)
    device_rows = [e for e in trace["traceEvents"] if e.get("cat") in ("kernel", "gpu_memset")]
    assert device_rows, "torch.zeros enqueued nothing that the trace shows"


def _ops_by_correlation(trace):
    ops = {}
    for e in trace["traceEvents"]:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            ops[e["args"]["External id"]] = e
    return ops


def test_chrome_trace_process_threads_flows(tmp_path):
    prof = _mm_add_copy()
    trace = _trace(prof, tmp_path)
    events = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    ocl_pids = [pid for pid, name in procs.items() if str(name).startswith("ocl:0")]
    assert ocl_pids, procs
    pid = ocl_pids[0]
    threads = {e["tid"]: e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] == pid}
    assert any("stream 0" in str(n) for n in threads.values()), threads

    kernels = [e for e in events if e.get("cat") == "kernel" and e["pid"] == pid]
    assert kernels
    flow_ends = [e for e in events if e.get("cat") == "ac2g" and e.get("ph") == "f"]
    flow_starts = {}
    for e in events:
        if e.get("cat") == "ac2g" and e.get("ph") == "s":
            flow_starts.setdefault(e["id"], []).append(e)
    ops = _ops_by_correlation(trace)
    first_op = min(e["ts"] for e in ops.values())
    last_op_end = max(e["ts"] + e["dur"] for e in ops.values())
    ids = set()
    for k in kernels:
        op = ops[k["args"]["External id"]]
        ends = [f for f in flow_ends if (f["pid"], f["tid"], f["ts"]) == (k["pid"], k["tid"], k["ts"])]
        assert len(ends) == 1, (k["name"], ends)
        starts = flow_starts.get(ends[0]["id"], [])
        assert len(starts) == 1, (k["name"], starts)
        ids.add(ends[0]["id"])
        # The arrow leaves the enqueue call on the host thread, while the
        # profiled ops ran (in fused eager the call is made by the op that
        # flushed, after the op that recorded the kernel).
        assert starts[0]["pid"] == op["pid"] and starts[0]["tid"] == op["tid"]
        assert first_op - CLOCK_SLACK_US <= starts[0]["ts"] <= last_op_end + CLOCK_SLACK_US
        # Kernels queue: one starts after its op began, and before the op
        # that waited for the results (.cpu()) ended.
        assert k["ts"] >= op["ts"] - CLOCK_SLACK_US, (k, op)
        assert k["ts"] <= last_op_end + CLOCK_SLACK_US, (k, last_op_end)
        assert k["dur"] >= 0
    assert len(ids) == len(kernels)  # one flow per kernel


def test_two_streams_give_two_thread_rows(tmp_path):
    a = torch.randn(128, 128, device=DEV)
    side = torch.ocl.Stream()
    torch.ocl.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        x = a @ a
        with torch.ocl.stream(side):
            y = a * 3.0 + 1.0
        torch.ocl.synchronize()
    torch.testing.assert_close(x.cpu(), a.cpu() @ a.cpu(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(y.cpu(), a.cpu() * 3.0 + 1.0)
    trace = _trace(prof, tmp_path)
    events = trace["traceEvents"]
    tids = {e["tid"] for e in events if e.get("cat") == "kernel"}
    assert len(tids) == 2, tids
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    for t in tids:
        assert "stream" in str(names.get(t, "")), names


def test_fused_kernel_attributed_to_recording_op(tmp_path):
    """Fused eager enqueues x * 2 + 1 at .cpu(), as one kernel: the kernel
    belongs to aten::mul, the first op that recorded it, not to the copy that
    flushed it."""
    x = torch.randn(1000, device=DEV)

    def step():
        y = x * 2.0
        z = y + 1.0
        return y, z.cpu()

    with torch_ocl.eager_mode("fused"):
        step()  # the fused kernel builds in the background...
        torch_ocl.fusion.wait_for_builds()  # ...and is cached from here on
        with profile(activities=ACTIVITIES) as prof:
            _, host = step()
    torch.testing.assert_close(host, x.cpu() * 2.0 + 1.0)
    trace = _trace(prof, tmp_path)
    ops = _ops_by_correlation(trace)
    ew = [e for e in trace["traceEvents"] if e.get("cat") == "kernel" and e["name"].startswith("tocl_ew[")]
    assert ew
    fused = [k for k in ew if k["args"]["fused ops"] == 2]
    assert len(fused) == 1, [(k["name"], k["args"]) for k in ew]
    assert ops[fused[0]["args"]["External id"]]["name"] == "aten::mul"


def _train_step(model, opt, x, t):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(torch.relu(model(x)) * 0.5 + 0.1, t)
    loss.backward()
    opt.step()
    return loss.item()


def _kernel_owners(mode, tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 32, device=DEV)
    t = torch.randn(16, 8, device=DEV)
    with torch_ocl.eager_mode(mode):
        _train_step(model, opt, x, t)  # builds kernels, makes optimizer state
        torch_ocl.fusion.wait_for_builds()
        _train_step(model, opt, x, t)  # now with the fused kernels built
        torch.ocl.synchronize()
        with profile(activities=ACTIVITIES) as prof:
            _train_step(model, opt, x, t)
    trace = _trace(prof, tmp_path, f"train_{mode}.json")
    ops = _ops_by_correlation(trace)
    rows = [e for e in trace["traceEvents"] if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    return rows, ops


def test_training_step_fused_kernels_belong_to_recording_ops(tmp_path):
    strict_rows, strict_ops = _kernel_owners("strict", tmp_path)
    # In strict mode each op enqueues its own work: ops that run generated
    # elementwise kernels or fills there are those fused eager records (fill_
    # is a memset in strict mode, a recorded op in fused eager). Ops that
    # flush (mm, copies) are not among them.
    recorders = {strict_ops[k["args"]["External id"]]["name"] for k in strict_rows
                 if k["name"].startswith("tocl_ew[") or k["name"] == "Memset"}
    kernels, ops = _kernel_owners("fused", tmp_path)
    assert kernels
    for k in kernels:
        corr = k["args"]["External id"]
        assert corr in ops, ("kernel without its op", k["name"])
        if k["name"].startswith("tocl_ew["):  # enqueued at a flush, on behalf of its recorder
            assert ops[corr]["name"] in recorders, (k["name"], ops[corr]["name"], recorders)
    if not torch_ocl._C._guard_enabled():  # guard mode flushes at every free: fewer merges
        assert any(k["args"].get("fused ops", 1) > 1 for k in kernels)


def test_profiling_twice_in_one_process(tmp_path):
    for _ in range(2):
        prof = _mm_add_copy()
        assert any(e.name.startswith("tocl_") for e in _device_events(prof))


def test_no_trace_kept_when_not_profiling():
    # With the profiler off, nothing is kept: a later profile shows only its own work.
    a = torch.randn(256, device=DEV)
    for _ in range(20):
        a = a + 1.0
    torch.ocl.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        b = a * 2.0
        b.cpu()
    kernels = [e for e in _device_events(prof) if e.name.startswith("tocl_ew[")]
    assert len(kernels) == 1, [e.name for e in kernels]


LEGACY_SCRIPT = r"""
import json, torch, torch_ocl
a = torch.randn(128, 128, device="ocl")
b = torch.randn(128, 128, device="ocl")
torch.ocl.synchronize()
with torch.autograd.profiler.profile(use_device="ocl") as prof:
    c = a @ b
    d = (c + 1.0).cpu()
rows = {r.key: r.device_time_total for r in prof.key_averages()}
print(json.dumps({"mm": rows.get("aten::mm", -1), "ok": bool(torch.allclose(d, (a.cpu() @ b.cpu()) + 1.0, atol=1e-3))}))
"""


def test_legacy_use_device_ocl_times_ops_silently():
    env = dict(os.environ)
    env.pop("KINETO_LOG_LEVEL", None)  # the level torch_ocl sets unless the user chose one
    r = subprocess.run([sys.executable, "-c", LEGACY_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "", r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["ok"]
    assert out["mm"] > 0, out
