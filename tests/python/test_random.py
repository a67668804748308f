"""Philox RNG on ocl: seeding, reproducibility, state round trips, generators, distributions.

uniform_/normal_, empty, copies and views are native, so these run with the
fallback policy 'error'. The reference here is statistical / self-consistency:
the ocl stream is not the CPU's stream.
"""

import pytest
import torch

from conftest import FLOAT_DTYPES, dtype_id

pytestmark = pytest.mark.usefixtures("no_fallback")

OCL = "ocl"


def u(n=1000, dtype=torch.float32, **kw):
    return torch.empty(n, device=OCL, dtype=dtype).uniform_(**kw).cpu()


def same(a, b):
    return torch.equal(a, b)


@pytest.fixture(autouse=True)
def _restore_rng():
    """Tests here reseed the default generators; leave the process as it was."""
    states = torch.ocl.get_rng_state_all()
    yield
    torch.ocl.set_rng_state_all(states)


# --------------------------------------------------------------------------- seeding


def test_manual_seed_reproduces_uniform():
    torch.ocl.manual_seed(1234)
    a = u()
    b = u()
    assert not same(a, b)  # the generator advances
    torch.ocl.manual_seed(1234)
    assert same(u(), a)
    assert same(u(), b)


def test_different_seeds_differ():
    torch.ocl.manual_seed(1)
    a = u()
    torch.ocl.manual_seed(2)
    b = u()
    assert not same(a, b)
    assert (a == b).float().mean() < 0.01


def test_initial_seed():
    torch.ocl.manual_seed(987654321)
    assert torch.ocl.initial_seed() == 987654321


def test_torch_manual_seed_seeds_ocl():
    torch.manual_seed(77)
    a = u()
    torch.ocl.manual_seed(0)
    u()
    torch.manual_seed(77)
    assert same(u(), a)
    torch.ocl.manual_seed(77)
    assert same(u(), a)  # torch.manual_seed(s) == torch.ocl.manual_seed_all(s)


def test_manual_seed_all_and_per_device(two_devices):
    d0, d1 = two_devices
    torch.ocl.manual_seed_all(5)
    a0 = torch.empty(500, device=d0).uniform_().cpu()
    a1 = torch.empty(500, device=d1).uniform_().cpu()
    assert same(a0, a1)  # same seed, same offset: same stream
    # manual_seed only seeds the current device
    torch.ocl.manual_seed_all(5)
    with torch.ocl.device(1):
        torch.ocl.manual_seed(6)
    assert same(torch.empty(500, device=d0).uniform_().cpu(), a0)
    assert not same(torch.empty(500, device=d1).uniform_().cpu(), a1)


def test_large_and_negative_seeds():
    torch.ocl.manual_seed(2**63 - 1)
    a = u(100)
    torch.ocl.manual_seed(2**63 - 1)
    assert same(u(100), a)
    torch.manual_seed(-1)  # torch maps negative seeds into uint64
    b = u(100)
    torch.manual_seed(-1)
    assert same(u(100), b)


