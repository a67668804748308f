"""torch.linalg.polar and torch.linalg.matrix_sqrth on ocl.

Both are PyTorch's own device-generic compositions (polar: reduced SVD,
U Vh and Vh^H diag(S) Vh made Hermitian; matrix_sqrth: eigh, eigenvalues
clamped at 0, V diag(sqrt(L)) V^H made Hermitian), registered for ocl over
its native SVD, eigh and matmul. So results equal the CPU's to rounding.
Every test runs under the no_fallback fixture: a pass proves the op ran on
ocl.
"""

import pytest
import torch
import torch_ocl  # noqa: F401

from conftest import randn_seeded as rand

pytestmark = pytest.mark.usefixtures("no_fallback")
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
SINGLE = (torch.float32, torch.complex64)


def tol(dtype):
    return dict(atol=2e-4, rtol=2e-4) if dtype in SINGLE else dict(atol=1e-9, rtol=1e-9)


def layouts(x):
    """x on ocl, and non-contiguous views (transposed, strided, offset) with the same values."""
    yield x.to("ocl")
    yield x.mT.contiguous().to("ocl").mT
    wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device="ocl")
    wide[..., ::2] = x.to("ocl")
    yield wide[..., ::2]
    yield x.unsqueeze(0).expand(2, *x.shape).to("ocl")[1]
    big = torch.zeros(x.numel() + 3, dtype=x.dtype, device="ocl")
    big[3:] = x.reshape(-1).to("ocl")
    yield big[3:].view(x.shape)


def psd(*shape, dtype, rank=None, seed=0):
    n = shape[-1]
    a = rand(*shape[:-1], rank or n, dtype=dtype, seed=seed)
    return a @ a.mH


