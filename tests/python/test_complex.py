"""Complex tensors on ocl: storage, copies (conj and neg bits), views, fill and
item, the native complex arithmetic (ocl_complex_ops.cpp), and the route of
complex arguments to real-only kernels through the CPU fallback
(ocl_complex_route.h). The CPU is the reference; float64 referees where
float32 rounding differs."""
import pytest
import torch
import torch_ocl

CX = [torch.complex64, torch.complex128]


def crand(*shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(torch.randn(*shape, generator=g, dtype=real), torch.randn(*shape, generator=g, dtype=real))


def layouts(t):
    """The tensor as contiguous, transposed, stepped, offset and 0-dim/empty relatives."""
    yield "contiguous", t
    if t.dim() >= 2:
        yield "transposed", t.transpose(0, 1)
    yield "stepped", t[..., ::2]
    yield "offset", t.reshape(-1)[1:]


@pytest.mark.parametrize("dtype", CX)
def test_factories_fill_item(dtype, no_fallback):
    z = torch.zeros(3, 4, dtype=dtype, device="ocl")
    assert z.dtype == dtype and z.device.type == "ocl"
    assert torch.equal(z.cpu(), torch.zeros(3, 4, dtype=dtype))
    f = torch.full((2, 3), 1.5 - 2j, dtype=dtype, device="ocl")
    assert torch.equal(f.cpu(), torch.full((2, 3), 1.5 - 2j, dtype=dtype))
    f[0, 1] = 3 + 4j
    assert f[0, 1].item() == 3 + 4j
    assert torch.ones(2, dtype=dtype, device="ocl").cpu().tolist() == [1 + 0j, 1 + 0j]
    e = torch.empty(0, 3, dtype=dtype, device="ocl")
    assert e.cpu().shape == (0, 3)


@pytest.mark.parametrize("dtype", CX)
def test_round_trip_layouts(dtype, no_fallback):
    x = crand(6, 8, dtype=dtype)
    for name, v in layouts(x):
        d = v.to("ocl")
        assert torch.equal(d.cpu(), v), name
        # a strided ocl source to the host, and a strided ocl destination
        assert torch.equal(x.to("ocl").transpose(0, 1).cpu(), x.transpose(0, 1)), name
        dst = torch.zeros(8, 6, dtype=dtype, device="ocl").transpose(0, 1)
        dst.copy_(x)
        assert torch.equal(dst.cpu(), x), name


@pytest.mark.parametrize("dtype", CX)
def test_conj_and_neg_bits(dtype, no_fallback):
    x = crand(4, 5, dtype=dtype)
    d = x.to("ocl")
    # a conj view read back, copied, cloned and resolved
    assert torch.equal(d.conj().cpu(), x.conj().resolve_conj())
    assert torch.equal(d.conj().clone().cpu(), x.conj().resolve_conj())
    assert torch.equal(d.conj().resolve_conj().cpu(), x.conj().resolve_conj())
    assert torch.equal(torch._neg_view(d).resolve_neg().cpu(), -x)
    # a conj host source and conj host/device destinations
    assert torch.equal(x.conj().to("ocl").cpu(), x.conj().resolve_conj())
    dst = torch.zeros(4, 5, dtype=dtype, device="ocl").conj()
    dst.copy_(d)
    assert torch.equal(dst.resolve_conj().cpu(), x)
    host = torch.zeros(4, 5, dtype=dtype).conj()
    host.copy_(d)
    assert torch.equal(host.resolve_conj(), x)
    # the physical values of a conj view did not change
    assert torch.equal(d.cpu(), x)


def test_dtype_conversions(no_fallback):
    x = crand(5, 3, dtype=torch.complex128)
    d = x.to("ocl")
    assert torch.equal(d.to(torch.complex64).cpu(), x.to(torch.complex64))
    r = torch.randn(5, 3)
    assert torch.equal(r.to("ocl").to(torch.complex64).cpu(), r.to(torch.complex64))
    assert torch.equal(torch.arange(6, device="ocl").to(torch.complex128).cpu(), torch.arange(6).to(torch.complex128))
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert torch.equal(d.to(torch.float32).cpu(), x.to(torch.float32))
    b = torch.tensor([0j, 1j, 2 + 0j, 0j, float("nan")], dtype=torch.complex64)
    assert torch.equal(b.to("ocl").to(torch.bool).cpu(), b.to(torch.bool))
    half = x.to("ocl").to(torch.complex32).cpu()
    assert torch.equal(torch.view_as_real(half), torch.view_as_real(x.to(torch.complex32)))


@pytest.mark.parametrize("dtype", CX)
def test_views(dtype, no_fallback):
    x = crand(3, 4, dtype=dtype)
    d = x.to("ocl")
    r = torch.view_as_real(d)
    assert r.shape == (3, 4, 2) and r.data_ptr() == d.data_ptr()
    assert torch.equal(r.cpu(), torch.view_as_real(x))
    assert torch.equal(d.real.cpu(), x.real) and torch.equal(d.imag.cpu(), x.imag)
    d.imag.mul_(2)  # writes through the view
    assert torch.equal(d.cpu(), torch.complex(x.real, 2 * x.imag))
    back = torch.view_as_complex(torch.view_as_real(d))
    assert back.data_ptr() == d.data_ptr()
    with pytest.raises(RuntimeError, match="Tensor must have a last dimension of size 2"):
        torch.view_as_complex(torch.zeros(3, 3, device="ocl"))


def ref(fn, *args):
    """fn on the CPU in complex128 / float64, rounded to the first argument's dtype."""
    wide = [a.to(torch.complex128) if torch.is_tensor(a) and a.is_complex() else a for a in args]
    return fn(*wide)


def close(got, want, dtype):
    tol = 2e-6 if dtype in (torch.complex64, torch.float32) else 1e-13
    want = want.to(got.dtype)
    torch.testing.assert_close(got.cpu(), want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_native(op, dtype, no_fallback):
    fn = getattr(torch, op)
    a, b = crand(6, 5, dtype=dtype, seed=1), crand(6, 5, dtype=dtype, seed=2)
    for (name, av), (_, bv) in zip(layouts(a), layouts(b)):
        close(fn(av.to("ocl"), bv.to("ocl")), ref(fn, av, bv), dtype)
        close(fn(av.to("ocl"), b[0, 0].to("ocl")), ref(fn, av, b[0, 0]), dtype)
    # broadcast, a real operand, Python scalars
    close(fn(a.to("ocl"), b[:1].to("ocl")), ref(fn, a, b[:1]), dtype)
    r = torch.randn(6, 5, dtype=torch.float32 if dtype == torch.complex64 else torch.float64)
    close(fn(a.to("ocl"), r.to("ocl")), ref(fn, a, r), dtype)
    close(fn(r.to("ocl"), a.to("ocl")), ref(fn, r, a), dtype)
    close(fn(a.to("ocl"), 2 - 3j), ref(fn, a, 2 - 3j), dtype)
    close(fn(r.to("ocl"), 0.5j).to(dtype), ref(fn, r, 0.5j), dtype)
    # in place and out=
    d = a.to("ocl")
    getattr(d, op + "_")(b.to("ocl"))
    close(d, ref(fn, a, b), dtype)
    out = torch.empty(0, dtype=dtype, device="ocl")
    fn(a.to("ocl"), b.to("ocl"), out=out)
    close(out, ref(fn, a, b), dtype)
    # 0-dim and empty
    close(fn(a[0, 0].to("ocl"), b[1, 1].to("ocl")), ref(fn, a[0, 0], b[1, 1]), dtype)
    assert fn(a[:0].to("ocl"), b[:0].to("ocl")).shape == (0, 5)


def test_alpha_and_special_divisors(no_fallback):
    a, b = crand(7), crand(7, seed=3)
    close(torch.add(a.to("ocl"), b.to("ocl"), alpha=2 - 1j), ref(lambda x, y: torch.add(x, y, alpha=2 - 1j), a, b),
          torch.complex64)
    close(torch.sub(a.to("ocl"), b.to("ocl"), alpha=3), ref(lambda x, y: torch.sub(x, y, alpha=3), a, b),
          torch.complex64)
    # a zero divisor and divisors with one part zero, as c10::complex divides
    num = torch.tensor([1 + 1j, 1 + 0j, 0j, 2 - 3j, 1e30 + 1e30j], dtype=torch.complex128)
    den = torch.tensor([0j, 0j, 0j, 4j, 1e30 - 1e-30j], dtype=torch.complex128)
    got = (num.to("ocl") / den.to("ocl")).cpu()
    torch.testing.assert_close(got, num / den, equal_nan=True)
    # a real tensor in place with a complex operand refuses as on the CPU
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.ones(3, device="ocl").add_(torch.ones(3, dtype=torch.complex64, device="ocl"))


@pytest.mark.parametrize("dtype", CX)
def test_unary_native(dtype, no_fallback):
    x = crand(5, 6, dtype=dtype, seed=4)
    x[0, 0] = 0
    x[0, 1] = -2 + 0j
    for name, v in layouts(x):
        d = v.to("ocl")
        close(torch.abs(d), ref(torch.abs, v), dtype)
        close(torch.angle(d), ref(torch.angle, v), dtype)
        close(torch.neg(d), -v, dtype)
        close(torch.conj_physical(d), torch.conj_physical(v), dtype)
    d = x.to("ocl")
    d.neg_()
    close(d, -x, dtype)
    torch.conj_physical_(d)
    close(d, (-x).conj(), dtype)


def test_complex_and_polar(no_fallback):
    re, im = torch.randn(4, 5), torch.randn(4, 5)
    assert torch.equal(torch.complex(re.to("ocl"), im.to("ocl")).cpu(), torch.complex(re, im))
    assert torch.equal(torch.complex(re.to("ocl"), im[:1].to("ocl")).cpu(), torch.complex(re, im[:1]))
    mag, ang = torch.rand(4, 5, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    close(torch.polar(mag.to("ocl"), ang.to("ocl")), torch.polar(mag, ang), torch.complex128)
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double"):
        torch.complex(torch.ones(2, dtype=torch.int64, device="ocl"), torch.ones(2, dtype=torch.int64, device="ocl"))
    with pytest.raises(RuntimeError, match="Expected object of scalar type"):
        torch.complex(re.to("ocl"), im.double().to("ocl"))


def test_routed_ops_run_on_the_cpu_and_are_counted():
    """A complex argument to a real-only ocl kernel runs on the CPU fallback, counted, and the
    'error' policy refuses it (no silent wrong answer, no dtype error the CPU would not raise)."""
    x = crand(3, 4, seed=5)
    old = torch_ocl.get_fallback_policy()
    try:
        torch_ocl.set_fallback_policy("silent")
        torch_ocl.reset_fallback_stats()
        d = x.to("ocl")
        # ops without a complex kernel yet (test_complex_ops.py covers the native ones)
        close(torch.nan_to_num(d), ref(torch.nan_to_num, x), torch.complex64)
        stats = torch_ocl.fallback_stats()
        assert {"aten::nan_to_num.out"} <= set(stats), stats
        torch_ocl.set_fallback_policy("error")
        with pytest.raises(RuntimeError, match="nan_to_num"):
            torch.nan_to_num(d)
        # a real call of the same op stays native
        torch_ocl.reset_fallback_stats()
        torch.nan_to_num(torch.ones(3, device="ocl"))
        assert torch_ocl.fallback_stats() == {}
    finally:
        torch_ocl.set_fallback_policy(old)


def test_autograd_through_complex(fallback_warn):
    """Gradients of a real loss of complex intermediates match the CPU's."""
    a = torch.randn(4, 3, dtype=torch.float64)
    b = torch.randn(4, 3, dtype=torch.float64)

    def loss(x, y):
        z = torch.complex(x, y)
        w = z * (1 - 2j) / (z + 3)
        return torch.abs(w).sum() + torch.angle(w).sum()

    grads = []
    for dev in ("cpu", "ocl"):
        x = a.clone().to(dev).requires_grad_()
        y = b.clone().to(dev).requires_grad_()
        loss(x, y).backward()
        grads.append((x.grad.cpu(), y.grad.cpu()))
    torch.testing.assert_close(grads[1][0], grads[0][0])
    torch.testing.assert_close(grads[1][1], grads[0][1])


def test_capability_claims_complex():
    caps = torch.accelerator.get_device_capability(torch.device("ocl", 0))["supported_dtypes"]
    assert torch.complex64 in caps


def test_wide_unsigned_are_held_and_copied_bit_for_bit(fallback_warn):
    """uint16/32/64 tensors live on ocl for what returns them (hash_tensor through the CPU
    fallback): host and device copies keep every bit, item() reads them."""
    for dt in (torch.uint16, torch.uint32, torch.uint64):
        big = torch.iinfo(dt).max
        x = torch.tensor([[0, 1, big], [big - 1, 7, 2]], dtype=dt)
        d = x.to("ocl")
        assert d.dtype == dt and torch.equal(d.cpu(), x)
        assert torch.equal(d.t().contiguous().cpu(), x.t().contiguous())
        assert torch.equal(d.t().cpu(), x.t())
        assert d[0, 2].item() == big
    h = torch.hash_tensor(torch.arange(12.0, device="ocl").reshape(3, 4), dim=1)
    assert h.device.type == "ocl" and torch.equal(h.cpu(), torch.hash_tensor(torch.arange(12.0).reshape(3, 4), dim=1))
    z = torch.zeros(3, dtype=torch.uint64, device="ocl")
    z.fill_(2**64 - 1)
    assert z[1].item() == 2**64 - 1
    out = torch.empty(0, dtype=torch.uint64, device="ocl")
    torch.hash_tensor(torch.arange(4.0, device="ocl"), out=out)
    assert torch.equal(out.cpu(), torch.hash_tensor(torch.arange(4.0)))
    # ops given them run on the CPU (counted), as the CPU computes them
    torch_ocl.reset_fallback_stats()
    a = torch.tensor([1, 2, 2**40], dtype=torch.uint64)
    assert torch.equal((a.to("ocl") * a.to("ocl")).cpu(), a * a)
    assert torch.equal((a.to("ocl") & 3).cpu(), a & 3)
    assert torch.equal(torch.nan_to_num(a.to("ocl")).cpu(), a)
    assert "aten::mul.Tensor" in torch_ocl.fallback_stats()
