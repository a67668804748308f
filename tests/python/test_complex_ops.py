"""Complex ops native on ocl beyond the arithmetic of test_complex.py: data
movement through the integer reinterpretation (ocl_complex_data.cpp),
reductions, predicates and matrix products over view_as_real pairs
(ocl_complex_pairs.cpp), and the transcendental unary ops, pow, lerp,
addcmul/addcdiv and comparisons in CxGraph (ocl_complex_ops.cpp).

Every test runs under the no_fallback fixture (TORCH_OCL_FALLBACK=error and
the counters checked), so a pass proves the op ran on ocl. The CPU is the
reference: bit-exact for data movement, complex128 for computed values."""
import pytest
import torch
import torch_ocl  # noqa: F401

CX = [torch.complex64, torch.complex128]


def crand(*shape, dtype=torch.complex64, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    re = torch.randn(shape, generator=g, dtype=real) * scale
    im = torch.randn(shape, generator=g, dtype=real) * scale
    return torch.complex(re, im)


def variants(x):
    """(name, cpu tensor) views of x: contiguous, transposed, stepped, conj, neg-conj."""
    yield "contiguous", x
    if x.dim() >= 2:
        yield "transposed", x.transpose(0, 1)
    if x.dim() >= 1 and x.shape[-1] > 1:
        yield "stepped", x[..., ::2]
    yield "conj", x.conj()
    yield "neg-conj", torch._neg_view(x.conj())


def dev(t):
    """The same view on ocl: conj/neg bits kept lazy and strides kept, as on the CPU."""
    if t.is_conj():
        return dev(t.conj()).conj()
    if t.is_neg():
        return torch._neg_view(dev(torch._neg_view(t)))
    if t.is_contiguous():
        return t.to("ocl")
    base = t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0).to("ocl")
    return base.as_strided(t.shape, t.stride(), t.storage_offset())


def bits(t):
    """The tensor's bytes as integers: NaN payloads and signed zeros compare too."""
    t = torch.view_as_real(t) if t.is_complex() else t
    if t.is_floating_point():
        t = t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t


def same(got, want):
    """Bit-for-bit equal values (data movement never computes)."""
    got = got.cpu().resolve_conj().resolve_neg()
    want = want.resolve_conj().resolve_neg()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    assert torch.equal(bits(got), bits(want)), (got, want)


def close(got, want, dtype, tol=None):
    """got (ocl) against want (a complex128/float64 reference), |got - want| <= tol (1 + |want|)."""
    if tol is None:
        tol = 2e-5 if dtype in (torch.complex64, torch.float32) else 1e-12
    got = got.cpu().resolve_conj().resolve_neg()
    want = want.resolve_conj().resolve_neg()
    assert got.shape == want.shape, (got.shape, want.shape)
    g = got.to(torch.complex128 if got.is_complex() else torch.float64)
    w = want.to(g.dtype)
    both_nan = torch.isnan(g) & torch.isnan(w) if not g.is_complex() else \
        (torch.isnan(g.real) | torch.isnan(g.imag)) & (torch.isnan(w.real) | torch.isnan(w.imag))
    err = (g - w).abs()
    bound = tol * (1 + w.abs())
    bad = ~both_nan & ~(err <= bound) & ~(g == w)  # equal infinities differ by NaN
    assert not bad.any(), f"max err {err[bad].max().item()} at {bad.nonzero()[:4].tolist()}: got {g[bad][:4]}, want {w[bad][:4]}"


def wide(t):
    return t.to(torch.complex128) if torch.is_tensor(t) and t.is_complex() else t


# ---- data movement: bit-exact against the CPU -----------------------------

