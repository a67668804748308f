"""Random ops on ocl beyond uniform_/normal_: random_, bernoulli, dropout,
exponential_/geometric_/cauchy_/log_normal_, normal with tensor mean/std,
randperm, multinomial.

The ocl stream is not the CPU's, so the checks are reproducibility (seed,
generator, layout), statistics with loose but meaningful bounds, value
ranges, and errors compared against the CPU. All under no_fallback.
"""

import math

import pytest
import torch

from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id

pytestmark = pytest.mark.usefixtures("no_fallback")

OCL = "ocl"


@pytest.fixture(autouse=True)
def _restore_rng():
    states = torch.ocl.get_rng_state_all()
    yield
    torch.ocl.set_rng_state_all(states)


def gen(seed):
    return torch.Generator(device=OCL).manual_seed(seed)


def both_raise(fn, match, exc=RuntimeError):
    """fn(device) raises the same kind of error on cpu and ocl."""
    for dev in ("cpu", OCL):
        with pytest.raises(exc, match=match):
            fn(dev)


# --------------------------------------------------------------------------- reproducibility and layout

IN_PLACE = {
    "random_": lambda t, g: t.random_(generator=g),
    "random_to": lambda t, g: t.random_(0, 50, generator=g),
    "bernoulli_": lambda t, g: t.bernoulli_(0.3, generator=g),
    "exponential_": lambda t, g: t.exponential_(2.0, generator=g),
    "geometric_": lambda t, g: t.geometric_(0.2, generator=g),
    "cauchy_": lambda t, g: t.cauchy_(1.0, 2.0, generator=g),
    "log_normal_": lambda t, g: t.log_normal_(0.5, 0.3, generator=g),
}


@pytest.mark.parametrize("name", list(IN_PLACE))
def test_reproducible_and_layout_independent(name):
    fill = IN_PLACE[name]
    ref = fill(torch.empty(6, 10, device=OCL), gen(7)).cpu()
    assert torch.equal(fill(torch.empty(6, 10, device=OCL), gen(7)).cpu(), ref)  # same seed
    assert not torch.equal(fill(torch.empty(6, 10, device=OCL), gen(8)).cpu(), ref) or name == "bernoulli_"
    views = [
        torch.empty(6, 10, device=OCL).t().contiguous().t().t().t(),  # transposed of transposed
        torch.empty(10, 6, device=OCL).t(),
        torch.empty(6, 20, device=OCL)[:, ::2],
        torch.empty(70, device=OCL)[7:67].view(6, 10),
    ]
    for v in views:
        fill(v, gen(7))
        assert torch.equal(v.cpu(), ref), name
    # the default generator advances by the counters used and replays after manual_seed
    torch.ocl.manual_seed(11)
    a = fill(torch.empty(1001, device=OCL), None).cpu()
    b = fill(torch.empty(1001, device=OCL), None).cpu()
    torch.ocl.manual_seed(11)
    assert torch.equal(fill(torch.empty(1001, device=OCL), None).cpu(), a)
    assert torch.equal(fill(torch.empty(1001, device=OCL), None).cpu(), b)


def test_generator_offset_advances_like_cuda():
    g = gen(5)
    s0 = g.get_offset()
    torch.empty(10, device=OCL).exponential_(generator=g)  # 10 elements: 3 counters
    assert g.get_offset() - s0 == 3
    torch.randperm(9, device=OCL, generator=g)
    assert g.get_offset() - s0 == 6


# --------------------------------------------------------------------------- random_


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_random_ranges_follow_cpu_rules(dtype):
    g = gen(1)
    n = 20000
    x = torch.empty(n, dtype=dtype, device=OCL).random_(generator=g).cpu()
    # default range: [0, max] for integers, [0, 2^digits] for floats, {0, 1} for bool
    if dtype == torch.bool:
        hi = 1
    elif dtype.is_floating_point:
        hi = 2 ** {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}[dtype]
    else:
        hi = torch.iinfo(dtype).max
    xd = x.double()
    assert xd.min() >= 0 and xd.max() <= hi
    assert (xd == xd.round()).all()
    assert abs(xd.mean().item() - hi / 2) < 0.03 * hi + 0.01
    if dtype == torch.bool:
        return
    lo_, hi_ = (-7, 13) if dtype != torch.uint8 else (3, 23)
    y = torch.empty(n, dtype=dtype, device=OCL).random_(lo_, hi_, generator=g).cpu().double()
    assert y.min() == lo_ and y.max() == hi_ - 1 and y.unique().numel() == hi_ - lo_
    z = torch.empty(n, dtype=dtype, device=OCL).random_(17, generator=g).cpu().double()
    assert z.min() == 0 and z.max() == 16
    # counts per value are about uniform
    counts = torch.bincount(z.long(), minlength=17).double()
    assert (counts - n / 17).abs().max() < 0.15 * n / 17


