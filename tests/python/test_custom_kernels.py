"""Custom OpenCL C kernels (torch_ocl.compile_kernel, torch.ocl.compile_shader):
launches against CPU references (1-, 2-, 3-D, __local, offset views, every
scalar type), errors that name the parameter, streams, fused eager, the
profiler, custom ops with autograd and torch.compile, and the program
cache across processes (docs/custom_kernels.md)."""

import os
import subprocess
import sys
import time

import pytest
import torch
import torch_ocl
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile
from torch_ocl._profiler_support import DEVICE_ACTIVITIES

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

DEV = "ocl"

SOURCE = r"""
__kernel void axpy(__global float *y, __global const float *x, float a, int n) {
    int i = get_global_id(0);
    if (i < n)
        y[i] += a * x[i];
}

// out[r, c] = a[c, r] over a rows x cols output: a 2-D launch.
__kernel void transpose(__global T *out, __global const T *a, int rows, int cols) {
    int c = get_global_id(0), r = get_global_id(1);
    out[r * cols + c] = a[c * rows + r];
}

__kernel void index3d(__global long *out) {
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t nx = get_global_size(0), ny = get_global_size(1);
    out[(z * ny + y) * nx + x] = (long)(x + 10 * y + 100 * z);
}

// One work-group per row, a tree sum in __local memory.
__kernel void rowsum(__global const float *x, __global float *out, __local float *part, int cols) {
    int row = get_group_id(0), lid = get_local_id(0), g = get_local_size(0);
    float acc = 0.0f;
    for (int j = lid; j < cols; j += g)
        acc += x[row * cols + j];
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = g / 2; s > 0; s >>= 1) {
        if (lid < s)
            part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[row] = part[0];
}

__kernel void scalars(__global long *out, char c, uchar uc, short s, ushort us, int i, uint ui,
                      long l, ulong ul, float f, float4 v) {
    out[0] = c; out[1] = uc; out[2] = s; out[3] = us; out[4] = i; out[5] = ui; out[6] = l;
    out[7] = (long)ul; out[8] = (long)(f * 1000.0f); out[9] = (long)(v.x + 10 * v.y + 100 * v.z + 1000 * v.w);
}

__kernel void store_float(__global float *out, float f) { out[0] = f; }

__kernel void vsum(__constant float4 *v, __global float *out) {
    int i = get_global_id(0);
    float4 a = v[i];
    out[i] = a.x + a.y + a.z + a.w;
}
"""

DOUBLE_SOURCE = r"""
__kernel void scale64(__global double *y, double a) { y[get_global_id(0)] *= a; }
"""


@pytest.fixture(scope="module")
def lib():
    return torch_ocl.compile_kernel(SOURCE, options="-cl-mad-enable", defines={"T": "float"})


def test_axpy_matches_cpu_and_float_stays_float(lib):
    n = 1000
    x = torch.randn(n)
    y = torch.randn(n)
    a = 1.0 / 3.0  # a Python float: the kernel gets float32(a), as y += a * x on float32 tensors does
    yo = y.to(DEV)
    lib.axpy(yo, x.to(DEV), a, n, threads=1024, group_size=64)
    want = y + torch.tensor(a, dtype=torch.float32) * x
    torch.testing.assert_close(yo.cpu(), want, rtol=1e-6, atol=1e-6)
    out = torch.empty(1, device=DEV)
    lib.store_float(out, a, threads=1)
    assert out.item() == torch.tensor(a, dtype=torch.float32).item()


def test_default_threads_and_offset_views(lib):
    base_y = torch.arange(40, dtype=torch.float32)
    base_x = torch.arange(40, dtype=torch.float32) * 10
    yo, xo = base_y.to(DEV), base_x.to(DEV)
    # Views at element offsets 3 and 7 of their storage: the kernel's pointers start there.
    lib.axpy(yo[3:23], xo[7:27], 2.0, 20)  # threads defaults to the first tensor's numel
    want = base_y.clone()
    want[3:23] += 2.0 * base_x[7:27]
    assert torch.equal(yo.cpu(), want)


def test_2d_and_3d_launches(lib):
    rows, cols = 24, 40
    a = torch.randn(cols, rows)
    out = torch.empty(rows, cols, device=DEV)
    lib.transpose(out, a.to(DEV), rows, cols, threads=(cols, rows), group_size=(8, 4))
    assert torch.equal(out.cpu(), a.t())
    out3 = torch.zeros(5, 3, 4, dtype=torch.int64, device=DEV)
    lib.index3d(out3, threads=(4, 3, 5))
    z, y, x = torch.meshgrid(torch.arange(5), torch.arange(3), torch.arange(4), indexing="ij")
    assert torch.equal(out3.cpu(), x + 10 * y + 100 * z)