IDX = torch.tensor([2, 0, 1, 2])
MOVES = {
    "cat": lambda x: torch.cat([x, x.flip(0)], 0),
    "cat_dim_last": lambda x: torch.cat([x, x], -1),
    "stack": lambda x: torch.stack([x, x], 1),
    "hstack": lambda x: torch.hstack([x, x]),
    "vstack": lambda x: torch.vstack([x, x]),
    "flip": lambda x: torch.flip(x, (0, 1)),
    "roll": lambda x: torch.roll(x, (1, -2), (0, 1)),
    "rot90": lambda x: torch.rot90(x, 1, (0, 1)),
    "tril": lambda x: torch.tril(x, -1),
    "triu": lambda x: torch.triu(x, 1),
    "gather": lambda x: torch.gather(x, 1, torch.tensor([[0, 2], [1, 1], [3, 0]]).to(x.device)),
    "index_select": lambda x: torch.index_select(x, 0, IDX.to(x.device)),
    "index_tensor": lambda x: x[IDX.to(x.device)],
    "index_bool": lambda x: x[(x.real > 0)],
    "take": lambda x: torch.take(x, torch.tensor([0, 5, 11, 3]).to(x.device)),
    "take_along_dim": lambda x: torch.take_along_dim(x, torch.tensor([[0], [2], [1]]).to(x.device), 1),
    "masked_select": lambda x: torch.masked_select(x, x.imag > 0),
    "masked_fill_scalar": lambda x: x.masked_fill(x.real > 0, 2.5 - 1j),
    "masked_fill_real": lambda x: x.masked_fill(x.real > 0, 3.0),
    "where": lambda x: torch.where(x.real > 0, x, x.flip(0)),
    "pad_reflect": lambda x: torch.nn.functional.pad(x.unsqueeze(0), (2, 1), mode="reflect"),
    "pad_replicate": lambda x: torch.nn.functional.pad(x.unsqueeze(0), (2, 1), mode="replicate"),
    "pad_replicate_2d": lambda x: torch.nn.functional.pad(x.unsqueeze(0).unsqueeze(0), (1, 1, 2, 0),
                                                          mode="replicate"),
    "repeat_interleave": lambda x: torch.repeat_interleave(x, 2, 0),
    "fftshift": lambda x: torch.fft.fftshift(x),
    "channel_shuffle": lambda x: torch.nn.functional.channel_shuffle(x.reshape(1, 4, 3, 1)
                                                                      if x.numel() == 12 else x.unsqueeze(0).unsqueeze(-1), 2),
}


@pytest.mark.parametrize("name", sorted(MOVES))
def test_data_movement_complex64(name, no_fallback):
    fn = MOVES[name]
    x = crand(3, 4, seed=1)
    if name == "channel_shuffle":
        x = crand(4, 3, seed=1)
    for vname, v in variants(x):
        if name == "channel_shuffle" and vname in ("stepped", "transposed"):
            continue
        try:
            want = fn(v)
        except Exception:
            continue  # the CPU refuses this layout too
        same(fn(dev(v)), want)