def test_random_wide_and_full_ranges():
    g = gen(2)
    x = torch.empty(10000, dtype=torch.int64, device=OCL).random_(-(2**40), 2**40, generator=g).cpu()
    assert x.min() >= -(2**40) and x.max() < 2**40
    assert x.min() < -(2**39) and x.max() > 2**39
    full = torch.empty(10000, dtype=torch.int64, device=OCL).random_(-(2**63), None, generator=g).cpu()
    assert (full < 0).any() and (full > 0).any() and full.abs().max() > 2**60
    y = torch.empty(10000, dtype=torch.int32, device=OCL).random_(5, None, generator=g).cpu()
    assert y.min() >= 5 and y.max() > 2**30
    with pytest.warns(UserWarning, match="to - 1 is out of bounds"):  # as on the CPU
        h = torch.empty(5000, dtype=torch.float16, device=OCL).random_(0, 65504, generator=g).cpu()
    assert h.max() < 65504 and h.min() >= 0


def test_random_errors_like_cpu():
    both_raise(lambda d: torch.empty(3, dtype=torch.int8, device=d).random_(0, 300), "to - 1 is out of bounds")
    both_raise(lambda d: torch.empty(3, device=d).random_(5, 5), "random_ expects 'from' to be less than 'to'")
    both_raise(lambda d: torch.empty(3, dtype=torch.int16, device=d).random_(-(2**63), None),
               "random_full_64_bits_range_kernel_cpu handles only")


# --------------------------------------------------------------------------- bernoulli and dropout


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_bernoulli_scalar_rate(dtype):
    g = gen(3)
    for p in (0.0, 0.1, 0.5, 0.93, 1.0):
        x = torch.empty(100000, dtype=dtype, device=OCL).bernoulli_(p, generator=g).cpu().double()
        assert ((x == 0) | (x == 1)).all()
        assert abs(x.mean().item() - p) < 0.01
    out = torch.bernoulli(torch.empty(1000, dtype=dtype, device=OCL), 0.25).cpu()  # bernoulli.p
    assert out.dtype == dtype and abs(out.double().mean().item() - 0.25) < 0.06


def test_bernoulli_tensor_forms():
    g = gen(4)
    p = torch.linspace(0, 1, 11).repeat(20000).view(20000, 11)
    for pdt in (torch.float32, torch.float64, torch.float16):
        x = torch.bernoulli(p.to(OCL, pdt), generator=g).cpu()
        assert x.dtype == pdt
        rate = x.double().mean(0)
        assert (rate - torch.linspace(0, 1, 11).double()).abs().max() < 0.015
        assert (x[:, 0] == 0).all() and (x[:, -1] == 1).all()
    # bernoulli_ with a broadcast tensor p and an integer destination
    y = torch.empty(50000, 3, dtype=torch.int32, device=OCL).bernoulli_(torch.tensor([0.2, 0.5, 0.8], device=OCL))
    assert (y.cpu().double().mean(0) - torch.tensor([0.2, 0.5, 0.8]).double()).abs().max() < 0.015
    out = torch.empty(5, device=OCL)
    torch.bernoulli(torch.full((4, 4), 0.5, device=OCL), out=out)
    assert out.shape == (4, 4)
    # same seed, same draws; transposed p draws in logical order
    a = torch.bernoulli(p[:100].to(OCL), generator=gen(9)).cpu()
    b = torch.bernoulli(p[:100].t().contiguous().t().to(OCL), generator=gen(9)).cpu()
    assert torch.equal(a, b)


