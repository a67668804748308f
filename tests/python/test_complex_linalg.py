"""Complex linear algebra on ocl: the complex64 / complex128 builds of
kernels/linalg.cl behind PyTorch's own front ends (ocl_linalg_ops.cpp).

Every test runs under the no_fallback fixture, so a pass proves the op ran
on ocl. The CPU is the reference, complex128 the referee for complex64:
batched, non-contiguous (transposed, strided and conjugated views), empty
inputs, and singular, ill-conditioned and non-positive-definite inputs,
whose errors and info values must be the CPU's. Decompositions defined up
to a phase per vector (eigenvectors, singular vectors) are compared through
invariants: reconstruction, unitarity and |V|.
"""

import pytest
import torch
import torch_ocl  # noqa: F401

native = pytest.mark.usefixtures("no_fallback")
CX = [torch.complex64, torch.complex128]
TOL = {torch.complex64: dict(atol=3e-4, rtol=3e-4), torch.complex128: dict(atol=1e-10, rtol=1e-10)}


def close(actual, expected, dtype, scale=1.0):
    tol = TOL[dtype]
    torch.testing.assert_close(actual.cpu(), expected.to(actual.dtype), atol=tol["atol"] * scale,
                               rtol=tol["rtol"] * scale)


def crand(*shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    z = torch.complex(torch.randn(shape, generator=g, dtype=torch.float64),
                      torch.randn(shape, generator=g, dtype=torch.float64))
    return z.to(dtype)


def hpd(*shape, dtype, seed=0):
    a = crand(*shape, dtype=torch.complex128, seed=seed)
    n = shape[-1]
    return (a @ a.mH + n * torch.eye(n, dtype=torch.complex128)).to(dtype)


def layouts(x):
    """x on ocl and non-contiguous / conjugated views with the same values."""
    yield "contiguous", x.to("ocl")
    yield "transposed", x.mT.contiguous().to("ocl").mT
    wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device="ocl")
    wide[..., ::2] = x.to("ocl")
    yield "strided", wide[..., ::2]
    yield "conj", x.conj().to("ocl").conj()


@native
@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(dtype, upper):
    a = hpd(3, 6, 6, dtype=dtype)
    b = crand(3, 6, 2, dtype=dtype, seed=1)
    ref = torch.linalg.cholesky(a.cdouble(), upper=upper)
    for _, d in layouts(a):
        close(torch.linalg.cholesky(d, upper=upper), ref, dtype)
    L = torch.linalg.cholesky(a.to("ocl"), upper=upper)
    close(torch.cholesky_solve(b.to("ocl"), L, upper=upper), torch.cholesky_solve(b.cdouble(), ref, upper=upper),
          dtype, scale=10)
    close(torch.cholesky_inverse(L[0], upper=upper), torch.cholesky_inverse(ref[0], upper=upper), dtype, scale=10)


@native
def test_cholesky_not_positive_definite_is_the_cpus_error():
    a = torch.eye(4, dtype=torch.complex64)
    a[2, 2] = -1.0
    with pytest.raises(torch.linalg.LinAlgError) as cpu:
        torch.linalg.cholesky(a)
    with pytest.raises(torch.linalg.LinAlgError) as dev:
        torch.linalg.cholesky(a.to("ocl"))
    assert str(dev.value) == str(cpu.value)
    _, info = torch.linalg.cholesky_ex(torch.stack([torch.eye(4, dtype=torch.complex64), a]).to("ocl"))
    assert info.cpu().tolist() == [0, 3]