def test_data_movement_in_place_and_out(no_fallback):
    x = crand(4, 5, seed=2)
    src = crand(4, 5, seed=3)
    idx = torch.tensor([[1, 0, 3, 2, 0]])
    d = dev(x)
    # scatter, index_put_, index_copy_, index_fill_, masked_scatter_, put_
    same(torch.scatter(d, 0, idx.to("ocl"), dev(src)), torch.scatter(x, 0, idx, src))
    same(torch.scatter(d, 0, idx.to("ocl"), 1 - 2j), torch.scatter(x, 0, idx, 1 - 2j))
    a, b = x.clone(), d.clone()
    a[torch.tensor([0, 2])] = src[:2]
    b[torch.tensor([0, 2]).to("ocl")] = dev(src)[:2]
    same(b, a)
    a, b = x.clone(), d.clone()
    a.index_copy_(1, torch.tensor([4, 0]), src[:, :2])
    b.index_copy_(1, torch.tensor([4, 0]).to("ocl"), dev(src)[:, :2])
    same(b, a)
    a, b = x.clone(), d.clone()
    a.index_fill_(0, torch.tensor([1, 3]), -3 + 0.5j)
    b.index_fill_(0, torch.tensor([1, 3]).to("ocl"), -3 + 0.5j)
    same(b, a)
    m = x.real > 0
    same(d.masked_scatter(m.to("ocl"), dev(src)), x.masked_scatter(m, src))
    a, b = x.clone(), d.clone()
    a.put_(torch.tensor([0, 7, 19]), src.reshape(-1)[:3])
    b.put_(torch.tensor([0, 7, 19]).to("ocl"), dev(src).reshape(-1)[:3])
    same(b, a)
    # out= that resizes, into a conj view's resolved values
    out = torch.empty(0, dtype=torch.complex64, device="ocl")
    torch.cat([d.conj(), d], 0, out=out)
    same(out, torch.cat([x.conj(), x], 0))
    out = torch.empty(0, dtype=torch.complex64, device="ocl")
    torch.index_select(d, 1, torch.tensor([3, 1]).to("ocl"), out=out)
    same(out, torch.index_select(x, 1, torch.tensor([3, 1])))
    # 0-dim and empty
    z = crand(seed=4)
    same(torch.where(torch.tensor(True, device="ocl"), dev(z), dev(z) * 0), z)
    same(torch.cat([dev(z).reshape(1), dev(z).reshape(1)]), torch.cat([z.reshape(1), z.reshape(1)]))
    e = torch.empty(0, 3, dtype=torch.complex64)
    same(torch.flip(dev(e), (0,)), torch.flip(e, (0,)))
    same(torch.cat([dev(e), dev(e)]), torch.cat([e, e]))
    # broadcast where
    c = torch.tensor([True, False, True, False, True])
    same(torch.where(c.to("ocl"), d, dev(src[0])), torch.where(c, x, src[0]))


def test_data_movement_keeps_signed_zeros_and_nan_bits(no_fallback):
    x = torch.tensor([complex(-0.0, 0.0), complex(0.0, -0.0), complex(float("nan"), 1), complex(1, float("-inf"))],
                     dtype=torch.complex64)
    same(torch.flip(dev(x), (0,)), torch.flip(x, (0,)))
    same(torch.cat([dev(x), dev(x).conj()]), torch.cat([x, x.conj()]))


def test_mixed_dtypes_take_the_cpu_and_are_counted():
    """A real floating value among complex ones is a promotion, not a move: it runs on the
    CPU, counted, and gives the CPU's answer."""
    x = crand(3, 4, seed=5)
    r = torch.randn(3, 4)
    old = torch_ocl.get_fallback_policy()
    try:
        torch_ocl.set_fallback_policy("silent")
        torch_ocl.reset_fallback_stats()
        got = torch.where(x.real.to("ocl") > 0, dev(x), r.to("ocl"))
        same(got, torch.where(x.real > 0, x, r))
        assert "aten::where.self" in torch_ocl.fallback_stats()
    finally:
        torch_ocl.set_fallback_policy(old)


# ---- reductions, scans, predicates ----------------------------------------

REDUCTIONS = {
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(1),
    "sum_dims_keep": lambda x: x.sum((0, -1), keepdim=True),
    "sum_dtype": lambda x: x.sum(0, dtype=torch.complex128),
    "mean": lambda x: x.mean(),
    "mean_dim": lambda x: x.mean(-1, keepdim=True),
    "cumsum": lambda x: x.cumsum(1),
    "cumsum0": lambda x: torch.cumsum(x, 0),
    "trace": lambda x: torch.trace(x),
    "var": lambda x: x.var(),
    "var_dim": lambda x: torch.var(x, 1, correction=0),
    "std": lambda x: x.std(0, keepdim=True),
    "var_mean": lambda x: torch.var_mean(x, 1)[0],
    "var_mean_mean": lambda x: torch.var_mean(x, 1)[1],
    "norm": lambda x: torch.linalg.vector_norm(x),
    "norm_1_dim": lambda x: torch.linalg.vector_norm(x, 1, dim=1),
    "norm_inf": lambda x: torch.linalg.vector_norm(x, float("inf")),
    "norm_fro": lambda x: torch.norm(x, dim=(0, 1)),
}


