"""out= as the CPU and CUDA backends define it: a wrong-device out raises
(and is not written), and arithmetic happens in the inputs' promoted dtype
before the cast to out's dtype."""

import pytest
import torch
import torch_ocl  # noqa: F401

O = "ocl"
WRONG_DEVICE = "Expected out tensor to have device ocl:0, but got cpu instead"

CASES = {
    "addr": lambda out: torch.addr(torch.zeros(3, 3, device=O), torch.ones(3, device=O), torch.ones(3, device=O),
                                   out=out),
    "addmm": lambda out: torch.addmm(torch.zeros(3, 3, device=O), torch.ones(3, 3, device=O),
                                     torch.ones(3, 3, device=O), out=out),
    "addbmm": lambda out: torch.addbmm(torch.zeros(3, 3, device=O), torch.ones(2, 3, 3, device=O),
                                       torch.ones(2, 3, 3, device=O), out=out),
    "baddbmm": lambda out: torch.baddbmm(torch.zeros(2, 3, 3, device=O), torch.ones(2, 3, 3, device=O),
                                         torch.ones(2, 3, 3, device=O), out=out),
    "mm": lambda out: torch.mm(torch.ones(3, 3, device=O), torch.ones(3, 3, device=O), out=out),
    "bucketize": lambda out: torch.bucketize(torch.tensor(3.0, device=O), torch.arange(5.0, device=O), out=out),
    "add": lambda out: torch.add(torch.ones(3, device=O), 1, out=out),
    "sum": lambda out: torch.sum(torch.ones(3, 3, device=O), 0, out=out),
    "cumsum": lambda out: torch.cumsum(torch.ones(3, device=O), 0, out=out),
    "sort": lambda out: torch.sort(torch.ones(3, device=O), out=(out, torch.empty(0, dtype=torch.long))),
    "index_select": lambda out: torch.index_select(torch.ones(3, device=O), 0,
                                                   torch.tensor([0, 1], device=O), out=out),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [0, 9])
def test_cpu_out_for_ocl_inputs_raises(name, size):
    out = torch.full((size,), 7, dtype=torch.long if name == "bucketize" else torch.float32)
    with pytest.raises(RuntimeError, match="Expected .* device"):
        CASES[name](out)
    assert out.shape == (size,) and bool((out == 7).all())


def test_wrong_device_message_names_both_devices():
    with pytest.raises(RuntimeError, match=WRONG_DEVICE):
        CASES["addr"](torch.empty(0))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("out_dtype", [torch.float32, torch.float64])
def test_arithmetic_in_the_promoted_dtype_not_the_out_dtype(dtype, out_dtype):
    v = torch.tensor([33000.0, 1.0 + 2 ** -9, 3e38 if dtype == torch.bfloat16 else 60000.0], dtype=dtype)
    for f in (lambda a, out: torch.add(a, a, out=out), lambda a, out: torch.mul(a, 3, out=out),
              lambda a, out: torch.sub(a, -a, out=out)):
        expected = f(v, torch.empty(0, dtype=out_dtype))
        actual = f(v.to(O), torch.empty(0, dtype=out_dtype, device=O))
        torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, atol=0, rtol=0)


def test_half_overflow_into_double_out_is_inf():
    t = torch.tensor(33000, dtype=torch.half, device=O)
    r = torch.add(t, t, out=torch.empty(0, dtype=torch.double, device=O))
    assert r.dtype == torch.double and r.item() == float("inf")


def test_unary_float16_into_float32_out_rounds_as_the_cpu():
    x = torch.linspace(-3, 3, 101, dtype=torch.float16)
    expected = torch.exp(x, out=torch.empty(0))
    actual = torch.exp(x.to(O), out=torch.empty(0, device=O))
    torch.testing.assert_close(actual.cpu(), expected, atol=0, rtol=0)