def test_local_reduction(lib):
    rows, cols, g = 33, 300, 64
    x = torch.randn(rows, cols)
    out = torch.empty(rows, device=DEV)
    lib.rowsum(x.to(DEV), out, torch_ocl.Local(g * 4), cols, threads=(rows * g,), group_size=(g,))
    torch.testing.assert_close(out.cpu(), x.sum(1), rtol=1e-5, atol=1e-4)


def test_every_scalar_type(lib):
    out = torch.zeros(10, dtype=torch.int64, device=DEV)
    lib.scalars(out, -5, 250, -30000, 65000, -(2**31), 2**32 - 1, -(2**62), 2**63 - 1, 1.5, [1.0, 2.0, 3.0, 4.0],
                threads=1)
    assert out.cpu().tolist() == [-5, 250, -30000, 65000, -(2**31), 2**32 - 1, -(2**62), 2**63 - 1, 1500, 4321]
    lib.scalars(out, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2.0, threads=1)  # one number fills every lane of a float4
    assert out.cpu().tolist()[-1] == 2222


def test_double_parameter(lib):
    if not torch.ocl.get_device_properties().has_fp64:
        pytest.skip("the device has no fp64")
    d = torch_ocl.compile_kernel(DOUBLE_SOURCE)
    y = torch.full((8,), 3.0, dtype=torch.float64, device=DEV)
    third = 1.0 / 3.0
    d.scale64(y, third)
    assert y.cpu().tolist() == [3.0 * third] * 8  # a double parameter keeps all 53 bits


def test_vector_pointer_in_constant_memory_and_alignment(lib):
    x = torch.arange(32, dtype=torch.float32)
    xo = x.to(DEV)
    out = torch.empty(7, device=DEV)
    lib.vsum(xo[4:], out, threads=7)  # a view 16 bytes in: still float4-aligned
    assert torch.equal(out.cpu(), x[4:].view(7, 4).sum(1))
    with pytest.raises(ValueError, match=r"argument 0 \(v, float4\) starts at byte offset \d+, not a multiple of its "
                                         r"element size 16"):
        lib.vsum(xo[1:29], out, threads=7)


def test_introspection(lib):
    assert set(lib.kernels) == {"axpy", "transpose", "index3d", "rowsum", "scalars", "store_float", "vsum"}
    assert lib.axpy.arg_names == ["y", "x", "a", "n"]
    assert lib.axpy.arg_types == ["__global float*", "__global const float*", "float", "int"]
    assert lib.transpose.params[1]["type"] == "float"  # T resolved through the defines
    assert lib.rowsum.params[2]["kind"] == "local"
    assert 1 <= lib.axpy.max_work_group_size <= torch.ocl.get_device_properties().max_work_group_size
    assert lib.axpy.preferred_work_group_size_multiple >= 1
    assert "axpy" in dir(lib)
    assert "#define T float" in lib.built_source and "y__tocl_off" in lib.built_source
    # MPS's name, and interning: the same source is the same library.
    again = torch.ocl.compile_shader(SOURCE.replace("T *", "float *"))
    assert again.kernels == lib.kernels
    assert torch_ocl.compile_kernel(SOURCE, options="-cl-mad-enable", defines={"T": "float"})._handle == lib._handle


def test_argument_errors_name_the_parameter(lib):
    y = torch.zeros(16, device=DEV)
    x = torch.ones(16, device=DEV)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(y, x, a, n\); got 3"):
        lib.axpy(y, x, 1.0)
    with pytest.raises(TypeError, match=r"argument 1 \(x, declared __global const float\*\) takes float32 tensors; got int64"):
        lib.axpy(y, torch.ones(16, dtype=torch.int64, device=DEV), 1.0, 16)
    with pytest.raises(TypeError, match=r"argument 1 \(x\) is a tensor on cpu"):
        lib.axpy(y, torch.ones(16), 1.0, 16)
    with pytest.raises(ValueError, match=r"argument 0 \(y\) is not contiguous"):
        lib.axpy(torch.zeros(16, 2, device=DEV)[:, 0], x, 1.0, 16)
    with pytest.raises(TypeError, match=r"kernel axpy: argument 3 \(n, declared int\) takes an int, not the float 16"):
        lib.axpy(y, x, 1.0, 16.0)
    with pytest.raises(TypeError, match=r"argument 2 \(a, declared float\) takes a number; got a tensor"):
        lib.axpy(y, x, x, 16)
    with pytest.raises(ValueError, match=r"argument 1 \(c, declared char\): 200 is out of its range \[-128, 127\]"):
        lib.scalars(torch.zeros(10, dtype=torch.int64, device=DEV), 200, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, threads=1)
    with pytest.raises(ValueError, match=r"group_size 64 does not divide threads 1000"):
        lib.axpy(y, x, 1.0, 16, threads=1000, group_size=64)
    big = lib.axpy.max_work_group_size
    with pytest.raises(ValueError, match=rf"a work-group of {2 * big} work-items is over this kernel's limit"):
        lib.axpy(y, x, 1.0, 16, threads=(big, 2), group_size=(big, 2))
    with pytest.raises(ValueError, match=r"over the device's limit"):
        lib.axpy(y, x, 1.0, 16, threads=2**30, group_size=2**30)
    with pytest.raises(ValueError, match=r"bytes of local memory"):
        lib.rowsum(x, y, torch_ocl.Local(1 << 40), 16, threads=64, group_size=64)
    with pytest.raises(ValueError):
        torch_ocl.Local(0)
    with pytest.raises(AttributeError, match=r"no kernel 'axpyy'; its kernels: axpy"):
        lib.axpyy
    assert torch.equal(y.cpu(), torch.zeros(16))  # nothing ran


