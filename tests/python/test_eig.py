"""torch.linalg.eig / eigvals on ocl (kernels/eig.cl).

The CPU runs LAPACK's geev; the ocl kernel follows the same pipeline for
these sizes, so eigenvalues must come in the same ORDER (OpInfo compares
them directly) and eigenvectors must agree in modulus (their phase is
normalised the same way, but |V| is what OpInfo compares). Every test runs
under the no_fallback fixture, so a pass proves the op ran on ocl.
"""

import pytest
import torch
import torch_ocl  # noqa: F401

from conftest import randn_seeded as rand

pytestmark = pytest.mark.usefixtures("no_fallback")
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
SINGLE = (torch.float32, torch.complex64)
SIZES = [0, 1, 2, 3, 5, 8, 16, 33, 64]


def tol(dtype, n=8):
    # float32 eigenvalues of a random matrix carry errors of a few eps * |A|
    # * condition; grow with n like the CPU's own error does
    return dict(atol=1e-4 * max(1, n), rtol=1e-4) if dtype in SINGLE else dict(atol=1e-10 * max(1, n), rtol=1e-10)


def check(a, vectors_too=True):
    """eig and eigvals on ocl against the CPU: values in order, |V|, and A V = V diag(w)."""
    w_cpu, v_cpu = torch.linalg.eig(a)
    w, v = torch.linalg.eig(a.to("ocl"))
    n = a.shape[-1]
    t = tol(a.dtype, n)
    assert w.dtype == w_cpu.dtype and v.dtype == v_cpu.dtype and w.shape == w_cpu.shape and v.shape == v_cpu.shape
    torch.testing.assert_close(w.cpu(), w_cpu, **t)
    if vectors_too:
        torch.testing.assert_close(v.cpu().abs(), v_cpu.abs(), **t)
    wide = torch.complex128
    aw, vw, ww = a.to(wide), v.cpu().to(wide), w.cpu().to(wide)
    torch.testing.assert_close(aw @ vw, vw * ww.unsqueeze(-2), **t)
    torch.testing.assert_close(torch.linalg.eigvals(a.to("ocl")).cpu(), w_cpu, **t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_random(dtype, n):
    check(rand(n, n, dtype=dtype, seed=n))


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched(dtype):
    check(rand(2, 3, 5, 5, dtype=dtype))
    check(rand(0, 4, 4, dtype=dtype))
    check(rand(2, 0, 0, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_noncontiguous(dtype):
    a = rand(3, 7, 7, dtype=dtype)
    check(a.mT)
    check(a[:, ::2, 1::2][:, :3, :3])
    check(rand(4, 6, 6, dtype=dtype)[::2])
    if dtype.is_complex:
        check(a.conj())  # conj bit: the kernel must see the conjugated values


@pytest.mark.parametrize("dtype", DTYPES)
def test_structured(dtype):
    n = 6
    r = rand(n, n, dtype=dtype)
    check(r + r.mT)  # symmetric
    check(torch.triu(r))  # already Schur: balancing isolates every eigenvalue
    check(torch.tril(r))
    check(torch.eye(n, dtype=dtype))  # repeated eigenvalue
    check(torch.zeros(n, n, dtype=dtype))
    # rotation blocks: real matrices with complex-conjugate pairs
    rot = torch.tensor([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], dtype=torch.float64).to(dtype)
    check(rot)
    # Jordan-like: eigenvectors nearly parallel, trevc's smin perturbation decides them
    j = torch.diag(torch.full((4,), 2.0, dtype=torch.float64)) + torch.diag(torch.ones(3, dtype=torch.float64), 1)
    w_cpu = torch.linalg.eigvals(j.to(dtype))
    torch.testing.assert_close(torch.linalg.eigvals(j.to(dtype).to("ocl")).cpu(), w_cpu, **tol(dtype))
    w, v = torch.linalg.eig(j.to(dtype).to("ocl"))
    torch.testing.assert_close(v.cpu().abs(), torch.linalg.eig(j.to(dtype))[1].abs(), **tol(dtype))


def assert_same_set(w, w_cpu, **t):
    """Eigenvalues equal as a multiset: each CPU value paired with the nearest unpaired one.
    PyTorch promises no order, and the CPU's own LAPACK orders some spectra differently by
    vendor (this test's complex case: MKL on Intel and on AMD CPUs)."""
    rest = list(w)
    paired = []
    for v in w_cpu:
        i = min(range(len(rest)), key=lambda j: abs(rest[j] - v).item())
        paired.append(rest.pop(i))
    torch.testing.assert_close(torch.stack(paired), w_cpu, **t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_badly_scaled(dtype):
    # balancing matters: rows and columns scaled over many orders of magnitude
    n = 6
    d = torch.logspace(-4, 4, n, dtype=torch.float64)
    a = (d[:, None] * rand(n, n, dtype=torch.float64) / d[None, :]).to(dtype)
    if dtype.is_complex:
        a = a * (1 + 0.5j)
    w_cpu = torch.linalg.eigvals(a)
    w = torch.linalg.eigvals(a.to("ocl")).cpu()
    scale = w_cpu.abs().max().item()
    t = dict(atol=1e-4 * scale, rtol=1e-4) if dtype in SINGLE else dict(atol=1e-10 * scale, rtol=1e-10)
    assert_same_set(w, w_cpu, **t)
    # tiny and huge entries: geev scales A into range first
    for s in (1e-30, 1e30) if dtype in SINGLE else (1e-200, 1e200):
        b = rand(4, 4, dtype=dtype) * s
        assert_same_set(torch.linalg.eigvals(b.to("ocl")).cpu() / s, torch.linalg.eigvals(b) / s, **tol(dtype))


@pytest.mark.parametrize("n", [80, 128])
def test_order_large(n):
    """hseqr uses dlaqr0 above 74; this kernel uses lahqr throughout.
    Eigenvalues still agree as a set; record whether the order matched."""
    a = rand(n, n, dtype=torch.float64, seed=n)
    w_cpu = torch.linalg.eigvals(a)
    w = torch.linalg.eigvals(a.to("ocl")).cpu()
    key = lambda x: torch.sort(x.real * 1e3 + x.imag).values  # noqa: E731
    torch.testing.assert_close(key(w), key(w_cpu), atol=1e-8, rtol=1e-8)


def test_out_variants():
    a = rand(4, 4, dtype=torch.float64)
    w_cpu, v_cpu = torch.linalg.eig(a)
    w = torch.empty(0, dtype=torch.complex128, device="ocl")
    v = torch.empty(0, dtype=torch.complex128, device="ocl")
    torch.linalg.eig(a.to("ocl"), out=(w, v))
    torch.testing.assert_close(w.cpu(), w_cpu)
    torch.testing.assert_close(v.cpu().abs(), v_cpu.abs())
    e = torch.empty(0, dtype=torch.complex128, device="ocl")
    torch.linalg.eigvals(a.to("ocl"), out=e)
    torch.testing.assert_close(e.cpu(), w_cpu)
    with pytest.raises(RuntimeError, match="safely castable"):
        torch.linalg.eigvals(a.to("ocl"), out=torch.empty(0, device="ocl"))


def raises_like_cpu(fn, a):
    with pytest.raises(Exception) as cpu:
        fn(a)
    with pytest.raises(type(cpu.value)) as ocl:
        fn(a.to("ocl"))
    assert str(ocl.value).splitlines()[0] == str(cpu.value).splitlines()[0]


def test_bad_input():
    nan = torch.tensor([[1.0, float("nan")], [0.0, 1.0]])
    raises_like_cpu(torch.linalg.eig, nan)
    raises_like_cpu(torch.linalg.eig, torch.tensor([[1.0, float("inf")], [2.0, 1.0]], dtype=torch.float64))
    raises_like_cpu(torch.linalg.eig, torch.ones(2, 3))
    raises_like_cpu(torch.linalg.eigvals, torch.ones(2, 3))
    raises_like_cpu(torch.linalg.eig, torch.ones(3))
    raises_like_cpu(torch.linalg.eig, torch.ones(3, 3, dtype=torch.int64))
    raises_like_cpu(torch.linalg.eigvals, torch.ones(3, 3, dtype=torch.int32))
    with pytest.raises(NotImplementedError):
        torch.linalg.eig(torch.ones(3, 3, dtype=torch.float16, device="ocl"))


def test_gradcheck():
    # gauge-invariant losses only: eigenvalues, and |V|
    a = rand(3, 3, dtype=torch.complex128, seed=3).to("ocl").requires_grad_()
    torch.autograd.gradcheck(lambda x: torch.linalg.eigvals(x), (a,))
    torch.autograd.gradcheck(lambda x: torch.linalg.eig(x)[1].abs(), (a,))
    b = rand(3, 3, dtype=torch.float64, seed=4).to("ocl").requires_grad_()
    torch.autograd.gradcheck(lambda x: torch.linalg.eigvals(x), (b,))