@native
@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 4, 4), (6, 4), (4, 6)])
def test_lu_factor_unpack_and_solve(dtype, shape):
    a = crand(*shape, dtype=dtype)
    LU_c, piv_c = torch.linalg.lu_factor(a.cdouble())
    for _, d in layouts(a):
        LU, piv = torch.linalg.lu_factor(d)
        assert torch.equal(piv.cpu(), piv_c)  # |re| + |im| pivoting, as LAPACK's
        close(LU, LU_c, dtype, scale=10)
        P, L, U = torch.lu_unpack(LU, piv)
        close(P @ L @ U, a.cdouble(), dtype, scale=10)
    if shape[-1] == shape[-2]:
        LU, piv = torch.linalg.lu_factor(a.to("ocl"))
        b = crand(*shape[:-1], 3, dtype=dtype, seed=2)
        for adjoint in (False, True):
            x = torch.linalg.lu_solve(LU, piv, b.to("ocl"), adjoint=adjoint)
            close(x, torch.linalg.lu_solve(LU_c, piv_c, b.cdouble(), adjoint=adjoint), dtype, scale=100)
        x = torch.linalg.lu_solve(LU, piv, b.mT.to("ocl"), left=False)
        close(x, torch.linalg.lu_solve(LU_c, piv_c, b.mT.cdouble(), left=False), dtype, scale=100)


@native
@pytest.mark.parametrize("dtype", CX)
def test_solve_inv_det_slogdet(dtype):
    a = crand(2, 5, 5, dtype=dtype) + 3 * torch.eye(5, dtype=dtype)
    b = crand(2, 5, 3, dtype=dtype, seed=1)
    ad, bd = a.cdouble(), b.cdouble()
    for _, d in layouts(a):
        close(torch.linalg.solve(d, b.to("ocl")), torch.linalg.solve(ad, bd), dtype, scale=10)
        close(torch.linalg.inv(d), torch.linalg.inv(ad), dtype, scale=10)
        close(torch.linalg.det(d), torch.linalg.det(ad), dtype, scale=100)
        s, l = torch.linalg.slogdet(d)
        s_c, l_c = torch.linalg.slogdet(ad)
        close(s, s_c, dtype)
        close(l, l_c.to(l.dtype), dtype)
    close(torch.linalg.solve(a.to("ocl"), b.mT.to("ocl"), left=False), torch.linalg.solve(ad, bd.mT, left=False),
          dtype, scale=10)
    close(torch.linalg.matrix_power(a[0].to("ocl"), -2), torch.linalg.matrix_power(ad[0], -2), dtype, scale=10)
    close(torch.linalg.matrix_exp(0.3 * a[0].to("ocl")), torch.linalg.matrix_exp(0.3 * ad[0]), dtype, scale=10)


@native
def test_singular_inputs_match_the_cpu():
    a = torch.tensor([[1, 2j], [2, 4j]], dtype=torch.complex64)
    for fn in (torch.linalg.inv, lambda x: torch.linalg.solve(x, torch.ones(2, 1, dtype=x.dtype, device=x.device))):
        with pytest.raises(torch.linalg.LinAlgError) as cpu:
            fn(a)
        with pytest.raises(torch.linalg.LinAlgError) as dev:
            fn(a.to("ocl"))
        assert str(dev.value) == str(cpu.value)
    batch = torch.stack([torch.eye(2, dtype=torch.complex64), a])
    _, info = torch.linalg.inv_ex(batch.to("ocl"))
    assert info.cpu().tolist() == torch.linalg.inv_ex(batch)[1].tolist() == [0, 2]
    _, _, info = torch.linalg.lu_factor_ex(batch.to("ocl"))
    assert info.cpu().tolist() == [0, 2]
    assert torch.linalg.det(a.to("ocl")).cpu().abs().item() == 0
    s, l = torch.linalg.slogdet(a.to("ocl"))
    assert s.cpu().item() == 0 and l.cpu().item() == float("-inf")
    ill = torch.tensor([[1, 1], [1, 1 + 1e-6j]], dtype=torch.complex128)
    close(torch.linalg.inv(ill.to("ocl")), torch.linalg.inv(ill), torch.complex128, scale=1e6)