def test_bernoulli_errors_like_cpu():
    both_raise(lambda d: torch.empty(3, device=d).bernoulli_(1.5), r"bernoulli_ expects p to be in \[0, 1\]")
    both_raise(lambda d: torch.empty(3, device=d).bernoulli_(-0.1), r"bernoulli_ expects p to be in \[0, 1\]")
    both_raise(lambda d: torch.bernoulli(torch.tensor([0.5, 1.5], device=d)), "p_in >= 0 && p_in <= 1")
    both_raise(lambda d: torch.bernoulli(torch.tensor([0.5, float("nan")], device=d)), "p_in >= 0 && p_in <= 1")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_native_dropout(dtype):
    x = torch.randn(400, 250).to(dtype)
    xo = x.to(OCL)
    for p in (0.0, 0.2, 0.5, 1.0):
        out, mask = torch.native_dropout(xo, p, True)
        out, mask = out.cpu(), mask.cpu()
        assert mask.dtype == torch.bool and out.dtype == dtype
        assert abs(mask.double().mean().item() - (1 - p)) < 0.01
        scale = 0.0 if p == 1 else 1 / (1 - p)
        assert torch.equal(out, x * mask * scale)  # exactly the CPU's formula on the same mask
    out, mask = torch.native_dropout(xo, 0.3, False)
    assert torch.equal(out.cpu(), x) and mask.cpu().all()
    grad = torch.randn(400, 250).to(dtype)
    _, mask = torch.native_dropout(xo, 0.4, True)
    gi = torch.ops.aten.native_dropout_backward(grad.to(OCL), mask, 1 / 0.6).cpu()
    assert torch.equal(gi, torch.ops.aten.native_dropout_backward(grad, mask.cpu(), 1 / 0.6))


def test_dropout_module_train_eval_and_grad():
    torch.ocl.manual_seed(0)
    x = torch.randn(200, 300, device=OCL, requires_grad=True)
    y = torch.nn.functional.dropout(x, 0.25, training=True)
    kept = y.detach().cpu() != 0  # compared on the CPU: ne is not in this family
    assert abs(kept.double().mean().item() - 0.75) < 0.01
    assert torch.allclose(y.detach().cpu()[kept], x.detach().cpu()[kept] / 0.75)
    (g,) = torch.autograd.grad(y, x, torch.ones_like(y))
    assert torch.equal((g.cpu() != 0), kept)  # backward uses the forward's mask
    assert torch.allclose(g.cpu()[kept], torch.full((int(kept.sum()),), 1 / 0.75))
    assert torch.equal(torch.nn.functional.dropout(x, 0.25, training=False).detach().cpu(), x.detach().cpu())
    e = torch.native_dropout(torch.empty(0, 3, device=OCL), 0.5, True)
    assert e[0].shape == (0, 3) and e[1].shape == (0, 3)
    both_raise(lambda d: torch.native_dropout(torch.ones(3, device=d), 1.5, True), "bernoulli_ expects p")


# --------------------------------------------------------------------------- continuous distributions


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_continuous_moments(dtype):
    g = gen(6)
    n = 200000
    lam = 2.5
    x = torch.empty(n, dtype=dtype, device=OCL).exponential_(lam, generator=g).cpu().double()
    assert (x >= 0).all() and torch.isfinite(x).all()
    assert abs(x.mean().item() - 1 / lam) < 0.02 / lam
    assert abs(x.var().item() - 1 / lam**2) < 0.05 / lam**2
    p = 0.3
    y = torch.empty(n, dtype=dtype, device=OCL).geometric_(p, generator=g).cpu().double()
    assert y.min() >= 1 and (y == y.round()).all()
    assert abs(y.mean().item() - 1 / p) < 0.02 / p
    assert abs(y.var().item() - (1 - p) / p**2) < 0.06 * (1 - p) / p**2
    c = torch.empty(n, dtype=dtype, device=OCL).cauchy_(1.0, 2.0, generator=g).cpu().double()
    assert abs(c.median().item() - 1.0) < 0.05
    q = torch.quantile(c[torch.isfinite(c)][:100000], torch.tensor([0.25, 0.75], dtype=torch.double))
    assert abs(q[0].item() - (1 - 2)) < 0.1 and abs(q[1].item() - (1 + 2)) < 0.1
    mu, s = 0.5, 0.4
    ln = torch.empty(n, dtype=dtype, device=OCL).log_normal_(mu, s, generator=g).cpu().double()
    assert (ln > 0).all()
    assert abs(ln.log().mean().item() - mu) < 0.02
    assert abs(ln.log().std().item() - s) < 0.02
    assert abs(ln.mean().item() - math.exp(mu + s * s / 2)) < 0.03 * math.exp(mu + s * s / 2)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_geometric_integer_dtypes(dtype):
    y = torch.empty(50000, dtype=dtype, device=OCL).geometric_(0.5, generator=gen(1)).cpu().double()
    assert y.min() >= 1 and abs(y.mean().item() - 2.0) < 0.05


