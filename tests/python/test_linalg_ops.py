"""Linear algebra on ocl (kernels/linalg.cl behind PyTorch's own front ends).

Every family runs natively (no CPU fallback) and is checked against the CPU,
with float64 as the referee for float32: batched, non-contiguous (transposed
and strided views), broadcast batches and empty inputs, and ill-conditioned,
singular and non-positive-definite inputs, whose errors must be the CPU's
(same exception type and message). Decompositions defined up to signs
(eigenvectors, singular vectors) are compared through invariants: |V|, U @ Vh,
reconstruction and orthogonality.
"""

import pytest
import torch

native = pytest.mark.usefixtures("no_fallback")
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(atol=2e-4, rtol=2e-4), torch.float64: dict(atol=1e-10, rtol=1e-10)}


def close(actual, expected, dtype, scale=1.0):
    tol = TOL[dtype]
    torch.testing.assert_close(actual.cpu(), expected, atol=tol["atol"] * scale, rtol=tol["rtol"])


def rand(*shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def spd(*shape, dtype, seed=0):
    a = rand(*shape, dtype=torch.float64, seed=seed)
    n = shape[-1]
    return (a @ a.mT + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def layouts(x):
    """x and non-contiguous copies of it: transposed storage and a strided view."""
    yield "contiguous", x.to("ocl")
    yield "transposed", x.mT.contiguous().to("ocl").mT
    wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device="ocl")
    wide[..., ::2] = x.to("ocl")
    yield "strided", wide[..., ::2]


@native
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(dtype, upper):
    a = spd(3, 6, 6, dtype=dtype)
    b = rand(3, 6, 2, dtype=dtype, seed=1)
    ref = torch.linalg.cholesky(a.double(), upper=upper)
    for _, d in layouts(a):
        close(torch.linalg.cholesky(d, upper=upper), ref.to(dtype), dtype)
    L = torch.linalg.cholesky(a.to("ocl"), upper=upper)
    close(torch.cholesky_solve(b.to("ocl"), L, upper=upper), torch.cholesky_solve(b.double(), ref, upper=upper).to(dtype),
          dtype, scale=10)
    close(torch.cholesky_inverse(L[0], upper=upper), torch.cholesky_inverse(ref[0], upper=upper).to(dtype), dtype)


@native
def test_cholesky_not_positive_definite_is_the_cpus_error():
    a = torch.eye(4)
    a[2, 2] = -1.0
    with pytest.raises(torch.linalg.LinAlgError) as cpu:
        torch.linalg.cholesky(a)
    with pytest.raises(torch.linalg.LinAlgError) as dev:
        torch.linalg.cholesky(a.to("ocl"))
    assert str(dev.value) == str(cpu.value)  # "... the leading minor of order 3 ..."
    L, info = torch.linalg.cholesky_ex(torch.stack([torch.eye(4), a]).to("ocl"))
    assert info.cpu().tolist() == [0, 3]


@native
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 4, 4), (6, 4), (4, 6)])
def test_lu_factor_unpack_and_solve(dtype, shape):
    a = rand(*shape, dtype=dtype)
    for name, d in layouts(a):
        LU, piv = torch.linalg.lu_factor(d)
        LU_c, piv_c = torch.linalg.lu_factor(a)
        assert torch.equal(piv.cpu(), piv_c), name  # same pivots as LAPACK
        close(LU, LU_c, dtype, scale=10)
        P, L, U = torch.linalg.lu(d)
        close(P @ L @ U, a, dtype, scale=10)
    if shape[-1] == shape[-2]:
        b = rand(*shape[:-1], 3, dtype=dtype, seed=2)
        LU, piv = torch.linalg.lu_factor(a.to("ocl"))
        for left in (True, False):
            for adjoint in (False, True):
                bb = b if left else b.mT
                x = torch.linalg.lu_solve(LU, piv, bb.to("ocl"), left=left, adjoint=adjoint)
                ref = torch.linalg.lu_solve(*torch.linalg.lu_factor(a.double()), bb.double(), left=left, adjoint=adjoint)
                close(x, ref.to(dtype), dtype, scale=100)


