"""torch_ocl.transfer_to_ocl: an unchanged CUDA script runs on ocl.

Each in-process test applies the shim and undoes it (the `shim` fixture),
and the first test checks that undo leaves torch as it was. Where a whole
process is the unit (python -m ..., the exit log, library probes, the
nanoGPT fixture) the test runs a subprocess.
"""

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_ocl
from torch_ocl import _transfer
from torch_ocl._transfer import cuda_shim

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "port")


@pytest.fixture
def shim():
    assert _transfer.apply()
    try:
        yield
    finally:
        _transfer.undo()


def _run(args, env=None, timeout=600, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, env=e, timeout=timeout, cwd=cwd)


def _snapshot():
    import torch.distributed as dist
    import torch.utils._device as ud

    return {
        "torch.cuda": torch.cuda,
        "sys.modules[torch.cuda]": sys.modules["torch.cuda"],
        "sys.modules[torch.cuda.amp]": sys.modules["torch.cuda.amp"],
        "torch.zeros": torch.zeros,
        "torch.tensor": torch.tensor,
        "torch.load": torch.load,
        "torch.Generator": torch.Generator,
        "torch.Stream": torch.Stream,
        "torch.is_autocast_enabled": torch.is_autocast_enabled,
        "Tensor.__dict__": sorted(torch.Tensor.__dict__),
        "Module.to": torch.nn.Module.to,
        "DeviceContext.__init__": ud.DeviceContext.__init__,
        "autocast.__init__": torch.amp.autocast_mode.autocast.__init__,
        "GradScaler.__init__": torch.amp.GradScaler.__init__,
        "dist.init_process_group": dist.init_process_group,
        "meta_path": list(sys.meta_path),
    }


def test_undo_restores_everything():
    before = _snapshot()
    _transfer.apply()
    assert _transfer.apply() is False  # applying twice is a no-op
    during = _snapshot()
    changed = [k for k in before if before[k] is not during[k] and before[k] != during[k]]
    assert set(changed) >= {"torch.cuda", "torch.zeros", "torch.load", "torch.Generator", "Module.to",
                             "DeviceContext.__init__", "autocast.__init__", "Tensor.__dict__"}
    _transfer.undo()
    after = _snapshot()
    for k in before:
        assert after[k] is before[k] or after[k] == before[k], k
    assert not _transfer.is_applied()
    with pytest.raises((RuntimeError, AssertionError, AttributeError)):
        torch.zeros(1, device="cuda")  # the real CUDA-less answer again


# -- every place a device is given ------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: torch.zeros(3, device="cuda"),
    lambda: torch.ones(2, 2, device="cuda:0"),
    lambda: torch.randn(4, device=torch.device("cuda")),
    lambda: torch.arange(5, device="cuda"),
    lambda: torch.tensor([1.0, 2.0], device="cuda"),
    lambda: torch.full((2,), 7.0, device="cuda"),
    lambda: torch.empty(3, device="cuda"),
    lambda: torch.zeros_like(torch.ones(2), device="cuda"),
    lambda: torch.ones(2).new_zeros(3, device="cuda"),
    lambda: torch.ones(2).cuda(),
    lambda: torch.ones(2).to("cuda"),
    lambda: torch.ones(2).to(torch.device("cuda:0")),
    lambda: torch.ones(2).to(device="cuda", dtype=torch.float16),
    lambda: torch.ones(2).pin_memory().to("cuda", non_blocking=True),
], ids=["zeros", "ones:0", "randn-device", "arange", "tensor", "full", "empty", "zeros_like", "new_zeros",
        ".cuda()", ".to(str)", ".to(device)", ".to(kw)", "pin_memory"])
def test_tensor_lands_on_ocl(shim, make):
    t = make()
    assert t.device.type == "ocl"
    assert t.is_cuda  # scripts assert it


def test_values_survive_the_move(shim):
    cpu = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(cpu.cuda().cpu(), cpu)
    assert torch.equal(cpu.pin_memory().to("cuda", non_blocking=True).cpu(), cpu)
    assert not cpu.is_cuda