def test_continuous_errors_like_cpu():
    both_raise(lambda d: torch.empty(3, device=d).exponential_(-1), "exponential_ expects lambda > 0.0")
    both_raise(lambda d: torch.empty(3, dtype=torch.int32, device=d).exponential_(),
               "Exponential distribution is a continuous probability distribution")
    both_raise(lambda d: torch.empty(3, device=d).geometric_(1.0), r"geometric_ expects p to be in \(0, 1\)")
    both_raise(lambda d: torch.empty(3, dtype=torch.bool, device=d).geometric_(0.5),
               "not implemented for 'Bool'", NotImplementedError)
    both_raise(lambda d: torch.empty(3, device=d).cauchy_(0, -1), "cauchy_ expects sigma > 0.0")
    both_raise(lambda d: torch.empty(3, dtype=torch.int32, device=d).cauchy_(), "Cauchy distribution is a continuous")
    both_raise(lambda d: torch.empty(3, device=d).log_normal_(0, 0), "log_normal_ expects std > 0.0")
    both_raise(lambda d: torch.empty(3, dtype=torch.int64, device=d).log_normal_(),
               "not implemented for 'Long'", NotImplementedError)


# --------------------------------------------------------------------------- normal with tensor mean/std


def test_normal_tensor_forms():
    g = gen(12)
    n = 100000
    mean = torch.tensor([-5.0, 0.0, 3.0], device=OCL).repeat(n)
    std = torch.tensor([0.5, 1.0, 2.0], device=OCL).repeat(n)
    for x, m, s in [
        (torch.normal(mean, 2.0, generator=g), [-5, 0, 3], [2, 2, 2]),  # Tensor_float
        (torch.normal(1.5, std, generator=g), [1.5] * 3, [0.5, 1, 2]),  # float_Tensor
        (torch.normal(mean, std, generator=g), [-5, 0, 3], [0.5, 1, 2]),  # Tensor_Tensor
    ]:
        x = x.cpu().double().view(n, 3)
        assert (x.mean(0) - torch.tensor(m).double()).abs().max() < 0.03
        assert (x.std(0) - torch.tensor(s).double()).abs().max() < 0.03
    # out= forms resize, broadcasting mean against std
    out = torch.empty(0, device=OCL)
    torch.normal(torch.zeros(4, 1, device=OCL), torch.ones(1, 5, device=OCL), out=out)
    assert out.shape == (4, 5)
    out = torch.empty(7, device=OCL)  # Tensor_float broadcasts mean against out (the CPU's rule)
    torch.normal(torch.zeros(7, device=OCL), 1.0, out=out)
    assert out.shape == (7,)
    out = torch.empty(0, device=OCL)
    torch.normal(0.0, torch.ones(2, 3, device=OCL), out=out)
    assert out.shape == (2, 3)
    a = torch.normal(mean[:99], std[:99], generator=gen(1)).cpu()
    assert torch.equal(torch.normal(mean[:99], std[:99], generator=gen(1)).cpu(), a)
    both_raise(lambda d: torch.normal(torch.zeros(3, device=d), torch.tensor([1.0, -1.0, 1.0], device=d)),
               "normal expects all elements of std >= 0.0")
    both_raise(lambda d: torch.normal(0.0, torch.tensor([1.0, -1.0], device=d)),
               "normal expects all elements of std >= 0.0")
    both_raise(lambda d: torch.normal(torch.zeros(3, device=d), -1.0), "normal expects std >= 0.0")


# --------------------------------------------------------------------------- randperm


def test_randperm_is_a_uniform_permutation():
    for n in (1, 2, 3, 5, 100, 1000, 4097):
        p = torch.randperm(n, device=OCL, generator=gen(n)).cpu()
        assert p.dtype == torch.int64 and torch.equal(p.sort().values, torch.arange(n))
    a = torch.randperm(1000, device=OCL, generator=gen(1)).cpu()
    b = torch.randperm(1000, device=OCL, generator=gen(2)).cpu()
    assert torch.equal(a, torch.randperm(1000, device=OCL, generator=gen(1)).cpu())
    assert not torch.equal(a, b)
    # position of element 0 over many permutations of 5 is about uniform
    g = gen(3)
    pos = torch.stack([torch.randperm(5, device=OCL, generator=g).cpu() for _ in range(2000)])
    first = torch.bincount(pos[:, 0], minlength=5).double()
    assert (first - 400).abs().max() < 80
    assert torch.randperm(0, device=OCL).numel() == 0


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != torch.bool], ids=dtype_id)
def test_randperm_dtypes_and_out(dtype):
    n = 120 if dtype in (torch.int8, torch.uint8, torch.bfloat16) else 300  # values exact in the dtype
    p = torch.randperm(n, dtype=dtype, device=OCL, generator=gen(4)).cpu()
    assert p.dtype == dtype and torch.equal(p.double().sort().values, torch.arange(n).double())
    out = torch.empty(2, 3, dtype=dtype, device=OCL)
    torch.randperm(n, out=out)
    assert out.shape == (n,)
    assert torch.equal(out.cpu().double().sort().values, torch.arange(n).double())


