"""Complex logcumsumexp, complex scatter with reduce=, and hash_tensor on ocl.

- logcumsumexp of complex64/complex128 runs the CPU's complex log-add-exp
  (ATen/native/cpu/LogAddExp.h) in index order along dim, so the imaginary
  part (unreduced angles) matches the CPU's, infinities and NaNs included.
- scatter(reduce='add'|'multiply'), its value form and scatter_reduce
  (sum/prod/mean) of complex tensors: multiply applies each target's
  sources in index order, as the CPU's loop.
- hash_tensor: the xor over dim of each element's bits as uint64 (floats
  widened to double, integers sign-extended), bit-exact against the CPU.
Every test runs under the no_fallback fixture: a pass proves the op ran on
ocl.
"""

import pytest
import torch
import torch_ocl  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_fallback")
CDTYPES = [torch.complex64, torch.complex128]
INF, NAN = float("inf"), float("nan")


def tol(dtype):
    return dict(atol=1e-4, rtol=1e-4) if dtype == torch.complex64 else dict(atol=1e-10, rtol=1e-10)


def crand(*shape, dtype, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    re = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    im = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    return torch.complex(re, im).to(dtype)


def views(x):
    """x on ocl plus non-contiguous views with the same values."""
    yield x.to("ocl")
    if x.dim() >= 2:
        yield x.mT.contiguous().to("ocl").mT
    wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device="ocl") if x.dim() else None
    if wide is not None:
        wide[..., ::2] = x.to("ocl")
        yield wide[..., ::2]
    big = torch.zeros(x.numel() + 5, dtype=x.dtype, device="ocl")
    big[5:] = x.reshape(-1).to("ocl")
    yield big[5:].view(x.shape)


# ---- complex logcumsumexp ------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -2), ((4, 1), 1),
                                       ((1, 6), 1), ((), 0), ((600,), 0), ((2, 1000), 1)])