@native
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_slogdet(dtype):
    a = rand(4, 5, 5, dtype=dtype)
    b = rand(4, 5, 2, dtype=dtype, seed=3)
    a64 = a.double()
    for name, d in layouts(a):
        close(torch.linalg.solve(d, b.to("ocl")), torch.linalg.solve(a64, b.double()).to(dtype), dtype, scale=100)
        close(torch.linalg.inv(d), torch.linalg.inv(a64).to(dtype), dtype, scale=100)
        close(torch.linalg.det(d), torch.linalg.det(a64).to(dtype), dtype, scale=10)
        sign, lad = torch.linalg.slogdet(d)
        s64, l64 = torch.linalg.slogdet(a64)
        assert torch.equal(sign.cpu(), s64.to(dtype)), name
        close(lad, l64.to(dtype), dtype)
    # broadcast batch: one A for every B
    close(torch.linalg.solve(a[0].to("ocl"), b.to("ocl")), torch.linalg.solve(a64[0], b.double()).to(dtype), dtype,
          scale=100)
    # gradients through the native factorization
    x = a.to("ocl").requires_grad_()
    torch.linalg.det(x).sum().backward()
    y = a64.clone().requires_grad_()
    torch.linalg.det(y).sum().backward()
    close(x.grad, y.grad.to(dtype), dtype, scale=10)


@native
def test_singular_inputs_match_the_cpu():
    s = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    for fn in (torch.linalg.inv, lambda x: torch.linalg.solve(x, torch.ones(2, 1, device=x.device))):
        with pytest.raises(torch.linalg.LinAlgError) as cpu:
            fn(s)
        with pytest.raises(torch.linalg.LinAlgError) as dev:
            fn(s.to("ocl"))
        assert str(dev.value) == str(cpu.value)
    assert torch.linalg.det(s.to("ocl")).item() == 0.0
    _, info = torch.linalg.inv_ex(torch.stack([torch.eye(2), s]).to("ocl"))
    assert info.cpu().tolist() == [0, 2]
    # ill-conditioned but invertible (Hilbert 6x6, cond ~1.5e7): right by the float64 answer
    h = 1.0 / (torch.arange(6.0)[:, None] + torch.arange(6.0) + 1)
    x = torch.linalg.solve(h.double().to("ocl"), torch.ones(6, 1, dtype=torch.float64, device="ocl"))
    torch.testing.assert_close(x.cpu(), torch.linalg.solve(h.double(), torch.ones(6, 1, dtype=torch.float64)),
                               atol=1e-6, rtol=1e-7)


@native
@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, True, True), (True, False, False),
                                             (False, False, False)])
def test_triangular_solves(dtype, upper, left, unit):
    a = rand(3, 5, 5, dtype=dtype) + 4 * torch.eye(5, dtype=dtype)
    a = a.triu() if upper else a.tril()
    b = rand(3, 5, 4, dtype=dtype, seed=4)
    b = b if left else b.mT
    ref = torch.linalg.solve_triangular(a.double(), b.double(), upper=upper, left=left, unitriangular=unit)
    for name, d in layouts(a):
        x = torch.linalg.solve_triangular(d, b.to("ocl"), upper=upper, left=left, unitriangular=unit)
        close(x, ref.to(dtype), dtype, scale=10)
    if left:
        for transpose in (False, True):
            x, m = torch.triangular_solve(b.to("ocl"), a.to("ocl"), upper=upper, transpose=transpose,
                                          unitriangular=unit)
            r, _ = torch.triangular_solve(b.double(), a.double(), upper=upper, transpose=transpose, unitriangular=unit)
            close(x, r.to(dtype), dtype, scale=10)