def test_device_index_is_kept(shim):
    if torch.ocl.device_count() < 2:
        pytest.skip("needs two ocl devices")
    assert torch.ones(1).cuda(1).device == torch.device("ocl", 1)
    assert torch.ones(1).to("cuda:1").device == torch.device("ocl", 1)
    assert torch.zeros(1, device=torch.device("cuda", 1)).device == torch.device("ocl", 1)


def test_torch_device_stays_cuda_and_is_consumed_as_ocl(shim):
    # torch.device is not rewritten (see devices.py): the script keeps its own
    # "cuda" device object, and everything that consumes it gives ocl.
    dev = torch.device("cuda:0")
    assert dev.type == "cuda"
    assert torch.zeros(1, device=dev).device == torch.device("ocl", 0)


def test_modules(shim):
    m = torch.nn.Linear(3, 2).cuda()
    assert m.weight.device.type == "ocl"
    assert torch.nn.Linear(3, 2, device="cuda").weight.device.type == "ocl"
    m2 = torch.nn.Linear(3, 2)
    w = m2.weight
    m2.to(torch.device("cuda"))
    assert m2.weight is w and w.device.type == "ocl"  # Parameter identity kept, as on CUDA
    m3 = torch.nn.Linear(3, 2).to("cuda", torch.float16)
    assert m3.weight.dtype == torch.float16 and m3.weight.device.type == "ocl"


def test_default_device_and_device_context(shim):
    with torch.device("cuda"):
        assert torch.empty(2).device.type == "ocl"
        assert torch.nn.Linear(2, 2).weight.device.type == "ocl"
    assert torch.empty(2).device.type == "cpu"
    torch.set_default_device("cuda")
    try:
        assert torch.zeros(1).device.type == "ocl"
        assert torch.get_default_device().type == "ocl"
    finally:
        torch.set_default_device(None)
    assert torch.zeros(1).device.type == "cpu"


def test_generator(shim):
    g = torch.Generator(device="cuda")
    assert g.device.type == "ocl"
    assert isinstance(g, torch.Generator) and isinstance(torch.default_generator, torch.Generator)
    g.manual_seed(3)
    a = torch.randn(8, device="cuda", generator=g)
    g.manual_seed(3)
    b = torch.randn(8, device="cuda", generator=g)
    assert torch.equal(a.cpu(), b.cpu())


def test_manual_seed(shim):
    torch.cuda.manual_seed(11)
    a = torch.rand(16, device="cuda").cpu()
    torch.cuda.manual_seed_all(11)
    b = torch.rand(16, device="cuda").cpu()
    assert torch.equal(a, b)


def _cuda_checkpoint(monkeypatch):
    """Bytes of a checkpoint whose storages are tagged 'cuda:0', as one saved on a GPU."""
    import torch.serialization as ser

    monkeypatch.setattr(ser, "location_tag", lambda storage: "cuda:0")
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4.0)}, buf)
    monkeypatch.undo()
    return buf.getvalue()


@pytest.mark.parametrize("map_location", [None, "cuda", torch.device("cuda:0"), {"cuda:0": "cuda:0"}],
                         ids=["none", "str", "device", "dict"])
def test_load_cuda_checkpoint(monkeypatch, map_location):
    data = _cuda_checkpoint(monkeypatch)
    with pytest.raises(RuntimeError):  # without the shim: no CUDA to restore to
        torch.load(io.BytesIO(data), map_location=map_location)
    _transfer.apply()
    try:
        w = torch.load(io.BytesIO(data), map_location=map_location)["w"]
        assert w.device.type == "ocl" and torch.equal(w.cpu(), torch.arange(4.0))
        assert torch.load(io.BytesIO(data), map_location="cpu")["w"].device.type == "cpu"
    finally:
        _transfer.undo()


# -- amp ---------------------------------------------------------------------------------