@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, dtype, no_fallback):
    fn = REDUCTIONS[name]
    x = crand(5, 6, dtype=dtype, seed=6)
    for vname, v in variants(x):
        got = fn(dev(v))
        want = fn(wide(v))
        close(got, want, dtype)
        if got.is_complex():
            assert got.dtype == fn(v).dtype, vname


@pytest.mark.parametrize("dtype", CX)
def test_reductions_0dim_and_empty(dtype, no_fallback):
    z = crand(dtype=dtype, seed=7)
    for fn in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(), lambda t: t.cumsum(0)):
        close(fn(dev(z)), fn(wide(z)), dtype)
    e = torch.empty(0, 3, dtype=dtype)
    for fn in (lambda t: t.sum(0), lambda t: t.sum(), lambda t: t.cumsum(0)):
        close(fn(dev(e)), fn(wide(e)), dtype)
    out = torch.empty(0, dtype=dtype, device="ocl")
    torch.sum(dev(crand(3, 4, dtype=dtype)), 1, out=out)
    close(out, torch.sum(wide(crand(3, 4, dtype=dtype)), 1), dtype)


PREDICATES = {
    "all": lambda x: x.all(),
    "any_dim": lambda x: x.any(1),
    "all_dim": lambda x: torch.all(x, 0),
    "count_nonzero": lambda x: torch.count_nonzero(x, 1),
    "nonzero": lambda x: torch.nonzero(x),
    "argwhere": lambda x: torch.argwhere(x),
    "eq": lambda x: torch.eq(x, x.flip(0)),
    "eq_self": lambda x: x == x,
    "ne": lambda x: x != x.flip(1),
    "eq_scalar": lambda x: x == (1 + 0j),
    "ne_scalar": lambda x: x != 0,
    "isnan": lambda x: torch.isnan(x),
    "logical_and": lambda x: torch.logical_and(x, x.flip(0)),
    "logical_or": lambda x: torch.logical_or(x, x.flip(1)),
    "logical_xor": lambda x: torch.logical_xor(x, x.flip(0)),
    "logical_not": lambda x: torch.logical_not(x),
}


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_predicates(name, no_fallback):
    fn = PREDICATES[name]
    # zeros of both signs, pure real/imaginary values, NaN parts
    x = torch.tensor([[0, complex(-0.0, 0.0), 1, 1j],
                      [complex(0.0, -0.0), complex(float("nan"), 0), 2 - 1j, 1],
                      [3, 0, complex(0, float("nan")), -1j]], dtype=torch.complex64)
    for vname, v in variants(x):
        same(fn(dev(v)), fn(v))
    assert torch.equal(dev(x), dev(x.clone())) is torch.equal(x, x.clone())
    assert torch.equal(dev(x[:, :2]), dev(x[:, 1:3])) is torch.equal(x[:, :2], x[:, 1:3])


# ---- matrix products --------------------------------------------------------

PRODUCTS = {
    "mm": lambda a, b, v, c: torch.mm(a, b),
    "matmul": lambda a, b, v, c: a @ b,
    "mv": lambda a, b, v, c: torch.mv(a, v),
    "dot": lambda a, b, v, c: torch.dot(v, v.flip(0)),
    "vdot": lambda a, b, v, c: torch.vdot(v, v.flip(0)),
    "addmm": lambda a, b, v, c: torch.addmm(c, a, b, beta=0.5 - 1j, alpha=2 + 1j),
    "addmm_beta0": lambda a, b, v, c: torch.addmm(c * float("nan"), a, b, beta=0),
    "addmv": lambda a, b, v, c: torch.addmv(c[:, 0], a, v, alpha=1j),
    "bmm": lambda a, b, v, c: torch.bmm(a.unsqueeze(0).expand(3, -1, -1), b.unsqueeze(0).expand(3, -1, -1) * 2),
    "baddbmm": lambda a, b, v, c: torch.baddbmm(c, torch.stack([a, a * 1j]), torch.stack([b, b.conj()]), beta=2),
    "addbmm": lambda a, b, v, c: torch.addbmm(c, torch.stack([a, a * 1j]), torch.stack([b, b.conj()])),
    "einsum": lambda a, b, v, c: torch.einsum("ij,jk->ik", a, b),
    "tensordot": lambda a, b, v, c: torch.tensordot(a, b, 1),
    "inner": lambda a, b, v, c: torch.inner(a, b.t()),
    "linear": lambda a, b, v, c: torch.nn.functional.linear(a, b.t(), c[0]),
}