@native
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5)])
def test_qr_geqrf_householder_ormqr(dtype, shape):
    a = rand(*shape, dtype=dtype)
    for mode in ("reduced", "complete", "r"):
        q, r = torch.linalg.qr(a.to("ocl"), mode=mode)
        qc, rc = torch.linalg.qr(a.double(), mode=mode)
        close(r, rc.to(dtype), dtype, scale=10)  # LAPACK's sign convention: R equal, not only |R|
        if mode != "r":
            close(q, qc.to(dtype), dtype, scale=10)
    g, tau = torch.geqrf(a.to("ocl"))
    gc, tauc = torch.geqrf(a.double())
    close(g, gc.to(dtype), dtype, scale=10)
    close(tau, tauc.to(dtype), dtype)
    if shape[-2] >= shape[-1]:
        close(torch.linalg.householder_product(g, tau), torch.linalg.householder_product(gc, tauc).to(dtype), dtype)
    c = rand(*shape[:-2], shape[-2], 3, dtype=dtype, seed=5)
    for left, transpose in ((True, False), (True, True), (False, False), (False, True)):
        cc = c if left else c.mT
        close(torch.ormqr(g, tau, cc.to("ocl"), left=left, transpose=transpose),
              torch.ormqr(gc, tauc, cc.double(), left=left, transpose=transpose).to(dtype), dtype, scale=10)


@native
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, uplo):
    a = rand(3, 7, 7, dtype=dtype)  # not symmetric: only the UPLO triangle counts, as on the CPU
    w, v = torch.linalg.eigh(a.to("ocl"), UPLO=uplo)
    wc, vc = torch.linalg.eigh(a.double(), UPLO=uplo)
    close(w, wc.to(dtype), dtype, scale=10)
    close(v.abs(), vc.abs().to(dtype), dtype, scale=10)
    sym = (a.triu() + a.triu(1).mT) if uplo == "U" else (a.tril() + a.tril(-1).mT)
    close(v @ torch.diag_embed(w) @ v.mT, sym, dtype, scale=10)
    close(torch.linalg.eigvalsh(a.to("ocl"), UPLO=uplo), wc.to(dtype), dtype, scale=10)
    # repeated eigenvalues: the vectors still span and reconstruct
    iso = torch.diag(torch.tensor([2.0, 2.0, 2.0, 5.0], dtype=dtype))
    w, v = torch.linalg.eigh(iso.to("ocl"))
    close(w, torch.tensor([2.0, 2.0, 2.0, 5.0], dtype=dtype), dtype)
    close(v @ v.mT, torch.eye(4, dtype=dtype), dtype)