def test_autocast_cuda_is_ocl_autocast(shim):
    a, b = torch.randn(4, 4, device="cuda"), torch.randn(4, 4, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("ocl")
        assert (a @ b).dtype == torch.bfloat16
    with torch.amp.autocast(device_type="cuda", dtype=torch.float16):
        assert (a @ b).dtype == torch.float16
    with torch.cuda.amp.autocast():
        assert (a @ b).dtype == torch.float16
    from torch.cuda.amp import autocast

    with autocast(dtype=torch.bfloat16):
        assert torch.get_autocast_dtype("ocl") == torch.bfloat16
    assert not torch.is_autocast_enabled("ocl")


@pytest.mark.parametrize("make", [lambda: torch.amp.GradScaler("cuda"), lambda: torch.amp.GradScaler(),
                                  lambda: torch.cuda.amp.GradScaler()], ids=["amp-cuda", "amp-default", "cuda.amp"])
def test_grad_scaler(shim, make):
    scaler = make()
    assert scaler._device == "ocl"
    w = torch.nn.Parameter(torch.ones(3, device="cuda"))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler.scale((w * 2).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert torch.allclose(w.detach().cpu(), torch.full((3,), 0.8))


# -- the torch.cuda module ----------------------------------------------------------------

def test_device_queries(shim):
    assert torch.cuda.is_available()
    assert torch.cuda.device_count() == torch.ocl.device_count()
    assert torch.cuda.current_device() == torch.ocl.current_device()
    assert torch.cuda.get_device_name() == torch.ocl.get_device_name()
    assert torch.cuda.is_bf16_supported()
    torch.cuda.set_device("cuda:0")
    torch.cuda.set_device(torch.device("cuda", 0))
    with torch.cuda.device("cuda:0"):
        torch.cuda.synchronize()
    torch.cuda.synchronize("cuda")


def test_capability_is_a_tuple(shim, monkeypatch):
    assert torch.cuda.get_device_capability() == (8, 0)
    assert torch.cuda.get_device_capability(0) >= (7, 0)
    monkeypatch.setenv("TORCH_OCL_CUDA_CAPABILITY", "9.0")
    assert torch.cuda.get_device_capability() == (9, 0)
    monkeypatch.setenv("TORCH_OCL_CUDA_CAPABILITY", "nine")
    with pytest.raises(ValueError, match="TORCH_OCL_CUDA_CAPABILITY"):
        torch.cuda.get_device_capability()


def test_device_properties(shim):
    p = torch.cuda.get_device_properties(0)
    q = torch.ocl.get_device_properties(0)
    assert (p.major, p.minor) == (8, 0)
    assert p.total_memory == q.total_memory and p.name == q.name
    assert p.multi_processor_count == q.compute_units
    with pytest.raises(AttributeError, match="ocl device properties have no 'L2_cache_size'"):
        p.L2_cache_size


def test_memory_functions(shim):
    x = torch.empty(1 << 20, device="cuda")
    assert torch.cuda.memory_allocated() == torch.ocl.memory_allocated() >= x.numel() * 4
    assert torch.cuda.max_memory_allocated("cuda:0") >= torch.cuda.memory_allocated("cuda:0")
    assert torch.cuda.memory_reserved(torch.device("cuda")) == torch.ocl.memory_reserved()
    assert torch.cuda.memory_cached() == torch.ocl.memory_reserved()  # deprecated alias
    assert "allocated_bytes.all.current" in torch.cuda.memory_stats()
    assert isinstance(torch.cuda.memory_summary(), str)
    torch.cuda.reset_peak_memory_stats()
    del x
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info()
    assert 0 < free <= total
    from torch.cuda.memory import memory_allocated

    assert memory_allocated() == torch.ocl.memory_allocated()


def test_memory_fraction(shim):
    total = torch.ocl.get_device_properties(0).total_memory
    try:
        torch.cuda.set_per_process_memory_fraction(0.5, 0)
        assert torch.ocl.memory_stats(0)["limit_bytes"] == int(total * 0.5)
        with pytest.raises(ValueError, match=r"not in \[0, 1\]"):
            torch.cuda.set_per_process_memory_fraction(1.5)
    finally:
        torch.ocl.set_per_process_memory_limit(0, 0)


def test_streams_and_events(shim):
    s = torch.cuda.Stream()
    assert isinstance(s, torch.ocl.Stream) and isinstance(s, torch.cuda.Stream)
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
        y = torch.ones(64, device="cuda") * 2
    with torch.cuda.StreamContext(s):
        assert torch.cuda.current_stream() == s
    assert not isinstance(s, torch.cuda.StreamContext) and not isinstance(s, torch.cuda.graph)
    torch.cuda.current_stream().wait_stream(s)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    (y * 3).sum()
    end.record()
    torch.cuda.synchronize()
    assert start.elapsed_time(end) >= 0
    assert torch.Stream(device="cuda").device_type == torch.Stream(device="ocl").device_type
    assert torch.Event(device="cuda").device.type == "ocl"
    assert isinstance(torch.Stream(device="cuda"), torch.Stream)


def test_nvtx_ranges_are_profiler_ranges(shim):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with torch.cuda.nvtx.range("shim_range_{}", 1):
            torch.ones(4, device="cuda").sum()
        torch.cuda.nvtx.range_push("shim_push")
        torch.ones(4, device="cuda").sum()
        torch.cuda.nvtx.range_pop()
    names = {e.key for e in prof.key_averages()}
    assert {"shim_range_1", "shim_push"} <= names


def test_cuda_graphs_capture_on_ocl(shim):
    assert torch.cuda.is_current_stream_capturing() is False
    x = torch.ones(8, device="cuda")
    g = torch.cuda.CUDAGraph()
    assert isinstance(g, torch.ocl.OCLGraph)
    with torch.cuda.graph(g):
        assert torch.cuda.is_current_stream_capturing() is True
        y = x * 3 + 1
    x.fill_(2.0)
    g.replay()
    assert torch.equal(y.cpu(), torch.full((8,), 7.0))
    for call in (lambda: torch.cuda.make_graphed_callables(None, None), lambda: torch.cuda.graph_pool_handle()):
        with pytest.raises(NotImplementedError, match="transfer_to_ocl"):
            call()


def test_missing_name_is_a_clear_attribute_error(shim):
    assert not hasattr(torch.cuda, "current_blas_handle")
    with pytest.raises(AttributeError, match="torch.ocl has no 'current_blas_handle'"):
        torch.cuda.current_blas_handle()
    assert _transfer.patchset.missing["current_blas_handle"] >= 1


def test_new_torch_ocl_names_are_picked_up(shim, monkeypatch):
    # The shim forwards by name at call time, not from a copied list.
    ocl_module = sys.modules["torch_ocl._device_module"]
    monkeypatch.setattr(ocl_module, "utilization", lambda device=None: ("ocl says", device), raising=False)
    assert torch.cuda.utilization("cuda:0") == ("ocl says", "ocl:0")
    monkeypatch.delattr(ocl_module, "utilization")
    assert not hasattr(torch.cuda, "utilization")


def test_backend_flags_settable_and_probes_real():
    cudnn_real = torch.backends.cudnn.is_available()  # compiled in: True on CUDA wheels, whatever the machine
    _transfer.apply()
    # A script runs in a process of its own; in this one, importing
    # torch.testing._internal (another test file may have) freezes the
    # backend flags, so set them as torch's own tests do.
    try:
        with torch.backends.__allow_nonbracketed_mutation():
            _flags_under_shim(cudnn_real)
    finally:
        _transfer.undo()


def _flags_under_shim(cudnn_real):
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = False
    assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.benchmark
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    assert torch.backends.cudnn.is_available() == cudnn_real
    with cuda_shim.real_cuda_answers():
        assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0


def test_compile_default_backend_under_shim(shim):
    torch_ocl.reset_compile_stats()

    def f(x, w):
        return torch.relu(x @ w + 1.0).sum(dim=-1)

    x, w = torch.randn(8, 16), torch.randn(16, 4)
    got = torch.compile(f)(x.cuda(), w.to("cuda"))
    assert got.device.type == "ocl"
    torch.testing.assert_close(got.cpu(), f(x, w), rtol=1e-4, atol=1e-4)
    assert torch_ocl.compile_stats()["graphs"] >= 1
    torch._dynamo.reset()


def test_nccl_runs_on_the_ocl_backend(shim):
    import torch.distributed as dist

    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert dist.get_backend() == "cpu:gloo,ocl:oclgloo"
        t = torch.ones(3, device="cuda")
        dist.all_reduce(t)
        assert t.device.type == "ocl" and t.cpu().tolist() == [1.0, 1.0, 1.0]
    finally:
        dist.destroy_process_group()


def test_nccl_without_an_ocl_backend_is_refused_with_the_reason(shim, monkeypatch):
    import torch.distributed as dist

    monkeypatch.delitem(dist.Backend.default_device_backend_map, "ocl", raising=False)
    with pytest.raises(RuntimeError, match="no distributed backend"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    assert not dist.is_initialized()


def test_nccl_maps_to_a_registered_ocl_backend(monkeypatch):
    import torch.distributed as dist

    from torch_ocl._transfer import distributed

    monkeypatch.setitem(dist.Backend.default_device_backend_map, "ocl", "oclgloo")
    assert distributed.map_backend("nccl") == "cpu:gloo,ocl:oclgloo"
    assert distributed.map_backend("gloo") == "gloo"


# -- whole processes ----------------------------------------------------------------------

def test_run_script_with_its_argv(tmp_path):
    script = tmp_path / "argv_probe.py"
    script.write_text(textwrap.dedent("""
        import json, sys, torch
        x = torch.ones(2, device="cuda")
        json.dump({"argv": sys.argv, "name": __name__, "device": str(x.device),
                   "path0": sys.path[0]}, open(sys.argv[-1], "w"))
    """))
    out = tmp_path / "out.json"
    r = _run(["-m", "torch_ocl.transfer_to_ocl", str(script), "--flag", "v", str(out)])
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text())
    assert got == {"argv": [str(script), "--flag", "v", str(out)], "name": "__main__", "device": "ocl:0",
                   "path0": str(tmp_path)}
    r = _run(["-m", "torch_ocl.transfer_to_ocl", str(tmp_path / "nope.py")])
    assert r.returncode == 2 and "no such script" in r.stderr


def test_import_form_and_exit_log(tmp_path):
    script = tmp_path / "logged.py"
    script.write_text(textwrap.dedent("""
        import torch_ocl.transfer_to_ocl
        import torch
        for _ in range(3):
            torch.zeros(2, device="cuda")
        torch.ones(2).cuda()
        torch.cuda.synchronize()
        try:
            torch.cuda.current_blas_handle()
        except AttributeError:
            pass
    """))
    r = _run([str(script)], env={"TORCH_OCL_TRANSFER_LOG": "1"})
    assert r.returncode == 0, r.stderr
    log = r.stderr
    assert "torch_ocl.transfer_to_ocl: calls rewritten for ocl" in log
    lines = {ln.split()[-1]: int(ln.split()[0]) for ln in log.splitlines() if ln.startswith("  ")}
    assert lines["torch.zeros"] == 3 and lines["torch.Tensor.cuda"] == 1
    assert lines["torch.cuda.synchronize"] >= 1 and lines["torch.cuda.current_blas_handle"] == 1
    assert "ops that ran on the CPU (fallback): none" in log
    r = _run([str(script)], env={"TORCH_OCL_TRANSFER_LOG": "0"})
    assert r.returncode == 0 and "calls rewritten" not in r.stderr


def test_library_probes_keep_the_real_answer(tmp_path):
    # A stand-in flash_attn install (package + metadata): transformers asks
    # "installed and CUDA up?"; under the shim CUDA looks up, so without the
    # probe row the answer would be True and transformers would load CUDA kernels.
    pkg = tmp_path / "flash_attn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('__version__ = "2.6.3"\n')
    meta = tmp_path / "flash_attn-2.6.3.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.6.3\n")
    (meta / "top_level.txt").write_text("flash_attn\n")
    code = textwrap.dedent("""
        import json, sys, torch
        import torch_ocl.transfer_to_ocl
        import transformers.utils.import_utils as iu
        from transformers.utils import is_flash_attn_2_available as reexported
        probe = iu.is_flash_attn_2_available
        out = {"shim_cuda": torch.cuda.is_available(), "probe": probe(), "reexported": reexported(),
               "tf_cuda_after": iu.is_torch_cuda_available()}
        probe.__wrapped__.cache_clear()
        out["without_row"] = probe.__wrapped__()
        print(json.dumps(out))
    """)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path)] + sys.path)}
    r = _run(["-c", code], env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == {"shim_cuda": True, "probe": False, "reexported": False, "tf_cuda_after": True,
                   "without_row": True}


def _nanogpt(tmp_path, tag, extra, shim):
    out = tmp_path / f"{tag}.json"
    script = os.path.join(FIXTURES, "nanogpt_cuda.py")
    args = (["-m", "torch_ocl.transfer_to_ocl"] if shim else []) + [script, "--iters", "20", "--out", str(out)]
    r = _run(args + extra, env={"TORCH_OCL_FALLBACK": "error", "TORCH_OCL_TRANSFER_LOG": "1"})
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(out.read_text()), r.stderr


@pytest.mark.parametrize("dtype,compile_", [("bfloat16", 1), ("float16", 0)], ids=["bf16-compile", "fp16-eager"])
def test_nanogpt_cuda_script_runs_unchanged(tmp_path, dtype, compile_):
    extra = ["--dtype", dtype, "--compile", str(compile_)]
    res, log = _nanogpt(tmp_path, "ocl", extra, shim=True)
    cpu, _ = _nanogpt(tmp_path, "cpu", extra + ["--device", "cpu", "--compile", "0"], shim=False)
    losses = res["losses"]
    assert res["dtype"] == dtype and len(losses) == 20
    assert all(l == l and l < 10 for l in losses), losses  # finite
    assert sum(losses[-3:]) / 3 < 0.6 * sum(losses[:3]) / 3, losses
    # Same seed, same CPU-made weights and batches: the curve follows the CPU's
    # (16-bit autocast on both, different summation orders, so loosely).
    for step, (a, b) in enumerate(zip(losses, cpu["losses"])):
        assert abs(a - b) <= 0.02 * (1 + step) * abs(b) + 1e-3, (step, losses, cpu["losses"])
    assert res["param_devices"] == ["ocl"] and res["all_is_cuda"] is True
    assert res["fused"] is True  # nanoGPT asks for fused AdamW on "cuda": ocl has _fused_adamw_
    assert "ops that ran on the CPU (fallback): none" in log
    assert "torch.autocast" in log and "torch.cuda.amp.GradScaler" in log and "torch.Tensor.to" in log
    graphs = int(log.split("torch.compile on ocl: ")[1].split()[0])
    assert (graphs >= 1) == bool(compile_), log[-2000:]  # the default backend sent the graphs to ocl
    assert ", 0 node(s) on the CPU" in log


def _hf(tmp_path, precision, shim, integration=False):
    out = tmp_path / f"hf-{precision}-{shim}-{integration}.json"
    script = os.path.join(FIXTURES, "hf_trainer_cuda.py")
    args = [script, "--precision", precision, "--out", str(out), "--workdir", str(tmp_path / "work")]
    if shim:
        args = ["-m", "torch_ocl.transfer_to_ocl"] + args
    elif integration:
        args += ["--ocl-accelerate"]
    else:
        args += ["--use-cpu"]
    # One device: with two, Trainer wraps the model in DataParallel (refused under the shim, see targets.py).
    r = _run(args, env={"TORCH_OCL_FALLBACK": "error", "TORCH_OCL_DEVICES": "0"})
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_hf_trainer_cuda_script_runs_unchanged(tmp_path, precision):
    res = _hf(tmp_path, precision, shim=True)
    assert res["steps"] == 3 and res["param_devices"] == ["ocl"]
    assert res["device"] == "cuda:0"  # what Trainer believes; the tensors are on ocl
    cpu = _hf(tmp_path, "bf16", shim=False)  # the CPU's autocast: bfloat16 only
    assert len(res["losses"]) == 3 and all(l == l for l in res["losses"])
    for a, b in zip(res["losses"], cpu["losses"]):
        assert abs(a - b) <= 0.02 * abs(b), (res["losses"], cpu["losses"])


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_hf_trainer_with_accelerate_integration(tmp_path, precision):
    # A script written for ocl, not CUDA: one call routes accelerate and
    # Trainer to the device (without it they train on the CPU).
    res = _hf(tmp_path, precision, shim=False, integration=True)
    assert res["steps"] == 3 and res["param_devices"] == ["ocl"], res
    assert res["device"] == "ocl:0", res
    if precision == "fp16":
        assert res["scaler"] == "GradScaler" and res["scaler_device"] == "ocl", res
    else:
        assert res["scaler"] is None, res
    cpu = _hf(tmp_path, "bf16", shim=False)
    assert all(l == l for l in res["losses"]) and len(res["losses"]) == 3
    for a, b in zip(res["losses"], cpu["losses"]):
        assert abs(a - b) <= 0.02 * abs(b), (res["losses"], cpu["losses"])


def test_accelerate_integration_enable_disable():
    accelerate = pytest.importorskip("accelerate")
    import torch_ocl.integrations.accelerate as ocl_acc
    from accelerate.state import PartialState
    from accelerate.utils import modeling

    before = (accelerate.Accelerator.__init__, modeling.get_grad_scaler, os.environ.get("ACCELERATE_TORCH_DEVICE"))
    PartialState._reset_state()
    try:
        assert ocl_acc.enable() == torch.device("ocl", 0)
        assert ocl_acc.is_enabled()
        assert PartialState().device == torch.device("ocl", 0)
        assert PartialState().default_device.type == "ocl"
    finally:
        ocl_acc.disable()
        PartialState._reset_state()
    assert not ocl_acc.is_enabled()
    assert (accelerate.Accelerator.__init__, modeling.get_grad_scaler,
            os.environ.get("ACCELERATE_TORCH_DEVICE")) == before
    assert PartialState().device.type == "cpu"  # accelerate's own choice again
    PartialState._reset_state()
    # Too late: accelerate has already picked the CPU.
    PartialState(cpu=True)
    try:
        with pytest.raises(RuntimeError, match="must run before the first Accelerator"):
            ocl_acc.enable()
        assert not ocl_acc.is_enabled()
    finally:
        PartialState._reset_state()


def test_data_parallel(shim):
    m = torch.nn.Linear(2, 2).cuda()
    dp = torch.nn.DataParallel(m, device_ids=[0])
    x = torch.randn(3, 2, device="cuda")
    assert torch.equal(dp(x).cpu(), m(x).cpu())
    if torch.ocl.device_count() > 1:
        with pytest.raises(RuntimeError, match="TORCH_OCL_DEVICES=0"):
            torch.nn.DataParallel(m)


@pytest.mark.parametrize("device_map", ["cuda", "auto", {"": 0}, {"": "cuda:0"}], ids=["cuda", "auto", "int", "dict"])
def test_from_pretrained_device_map(shim, tmp_path, device_map):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=1, n_head=2)
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path)
    m = transformers.GPT2LMHeadModel.from_pretrained(tmp_path, device_map=device_map)
    assert {p.device.type for p in m.parameters()} == {"ocl"}
    ids = torch.arange(8, device="cuda")[None]
    ref = transformers.GPT2LMHeadModel.from_pretrained(tmp_path)  # on the CPU
    torch.testing.assert_close(m(ids).logits.cpu(), ref(ids.cpu()).logits, rtol=1e-4, atol=1e-4)


def test_torchscript_of_factory_calls(shim):
    class M(torch.nn.Module):
        def forward(self, x):
            return x + torch.zeros(3, device=x.device)

    s = torch.jit.script(M())
    assert torch.equal(s(torch.ones(3, device="cuda")).cpu(), torch.ones(3))


def test_run_module_form(tmp_path):
    (tmp_path / "cuda_mod.py").write_text(
        "import sys, torch\nprint(sys.argv[1:], torch.zeros(1, device='cuda').device)\n")
    r = _run(["-m", "torch_ocl.transfer_to_ocl", "-m", "cuda_mod", "x", "--y"],
             env={"PYTHONPATH": os.pathsep.join([str(tmp_path)] + sys.path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "['x', '--y'] ocl:0"