@native
@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
def test_triangular_solves(dtype, upper, left):
    a = crand(2, 5, 5, dtype=dtype) + 4 * torch.eye(5, dtype=dtype)
    a = a.triu() if upper else a.tril()
    b = crand(2, 5, 3, dtype=dtype, seed=1) if left else crand(2, 3, 5, dtype=dtype, seed=1)
    ref = torch.linalg.solve_triangular(a.cdouble(), b.cdouble(), upper=upper, left=left)
    for _, d in layouts(a):
        close(torch.linalg.solve_triangular(d, b.to("ocl"), upper=upper, left=left), ref, dtype, scale=10)
        # conjugate-transposed operand: the kernels' conj flag
        refh = torch.linalg.solve_triangular(a.cdouble().mH, b.cdouble(), upper=not upper, left=left)
        close(torch.linalg.solve_triangular(d.mH, b.to("ocl"), upper=not upper, left=left), refh, dtype, scale=10)
    if left:
        for transpose in (False, True):
            x, _ = torch.triangular_solve(b.to("ocl"), a.to("ocl"), upper=upper, transpose=transpose)
            close(x, torch.triangular_solve(b.cdouble(), a.cdouble(), upper=upper, transpose=transpose)[0], dtype,
                  scale=10)


def unitary(q, dtype):
    eye = torch.eye(q.shape[-1], dtype=q.dtype)
    close(q.mH.cpu() @ q.cpu(), eye.expand(q.shape[:-2] + eye.shape), dtype, scale=10)


@native
@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_qr_geqrf_householder_ormqr(dtype, shape):
    a = crand(*shape, dtype=dtype)
    ad = a.cdouble()
    for _, d in layouts(a):
        q, r = torch.linalg.qr(d)
        q_c, r_c = torch.linalg.qr(ad)
        close(q, q_c, dtype, scale=10)  # LAPACK's phases: real diagonal of R
        close(r, r_c, dtype, scale=10)
    g, tau = torch.geqrf(a.to("ocl"))
    g_c, tau_c = torch.geqrf(ad)
    close(g, g_c, dtype, scale=10)
    close(tau, tau_c, dtype, scale=10)
    m, n = shape[-2:]
    if m >= n:
        close(torch.linalg.householder_product(g, tau), torch.linalg.householder_product(g_c, tau_c), dtype,
              scale=10)
    for left in (True, False):
        for transpose in (False, True):
            c = crand(*shape[:-2], m, 4, dtype=dtype, seed=3) if left else crand(*shape[:-2], 4, m, dtype=dtype, seed=3)
            got = torch.ormqr(g, tau, c.to("ocl"), left=left, transpose=transpose)
            close(got, torch.ormqr(g_c, tau_c, c.cdouble(), left=left, transpose=transpose), dtype, scale=10)


@native
@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, uplo):
    a = crand(2, 6, 6, dtype=torch.complex128)
    a = (a + a.mH).to(dtype)
    w_c, v_c = torch.linalg.eigh(a.cdouble(), UPLO=uplo)
    for _, d in layouts(a):
        w, v = torch.linalg.eigh(d, UPLO=uplo)
        close(w, w_c, dtype, scale=10)
        unitary(v, dtype)
        close(v.cpu() @ torch.diag_embed(w.cpu().to(v.dtype)) @ v.cpu().mH, a.cdouble(), dtype, scale=10)
        close(v.cpu().abs(), v_c.abs(), dtype, scale=10)  # equal up to a phase per column
        close(torch.linalg.eigvalsh(d, UPLO=uplo), w_c, dtype, scale=10)


@native
@pytest.mark.parametrize("dtype", CX)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(dtype, shape, full):
    a = crand(*shape, dtype=dtype)
    s_c = torch.linalg.svdvals(a.cdouble())
    for _, d in layouts(a):
        u, s, vh = torch.linalg.svd(d, full_matrices=full)
        close(s, s_c, dtype, scale=10)
        k = s.shape[-1]
        close(u[..., :k].cpu() @ torch.diag_embed(s.cpu().to(u.dtype)) @ vh[..., :k, :].cpu(), a.cdouble(), dtype,
              scale=10)
        unitary(u, dtype)
        unitary(vh.mH, dtype)
        close(torch.linalg.svdvals(d), s_c, dtype, scale=10)