@native
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (3, 5, 5), (6, 1), (0, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(dtype, shape, full):
    a = rand(*shape, dtype=dtype)
    for name, d in layouts(a):
        u, s, vh = torch.linalg.svd(d, full_matrices=full)
        uc, sc, vhc = torch.linalg.svd(a.double(), full_matrices=full)
        assert u.shape == uc.shape and vh.shape == vhc.shape, name
        close(s, sc.to(dtype), dtype, scale=10)
        k = s.shape[-1]
        close(u[..., :k] @ vh[..., :k, :], (uc[..., :k] @ vhc[..., :k, :]).to(dtype), dtype, scale=10)
        close(u.mT @ u, torch.eye(u.shape[-1], dtype=dtype).expand(u.mT.shape[:-1] + (u.shape[-1],)), dtype, 10)
        close(vh @ vh.mT, torch.eye(vh.shape[-2], dtype=dtype).expand(vh.shape[:-1] + (vh.shape[-2],)), dtype, 10)
    close(torch.linalg.svdvals(a.to("ocl")), torch.linalg.svdvals(a.double()).to(dtype), dtype, scale=10)


@native
def test_rank_deficient_svd_pinv_rank_lstsq():
    torch.manual_seed(0)
    a = torch.randn(8, 3, dtype=torch.float64) @ torch.randn(3, 6, dtype=torch.float64)  # rank 3
    d = a.to("ocl")
    u, s, vh = torch.linalg.svd(d)  # full: U completes a basis past the zero singular values
    close(u @ u.mT, torch.eye(8, dtype=torch.float64), torch.float64, scale=100)
    close(u[:, :6] @ torch.diag(s) @ vh, a, torch.float64, scale=100)
    assert torch.linalg.matrix_rank(d).item() == 3
    close(torch.linalg.pinv(d), torch.linalg.pinv(a), torch.float64, scale=1e4)
    b = torch.randn(8, 2, dtype=torch.float64)
    x = torch.linalg.lstsq(d, b.to("ocl"), driver="gelsd")
    xc = torch.linalg.lstsq(a, b, driver="gelsd")
    close(x.solution, xc.solution, torch.float64, scale=1e4)
    assert x.rank.item() == xc.rank.item() == 3


@native
@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_and_composites(dtype):
    a = rand(2, 7, 4, dtype=dtype)
    b = rand(2, 7, 3, dtype=dtype, seed=6)
    r = torch.linalg.lstsq(a.to("ocl"), b.to("ocl"))
    rc = torch.linalg.lstsq(a.double(), b.double())
    close(r.solution, rc.solution.to(dtype), dtype, scale=10)
    assert torch.equal(r.rank.cpu(), rc.rank)
    sq = rand(3, 4, 4, dtype=dtype, seed=7)
    close(torch.linalg.matrix_power(sq.to("ocl"), -3), torch.linalg.matrix_power(sq.double(), -3).to(dtype), dtype,
          scale=1e4)
    close(torch.linalg.cond(sq.to("ocl")), torch.linalg.cond(sq.double()).to(dtype), dtype, scale=1e3)
    close(torch.linalg.matrix_norm(sq.to("ocl"), "nuc"), torch.linalg.matrix_norm(sq.double(), "nuc").to(dtype),
          dtype, scale=10)
    close(torch.linalg.matrix_exp(sq.to("ocl")), torch.linalg.matrix_exp(sq.double()).to(dtype), dtype, scale=10)


@native
def test_cross_trace_angle():
    a, b = torch.randn(4, 3, 5), torch.randn(1, 3, 5)
    torch.testing.assert_close(torch.linalg.cross(a.to("ocl"), b.to("ocl"), dim=1).cpu(), torch.linalg.cross(a, b, dim=1))
    i = torch.arange(12).view(3, 4)
    assert torch.equal(torch.trace(i.to("ocl")).cpu(), torch.trace(i))  # int64 sum, as the CPU
    assert torch.trace(i.to("ocl")).dtype == torch.int64
    x = torch.tensor([1.0, -2.0, 0.0, -0.0, float("nan"), float("-inf")])
    torch.testing.assert_close(torch.angle(x.to("ocl")).cpu(), torch.angle(x), equal_nan=True)
    torch.testing.assert_close(torch.angle(torch.tensor([-1, 2]).to("ocl")).cpu(), torch.angle(torch.tensor([-1, 2])))
    with pytest.raises(RuntimeError, match="expected a matrix"):
        torch.trace(torch.ones(2, 2, 2, device="ocl"))


@native
def test_empty_and_out_arguments():
    for fn in (torch.linalg.inv, torch.linalg.det, torch.linalg.cholesky, torch.linalg.eigvalsh, torch.linalg.svdvals):
        e = torch.empty(2, 0, 0)
        r, rc = fn(e.to("ocl")), fn(e)
        assert r.shape == rc.shape and r.device.type == "ocl"
    a = spd(4, 4, dtype=torch.float32)
    out = torch.empty(0, device="ocl")
    torch.linalg.inv(a.to("ocl"), out=out)
    close(out, torch.linalg.inv(a.double()).float(), torch.float32)
    lu, piv = torch.empty(0, device="ocl"), torch.empty(0, dtype=torch.int32, device="ocl")
    torch.linalg.lu_factor(a.to("ocl"), out=(lu, piv))
    assert lu.stride() == torch.linalg.lu_factor(a)[0].stride()  # column-major, as the CPU's


def test_float16_is_refused_as_on_the_cpu():
    a = torch.eye(3, dtype=torch.float16)
    with pytest.raises(RuntimeError) as cpu:
        torch.linalg.cholesky(a)
    with pytest.raises(RuntimeError) as dev:
        torch.linalg.cholesky(a.to("ocl"))
    assert type(dev.value) is type(cpu.value)