def test_wrong_device_argument(lib, two_devices):
    y = torch.zeros(16, device="ocl:0")
    x = torch.ones(16, device="ocl:1")
    with pytest.raises(ValueError, match=r"argument 1 \(x\) is on ocl:1, but the kernel runs on ocl:0"):
        lib.axpy(y, x, 1.0, 16)
    # The device of the first tensor chooses where it runs: ocl:1 builds through the cache.
    y1 = torch.zeros(16, device="ocl:1")
    lib.axpy(y1, x, 2.0, 16)
    assert torch.equal(y1.cpu(), torch.full((16,), 2.0))


def test_double_without_fp64_is_refused():
    lib = torch_ocl.compile_kernel(DOUBLE_SOURCE)
    y = torch.ones(4, dtype=torch.float64, device=DEV)
    torch_ocl._C._custom_test_hide_fp64(True)
    try:
        with pytest.raises(TypeError, match=r"argument 1 \(a, declared double\): the device has no cl_khr_fp64"):
            lib.scale64(y, 2.0)
    finally:
        torch_ocl._C._custom_test_hide_fp64(False)


def test_build_error_has_log_with_line_numbers_and_process_survives():
    bad = "__kernel void broken(__global float *y) {\n    y[0] = 1.0f;\n    y[1] = undefined_name;\n}\n"
    with pytest.raises(RuntimeError) as e:
        torch_ocl.compile_kernel(bad, defines={"UNUSED": 1})
    msg = str(e.value)
    assert "undefined_name" in msg and ":3:" in msg, msg  # line 3 of the user's source, despite the define
    with pytest.raises(ValueError, match=r"defines no kernel"):
        torch_ocl.compile_kernel("float f(float x) { return x; }")
    ok = torch_ocl.compile_kernel("__kernel void fill7(__global int *y) { y[get_global_id(0)] = 7; }")
    y = torch.zeros(5, dtype=torch.int32, device=DEV)
    ok.fill7(y)
    assert y.cpu().tolist() == [7] * 5


def test_side_stream_with_events(lib):
    n = 4096
    x = torch.randn(n, device=DEV)
    y = torch.zeros(n, device=DEV)
    s = torch.ocl.Stream()
    done = torch.ocl.Event()
    s.wait_stream(torch.ocl.current_stream())
    with torch.ocl.stream(s):
        lib.axpy(y, x, 3.0, n)
        done.record()
    torch.ocl.current_stream().wait_event(done)
    torch.testing.assert_close((y - 3.0 * x).abs().max().cpu(), torch.tensor(0.0))


def test_kernel_sees_recorded_ops_in_fused_eager(lib):
    with torch_ocl.eager_mode("fused"):
        x = torch.arange(64, dtype=torch.float32, device=DEV)
        z = x * 2 + 1  # recorded, not yet run
        y = torch.zeros(64, device=DEV)
        lib.axpy(y, z, 1.0, 64)
        assert torch.equal(y.cpu(), torch.arange(64, dtype=torch.float32) * 2 + 1)


@pytest.mark.skipif(not DEVICE_ACTIVITIES, reason="this torch has no PrivateUse1 profiler registry")
def test_profiler_row_under_kernel_name(lib):
    y = torch.zeros(256, device=DEV)
    x = torch.ones(256, device=DEV)
    torch.ocl.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        lib.axpy(y, x, 1.0, 256)
        torch.ocl.synchronize()
    device_rows = [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1 and e.name == "axpy"]
    cpu_rows = [e for e in prof.events() if e.name == "ocl_kernel::axpy"]
    assert len(device_rows) == 1 and len(cpu_rows) == 1
    assert device_rows[0].device_time_total > 0


# ---- custom ops: autograd, opcheck, torch.compile ----

_AXPY = None


