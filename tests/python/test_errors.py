"""Bad input gets a clear Python error and the process stays usable."""

import pytest
import torch

import torch_ocl
from torch_ocl import _C


def _still_usable():
    assert torch.equal((torch.ones(3, device="ocl") * 2).cpu(), torch.full((3,), 2.0))


def test_unsupported_dtype():
    with pytest.raises(TypeError, match=r"dtype Float8_e4m3fn is not supported on the ocl device"):
        torch.ones(2).to(torch.float8_e4m3fn).to("ocl")
    _still_usable()


def test_mismatched_shapes():
    a = torch.ones(3, device="ocl")
    b = torch.ones(4, device="ocl")
    with pytest.raises(RuntimeError, match="must match the size"):
        a + b
    _still_usable()


def test_kernel_build_failure_carries_the_log():
    with pytest.raises(RuntimeError) as e:
        _C._build_program(0, "__kernel void k(__global float *x) { x[0] = undefined_name; }", "", "k")
    msg = str(e.value)
    assert "build failed" in msg and "undefined_name" in msg
    _still_usable()


def test_unknown_kernel_name():
    with pytest.raises(RuntimeError, match="no_such_kernel"):
        _C._build_program(0, "__kernel void k(__global float *x) { x[0] = 1.0f; }", "", "no_such_kernel")
    _still_usable()


def test_cross_device_operands_rejected(two_devices):
    a = torch.ones(3, device="ocl:0")
    b = torch.ones(3, device="ocl:1")
    with pytest.raises(RuntimeError, match="device"):
        a + b
    _still_usable()


def test_item_of_many_elements():
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        torch.ones(3, device="ocl").item()
    _still_usable()
