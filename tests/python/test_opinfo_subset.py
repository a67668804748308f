"""A fast slice of PyTorch's OpInfo suite, through PyTorch's own device-generic
machinery (instantiate_device_type_tests, only_for="ocl"): every sample of
each listed op runs natively (fallback = error) and matches the CPU.
The full database runs with `make conformance` (tools/conformance.py)."""

import torch
import torch_ocl  # noqa: F401  (must be loaded before common_device_type)
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase, run_tests

# Ops whose ocl kernels are native today; grow this list as kernels land.
NATIVE = {"add", "sub", "mul", "div", "true_divide", "view", "view_as", "reshape", "transpose",
          "permute", "t", "unfold", "narrow", "select", "squeeze", "unsqueeze", "expand", "expand_as",
          "diagonal", "unbind", "split", "chunk", "flatten", "unflatten", "movedim", "swapaxes", "clone",
          "contiguous", "zeros_like", "ones_like", "full_like", "fill", "zero_"}
DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
          torch.uint8, torch.bool)
SELECTED = [op for op in op_db if op.name in NATIVE and not op.variant_test_name]
MAX_SAMPLES = 6


class TestOclOpInfo(TestCase):
    @ops(SELECTED, allowed_dtypes=DTYPES)
    def test_native_matches_cpu(self, device, dtype, op):
        old = torch_ocl.get_fallback_policy()
        torch_ocl.set_fallback_policy("error")
        try:
            for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
                if i >= MAX_SAMPLES:
                    break
                expected = op(sample.input, *sample.args, **sample.kwargs)
                dsample = sample.transform(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t)
                actual = op(dsample.input, *dsample.args, **dsample.kwargs)
                self.assertEqual(actual, expected, exact_device=False, msg=f"sample {i}: {sample.summary()}")
        finally:
            torch_ocl.set_fallback_policy(old)


instantiate_device_type_tests(TestOclOpInfo, globals(), only_for="ocl")

if __name__ == "__main__":
    run_tests()