# ---- polar ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 3, 6, 4), (1, 1), (3, 1, 1), (6, 1)])
def test_polar_matches_cpu(dtype, shape):
    a = rand(*shape, dtype=dtype)
    U, H = torch.linalg.polar(a)
    for x in layouts(a):
        Uo, Ho = torch.linalg.polar(x)
        assert Uo.device.type == "ocl" and Ho.device.type == "ocl"
        torch.testing.assert_close(Uo.cpu(), U, **tol(dtype))
        torch.testing.assert_close(Ho.cpu(), H, **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_polar_reconstructs_and_is_hermitian(dtype):
    a = rand(3, 5, 4, dtype=dtype, seed=1).to("ocl")
    U, H = torch.linalg.polar(a)
    torch.testing.assert_close((U @ H).cpu(), a.cpu(), **tol(dtype))
    assert torch.equal(H.cpu(), H.mH.cpu())


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_polar_ill_conditioned_and_singular(dtype):
    u = torch.linalg.qr(rand(5, 5, dtype=dtype, seed=2))[0]
    v = torch.linalg.qr(rand(5, 5, dtype=dtype, seed=3))[0]
    for s in ([1, 1e-3, 1e-6, 1e-9, 1e-12], [3, 2, 1, 0, 0]):
        a = u @ torch.diag(torch.tensor(s, dtype=dtype)) @ v.mH
        U, H = torch.linalg.polar(a)
        Uo, Ho = torch.linalg.polar(a.to("ocl"))
        # H is well determined; U only on the range of A when A is singular
        torch.testing.assert_close(Ho.cpu(), H, atol=1e-8, rtol=1e-8)
        torch.testing.assert_close((Uo @ Ho).cpu(), a, atol=1e-8, rtol=1e-8)
        if s[-1] > 0:
            torch.testing.assert_close(Uo.cpu(), U, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_polar_empty(dtype):
    for shape in [(0, 0), (2, 0, 0), (0, 3, 2), (3, 0)]:
        a = torch.zeros(shape, dtype=dtype)
        U, H = torch.linalg.polar(a)
        Uo, Ho = torch.linalg.polar(a.to("ocl"))
        assert Uo.shape == U.shape and Ho.shape == H.shape
        assert Uo.dtype == U.dtype and Ho.dtype == H.dtype


def test_polar_out():
    a = rand(2, 4, 3, dtype=torch.complex64)
    U, H = torch.linalg.polar(a)
    Uo = torch.empty(0, dtype=a.dtype, device="ocl")
    Ho = torch.empty(0, dtype=a.dtype, device="ocl")
    r = torch.linalg.polar(a.to("ocl"), out=(Uo, Ho))
    assert r[0] is Uo and r[1] is Ho
    torch.testing.assert_close(Uo.cpu(), U, **tol(a.dtype))
    torch.testing.assert_close(Ho.cpu(), H, **tol(a.dtype))


def raises_like_cpu(fn, *args_cpu, args_ocl):
    try:
        fn(*args_cpu)
    except Exception as e:  # noqa: BLE001 - the CPU's exception type is the reference
        with pytest.raises(type(e)):
            fn(*args_ocl)
        return
    raise AssertionError("the CPU accepted the input")


def test_polar_bad_input():
    for a in [rand(3, 5, dtype=torch.float32), torch.ones(4), torch.ones(3, 3, dtype=torch.int64)]:
        raises_like_cpu(torch.linalg.polar, a, args_ocl=(a.to("ocl"),))
    a = rand(3, 3, dtype=torch.float32)
    raises_like_cpu(lambda x, o: torch.linalg.polar(x, out=o), a,
                    (torch.empty(0, dtype=torch.float64), torch.empty(0)),
                    args_ocl=(a.to("ocl"), (torch.empty(0, dtype=torch.float64, device="ocl"),
                                            torch.empty(0, device="ocl"))))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_polar_gradcheck(dtype):
    a = rand(4, 3, dtype=dtype, seed=4).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(lambda x: torch.linalg.polar(x), (a,), atol=1e-6, rtol=1e-5)


# ---- matrix_sqrth ----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (1, 1), (3, 1, 1)])
def test_sqrth_matches_cpu(dtype, shape):
    a = psd(*shape, dtype=dtype) + 0.5 * torch.eye(shape[-1], dtype=dtype)
    r = torch.linalg.matrix_sqrth(a)
    for x in layouts(a):
        ro = torch.linalg.matrix_sqrth(x)
        assert ro.device.type == "ocl"
        torch.testing.assert_close(ro.cpu(), r, **tol(dtype))
    ro = torch.linalg.matrix_sqrth(a.to("ocl"))
    torch.testing.assert_close((ro @ ro).cpu(), a, **tol(dtype))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_sqrth_singular_and_indefinite(dtype):
    # singular PSD (rank 2 of 5), and indefinite: the CPU clamps negative
    # eigenvalues to 0, so does ocl
    sing = psd(5, 5, dtype=dtype, rank=2, seed=5)
    b = rand(5, 5, dtype=dtype, seed=6)
    indef = b + b.mH
    for a in (sing, indef, -sing):
        r = torch.linalg.matrix_sqrth(a)
        ro = torch.linalg.matrix_sqrth(a.to("ocl"))
        torch.testing.assert_close(ro.cpu(), r, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sqrth_empty_and_out(dtype):
    for shape in [(0, 0), (3, 0, 0)]:
        a = torch.zeros(shape, dtype=dtype)
        assert torch.linalg.matrix_sqrth(a.to("ocl")).shape == torch.linalg.matrix_sqrth(a).shape
    a = psd(3, 3, dtype=dtype)
    out = torch.empty(0, dtype=dtype, device="ocl")
    torch.ops.aten.linalg_matrix_sqrth.out(a.to("ocl"), out=out)  # no out= in the Python API
    torch.testing.assert_close(out.cpu(), torch.linalg.matrix_sqrth(a), **tol(dtype))


def test_sqrth_bad_input():
    for a in [rand(3, 4, dtype=torch.float32), torch.ones(4), torch.ones(3, 3, dtype=torch.int64)]:
        raises_like_cpu(torch.linalg.matrix_sqrth, a, args_ocl=(a.to("ocl"),))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_sqrth_gradcheck(dtype):
    a = (psd(3, 3, dtype=dtype, seed=7) + torch.eye(3, dtype=dtype)).to("ocl").requires_grad_()
    # the input is read as Hermitian: differentiate through a Hermitian function of it
    assert torch.autograd.gradcheck(lambda x: torch.linalg.matrix_sqrth(x + x.mH), (a,), atol=1e-6, rtol=1e-5)
