"""Matrix products on ocl against the CPU: mm, bmm, addmm, addmv, baddbmm,
addbmm, dot, vdot, _addmm_activation and the composites over them (matmul in
every broadcasting form, linear, einsum, tensordot, mv, outer, inner), with
transposed, offset and strided operands, empty and K = 0 products, out= and
in-place forms, gradients, and the CPU's error messages."""

import pytest
import torch

import torch_ocl

from conftest import FLOAT_DTYPES, dtype_id

OCL = "ocl"

# fp32 accumulation in both; the CPU may sum in another order and round
# float16/bfloat16 inputs of addmm differently, so tolerances scale with K.
TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
}


def rand(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-16, 16, shape, generator=g).double() / 8).to(dtype)


def close(got, want, dtype, k=1):
    tol = TOL[dtype]
    scale = max(1.0, k ** 0.5)
    torch.testing.assert_close(got.cpu(), want, rtol=tol["rtol"] * scale, atol=tol["atol"] * scale * 4)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_mm_shapes_and_layouts(dtype, no_fallback):
    shapes = [(1, 1, 1), (7, 13, 5), (129, 65, 257), (64, 64, 64), (3, 100, 1), (1, 40, 70), (33, 1, 9)]
    for i, (m, k, n) in enumerate(shapes):
        a, b = rand((m, k), dtype, i), rand((k, n), dtype, 100 + i)
        close(torch.mm(a.to(OCL), b.to(OCL)), torch.mm(a, b), dtype, k)
        # column-major (transposed) operands, no copies
        close(torch.mm(a.t().contiguous().to(OCL).t(), b.t().contiguous().to(OCL).t()), torch.mm(a, b), dtype, k)
    # offset views and strided rows / columns
    big_a, big_b = rand((50, 80), dtype, 7), rand((90, 60), dtype, 8)
    da, db = big_a.to(OCL), big_b.to(OCL)
    va, vb = big_a[3:40:2, 5:75], big_b[10:80, 1:59:3]
    close(torch.mm(da[3:40:2, 5:75], db[10:80, 1:59:3]), torch.mm(va, vb), dtype, 70)
    close(torch.mm(da[3:40, 5:7].t(), db[11:48, 2:60]), torch.mm(big_a[3:40, 5:7].t(), big_b[11:48, 2:60]), dtype, 37)


def test_mm_empty_and_k0(no_fallback):
    for m, k, n in [(0, 3, 4), (3, 0, 4), (3, 4, 0), (0, 0, 0)]:
        a, b = torch.randn(m, k), torch.randn(k, n)
        got = torch.mm(a.to(OCL), b.to(OCL))
        assert got.shape == (m, n)
        torch.testing.assert_close(got.cpu(), torch.mm(a, b))
    # K = 0: beta * self
    s = torch.randn(3, 4)
    got = torch.addmm(s.to(OCL), torch.empty(3, 0, device=OCL), torch.empty(0, 4, device=OCL), beta=2.5)
    torch.testing.assert_close(got.cpu(), 2.5 * s)


