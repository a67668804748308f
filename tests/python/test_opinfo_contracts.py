"""A fast slice of the OpInfo contract checks (tools/conformance_contracts.py):
out= on the wrong device, in an unsafe dtype, wrongly sized, wider than the
computation, aliasing an input, strided; function / method / in-place / out=
variants; non-contiguous and offset inputs and grad_outputs; in-place on views;
extremal values of unary ufuncs. Native ops and ops that go through the CPU
fallback alike. The full database runs with `make conformance`."""

import os
import sys

import pytest
import torch
import torch_ocl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import conformance_contracts as CC  # noqa: E402

# native pointwise, a reduction, GEMM-family, search/shape and row (softmax) ops, ops through
# the CPU fallback (linalg.det, and in-place ones), ops with an in-place variant; ops whose
# out= broke the contract once (a strided out written as if contiguous: softmax, avg_pool3d,
# narrow_copy, zeros; the out dtype: nansum, std, max; mode.values; scatter's ocl:1 out).
OPS = ("add", "mul", "sin", "exp", "digamma", "clamp", "sum", "addr", "addmm", "bucketize", "cat",
       "linalg.det", "nextafter", "index_add", "softmax", "nn.functional.avg_pool3d", "narrow_copy", "zeros",
       "nansum", "std", "max.reduction_no_dim", "mode", "scatter")
MAX_SAMPLES = 3
SELECTED = [op for op in CC.op_db if CC.op_name(op) in OPS]
CASES = [(op, check, dt, rg) for op in SELECTED for check, dt, rg in CC.cases(op)]
_SAMPLES = {}  # per op: the samples each check reuses


@pytest.fixture(autouse=True)
def _restore_policy():
    old = torch_ocl.get_fallback_policy()
    yield
    torch_ocl.set_fallback_policy(old)


@pytest.mark.parametrize("op,check,dtype,rg", CASES,
                         ids=[f"{CC.op_name(o)}-{c}-{CC.dtype_name(d)}" for o, c, d, _ in CASES])
def test_contract(op, check, dtype, rg):
    status, detail = CC.run_check(op, check, dtype, MAX_SAMPLES, rg, _SAMPLES.setdefault(CC.op_name(op), {}))
    if status == "fail" and not CC.known_reason(CC.op_name(op), check, dtype):
        pytest.fail(f"{CC.op_name(op)} [{CC.dtype_name(dtype)}] {check}: {detail}", pytrace=False)


def test_slice_covers_every_check():
    """The slice exercises each check at least once (a check that silently
    became not-applicable everywhere would test nothing)."""
    assert {c for _, c, _, _ in CASES} == set(CC.CHECKS)
    assert {CC.op_name(o) for o in SELECTED} >= set(OPS)


def test_out_in_the_computation_dtype():
    """torch.add on float16 33000 with a float64 out= overflows to inf: computed
    in the inputs' dtype, then cast (issue 23)."""
    for dev in ("cpu", "ocl"):
        h = torch.full((3,), 33000.0, dtype=torch.float16, device=dev)
        out = torch.zeros(3, dtype=torch.float64, device=dev)
        torch.add(h, h, out=out)
        assert torch.isinf(out.cpu()).all(), f"{dev}: {out.cpu().tolist()}"
