"""PyTorch's error inputs on ocl: every OpInfo ErrorInput raises the CPU's exception type.

Runs tools/conformance_errors.py over a sample of the OpInfo entries (every
ERROR_INPUTS_EVERY-th; `make conformance` runs all of them into
docs/coverage.md) in a child process with a hard timeout: a case that
returns a value, raises another type, crashes or hangs fails the test.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EVERY = int(os.environ.get("TORCH_OCL_ERROR_INPUTS_EVERY", "6"))


def test_error_inputs_sample_raise_like_cpu(tmp_path):
    offset = 0 if os.environ.get("TORCH_OCL_EAGER", "fused") == "strict" else 1
    out = str(tmp_path / "errors.json")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "conformance_errors.py"), "--every", str(EVERY),
                        "--offset", str(offset % EVERY), "--timeout", "30", "--json", out],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    rep = json.load(open(out))
    assert rep["counts"].get("pass", 0) > 50, rep["counts"]
    assert rep["failures"] == [], "\n".join(map(str, rep["failures"]))


def test_error_inputs_tool_reports_a_value_where_an_error_was_due():
    """The checker must be able to fail: an op that returns instead of raising is 'no-raise'."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import conformance_errors as ce
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    op = next(o for o in op_db if o.name == "cat")
    rows = ce.check_op(op, 30)
    assert rows and all(r[1] in ("pass", "n/a") for r in rows), rows

    class Lenient:
        """cat, except that on ocl it returns a tensor whatever it is given."""
        name, variant_test_name = "cat", ""
        error_inputs_sparse_func = None

        def error_inputs(self, device):
            return op.error_inputs(device)

        def __call__(self, x, *args, **kwargs):
            if any(t.device.type == "ocl" for t in ce._tensors(x)):
                return torch.zeros(1)
            return op(x, *args, **kwargs)

    rows = ce.check_op(Lenient(), 30)
    assert any(r[1] == "no-raise" for r in rows), rows


# ---- regression tests: what the error inputs found -----------------------------------------


def test_roll_of_a_0_dim_tensor_over_dim_0_raises_index_error():
    """roll's error input 3 (a 0-dim tensor, dims=0) crashed the process: the dim was wrapped as
    for a 1-dim tensor and indexed an empty vector. Now IndexError, as on the CPU."""
    import pytest
    import torch
    for dev in ("cpu", "ocl"):
        x = torch.tensor(2.5, device=dev)
        with pytest.raises(IndexError):
            torch.roll(x, 0, 0)
        assert torch.roll(x, 1).item() == 2.5  # no dims: the flattened roll still works