def test_mm_out_and_errors(no_fallback):
    a, b = torch.randn(5, 6), torch.randn(6, 7)
    out = torch.empty(0, device=OCL)
    r = torch.mm(a.to(OCL), b.to(OCL), out=out)
    assert r is out and out.shape == (5, 7)
    torch.testing.assert_close(out.cpu(), a @ b, rtol=1e-4, atol=1e-4)
    # out aliasing an input
    x = torch.randn(6, 6)
    dx = x.to(OCL)
    torch.mm(dx, dx, out=dx)
    torch.testing.assert_close(dx.cpu(), x @ x, rtol=1e-4, atol=1e-4)
    # out into a transposed view
    o = torch.zeros(7, 5, device=OCL)
    torch.mm(a.to(OCL), b.to(OCL), out=o.t())
    torch.testing.assert_close(o.t().cpu(), a @ b, rtol=1e-4, atol=1e-4)
    # errors as the CPU
    cases = [
        lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(4, 5, device=d)),
        lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(3, 5, device=d, dtype=torch.float64)),
        lambda d: torch.mm(torch.ones(2, 3, 1, device=d), torch.ones(3, 5, device=d)),
        lambda d: torch.bmm(torch.ones(2, 3, 4, device=d), torch.ones(3, 4, 5, device=d)),
        lambda d: torch.addmm(torch.ones(4, device=d), torch.ones(2, 3, device=d), torch.ones(3, 5, device=d)),
        lambda d: torch.dot(torch.ones(3, device=d), torch.ones(4, device=d)),
        lambda d: torch.dot(torch.ones(3, device=d), torch.ones(3, device=d, dtype=torch.float64)),
        lambda d: torch.dot(torch.ones(3, 1, device=d), torch.ones(3, 1, device=d)),
        lambda d: torch.addmv(torch.ones(3, device=d), torch.ones(2, 3, device=d), torch.ones(3, device=d)),
        lambda d: torch.matmul(torch.ones(2, 3, device=d), torch.ones(4, device=d)),
    ]
    for f in cases:
        with pytest.raises(RuntimeError) as cpu_err:
            f("cpu")
        with pytest.raises(RuntimeError) as ocl_err:
            f(OCL)
        assert str(cpu_err.value).split("\n")[0] == str(ocl_err.value).split("\n")[0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_addmm_family(dtype, no_fallback):
    m, k, n = 37, 29, 45
    a, b = rand((m, k), dtype, 1), rand((k, n), dtype, 2)
    for self_shape in [(m, n), (n,), (1, n), (m, 1), ()]:
        s = rand(self_shape, dtype, 3)
        for beta, alpha in [(1, 1), (0.5, -2), (0, 1.5)]:
            want = torch.addmm(s, a, b, beta=beta, alpha=alpha)
            got = torch.addmm(s.to(OCL), a.to(OCL), b.to(OCL), beta=beta, alpha=alpha)
            close(got, want, dtype, k)
    # beta = 0 ignores NaN in self, like the CPU
    nan = torch.full((m, n), float("nan"), dtype=dtype)
    got = torch.addmm(nan.to(OCL), a.to(OCL), b.to(OCL), beta=0)
    close(got, torch.addmm(nan, a, b, beta=0), dtype, k)
    # in place and out=, with a transposed mat2
    s = rand((m, n), dtype, 4)
    ds = s.to(OCL)
    r = ds.addmm_(a.to(OCL), b.t().contiguous().to(OCL).t(), beta=0.5, alpha=2)
    assert r is ds
    close(ds, s.clone().addmm_(a, b, beta=0.5, alpha=2), dtype, k)
    out = torch.empty(0, device=OCL, dtype=dtype)
    torch.addmm(rand((n,), dtype, 5).to(OCL), a.to(OCL), b.to(OCL), out=out)
    close(out, torch.addmm(rand((n,), dtype, 5), a, b), dtype, k)
    # fused activation
    bias = rand((n,), dtype, 6)
    for use_gelu in (False, True):
        want = torch._addmm_activation(bias, a, b, use_gelu=use_gelu)
        got = torch._addmm_activation(bias.to(OCL), a.to(OCL), b.to(OCL), use_gelu=use_gelu)
        close(got, want, dtype, k)
    # addmv (+ in place, out=, strided vector) and mv
    mat, vec2, sv = rand((m, k), dtype, 7), rand((2 * k,), dtype, 8), rand((m,), dtype, 9)
    vec = vec2[::2]
    close(torch.addmv(sv.to(OCL), mat.to(OCL), vec2.to(OCL)[::2], beta=0.5, alpha=3),
          torch.addmv(sv, mat, vec, beta=0.5, alpha=3), dtype, k)
    close(torch.mv(mat.t().contiguous().to(OCL).t(), vec.to(OCL)), torch.mv(mat, vec), dtype, k)
    dsv = sv.to(OCL)
    dsv.addmv_(mat.to(OCL), vec.to(OCL))
    close(dsv, sv.clone().addmv_(mat, vec), dtype, k)
    o = torch.empty(0, device=OCL, dtype=dtype)
    torch.mv(mat.to(OCL), vec.to(OCL), out=o)
    close(o, mat @ vec, dtype, k)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_batched(dtype, no_fallback):
    bsz, m, k, n = 3, 19, 23, 17
    b1, b2 = rand((bsz, m, k), dtype, 1), rand((bsz, k, n), dtype, 2)
    d1, d2 = b1.to(OCL), b2.to(OCL)
    close(torch.bmm(d1, d2), torch.bmm(b1, b2), dtype, k)
    close(torch.bmm(d1.transpose(1, 2).contiguous().transpose(1, 2), d2.transpose(0, 1).contiguous().transpose(0, 1)),
          torch.bmm(b1, b2), dtype, k)
    # broadcast batch (stride 0) through expand
    one = rand((1, k, n), dtype, 3)
    close(torch.bmm(d1, one.to(OCL).expand(bsz, k, n)), torch.bmm(b1, one.expand(bsz, k, n)), dtype, k)
    s = rand((m, n), dtype, 4)
    close(torch.baddbmm(s.to(OCL), d1, d2, beta=0.5, alpha=2), torch.baddbmm(s, b1, b2, beta=0.5, alpha=2), dtype, k)
    s3 = rand((bsz, m, n), dtype, 5)
    ds3 = s3.to(OCL)
    ds3.baddbmm_(d1, d2, alpha=-1)
    close(ds3, s3.clone().baddbmm_(b1, b2, alpha=-1), dtype, k)
    close(torch.addbmm(s.to(OCL), d1, d2, beta=2), torch.addbmm(s, b1, b2, beta=2), dtype, k * bsz)
    ds = s.to(OCL)
    ds.addbmm_(d1, d2)
    close(ds, s.clone().addbmm_(b1, b2), dtype, k * bsz)
    out = torch.empty(0, device=OCL, dtype=dtype)
    torch.bmm(d1, d2, out=out)
    close(out, torch.bmm(b1, b2), dtype, k)
    out = torch.empty(0, device=OCL, dtype=dtype)
    torch.baddbmm(s3.to(OCL), d1, d2, out=out)
    close(out, torch.baddbmm(s3, b1, b2), dtype, k)
    # empty batch and K = 0
    assert torch.bmm(torch.ones(0, 2, 3, device=OCL, dtype=dtype), torch.ones(0, 3, 4, device=OCL, dtype=dtype)).shape == (0, 2, 4)
    z = torch.bmm(torch.ones(2, 3, 0, device=OCL, dtype=dtype), torch.ones(2, 0, 4, device=OCL, dtype=dtype))
    assert z.shape == (2, 3, 4) and (z.cpu() == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_matmul_forms_and_composites(dtype, no_fallback):
    tol_k = 40
    cases = [
        ((5,), (5,)),          # dot
        ((4, 5), (5,)),        # mv
        ((5,), (5, 3)),        # vector @ matrix
        ((4, 5), (5, 3)),      # mm
        ((2, 4, 5), (5, 3)),   # 3-D @ 2-D (folded into one mm)
        ((4, 5), (2, 5, 3)),   # 2-D @ 3-D
        ((2, 1, 4, 5), (3, 5, 6)),  # broadcast batch dims
        ((2, 4, 5), (5,)),
        ((5,), (2, 5, 3)),
    ]
    for i, (sa, sb) in enumerate(cases):
        a, b = rand(sa, dtype, i), rand(sb, dtype, 50 + i)
        close(torch.matmul(a.to(OCL), b.to(OCL)), torch.matmul(a, b), dtype, tol_k)
    x, w, bias = rand((6, 10), dtype, 1), rand((7, 10), dtype, 2), rand((7,), dtype, 3)
    close(torch.nn.functional.linear(x.to(OCL), w.to(OCL), bias.to(OCL)), torch.nn.functional.linear(x, w, bias), dtype, 10)
    x3 = rand((2, 3, 10), dtype, 4)
    close(torch.nn.functional.linear(x3.to(OCL), w.to(OCL), bias.to(OCL)), torch.nn.functional.linear(x3, w, bias), dtype, 10)
    p, q = rand((3, 4, 5), dtype, 5), rand((3, 5, 6), dtype, 6)
    close(torch.einsum("bij,bjk->bik", p.to(OCL), q.to(OCL)), torch.einsum("bij,bjk->bik", p, q), dtype, 5)
    close(torch.einsum("bij,bjk->ik", p.to(OCL), q.to(OCL)), torch.einsum("bij,bjk->ik", p, q), dtype, 15)
    close(torch.tensordot(p.to(OCL), q.to(OCL), dims=([0, 2], [0, 1])), torch.tensordot(p, q, dims=([0, 2], [0, 1])), dtype, 15)
    u, v = rand((5,), dtype, 7), rand((4,), dtype, 8)
    close(torch.outer(u.to(OCL), v.to(OCL)), torch.outer(u, v), dtype)
    close(torch.inner(x.to(OCL), w.to(OCL)), torch.inner(x, w), dtype, 10)
    close(torch.dot(u.to(OCL), u.to(OCL)), torch.dot(u, u), dtype, 5)
    close(torch.vdot(u.to(OCL), u.to(OCL)), torch.vdot(u, u), dtype, 5)
    big = rand((300,), dtype, 9)
    close(torch.dot(big.to(OCL)[::3], big.to(OCL)[1::3]), torch.dot(big[::3], big[1::3]), dtype, 100)


def test_gradients(no_fallback):
    def grads(device, fn, *shapes):
        ts = [rand(s, torch.float32, 10 + i).to(device).requires_grad_(True) for i, s in enumerate(shapes)]
        out = fn(*ts)
        g = rand(tuple(out.shape), torch.float32, 99).to(device)
        return [x.cpu() for x in torch.autograd.grad(out, ts, g)]

    fns = [
        (torch.mm, (7, 9), (9, 5)),
        (torch.bmm, (3, 7, 9), (3, 9, 5)),
        (lambda a, b: torch.matmul(a, b), (2, 7, 9), (9, 5)),
        (lambda x, w: torch.nn.functional.linear(x, w), (6, 10), (7, 10)),
        (lambda s, a, b: torch.addmm(s, a, b, beta=0.5, alpha=2), (7, 5), (7, 9), (9, 5)),
        (lambda s, a, b: torch.baddbmm(s, a, b), (3, 7, 5), (3, 7, 9), (3, 9, 5)),
    ]
    for fn, *shapes in fns:
        for got, want in zip(grads(OCL, fn, *shapes), grads("cpu", fn, *shapes)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_linear_bias_gradient(no_fallback):
    """linear's bias gradient needs a sum over rows (the reduction engine), kept
    apart so a missing reduction names itself instead of failing the rest."""
    x = rand((6, 10), torch.float32, 1).to(OCL).requires_grad_(True)
    w = rand((7, 10), torch.float32, 2).to(OCL).requires_grad_(True)
    b = rand((7,), torch.float32, 3).to(OCL).requires_grad_(True)
    out = torch.nn.functional.linear(x, w, b)
    gx, gw, gb = torch.autograd.grad(out.sum(), [x, w, b])
    xc, wc, bc = (t.detach().cpu().requires_grad_(True) for t in (x, w, b))
    ex, ew, eb = torch.autograd.grad(torch.nn.functional.linear(xc, wc, bc).sum(), [xc, wc, bc])
    for got, want in [(gx, ex), (gw, ew), (gb, eb)]:
        torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)


def test_both_kernel_paths_agree(monkeypatch, no_fallback):
    """Force the direct and the packed kernels on the same products."""
    a, b = rand((70, 33), torch.float32, 1), rand((33, 90), torch.float32, 2)
    s = rand((90,), torch.float32, 3)
    want = torch.addmm(s, a, b, beta=0.5, alpha=1.5)
    for path in ("direct", "packed"):
        monkeypatch.setenv("TORCH_OCL_GEMM_KERNEL", path)
        got = torch.addmm(s.to(OCL), a.to(OCL), b.to(OCL), beta=0.5, alpha=1.5)
        torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
        got = torch.bmm(a.to(OCL).expand(2, 70, 33), b.t().contiguous().to(OCL).t().expand(2, 33, 90))
        torch.testing.assert_close(got.cpu(), (a @ b).expand(2, 70, 90), rtol=1e-4, atol=1e-4)


INT_DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def irand(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    lo = 0 if dtype == torch.uint8 else -4
    return torch.randint(lo, 5, shape, generator=g).to(dtype)


def int_products(dt):
    """(name counted by the fallback, function, CPU arguments) for every product."""
    m, n, k, b = 3, 4, 5, 2
    return [
        ("mm", torch.mm, (irand((m, k), dt, 1), irand((k, n), dt, 2))),
        ("mm", torch.matmul, (irand((m, k), dt, 1).t(), irand((m, n), dt, 2))),  # transposed operand
        ("addmm", lambda s, x, y: torch.addmm(s, x, y, beta=2, alpha=3),
         (irand((n,), dt, 3), irand((m, k), dt, 1), irand((k, n), dt, 2))),
        ("addmv", torch.mv, (irand((m, k), dt, 1), irand((k,), dt, 2))),
        ("addmv", lambda s, x, y: torch.addmv(s, x, y, beta=2, alpha=3),
         (irand((m,), dt, 3), irand((m, k), dt, 1), irand((k,), dt, 2))),
        ("dot", torch.dot, (irand((k,), dt, 1), irand((k,), dt, 2))),
        ("vdot", torch.vdot, (irand((k,), dt, 1), irand((k,), dt, 2))),
        ("bmm", torch.bmm, (irand((b, m, k), dt, 1), irand((b, k, n), dt, 2))),
        ("baddbmm", lambda s, x, y: torch.baddbmm(s, x, y, beta=2, alpha=3),
         (irand((b, m, n), dt, 3), irand((b, m, k), dt, 1), irand((b, k, n), dt, 2))),
        ("addbmm", lambda s, x, y: torch.addbmm(s, x, y, beta=2, alpha=3),
         (irand((m, n), dt, 3), irand((b, m, k), dt, 1), irand((b, k, n), dt, 2))),
    ]


@pytest.fixture
def fallback_policy():
    old = torch_ocl.get_fallback_policy()
    torch_ocl.reset_fallback_stats()
    yield torch_ocl.set_fallback_policy
    torch_ocl.set_fallback_policy(old)
    torch_ocl.reset_fallback_stats()


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_integer_products_take_the_counted_cpu_fallback(dtype, fallback_policy):
    """The GEMM is float-only: integer products run on the CPU, visibly."""
    fallback_policy("silent")
    for name, fn, args in int_products(dtype):
        torch_ocl.reset_fallback_stats()
        got = fn(*[t.to(OCL) for t in args])
        assert got.device.type == OCL and got.dtype == dtype, name
        assert torch.equal(got.cpu(), fn(*args)), name
        assert torch_ocl.fallback_stats().get("aten::" + name, 0) >= 1, (name, torch_ocl.fallback_stats())


def test_integer_out_and_inplace_forms(fallback_policy):
    fallback_policy("silent")
    dt = torch.int32
    s, x, y = irand((3, 4), dt, 3), irand((3, 5), dt, 1), irand((5, 4), dt, 2)
    want = torch.addmm(s, x, y, beta=2)
    got = s.to(OCL)
    got.addmm_(x.to(OCL), y.to(OCL), beta=2)
    assert torch.equal(got.cpu(), want)
    out = torch.empty(0, dtype=dt, device=OCL)
    torch.mm(x.to(OCL), y.to(OCL), out=out)
    assert out.shape == (3, 4) and torch.equal(out.cpu(), x @ y)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        torch.mm(x.to(OCL), y.to(OCL), out=torch.empty(0, dtype=torch.int64, device=OCL))
    # Argument errors are still the CPU's, before any fallback.
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(x.to(OCL), x.to(OCL))


def test_integer_products_warn_under_default_policy(fallback_policy):
    fallback_policy("warn")
    a = irand((3, 5), torch.int64, 1)
    with pytest.warns(UserWarning, match="aten::mm"):
        got = torch.mm(a.to(OCL), a.t().to(OCL))
    assert torch.equal(got.cpu(), a @ a.t())


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8], ids=dtype_id)
def test_integer_products_raise_under_error_policy(dtype, fallback_policy):
    fallback_policy("error")
    for name, fn, args in int_products(dtype):
        with pytest.raises(NotImplementedError, match=f"aten::{name}.*TORCH_OCL_FALLBACK"):
            fn(*[t.to(OCL) for t in args])


def test_bool_product_fails_as_on_cpu(fallback_policy):
    fallback_policy("silent")
    a = torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        torch.mm(a, a.t())
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        torch.mm(a.to(OCL), a.t().to(OCL))