@native
@pytest.mark.parametrize("dtype", CX)
def test_rank_deficient_pinv_rank_lstsq(dtype):
    u = crand(6, 2, dtype=torch.complex128)
    a = (u @ crand(2, 5, dtype=torch.complex128, seed=1)).to(dtype)  # rank 2
    assert torch.linalg.matrix_rank(a.to("ocl")).item() == 2
    # the cut between the two singular values and the rounding noise of a
    # complex64 input: the same on both sides
    close(torch.linalg.pinv(a.to("ocl"), rtol=1e-4), torch.linalg.pinv(a.cdouble(), rtol=1e-4), dtype, scale=100)
    h = (a.cdouble().mH @ a.cdouble()).to(dtype)
    assert torch.linalg.matrix_rank(h.to("ocl"), hermitian=True).item() == 2
    full = crand(6, 4, dtype=dtype, seed=2)
    b = crand(6, 2, dtype=dtype, seed=3)
    x = torch.linalg.lstsq(full.to("ocl"), b.to("ocl")).solution
    close(x, torch.linalg.lstsq(full.cdouble(), b.cdouble()).solution, dtype, scale=10)
    close(torch.linalg.cond(full.to("ocl")), torch.linalg.cond(full.cdouble()), dtype, scale=10)
    close(torch.linalg.matrix_norm(full.to("ocl"), "nuc"), torch.linalg.matrix_norm(full.cdouble(), "nuc"), dtype,
          scale=10)


@native
@pytest.mark.parametrize("dtype", CX)
def test_empty(dtype):
    e = torch.empty(0, 3, 3, dtype=dtype, device="ocl")
    assert torch.linalg.cholesky(e).shape == (0, 3, 3)
    assert torch.linalg.inv(e).shape == (0, 3, 3)
    assert torch.linalg.det(e).shape == (0,)
    assert torch.linalg.eigh(e)[0].shape == (0, 3)
    assert torch.linalg.svd(e)[1].shape == (0, 3)
    assert torch.linalg.qr(e)[0].shape == (0, 3, 3)
    z = torch.empty(0, 0, dtype=dtype, device="ocl")
    assert torch.linalg.det(z).cpu().item() == 1
    assert torch.linalg.inv(z).shape == (0, 0)
    assert torch.linalg.solve(torch.eye(3, dtype=dtype, device="ocl"), torch.empty(3, 0, dtype=dtype, device="ocl")
                              ).shape == (3, 0)


@native
def test_complex32_is_refused_as_on_the_cpu():
    a = torch.eye(3).to(torch.complex32)
    with pytest.raises(Exception) as cpu:
        torch.linalg.cholesky(a)
    with pytest.raises(type(cpu.value)):
        torch.linalg.cholesky(a.to("ocl"))


@native
def test_gradients_match_the_cpu():
    """Backward formulas of complex factorizations (conjugate transposes,
    phase-invariant losses of eigh / svd) run natively and match the CPU's."""
    a = crand(4, 4, dtype=torch.complex128) + 3 * torch.eye(4, dtype=torch.complex128)
    b = crand(4, 2, dtype=torch.complex128, seed=1)
    h = hpd(4, 4, dtype=torch.complex128, seed=2)

    def losses(a, b, h):
        return [torch.linalg.solve(a, b).abs().sum(), torch.linalg.inv(a).real.sum(),
                torch.linalg.det(a).abs(), torch.linalg.cholesky(h).abs().sum(),
                torch.linalg.eigvalsh(h).sum(), torch.linalg.svdvals(a).sum(),
                torch.linalg.qr(a)[1].abs().sum()]

    n = len(losses(a, b, h))
    for i in range(n):
        leaves = [t.clone().requires_grad_() for t in (a, b, h)]
        grads_c = torch.autograd.grad(losses(*leaves)[i], leaves, allow_unused=True)
        leaves = [t.to("ocl").requires_grad_() for t in (a, b, h)]
        grads_d = torch.autograd.grad(losses(*leaves)[i], leaves, allow_unused=True)
        for gd, gc in zip(grads_d, grads_c):
            assert (gd is None) == (gc is None), i
            if gc is not None:
                close(gd, gc, torch.complex128, scale=10)
