"""torch.fft and stft/istft on ocl against the CPU (pocketfft), with a complex128
referee for float32: every transform family, norms, sizes with every radix and
primes (Bluestein), chosen dims, non-contiguous and empty inputs, n= padding
and trimming, float64, gradients; all native (no CPU fallback)."""
import pytest
import torch

SIZES = [1, 2, 3, 5, 7, 8, 12, 17, 30, 64, 97, 100, 128, 400]
NORMS = [None, "ortho", "forward"]


def close(got, want, dtype):
    tol = 5e-5 if dtype in (torch.float32, torch.complex64) else 1e-11
    scale = max(want.abs().max().item(), 1.0) if want.numel() else 1.0
    torch.testing.assert_close(got.cpu(), want.to(got.dtype), atol=tol * scale, rtol=tol)


def ref(fn, x, **kw):
    """fn in double precision on the CPU (the referee of float32 results)."""
    wide = x.to(torch.complex128 if x.is_complex() else torch.float64)
    return fn(wide, **kw)


def cx(*shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(torch.randn(*shape, generator=g, dtype=real), torch.randn(*shape, generator=g, dtype=real))


@pytest.mark.parametrize("n", SIZES)
def test_fft_ifft_sizes(n, no_fallback):
    x = cx(3, n, seed=n)
    for fn in (torch.fft.fft, torch.fft.ifft):
        close(fn(x.to("ocl")), ref(fn, x), torch.complex64)


@pytest.mark.parametrize("n", SIZES)
def test_rfft_irfft_hfft_ihfft_sizes(n, no_fallback):
    g = torch.Generator().manual_seed(n)
    r = torch.randn(2, n, generator=g)
    close(torch.fft.rfft(r.to("ocl")), ref(torch.fft.rfft, r), torch.complex64)
    close(torch.fft.ihfft(r.to("ocl")), ref(torch.fft.ihfft, r), torch.complex64)
    h = cx(2, n // 2 + 1, seed=n)
    close(torch.fft.irfft(h.to("ocl"), n=n), ref(torch.fft.irfft, h, n=n), torch.float32)
    close(torch.fft.hfft(h.to("ocl"), n=n), ref(torch.fft.hfft, h, n=n), torch.float32)


@pytest.mark.parametrize("norm", NORMS)
def test_norms_and_dims(norm, no_fallback):
    x = cx(4, 6, 10, seed=1)
    r = torch.randn(4, 6, 10)
    d, dr = x.to("ocl"), r.to("ocl")
    for dim in (0, 1, -1):
        close(torch.fft.fft(d, dim=dim, norm=norm), ref(torch.fft.fft, x, dim=dim, norm=norm), torch.complex64)
        close(torch.fft.rfft(dr, dim=dim, norm=norm), ref(torch.fft.rfft, r, dim=dim, norm=norm), torch.complex64)
    close(torch.fft.fft2(d, norm=norm), ref(torch.fft.fft2, x, norm=norm), torch.complex64)
    close(torch.fft.ifftn(d, norm=norm), ref(torch.fft.ifftn, x, norm=norm), torch.complex64)
    close(torch.fft.rfft2(dr, norm=norm), ref(torch.fft.rfft2, r, norm=norm), torch.complex64)
    close(torch.fft.rfftn(dr, dim=(0, 2), norm=norm), ref(torch.fft.rfftn, r, dim=(0, 2), norm=norm), torch.complex64)
    h = torch.fft.rfftn(r, dim=(0, 2)).to(torch.complex64)
    close(torch.fft.irfftn(h.to("ocl"), s=(4, 10), dim=(0, 2), norm=norm),
          ref(torch.fft.irfftn, h, s=(4, 10), dim=(0, 2), norm=norm), torch.float32)
    close(torch.fft.hfft2(d[..., :6], norm=norm), ref(torch.fft.hfft2, x[..., :6], norm=norm), torch.float32)
    close(torch.fft.ihfftn(dr, norm=norm), ref(torch.fft.ihfftn, r, norm=norm), torch.complex64)


def test_layouts_padding_and_empty(no_fallback):
    x = cx(8, 12, seed=2)
    for v in (x.t(), x[:, ::2], x.reshape(-1)[5:77].reshape(8, 9), x[:1].expand(5, 12)):
        close(torch.fft.fft(v.to("ocl")), ref(torch.fft.fft, v), torch.complex64)
    r = torch.randn(5, 9)
    close(torch.fft.rfft(r.t().to("ocl")), ref(torch.fft.rfft, r.t()), torch.complex64)
    # n= pads with zeros or trims
    close(torch.fft.fft(x.to("ocl"), n=20), ref(torch.fft.fft, x, n=20), torch.complex64)
    close(torch.fft.rfft(r.to("ocl"), n=4), ref(torch.fft.rfft, r, n=4), torch.complex64)
    # empty batches and 1-point transforms
    e = torch.fft.fft(torch.zeros(0, 8, dtype=torch.complex64, device="ocl"))
    assert e.shape == (0, 8) and e.device.type == "ocl"
    close(torch.fft.fft(x[:, :1].to("ocl")), x[:, :1], torch.complex64)
    # a conj input is transformed as its values
    close(torch.fft.fft(x.to("ocl").conj()), ref(torch.fft.fft, x.conj().resolve_conj()), torch.complex64)


def test_float64(no_fallback):
    if not torch.ocl.get_device_properties(0).has_fp64:
        pytest.skip("the device has no float64")
    x = cx(3, 97, dtype=torch.complex128, seed=3)
    close(torch.fft.fft(x.to("ocl")), torch.fft.fft(x), torch.complex128)
    r = torch.randn(3, 100, dtype=torch.float64)
    close(torch.fft.rfft(r.to("ocl")), torch.fft.rfft(r), torch.complex128)
    close(torch.fft.irfft(torch.fft.rfft(r).to("ocl"), n=100), r, torch.float64)


def test_out_and_errors(no_fallback):
    x = cx(4, 8, seed=4)
    out = torch.empty(0, dtype=torch.complex64, device="ocl")
    torch.fft.fft(x.to("ocl"), out=out)
    close(out, ref(torch.fft.fft, x), torch.complex64)
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        torch.fft.rfft(torch.ones(8, dtype=torch.float16, device="ocl"))
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.fft(x.to("ocl"), n=0)
    with pytest.raises(IndexError):
        torch.fft.fft(x.to("ocl"), dim=3)


def test_stft_istft(no_fallback):
    """A 1-second 16 kHz signal through stft (n_fft 400, hop 160, Hann window) and back."""
    g = torch.Generator().manual_seed(5)
    sig = torch.randn(2, 16000, generator=g)
    win = torch.hann_window(400)
    kw = dict(n_fft=400, hop_length=160, window=None, return_complex=True)
    got = torch.stft(sig.to("ocl"), **{**kw, "window": win.to("ocl")})
    want = torch.stft(sig.double(), **{**kw, "window": win.double()})
    close(got, want, torch.complex64)
    back = torch.istft(got, n_fft=400, hop_length=160, window=win.to("ocl"), length=16000)
    close(back, sig.double(), torch.float32)


def test_gradients(fallback_warn):
    """Gradients through rfft / irfft / fftn match the CPU's (their backward uses the same primitives)."""
    g = torch.Generator().manual_seed(6)
    r = torch.randn(3, 10, generator=g, dtype=torch.float64)
    grads = []
    for dev in ("cpu", "ocl"):
        x = r.clone().to(dev).requires_grad_()
        y = torch.fft.rfft(x, norm="ortho")
        z = torch.fft.irfft(y * y, n=10)
        w = torch.fft.fftn(x.to(torch.complex128))
        (z.square().sum() + w.abs().sum()).backward()
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