def mat_variants(m, k, dtype, seed):
    """(name, cpu matrix (m, k)) in several layouts: contiguous, column-major, stepped, conj and neg views."""
    yield "contiguous", crand(m, k, dtype=dtype, seed=seed)
    yield "column-major", crand(k, m, dtype=dtype, seed=seed).t()
    yield "stepped", crand(m, 2 * k, dtype=dtype, seed=seed)[:, ::2]
    yield "conj", crand(m, k, dtype=dtype, seed=seed).conj()
    yield "neg-conj", torch._neg_view(crand(m, k, dtype=dtype, seed=seed).conj())


@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_matrix_products(name, dtype, no_fallback):
    fn = PRODUCTS[name]
    tol = 1e-5 if dtype == torch.complex64 else 1e-12
    v, c = crand(7, dtype=dtype, seed=10), crand(4, 5, dtype=dtype, seed=11)
    for (an, a), (bn, b) in zip(mat_variants(4, 7, dtype, 8), mat_variants(7, 5, dtype, 9)):
        got = fn(dev(a), dev(b), dev(v), dev(c))
        want = fn(wide(a), wide(b), wide(v), wide(c))
        close(got, want, dtype, tol=tol)
    a, b = crand(4, 7, dtype=dtype, seed=8), crand(7, 5, dtype=dtype, seed=9)
    # conj views of the vector and the bias
    close(fn(dev(a), dev(b), dev(v).conj(), dev(c).conj()), fn(wide(a), wide(b), wide(v).conj(), wide(c).conj()),
          dtype, tol=tol)


@pytest.mark.parametrize("dtype", CX)
def test_matrix_products_empty_and_large(dtype, no_fallback):
    a = torch.empty(3, 0, dtype=dtype)
    b = torch.empty(0, 4, dtype=dtype)
    close(torch.mm(dev(a), dev(b)), torch.mm(wide(a), wide(b)), dtype)
    a, b = crand(33, 70, dtype=dtype, seed=12), crand(70, 19, dtype=dtype, seed=13)
    close(dev(a) @ dev(b), wide(a) @ wide(b), dtype, tol=1e-5 if dtype == torch.complex64 else 1e-12)


# ---- unary and pointwise ------------------------------------------------------

UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sigmoid", "sgn",
         "sinc", "square"]


def unary_fn(name):
    if name == "sinc":
        return torch.sinc
    if name == "square":
        return torch.square
    return getattr(torch, name)


@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype, no_fallback):
    fn = unary_fn(name)
    # ordinary values, small ones (cancellation) and larger ones, in all quadrants
    x = torch.cat([crand(40, dtype=dtype, seed=14) * 3, crand(10, dtype=dtype, seed=15) * 1e-3,
                   crand(10, dtype=dtype, seed=16) * 8, torch.tensor([0, 1, -1, 1j, -1j, 0.5 + 0.5j], dtype=dtype)])
    got = fn(dev(x))
    want = fn(wide(x))
    tol = 3e-5 if dtype == torch.complex64 else 1e-11
    close(got, want, dtype, tol=tol)
    # layouts, conj views and in-place / out= forms
    m = crand(4, 6, dtype=dtype, seed=17)
    for vname, v in variants(m):
        close(fn(dev(v)), fn(wide(v)), dtype, tol=tol)
    if name not in ("sinc", "square"):
        d = dev(m).clone()
        getattr(d, name + "_")()
        close(d, fn(wide(m)), dtype, tol=tol)
        out = torch.empty(0, dtype=dtype, device="ocl")
        fn(dev(m), out=out)
        close(out, fn(wide(m)), dtype, tol=tol)
    z = crand(dtype=dtype, seed=18)
    close(fn(dev(z)), fn(wide(z)), dtype, tol=tol)
    e = torch.empty(0, 2, dtype=dtype)
    assert fn(dev(e)).shape == (0, 2)