# --------------------------------------------------------------------------- ranges and moments


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 5.0), (10.0, 10.5), (-1e-3, 1e-3)], ids=str)
def test_uniform_range(dtype, bounds):
    lo, hi = bounds
    torch.ocl.manual_seed(0)
    x = u(20000, dtype, **{"from": lo, "to": hi}).double()
    assert x.min() >= lo
    assert x.max() < hi  # [from, to), also for float16/bfloat16 (the CPU guarantees it too)
    width = hi - lo
    # low precision values sit on a grid (values round down, as on the CPU): allow one grid step
    step = torch.finfo(dtype).eps * max(abs(lo), abs(hi))
    assert abs(x.mean().item() - (lo + hi) / 2) < 0.02 * width + step
    assert abs(x.std().item() - width / 12**0.5) < 0.02 * width + step
    assert x.unique().numel() > min(100, x.numel() // 2) or dtype in (torch.float16, torch.bfloat16)


def test_uniform_covers_the_interval():
    torch.ocl.manual_seed(3)
    x = u(100000)
    hist = torch.histc(x, bins=10, min=0, max=1)
    assert hist.min() > 9000 and hist.max() < 11000


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("params", [(0.0, 1.0), (3.0, 0.5), (-10.0, 4.0)], ids=str)
def test_normal_moments(dtype, params):
    mean, std = params
    torch.ocl.manual_seed(42)
    x = torch.empty(100000, device=OCL, dtype=dtype).normal_(mean, std).cpu().double()
    assert torch.isfinite(x).all()
    assert abs(x.mean().item() - mean) < 0.02 * std + 0.01 * abs(mean)
    assert abs(x.std().item() - std) < 0.02 * std
    # tails: about 0.27% beyond 3 sigma
    frac = ((x - mean).abs() > 3 * std).double().mean().item()
    assert 0.001 < frac < 0.006


def test_normal_reproducible_and_std_zero():
    torch.ocl.manual_seed(9)
    a = torch.empty(777, device=OCL).normal_(1, 2).cpu()
    torch.ocl.manual_seed(9)
    b = torch.empty(777, device=OCL).normal_(1, 2).cpu()
    assert same(a, b)
    c = torch.empty(50, device=OCL).normal_(3.0, 0.0).cpu()
    assert same(c, torch.full((50,), 3.0))


def test_uniform_and_normal_interleave_reproducibly():
    def run():
        torch.ocl.manual_seed(11)
        x = torch.empty(33, device=OCL).uniform_()
        y = torch.empty(65, device=OCL).normal_()
        z = torch.empty(1, device=OCL).uniform_()
        return torch.cat([x.cpu(), y.cpu(), z.cpu()])

    assert same(run(), run())


def test_odd_and_tiny_sizes():
    torch.ocl.manual_seed(0)
    for n in (1, 2, 3, 5, 7, 1023, 1025):
        x = u(n)
        assert x.shape == (n,) and (x >= 0).all() and (x < 1).all()
    torch.empty(0, device=OCL).uniform_()
    torch.empty(0, device=OCL).normal_()
    assert torch.empty((), device=OCL).uniform_(2, 3).item() >= 2


def test_invalid_arguments_raise_like_cpu():
    with pytest.raises(RuntimeError):
        torch.empty(3).uniform_(2, 1)
    with pytest.raises(RuntimeError):
        torch.empty(3, device=OCL).uniform_(2, 1)
    with pytest.raises(RuntimeError):
        torch.empty(3).normal_(0, -1)
    with pytest.raises(RuntimeError):
        torch.empty(3, device=OCL).normal_(0, -1)


# --------------------------------------------------------------------------- state


def test_rng_state_is_16_byte_uint8_cpu_tensor():
    s = torch.ocl.get_rng_state()
    assert s.dtype == torch.uint8
    assert s.device.type == "cpu"
    assert s.shape == (16,)


def test_rng_state_round_trip():
    torch.ocl.manual_seed(123)
    u(10)
    s = torch.ocl.get_rng_state()
    a = u()
    n = torch.empty(100, device=OCL).normal_().cpu()
    torch.ocl.set_rng_state(s)
    assert same(u(), a)
    assert same(torch.empty(100, device=OCL).normal_().cpu(), n)


def test_rng_state_changes_as_numbers_are_drawn():
    torch.ocl.manual_seed(123)
    s0 = torch.ocl.get_rng_state().clone()
    u(1000)
    s1 = torch.ocl.get_rng_state()
    assert not torch.equal(s0, s1)
    torch.ocl.manual_seed(123)
    assert torch.equal(torch.ocl.get_rng_state(), s0)


def test_get_rng_state_returns_a_copy():
    s = torch.ocl.get_rng_state()
    s2 = s.clone()
    s.zero_()
    assert torch.equal(torch.ocl.get_rng_state(), s2)


def test_set_rng_state_rejects_bad_state():
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        torch.ocl.set_rng_state(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        torch.ocl.set_rng_state(torch.zeros(16, dtype=torch.float32))


def test_rng_state_all_round_trip(two_devices):
    torch.ocl.manual_seed_all(8)
    states = torch.ocl.get_rng_state_all()
    assert len(states) == torch.ocl.device_count()
    a = [torch.empty(64, device=d).uniform_().cpu() for d in two_devices]
    torch.ocl.set_rng_state_all(states)
    b = [torch.empty(64, device=d).uniform_().cpu() for d in two_devices]
    assert all(same(x, y) for x, y in zip(a, b))
    # per-device state with an explicit device argument
    s1 = torch.ocl.get_rng_state("ocl:1")
    c = torch.empty(64, device="ocl:1").uniform_().cpu()
    torch.ocl.set_rng_state(s1, "ocl:1")
    assert same(torch.empty(64, device="ocl:1").uniform_().cpu(), c)


def test_fork_rng_restores_ocl_state():
    torch.ocl.manual_seed(21)
    s = torch.ocl.get_rng_state()
    with torch.random.fork_rng(devices=range(torch.ocl.device_count()), device_type="ocl"):
        u(100)
    assert torch.equal(torch.ocl.get_rng_state(), s)


# --------------------------------------------------------------------------- explicit generators


def test_explicit_generator_reproducible_and_isolated():
    torch.ocl.manual_seed(100)
    default_state = torch.ocl.get_rng_state()
    g = torch.Generator(device=OCL)
    assert g.device.type == "ocl"
    g.manual_seed(5)
    a = torch.empty(1000, device=OCL).uniform_(generator=g).cpu()
    b = torch.empty(1000, device=OCL).normal_(generator=g).cpu()
    assert torch.equal(torch.ocl.get_rng_state(), default_state)  # default generator untouched
    g.manual_seed(5)
    assert same(torch.empty(1000, device=OCL).uniform_(generator=g).cpu(), a)
    assert same(torch.empty(1000, device=OCL).normal_(generator=g).cpu(), b)
    # same seed in the default generator gives the same stream as a fresh generator with that seed
    torch.ocl.manual_seed(5)
    assert same(u(), a)


def test_explicit_generator_state_round_trip():
    g = torch.Generator(device=OCL).manual_seed(17)
    st = g.get_state()
    assert st.dtype == torch.uint8 and st.shape == (16,)
    a = torch.empty(300, device=OCL).uniform_(generator=g).cpu()
    g.set_state(st)
    assert same(torch.empty(300, device=OCL).uniform_(generator=g).cpu(), a)
    assert g.initial_seed() == 17
    g2 = torch.Generator(device=OCL)
    g2.set_state(st)
    assert same(torch.empty(300, device=OCL).uniform_(generator=g2).cpu(), a)


def test_two_generators_are_independent():
    g1 = torch.Generator(device=OCL).manual_seed(1)
    g2 = torch.Generator(device=OCL).manual_seed(1)
    a1 = torch.empty(100, device=OCL).uniform_(generator=g1).cpu()
    torch.empty(100, device=OCL).uniform_(generator=g1)
    a2 = torch.empty(100, device=OCL).uniform_(generator=g2).cpu()
    assert same(a1, a2)


def test_cpu_generator_with_ocl_tensor_raises():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(RuntimeError):
        torch.empty(10, device=OCL).uniform_(generator=g)


def test_generator_on_second_device(two_devices):
    _, d1 = two_devices
    g = torch.Generator(device=d1).manual_seed(3)
    assert g.device == d1
    a = torch.empty(100, device=d1).uniform_(generator=g).cpu()
    g.manual_seed(3)
    assert same(torch.empty(100, device=d1).uniform_(generator=g).cpu(), a)


# --------------------------------------------------------------------------- layout independence


@pytest.mark.parametrize("dist", ["uniform", "normal"])
def test_values_independent_of_layout(dist):
    def fill(t):
        return t.uniform_(-2, 3) if dist == "uniform" else t.normal_(1, 2)

    torch.ocl.manual_seed(31)
    ref = fill(torch.empty(6, 10, device=OCL)).cpu()
    views = {
        "t_of_t": lambda: torch.empty(6, 10, device=OCL).t().contiguous().t().t().t(),
        "transposed_storage": lambda: torch.empty(10, 6, device=OCL).t(),
        "strided": lambda: torch.empty(6, 20, device=OCL)[:, ::2],
        "offset": lambda: torch.empty(70, device=OCL)[7:67].view(6, 10),
        "as_strided": lambda: torch.empty(80, device=OCL).as_strided((6, 10), (1, 7), 3),
        "permuted3d": lambda: torch.empty(10, 2, 3, device=OCL).permute(1, 2, 0).flatten(0, 1),
    }
    for name, make in views.items():
        t = make()
        assert t.shape == (6, 10)
        torch.ocl.manual_seed(31)
        fill(t)
        assert same(t.cpu(), ref), name


def test_fill_through_view_only_touches_view():
    x = torch.zeros(8, 8, device=OCL)
    torch.ocl.manual_seed(0)
    x[:, 1::2].uniform_(1, 2)
    c = x.cpu()
    assert (c[:, ::2] == 0).all()
    assert (c[:, 1::2] >= 1).all()


# --------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_low_and_double_precision_reproducible(dtype):
    torch.ocl.manual_seed(55)
    a = torch.empty(2000, device=OCL, dtype=dtype).uniform_().cpu()
    b = torch.empty(2000, device=OCL, dtype=dtype).normal_().cpu()
    assert a.dtype == dtype and b.dtype == dtype
    torch.ocl.manual_seed(55)
    assert same(torch.empty(2000, device=OCL, dtype=dtype).uniform_().cpu(), a)
    assert same(torch.empty(2000, device=OCL, dtype=dtype).normal_().cpu(), b)
    assert torch.isfinite(b).all()


def test_float64_has_double_resolution():
    torch.ocl.manual_seed(0)
    x = u(10000, torch.float64)
    # float32-generated values would be multiples of 2**-24 (or coarser)
    frac = (x * 2**24) - torch.floor(x * 2**24)
    assert (frac != 0).any()


def test_integer_dtype_uniform_raises_like_cpu():
    for dev in ("cpu", OCL):
        with pytest.raises(RuntimeError):
            torch.empty(4, dtype=torch.int32, device=dev).uniform_()
