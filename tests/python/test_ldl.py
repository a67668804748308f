"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve on ocl (kernels/ldl.cl).

The CPU runs LAPACK's sytrf / hetrf (Bunch-Kaufman) and sytrs / hetrs; the
ocl kernels follow the same unblocked algorithm, so pivots must be equal
and LD and the solutions equal to rounding. Every test runs under the
no_fallback fixture, so a pass proves the op ran on ocl.
"""

import pytest
import torch
import torch_ocl  # noqa: F401

from conftest import randn_seeded as rand

native = pytest.mark.usefixtures("no_fallback")
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
SINGLE = (torch.float32, torch.complex64)
# (dtype, hermitian): the real dtypes have one variant only
CASES = [(d, h) for d in DTYPES for h in ([False, True] if d.is_complex else [False])]


def tol(dtype):
    return dict(atol=2e-4, rtol=2e-4) if dtype in SINGLE else dict(atol=1e-10, rtol=1e-10)


def sym(*shape, dtype, hermitian, seed=0):
    """A random indefinite symmetric (Hermitian) matrix: Bunch-Kaufman picks
    1x1 and 2x2 pivots on it."""
    a = rand(*shape, dtype=dtype, seed=seed)
    return a + (a.mH if hermitian else a.mT)


def check_factor(a_cpu, a_ocl, hermitian):
    LD, piv, info = torch.linalg.ldl_factor_ex(a_cpu, hermitian=hermitian)
    LDo, pivo, infoo = torch.linalg.ldl_factor_ex(a_ocl, hermitian=hermitian)
    assert LDo.device.type == "ocl"
    assert torch.equal(pivo.cpu(), piv), (pivo.cpu(), piv)
    assert torch.equal(infoo.cpu(), info)
    torch.testing.assert_close(LDo.cpu(), LD, **tol(a_cpu.dtype))
    return piv


def layouts(x):
    """x on ocl, and non-contiguous views with the same values."""
    yield x.to("ocl")
    yield x.mT.contiguous().to("ocl").mT
    wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device="ocl")
    wide[..., ::2] = x.to("ocl")
    yield wide[..., ::2]
    yield x.unsqueeze(0).expand(2, *x.shape).to("ocl")[1]
    if x.is_complex():
        yield x.conj().to("ocl").conj()


@native
@pytest.mark.parametrize("dtype,hermitian", CASES)
def test_factor_batched_and_views(dtype, hermitian):
    a = sym(3, 2, 7, 7, dtype=dtype, hermitian=hermitian)
    for d in layouts(a):
        check_factor(a, d, hermitian)


@native
@pytest.mark.parametrize("dtype,hermitian", [(torch.float64, False), (torch.complex128, True)])
def test_larger_than_a_work_group(dtype, hermitian):
    # n above the kernel's 64 items: each item updates several columns
    a = sym(2, 80, 80, dtype=dtype, hermitian=hermitian, seed=10)
    a[1].diagonal().zero_()
    check_factor(a, a.to("ocl"), hermitian)


@native
@pytest.mark.parametrize("dtype,hermitian", CASES)
def test_factor_needs_2x2_pivots(dtype, hermitian):
    # zero diagonal: every first step takes a 2x2 block (negative pivots)
    a = sym(4, 6, 6, dtype=dtype, hermitian=hermitian, seed=3)
    a.diagonal(0, -2, -1).zero_()
    piv = check_factor(a, a.to("ocl"), hermitian)
    assert (piv < 0).any()
    # a large off-diagonal element forces a row interchange with it
    b = sym(5, 5, dtype=dtype, hermitian=hermitian, seed=4)
    b[3, 0] = b[0, 3] = 50
    piv = check_factor(b, b.to("ocl"), hermitian)
    assert (piv.abs() != torch.arange(1, 6, dtype=piv.dtype)).any()


@native
@pytest.mark.parametrize("dtype", DTYPES)
def test_factor_wrappers_and_out(dtype):
    a = sym(2, 5, 5, dtype=dtype, hermitian=False, seed=5)
    LD, piv = torch.linalg.ldl_factor(a)
    LDo, pivo = torch.linalg.ldl_factor(a.to("ocl"))
    assert torch.equal(pivo.cpu(), piv)
    torch.testing.assert_close(LDo.cpu(), LD, **tol(dtype))
    out = (torch.empty(0, dtype=dtype, device="ocl"), torch.empty(0, dtype=torch.int32, device="ocl"))
    torch.linalg.ldl_factor(a.to("ocl"), out=out)
    assert torch.equal(out[1].cpu(), piv)
    torch.testing.assert_close(out[0].cpu(), LD, **tol(dtype))


@native
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0, 4, 4), (2, 0, 0), (0, 0)])
def test_factor_empty(dtype, shape):
    a = torch.zeros(shape, dtype=dtype)
    LD, piv, info = torch.linalg.ldl_factor_ex(a)
    LDo, pivo, infoo = torch.linalg.ldl_factor_ex(a.to("ocl"))
    assert LDo.shape == LD.shape and pivo.shape == piv.shape and infoo.shape == info.shape


@native
@pytest.mark.parametrize("dtype,hermitian", CASES)
def test_singular_info_and_errors(dtype, hermitian):
    a = torch.zeros(3, 4, 4, dtype=dtype)
    a[1] = torch.diag(torch.tensor([2.0, 0.0, 3.0, 1.0])).to(dtype)  # a zero column at step 2
    a[2] = sym(4, 4, dtype=dtype, hermitian=hermitian, seed=6)
    check_factor(a, a.to("ocl"), hermitian)
    info = torch.linalg.ldl_factor_ex(a.to("ocl"), hermitian=hermitian)[2].cpu()
    assert info.tolist() == [1, 2, 0]
    for x in (a, a[1]):  # batched and single messages
        with pytest.raises(RuntimeError) as cpu_err:
            torch.linalg.ldl_factor(x, hermitian=hermitian)
        with pytest.raises(RuntimeError) as ocl_err:
            torch.linalg.ldl_factor(x.to("ocl"), hermitian=hermitian)
        assert str(ocl_err.value) == str(cpu_err.value)
        with pytest.raises(RuntimeError) as ocl_err:
            torch.linalg.ldl_factor_ex(x.to("ocl"), hermitian=hermitian, check_errors=True)
        with pytest.raises(RuntimeError) as cpu_err:
            torch.linalg.ldl_factor_ex(x, hermitian=hermitian, check_errors=True)
        assert str(ocl_err.value) == str(cpu_err.value)


@native
@pytest.mark.parametrize("dtype,hermitian", CASES)
def test_solve(dtype, hermitian):
    a = sym(3, 6, 6, dtype=dtype, hermitian=hermitian, seed=7)
    a[1].diagonal().zero_()  # 2x2 pivots in one matrix of the batch
    b = rand(3, 6, 4, dtype=dtype, seed=8)
    LD, piv = torch.linalg.ldl_factor(a, hermitian=hermitian)
    x = torch.linalg.ldl_solve(LD, piv, b, hermitian=hermitian)
    LDo, pivo = torch.linalg.ldl_factor(a.to("ocl"), hermitian=hermitian)
    for bo in (b.to("ocl"), b.mT.contiguous().to("ocl").mT):
        xo = torch.linalg.ldl_solve(LDo, pivo, bo, hermitian=hermitian)
        assert xo.device.type == "ocl"
        torch.testing.assert_close(xo.cpu(), x, **tol(dtype))
    torch.testing.assert_close(a.to(torch.complex128 if dtype.is_complex else torch.float64) @ x.to(
        torch.complex128 if dtype.is_complex else torch.float64), b.to(x.dtype).to(
        torch.complex128 if dtype.is_complex else torch.float64), atol=1e-2, rtol=1e-2)
    # broadcast: one factorization against a batch of right-hand sides (the
    # CPU's kernel crashes on a broadcast LD: its reference gets LD copied)
    bb = rand(2, 3, 6, 2, dtype=dtype, seed=9)
    x2 = torch.linalg.ldl_solve(LD.expand(2, 3, 6, 6).contiguous(), piv.expand(2, 3, 6).contiguous(), bb,
                                hermitian=hermitian)
    xo2 = torch.linalg.ldl_solve(LDo, pivo, bb.to("ocl"), hermitian=hermitian)
    torch.testing.assert_close(xo2.cpu(), x2, **tol(dtype))
    out = torch.empty(0, dtype=dtype, device="ocl")
    torch.linalg.ldl_solve(LDo, pivo, b.to("ocl"), hermitian=hermitian, out=out)
    torch.testing.assert_close(out.cpu(), x, **tol(dtype))


@native
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_empty(dtype):
    LD, piv = torch.linalg.ldl_factor(sym(4, 4, dtype=dtype, hermitian=False))
    for b in (torch.zeros(4, 0, dtype=dtype), torch.zeros(0, 4, 3, dtype=dtype)):
        x = torch.linalg.ldl_solve(LD, piv, b)
        xo = torch.linalg.ldl_solve(LD.to("ocl"), piv.to("ocl"), b.to("ocl"))
        assert xo.shape == x.shape