@pytest.mark.parametrize("dtype", CX)
def test_pow_lerp_addc(dtype, no_fallback):
    tol = 3e-5 if dtype == torch.complex64 else 1e-11
    a, b = crand(5, 4, dtype=dtype, seed=19), crand(5, 4, dtype=dtype, seed=20)
    w = crand(4, dtype=dtype, seed=21) * 0.5
    for e in (0, 1, 2, 3, 0.5, -0.5, -1, -2, 1.7, 0.3 - 0.2j):
        close(torch.pow(dev(a), e), torch.pow(wide(a), e), dtype, tol=tol)
    close(torch.pow(dev(a), dev(b) * 0.3), torch.pow(wide(a), wide(b) * 0.3), dtype, tol=tol)
    close(torch.pow(2.0, dev(a)), torch.pow(2.0, wide(a)), dtype, tol=tol)
    # a complex Python base with a real exponent tensor: the result takes the default complex dtype
    r = a.real.contiguous()
    got, want = torch.pow(2 - 1j, r.to("ocl")), torch.pow(2 - 1j, r)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    close(got, torch.pow(2 - 1j, r.double()), dtype, tol=tol)
    assert torch.equal((dev(a) == complex(a[0, 0])).cpu(), a == complex(a[0, 0]))
    close(torch.pow(dev(a).conj(), dev(w)), torch.pow(wide(a).conj(), wide(w)), dtype, tol=tol)
    close(torch.lerp(dev(a), dev(b), 0.3), torch.lerp(wide(a), wide(b), 0.3), dtype, tol=tol)
    close(torch.lerp(dev(a), dev(b), 0.8 + 0.1j), torch.lerp(wide(a), wide(b), 0.8 + 0.1j), dtype, tol=tol)
    close(torch.lerp(dev(a), dev(b), dev(w)), torch.lerp(wide(a), wide(b), wide(w)), dtype, tol=tol)
    close(torch.addcmul(dev(a), dev(b), dev(w), value=2 - 1j), torch.addcmul(wide(a), wide(b), wide(w), value=2 - 1j),
          dtype, tol=tol)
    close(torch.addcdiv(dev(a), dev(b).conj(), dev(w)), torch.addcdiv(wide(a), wide(b).conj(), wide(w)), dtype,
          tol=tol)
    close(torch.rsub(dev(a), dev(b), alpha=2j), torch.rsub(wide(a), wide(b), alpha=2j), dtype, tol=tol)
    close(torch.nn.functional.silu(dev(a)), torch.nn.functional.silu(wide(a)), dtype, tol=tol)
    close(torch.nn.functional.tanhshrink(dev(a)), torch.nn.functional.tanhshrink(wide(a)), dtype, tol=tol)


# ---- products, scans, accumulating scatters, factories, log-sum-exp ---------