def test_randperm_errors_like_cpu():
    both_raise(lambda d: torch.randperm(3000, dtype=torch.half, device=d), "n cannot be greater than 2049")
    both_raise(lambda d: torch.randperm(-1, device=d), "negative dimension")
    with pytest.raises(RuntimeError):
        torch.randperm(5, device=OCL, generator=torch.Generator().manual_seed(0))


# --------------------------------------------------------------------------- multinomial


def test_multinomial_with_replacement_frequencies():
    probs = torch.tensor([0.1, 0.0, 0.4, 0.2, 0.3, 0.0])
    for dt in (torch.float32, torch.float64, torch.bfloat16):
        x = torch.multinomial(probs.to(OCL, dt) * 7, 200000, replacement=True, generator=gen(5)).cpu()
        assert x.dtype == torch.int64 and x.shape == (200000,)
        freq = torch.bincount(x, minlength=6).double() / x.numel()
        assert freq[1] == 0 and freq[5] == 0  # zero-probability categories are never drawn
        assert (freq - probs.double()).abs().max() < 0.01
    p2 = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 5.0], [2.0, 1.0, 1.0]], device=OCL)
    y = torch.multinomial(p2, 30000, True, generator=gen(6)).cpu()
    assert y.shape == (3, 30000)
    assert (y[0] != 1).all() and (y[1] == 2).all()
    f2 = torch.bincount(y[2], minlength=3).double() / 30000
    assert (f2 - torch.tensor([0.5, 0.25, 0.25]).double()).abs().max() < 0.015


def test_multinomial_without_replacement():
    g = gen(7)
    probs = torch.tensor([[0.0, 1.0, 2.0, 3.0, 0.0, 4.0]] * 2000, device=OCL)
    x = torch.multinomial(probs, 4, generator=g).cpu()
    assert x.shape == (2000, 4)
    for row in x[:200]:
        assert row.unique().numel() == 4  # never repeats within a row
    assert not ((x == 0) | (x == 4)).any()  # zero probability never drawn while others remain
    # first draw follows the probabilities
    first = torch.bincount(x[:, 0], minlength=6).double() / 2000
    assert (first - torch.tensor([0, 0.1, 0.2, 0.3, 0, 0.4]).double()).abs().max() < 0.04
    one = torch.multinomial(torch.tensor([0.0, 0.0, 1.0], device=OCL), 1).cpu()
    assert one.shape == (1,) and one.item() == 2
    full = torch.multinomial(torch.ones(50, device=OCL), 50, generator=g).cpu()
    assert torch.equal(full.sort().values, torch.arange(50))
    a = torch.multinomial(probs[:10], 3, generator=gen(1)).cpu()
    assert torch.equal(torch.multinomial(probs[:10], 3, generator=gen(1)).cpu(), a)
    out = torch.empty(3, dtype=torch.long, device=OCL)
    torch.multinomial(probs[:5], 2, out=out)
    assert out.shape == (5, 2)


def test_multinomial_errors_like_cpu():
    cases = [
        (lambda d: torch.multinomial(torch.tensor([-1.0, 2.0], device=d), 1), "contains either `inf`, `nan` or element < 0"),
        (lambda d: torch.multinomial(torch.tensor([-1.0, 2.0], device=d), 2, True), r"encountering probability entry < 0"),
        (lambda d: torch.multinomial(torch.tensor([0.0, 0.0], device=d), 1), r"sum of probabilities <= 0"),
        (lambda d: torch.multinomial(torch.tensor([[1.0, 1.0], [0.0, 0.0]], device=d), 2, True),
         r"sum of probabilities <= 0"),
        (lambda d: torch.multinomial(torch.tensor([1.0, float("inf")], device=d), 2, True), "infinity or NaN"),
        (lambda d: torch.multinomial(torch.tensor([1.0, float("nan")], device=d), 1), "`inf`, `nan`"),
        (lambda d: torch.multinomial(torch.tensor([1.0, 2.0], device=d), 3), "cannot sample n_sample > prob_dist"),
        (lambda d: torch.multinomial(torch.tensor([1.0, 2.0], device=d), 0), "cannot sample n_sample <= 0"),
        (lambda d: torch.multinomial(torch.ones(2, 3, 4, device=d), 1), "prob_dist must be 1 or 2 dim"),
        (lambda d: torch.multinomial(torch.ones(3, dtype=torch.int32, device=d), 1), "only supports floating-point"),
    ]
    for fn, msg in cases:
        both_raise(fn, msg)