def test_logcumsumexp_complex(dtype, shape, dim):
    x = crand(*shape, dtype=dtype, scale=3.0)
    r = torch.logcumsumexp(x, dim)
    for v in views(x):
        ro = torch.logcumsumexp(v, dim)
        assert ro.device.type == "ocl" and ro.dtype == dtype
        torch.testing.assert_close(ro.cpu(), r, **tol(dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_logcumsumexp_complex_special_values(dtype):
    vals = [complex(INF, 1), complex(INF, 2), complex(1, 100), complex(50, -3), complex(-INF, 2), complex(-INF, 0),
            complex(NAN, 0), complex(0, NAN), complex(1e30, 1), complex(-1e30, 5), complex(3, 1e6)]
    # every ordered pair, and runs with -inf first, +inf after finite values
    seqs = [[a, b] for a in vals for b in vals]
    seqs += [[complex(-INF, 1), 1 + 1j, 2 + 3j], [1 + 1j, complex(INF, 0), 2j], [complex(-INF, 0)] * 3]
    for s in seqs:
        x = torch.tensor(s, dtype=dtype)
        r = torch.logcumsumexp(x, 0)
        ro = torch.logcumsumexp(x.to("ocl"), 0).cpu()
        torch.testing.assert_close(ro, r, equal_nan=True, **tol(dtype), msg=lambda m: f"{s}: {m}")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_logcumsumexp_complex_large_and_winding(dtype):
    # large magnitudes and a long row whose angles wind around many times:
    # the imaginary part is unreduced, so only the CPU's order matches
    n = 3000
    k = torch.arange(n, dtype=torch.float64)
    x = torch.complex(torch.sin(k) * 80, k * 0.7).to(dtype)
    r = torch.logcumsumexp(x, 0)
    ro = torch.logcumsumexp(x.to("ocl"), 0).cpu()
    if dtype == torch.complex64:
        torch.testing.assert_close(ro, r, atol=5e-2, rtol=1e-4)
    else:
        torch.testing.assert_close(ro, r, atol=1e-8, rtol=1e-10)


def test_logcumsumexp_complex_out_and_empty():
    x = crand(3, 4, dtype=torch.complex64)
    out = torch.empty(0, dtype=torch.complex64, device="ocl")
    r = torch.logcumsumexp(x.to("ocl"), 1, out=out)
    assert r is out
    torch.testing.assert_close(out.cpu(), torch.logcumsumexp(x, 1), **tol(x.dtype))
    e = torch.zeros(0, 3, dtype=torch.complex128)
    assert torch.logcumsumexp(e.to("ocl"), 0).shape == e.shape
    with pytest.raises(IndexError):
        torch.logcumsumexp(x.to("ocl"), 2)


def test_logcumsumexp_complex_gradcheck():
    x = crand(2, 4, dtype=torch.complex128, seed=3).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(lambda t: torch.logcumsumexp(t, 1), (x,), atol=1e-6, rtol=1e-5)


# ---- complex scatter with reduce= ------------------------------------------------


def scatter_case(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    self = crand(4, 6, dtype=dtype, seed=seed)
    index = torch.randint(0, 4, (7, 5), generator=g)  # many duplicates along dim 0
    src = crand(8, 6, dtype=dtype, seed=seed + 1)
    return self, index, src


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_complex(dtype, reduce):
    self, index, src = scatter_case(dtype)
    for dim, idx in ((0, index), (1, index.remainder(6)[:4])):
        r = self.scatter(dim, idx, src, reduce=reduce)
        ro = self.to("ocl").scatter(dim, idx.to("ocl"), src.to("ocl"), reduce=reduce)
        torch.testing.assert_close(ro.cpu(), r, **tol(dtype))
        v = (2 - 1j)
        r = self.scatter(dim, idx, v, reduce=reduce)
        ro = self.to("ocl").scatter(dim, idx.to("ocl"), v, reduce=reduce)
        torch.testing.assert_close(ro.cpu(), r, **tol(dtype))
        # in place, on a non-contiguous (transposed) target
        t = self.mT.contiguous().to("ocl").mT
        t.scatter_(dim, idx.to("ocl"), src.to("ocl"), reduce=reduce)
        torch.testing.assert_close(t.cpu(), self.scatter(dim, idx, src, reduce=reduce), **tol(dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_scatter_multiply_order_all_duplicates(dtype):
    # every source to one target: the product in index order
    self = torch.ones(3, dtype=dtype)
    src = crand(50, dtype=dtype, seed=4)
    idx = torch.ones(50, dtype=torch.long)
    r = self.scatter(0, idx, src, reduce="multiply")
    ro = self.to("ocl").scatter(0, idx.to("ocl"), src.to("ocl"), reduce="multiply")
    torch.testing.assert_close(ro.cpu(), r, **tol(dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_two_complex(dtype, reduce, include_self):
    self, index, src = scatter_case(dtype, seed=2)
    r = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
    ro = self.to("ocl").scatter_reduce(0, index.to("ocl"), src.to("ocl"), reduce, include_self=include_self)
    torch.testing.assert_close(ro.cpu(), r, **tol(dtype))


def test_scatter_reduce_complex_edge_shapes():
    dt = torch.complex64
    # 0-dim
    s, i, v = torch.tensor(1 + 1j, dtype=dt), torch.tensor(0), torch.tensor(2 - 1j, dtype=dt)
    for red in ("add", "multiply"):
        torch.testing.assert_close(s.to("ocl").scatter(0, i.to("ocl"), v.to("ocl"), reduce=red).cpu(),
                                   s.scatter(0, i, v, reduce=red))
    # empty index, size-1 dims
    s = crand(3, 1, dtype=dt)
    e = torch.zeros(0, 1, dtype=torch.long)
    assert torch.equal(s.to("ocl").scatter(0, e.to("ocl"), s.to("ocl"), reduce="multiply").cpu(), s)
    i = torch.tensor([[2], [2], [0]])
    torch.testing.assert_close(s.to("ocl").scatter(0, i.to("ocl"), s.to("ocl"), reduce="multiply").cpu(),
                               s.scatter(0, i, s, reduce="multiply"))


def test_scatter_reduce_complex_bad_input():
    self, index, src = scatter_case(torch.complex64)
    o = self.to("ocl"), index.to("ocl"), src.to("ocl")
    with pytest.raises(RuntimeError):
        self.scatter(0, index, src, reduce="max")
    with pytest.raises(RuntimeError):
        o[0].scatter(0, o[1], o[2], reduce="max")
    bad = torch.full((2, 2), 9)
    with pytest.raises(RuntimeError):
        o[0].scatter(0, bad.to("ocl"), o[2], reduce="multiply").cpu()


# ---- hash_tensor -------------------------------------------------------------------

HASH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
               torch.bfloat16, torch.float32, torch.float64]


def hash_input(dtype, shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * 1000
    if dtype == torch.bool:
        return x > 0
    if not dtype.is_floating_point:
        return x.to(torch.int64).to(dtype)
    x = x.to(dtype)
    if x.numel() > 3:
        x.view(-1)[:4] = torch.tensor([-0.0, INF, -INF, NAN], dtype=dtype)
    return x


def bits(t):
    return t.view(torch.int64) if t.dtype == torch.uint64 else t


SAME_SIZE_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def exact_cpu(v):
    """v's bits on the CPU: a strided float16 copy on ocl canonicalises NaN
    payloads (0x7e00 -> 0x7fff), so floats travel as integers of their size."""
    if not v.dtype.is_floating_point:
        return v.cpu()
    it = SAME_SIZE_INT[v.element_size()]
    return v.view(it).cpu().view(v.dtype)


@pytest.mark.parametrize("dtype", HASH_DTYPES)
def test_hash_tensor_bit_exact(dtype):
    x = hash_input(dtype, (3, 4, 5))
    for kw in [dict(), dict(dim=[1]), dict(dim=[0, 2]), dict(dim=[-1], keepdim=True), dict(dim=[0, 1, 2])]:
        for v in views(x):
            r = torch.hash_tensor(exact_cpu(v), **kw)
            ro = torch.hash_tensor(v, **kw)
            assert ro.dtype == torch.uint64 and ro.shape == r.shape
            assert torch.equal(bits(ro.cpu()), bits(r)), (dtype, kw)


def test_hash_tensor_shapes_and_out():
    x = hash_input(torch.float32, (2, 1, 3))
    for v, kw in [(torch.tensor(2.5), dict()), (torch.tensor(2.5), dict(dim=[0])), (x, dict(dim=[1])),
                  (torch.zeros(0, 3), dict(dim=[1])), (torch.zeros(2, 0, 3), dict(dim=[0]))]:
        r = torch.hash_tensor(v, **kw)
        ro = torch.hash_tensor(v.to("ocl"), **kw)
        assert ro.shape == r.shape
        assert torch.equal(bits(ro.cpu()), bits(r))
    out = torch.empty(0, dtype=torch.uint64, device="ocl")
    r = torch.hash_tensor(x.to("ocl"), [2], out=out)
    assert r is out and torch.equal(bits(out.cpu()), bits(torch.hash_tensor(x, [2])))


def test_hash_tensor_bad_input():
    x = torch.randn(3, 4)
    cases = [
        (lambda t: torch.hash_tensor(t, [1], out=torch.empty(3, dtype=torch.int64, device=t.device))),
        (lambda t: torch.hash_tensor(torch.zeros(0, 3, device=t.device))),
        (lambda t: torch.hash_tensor(torch.zeros(2, 0, device=t.device), [1])),
        (lambda t: torch.hash_tensor(t, [2])),
        (lambda t: torch.hash_tensor(t, [0, 0])),
        (lambda t: torch.hash_tensor(t, [0], mode=3)),
    ]
    for f in cases:
        try:
            f(x)
        except Exception as e:  # noqa: BLE001 - the CPU's exception type is the reference
            with pytest.raises(type(e)):
                f(x.to("ocl"))
        else:
            raise AssertionError("the CPU accepted the input")
    # dtypes the CPU kernel does not take: the same NotImplementedError
    for dt in (torch.complex64, torch.uint16, torch.uint32, torch.uint64):
        t = torch.zeros(2, 3, dtype=dt)
        with pytest.raises(NotImplementedError):
            torch.hash_tensor(t)
        with pytest.raises(NotImplementedError):
            torch.hash_tensor(t.to("ocl"))