@pytest.mark.parametrize("dtype", CX)
def test_prod_cumprod_cross(dtype, no_fallback):
    tol = 3e-5 if dtype == torch.complex64 else 1e-11
    x = crand(5, 7, dtype=dtype, seed=22) * 0.9
    for vname, v in variants(x):
        close(dev(v).prod(), wide(v).prod(), dtype, tol=tol)
        close(dev(v).prod(1, keepdim=True), wide(v).prod(1, keepdim=True), dtype, tol=tol)
        close(torch.cumprod(dev(v), 1), torch.cumprod(wide(v), 1), dtype, tol=tol)
        close(torch.cumprod(dev(v), 0), torch.cumprod(wide(v), 0), dtype, tol=tol)
    z = crand(dtype=dtype, seed=23)
    close(dev(z).prod(), wide(z).prod(), dtype, tol=tol)
    close(torch.cumprod(dev(z), 0), torch.cumprod(wide(z), 0), dtype, tol=tol)
    e = torch.empty(0, 3, dtype=dtype)
    close(dev(e).prod(0), wide(e).prod(0), dtype)
    a, b = crand(4, 3, dtype=dtype, seed=24), crand(1, 3, dtype=dtype, seed=25)
    close(torch.linalg.cross(dev(a), dev(b)), torch.linalg.cross(wide(a), wide(b)), dtype, tol=tol)
    close(torch.linalg.cross(dev(a).conj(), dev(a).flip(0)), torch.linalg.cross(wide(a).conj(), wide(a).flip(0)),
          dtype, tol=tol)


@pytest.mark.parametrize("dtype", CX)
def test_accumulating_scatters(dtype, no_fallback):
    tol = 1e-5 if dtype == torch.complex64 else 1e-12
    x, src = crand(4, 5, dtype=dtype, seed=26), crand(4, 5, dtype=dtype, seed=27)
    idx = torch.tensor([0, 2, 0, 3])
    a, b = wide(x).clone(), dev(x).clone()
    a.index_put_((idx,), wide(src), accumulate=True)
    b.index_put_((idx.to("ocl"),), dev(src), accumulate=True)
    close(b, a, dtype, tol=tol)
    a, b = wide(x).clone(), dev(x).clone()
    a[idx, 1] = wide(src)[:, 0]
    b[idx.to("ocl"), 1] = dev(src)[:, 0]
    close(b, a, dtype, tol=tol)
    close(torch.index_add(dev(x), 0, idx.to("ocl"), dev(src), alpha=2 - 1j),
          torch.index_add(wide(x), 0, idx, wide(src), alpha=2 - 1j), dtype, tol=tol)
    close(torch.index_add(dev(x), 1, idx.to("ocl"), dev(src)[:, :4].conj()),
          torch.index_add(wide(x), 1, idx, wide(src)[:, :4].conj()), dtype, tol=tol)
    si = torch.tensor([[1, 0, 3, 3, 2], [0, 0, 1, 2, 3]])
    close(torch.scatter_add(dev(x), 0, si.to("ocl"), dev(src)), torch.scatter_add(wide(x), 0, si, wide(src)),
          dtype, tol=tol)
    close(torch.scatter_add(dev(x), 1, si[:, :3].to("ocl"), dev(src)),
          torch.scatter_add(wide(x), 1, si[:, :3], wide(src)), dtype, tol=tol)
    a, b = wide(x).clone(), dev(x).clone()
    pi = torch.tensor([0, -1, 7, 0])
    a.put_(pi, wide(src).reshape(-1)[:4], accumulate=True)
    b.put_(pi.to("ocl"), dev(src).reshape(-1)[:4], accumulate=True)
    close(b, a, dtype, tol=tol)
    a, b = wide(x).clone(), dev(x).clone()
    a.put_(pi[1:], wide(src).reshape(-1)[:3])
    b.put_(pi[1:].to("ocl"), dev(src).reshape(-1)[:3])
    close(b, a, dtype, tol=tol)


