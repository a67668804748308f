"""Compiled pointwise segments (python/torch_ocl/compile/segments.py): each
lowered segment must equal eager on ocl bit for bit and the CPU within
rounding, in both eager modes, and build no program for a new size."""

import pytest
import torch

import torch_ocl

OCL = "ocl"


@pytest.fixture(autouse=True, params=["fused", "strict"])
def eager_mode(request):
    torch._dynamo.reset()
    torch_ocl.reset_compile_stats()
    with torch_ocl.fusion.eager_mode(request.param):
        yield request.param
    torch._dynamo.reset()


def _as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def _check(fn, *args, dynamic=False, min_segments=1, cpu_tol=1e-6):
    """Compiled fn against eager on ocl (exact) and on the CPU."""
    out = _as_tuple(torch.compile(fn, backend="ocl", dynamic=dynamic)(*args))
    ref = _as_tuple(fn(*args))
    cpu = _as_tuple(fn(*(a.cpu() if isinstance(a, torch.Tensor) else a for a in args)))
    for o, r, c in zip(out, ref, cpu):
        assert o.dtype == r.dtype and o.shape == r.shape
        torch.testing.assert_close(o.cpu(), r.cpu(), rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(o.cpu(), c, rtol=cpu_tol, atol=cpu_tol, equal_nan=True)
    s = torch_ocl.compile_stats()
    assert s["segments_lowered"] >= min_segments, s
    assert s["segment_runtime_fallbacks"] == 0, s
    return s


def test_chain_is_one_segment():
    x = torch.randn(64, device=OCL)
    s = _check(lambda x: torch.relu(x * 1.5 + 0.25).sigmoid() - x, x)
    assert s["segments_lowered"] == 1 and s["nodes_fused"] == 5, s


def test_broadcast():
    x, y, z = torch.randn(4, 8, device=OCL), torch.randn(8, device=OCL), torch.randn(4, 1, device=OCL)
    _check(lambda x, y, z: torch.tanh(x + y * z) * z, x, y, z)


def test_non_contiguous_inputs():
    a = torch.randn(8, 6, device=OCL)
    b = torch.randn(6, 16, device=OCL)
    out = _check(lambda a, b: (a.t() * 2 + b[:, ::2]).exp(), a, b)
    assert out["segments_lowered"] >= 1


def test_permuted_input_gives_permuted_output():
    a = torch.randn(5, 7, device=OCL).t()
    r = torch.compile(lambda a: a * 3 + 1, backend="ocl")(a)
    assert r.stride() == (a * 3 + 1).stride()


def test_permuted_slice_gives_the_traced_layout():
    """q out of a fused qkv projection: a permuted slice of a larger buffer (not dense).
    The graph is traced with TensorIterator's output strides, (B, L, H, D) in memory;
    a later transpose(1, 2) + view relies on them (ModernBERT compiled failed with
    "view size is not compatible" while segments allocated such outputs contiguous)."""
    B, L, H, D = 2, 8, 4, 8
    qkv = torch.randn(B, L, 3 * H * D, device=OCL)
    rot = torch.randn(1, 1, L, D, device=OCL)

    def f(qkv, rot):
        q = qkv.view(B, L, 3, H, D)[:, :, 0].transpose(1, 2)  # [B, H, L, D], strides (L*3HD, D, 3HD, 1)
        y = q * rot + q
        return y.transpose(1, 2).contiguous().view(B, L, H * D) * 2

    _check(f, qkv, rot)
    q = qkv.view(B, L, 3, H, D)[:, :, 0].transpose(1, 2)
    g = torch.compile(lambda q, rot: q * rot + q, backend="ocl")
    assert g(q, rot).stride() == (q * rot + q).stride() == (q.cpu() * rot.cpu() + q.cpu()).stride()


@pytest.mark.parametrize("dynamic", [False, True])
def test_output_has_the_traced_layout_not_its_first_inputs(dynamic):
    """The segment's first input is transposed, but its output follows the
    contiguous intermediate that TensorIterator put first (t + s), and a
    later view relies on that. Segments laid their outputs out like their
    first input: "view size is not compatible" (wav2vec2's compiled
    backward)."""
    x, y = torch.randn(2, 18, 32, device=OCL), torch.randn(2, 32, 18, device=OCL)

    def f(x, y):
        s = y.transpose(1, 2).sin()  # the segment reads y first
        t = x * 2
        return (t + s).view(2, -1) * 3

    _check(f, x, y, dynamic=dynamic)
    g = torch.compile(lambda x, y: x * 2 + y.transpose(1, 2).sin(), backend="ocl", dynamic=dynamic)
    want = x * 2 + y.transpose(1, 2).sin()
    assert g(x, y).stride() == want.stride() == (x.cpu() * 2 + y.cpu().transpose(1, 2).sin()).stride()


def test_zero_dim_inputs_promote_like_eager():
    x = torch.randn(16, device=OCL).half()
    s = torch.tensor(2.5, device=OCL)  # a 0-dim float32 tensor does not promote float16
    t = torch.tensor(3, device=OCL)
    _check(lambda x, s, t: (x * s + t) / s, x, s, t, cpu_tol=1e-3)
    _check(lambda s, t: s * t - 1, s, t)


def test_int_float_promotion():
    i = torch.randint(-5, 5, (32,), device=OCL, dtype=torch.int32)
    f = torch.randn(32, device=OCL)
    _check(lambda i, f: (i + f) * (i * 3) - i, i, f)
    _check(lambda i: (i * 2.5).floor() + i // 2, i.long())


def test_bool_and_comparisons():
    x, y = torch.randn(40, device=OCL), torch.randn(40, device=OCL)
    _check(lambda x, y: ((x > 0) & (y < 0.5)) | (x == y), x, y)
    _check(lambda x, y: torch.where(x > y, x * 2, y - 1), x, y)
    _check(lambda x, y: (x > 0).int() * 0 + ((x > 0) + (y > 0)), x, y, min_segments=1)


def test_scalar_arguments_and_alpha():
    x, y = torch.randn(33, device=OCL), torch.randn(33, device=OCL)
    _check(lambda x, y: torch.add(x, y, alpha=2) - torch.sub(y, x, alpha=0.5) * 3 + 7, x, y)
    _check(lambda x: (x * True + 1) > 0.5, x)


def test_float16_intermediates_round_as_eager():
    x = (torch.randn(256, device=OCL) * 100).half()
    _check(lambda x: ((x * 1.1 + 3.3) * 0.7 - x).sin(), x, cpu_tol=2e-2)
    b = torch.randn(256, device=OCL).bfloat16()
    _check(lambda b: (b * 1.01 + b) * b, b, cpu_tol=5e-2)


def test_multi_output_segment():
    x = torch.randn(3, 9, device=OCL)

    def f(x):
        a = x + 1
        b = a * 2
        c = b.exp()
        return a, b, c

    s = _check(f, x)
    assert s["segments_lowered"] == 1 and s["nodes_fused"] == 3, s


def test_outputs_of_different_shapes_split_the_segment():
    x, y = torch.randn(4, 1, device=OCL), torch.randn(4, 8, device=OCL)

    def f(x, y):
        a = x.abs() + 1
        return a, a * y

    s = _check(f, x, y)
    assert s["segments_lowered"] == 2, s


def test_long_chain_is_halved_into_graphs_that_fit():
    x = torch.randn(100, device=OCL)

    def f(x):
        for k in range(80):
            x = x * 1.001 + 0.001
        return x

    s = _check(f, x, cpu_tol=1e-5)
    assert s["nodes_fused"] == 160 and s["segments_lowered"] > 1, s


def test_dynamic_three_sizes_build_no_program_after_the_first():
    f = torch.compile(lambda x, y: (torch.relu(x * 2 + y) * 0.5).sigmoid() - y, backend="ocl", dynamic=True)
    builds = None
    for n in (8, 13, 21):
        x, y = torch.randn(n, 4, device=OCL), torch.randn(4, device=OCL)
        out = f(x, y)
        torch.ocl.synchronize()
        torch_ocl.fusion.wait_for_builds()
        if builds is None:
            builds = torch_ocl._C._program_stats()["builds"]
        else:
            assert torch_ocl._C._program_stats()["builds"] == builds, f"size {n} built a program"
        ref = (torch.relu(x.cpu() * 2 + y.cpu()) * 0.5).sigmoid() - y.cpu()
        torch.testing.assert_close(out.cpu(), ref, rtol=1e-6, atol=1e-6)
    s = torch_ocl.compile_stats()
    assert s["graphs"] == 1 and s["segments_lowered"] == 1, s


def test_strict_unlowerable_segment_falls_back_and_is_counted(monkeypatch):
    monkeypatch.setenv("TORCH_OCL_COMPILE_STRICT", "1")
    x = torch.randn(6, 5, device=OCL)
    c = torch.tensor(1.5)  # a CPU tensor: the mul reading it is not lowered, the rest is
    f = torch.compile(lambda x, c: (x * c).exp() + 1, backend="ocl")
    torch.testing.assert_close(f(x, c).cpu(), ((x * c).exp() + 1).cpu(), rtol=0, atol=0)
    s = torch_ocl.compile_stats()
    assert s["segments_fallback"] == 1 and s["segments_lowered"] == 1 and s["nodes_fused"] == 2, s


def test_symbolic_sizes_are_kernel_arguments():
    f = torch.compile(lambda x: (x * x.shape[0]).exp() + x.shape[1] / 2, backend="ocl", dynamic=True)
    builds = None
    for n in (6, 9, 14):
        x = torch.randn(n, n + 1, device=OCL)
        out = f(x)
        torch.ocl.synchronize()
        if builds is None:
            builds = torch_ocl._C._program_stats()["builds"]
        assert torch_ocl._C._program_stats()["builds"] == builds, f"size {n} built a program"
        torch.testing.assert_close(out.cpu(), (x * n).exp().cpu() + (n + 1) / 2, rtol=1e-6, atol=1e-6)
    s = torch_ocl.compile_stats()
    assert s["graphs"] == 1 and s["segments_lowered"] == 1 and s["segments_fallback"] == 0, s


def test_dtype_conversions_join_segments():
    x = torch.randn(64, device=OCL) * 50
    s = _check(lambda x: (x.to(torch.bfloat16) * 3).to(torch.float32) + x.half().float(), x, cpu_tol=0.5)
    assert s["segments_lowered"] == 1 and s["nodes_fused"] == 6, s
    torch_ocl.reset_compile_stats()
    _check(lambda x: x.to(torch.int32) * 2 + (x > 0).to(torch.int64), x)


def test_input_mutation_is_not_reordered_before_a_read():
    def f(x, w):
        y = x * 2  # reads x before the in-place update below
        x.copy_(w @ w)
        return y + 1, x

    x, w = torch.randn(4, 4, device=OCL), torch.randn(4, 4, device=OCL)
    xe, xc = x.clone(), x.clone()
    ye, _ = f(xe, w)
    yc, _ = torch.compile(f, backend="ocl")(xc, w)
    torch.testing.assert_close(yc.cpu(), ye.cpu(), rtol=0, atol=0)
    torch.testing.assert_close(xc.cpu(), xe.cpu(), rtol=0, atol=0)