def _axpy_op():
    global _AXPY
    if _AXPY is not None:
        return _AXPY
    k = torch_ocl.compile_kernel(SOURCE, options="-cl-mad-enable", defines={"T": "float"})

    @torch.library.custom_op("test_custom_kernels::axpy", mutates_args=(), device_types="ocl")
    def axpy(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
        out = y.clone()
        k.axpy(out, x.contiguous(), a, out.numel())
        return out

    axpy.register_fake(lambda x, y, a: torch.empty_like(y))

    def setup(ctx, inputs, output):
        ctx.a = inputs[2]

    axpy.register_autograd(lambda ctx, g: (g * ctx.a, g, None), setup_context=setup)
    _AXPY = axpy
    return axpy


def test_custom_op_eager_autograd_and_opcheck():
    axpy = _axpy_op()
    x = torch.randn(100, device=DEV, requires_grad=True)
    y = torch.randn(100, device=DEV, requires_grad=True)
    out = axpy(x, y, 2.5)
    torch.testing.assert_close(out.detach().cpu(), y.detach().cpu() + 2.5 * x.detach().cpu())
    out.sum().backward()
    assert torch.equal(x.grad.cpu(), torch.full((100,), 2.5)) and torch.equal(y.grad.cpu(), torch.ones(100))
    # torch's autograd_registration check is NYI for devices other than
    # CPU/CUDA/XPU (the gradients are checked above), and its AOT dispatch
    # check takes 20 s here (the compile test below covers AOTAutograd).
    torch.library.opcheck(axpy, (torch.randn(8, device=DEV, requires_grad=True),
                                 torch.randn(8, device=DEV, requires_grad=True), 0.5),
                          test_utils=("test_schema", "test_faketensor"))


def test_custom_op_compiles_to_one_graph_with_one_extern_node():
    from torch._dynamo.testing import CompileCounterWithBackend

    axpy = _axpy_op()
    torch._dynamo.reset()
    torch_ocl.reset_compile_stats()

    def f(x, y):
        return torch.relu(axpy(x * 2, y, 0.5)) + 1

    counter = CompileCounterWithBackend("ocl")
    compiled = torch.compile(f, backend=counter, fullgraph=True)
    x = torch.randn(64, device=DEV, requires_grad=True)
    y = torch.randn(64, device=DEV, requires_grad=True)
    got = compiled(x, y)
    want = f(x.detach(), y.detach())
    torch.testing.assert_close(got.detach().cpu(), want.cpu())
    got.sum().backward()
    assert counter.frame_count == 1  # one graph, no break
    s = torch_ocl.compile_stats()
    assert s["extern_by_op"].get("test_custom_kernels::axpy", 0) >= 1, s
    assert torch.equal(x.grad.cpu(), (want.cpu() > 1).float())  # d/dx relu(y + x) + 1


def test_rmsnorm_example_matches_cpu():
    import custom_kernel_rmsnorm as ex

    assert ex.check(rows=33, dim=100) < 1e-3
    x = torch.randn(4, 6, 32, device=DEV)
    w = torch.rand(32, device=DEV)
    compiled = torch.compile(lambda x, w: ex.rms_norm(x, w) * 2.0, backend="ocl", fullgraph=True)
    torch.testing.assert_close(compiled(x, w).cpu(),
                               torch.nn.functional.rms_norm(x.cpu(), (32,), w.cpu(), 1e-6) * 2.0,
                               rtol=1e-4, atol=1e-5)


CHILD = (
    "import sys, torch, torch_ocl\n"
    "from torch_ocl import _C\n"
    "y = torch.zeros(16, device='ocl')\n"
    "x = torch.ones(16, device='ocl')\n"
    "_C._reset_program_stats()\n"
    "lib = torch_ocl.compile_kernel(sys.stdin.read())\n"
    "lib.axpy(y, x, 2.0, 16)\n"
    "assert y.cpu().tolist() == [2.0] * 16\n"
    "s = _C._program_stats()\n"
    "print(s['builds'], s['disk_hits'])\n"
)


def test_second_process_builds_nothing():
    # A source no earlier run has seen: this process builds it and writes it
    # to the disk cache, which a child process with the same settings reads.
    nonce = f"{os.getpid()}_{time.time_ns()}"
    src = (f"__kernel void nonce_{nonce}(void) {{}}\n"
           "__kernel void axpy(__global float *y, __global const float *x, float a, int n) {\n"
           "    int i = get_global_id(0); if (i < n) y[i] += a * x[i];\n}\n")
    before = torch_ocl._C._program_stats()
    torch_ocl.compile_kernel(src)
    torch_ocl._C._program_cache_flush()  # CPU devices write it when builds go quiet
    after = torch_ocl._C._program_stats()
    assert after["builds"] == before["builds"] + 1
    if after["disk_writes"] == before["disk_writes"]:
        pytest.skip("the disk program cache is off or not writable here")
    r = subprocess.run([sys.executable, "-c", CHILD], input=src, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    builds, hits = map(int, r.stdout.split()[-2:])
    assert builds == 0 and hits >= 1