@pytest.mark.parametrize("dtype", CX)
def test_factories_and_log_sum_exp(dtype, no_fallback):
    tol = 3e-5 if dtype == torch.complex64 else 1e-11
    same(torch.eye(3, 4, dtype=dtype, device="ocl"), torch.eye(3, 4, dtype=dtype))
    same(torch.eye(0, dtype=dtype, device="ocl"), torch.eye(0, dtype=dtype))
    close(torch.linspace(1 - 2j, -3 + 5j, 7, dtype=dtype, device="ocl"),
          torch.linspace(1 - 2j, -3 + 5j, 7, dtype=torch.complex128), dtype, tol=tol)
    close(torch.linspace(2, 3j, 1, dtype=dtype, device="ocl"), torch.linspace(2, 3j, 1, dtype=torch.complex128),
          dtype, tol=tol)
    close(torch.logspace(0.1 - 1j, 1 + 2j, 5, base=2.0, dtype=dtype, device="ocl"),
          torch.logspace(0.1 - 1j, 1 + 2j, 5, base=2.0, dtype=torch.complex128), dtype, tol=tol)
    x = crand(4, 6, dtype=dtype, seed=28) * 3
    for vname, v in variants(x):
        close(torch.logsumexp(dev(v), 1), torch.logsumexp(wide(v), 1), dtype, tol=tol)
        close(torch.logsumexp(dev(v), (0, 1), keepdim=True), torch.logsumexp(wide(v), (0, 1), keepdim=True), dtype,
              tol=tol)
        close(torch.logaddexp(dev(v), dev(v).flip(0)), torch.logaddexp(wide(v), wide(v).flip(0)), dtype, tol=tol)
        close(torch.renorm(dev(v), 2, 0, 1.5), torch.renorm(wide(v), 2, 0, 1.5), dtype, tol=tol)
    y = torch.tensor([complex(float("nan"), 0), complex(float("-inf"), 1), 1 + 1j], dtype=dtype)
    close(torch.logaddexp(dev(y), dev(y).flip(0)), torch.logaddexp(wide(y), wide(y).flip(0)), dtype, tol=tol)


@pytest.mark.parametrize("dtype", CX)
def test_random_fills(dtype, no_fallback):
    """normal_/randn fill each part with half the variance, uniform_ each part in [from, to): as
    PyTorch does on the CPU (through view_as_real)."""
    torch.manual_seed(0)
    z = torch.randn(200000, dtype=dtype, device="ocl").cpu()
    assert abs(z.real.mean().item()) < 0.01 and abs(z.imag.mean().item()) < 0.01
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    assert abs(z.var().item() - 1.0) < 0.02  # complex var sums the parts'
    w = torch.empty(100000, dtype=dtype, device="ocl").normal_(2.0, 3.0).cpu()
    assert abs(w.real.mean().item() - 2.0) < 0.05 and abs(w.imag.mean().item() - 2.0) < 0.05
    assert abs(w.real.std().item() - 3.0 / 2 ** 0.5) < 0.05
    u = torch.empty(100000, dtype=dtype, device="ocl").uniform_(-1.0, 3.0).cpu()
    for p in (u.real, u.imag):
        assert p.min().item() >= -1.0 and p.max().item() < 3.0 and abs(p.mean().item() - 1.0) < 0.05
    assert torch.rand_like(torch.empty(3, dtype=dtype, device="ocl")).dtype == dtype
    with pytest.raises(RuntimeError, match="std"):
        torch.empty(3, dtype=dtype, device="ocl").normal_(0.0, -1.0)


def test_accumulating_scatters_mixed_dtypes_take_the_cpu():
    """A real source into a complex tensor is refused by the CPU (dtypes must match): the call
    goes there, counted, and raises as there."""
    x = crand(4, 3, seed=29)
    old = torch_ocl.get_fallback_policy()
    try:
        torch_ocl.set_fallback_policy("silent")
        torch_ocl.reset_fallback_stats()
        idx = torch.tensor([0, 2])
        for fn in (lambda t, v, i: t.index_put_((i,), v, accumulate=True),
                   lambda t, v, i: t.index_add_(0, i, v)):
            with pytest.raises(RuntimeError) as cpu_err:
                fn(x.clone(), torch.ones(2, 3), idx)
            with pytest.raises(RuntimeError) as ocl_err:
                fn(dev(x).clone(), torch.ones(2, 3, device="ocl"), idx.to("ocl"))
            assert type(ocl_err.value) is type(cpu_err.value)
        assert torch_ocl.fallback_stats(), "expected the CPU fallback"
    finally:
        torch_ocl.set_fallback_policy(old)
