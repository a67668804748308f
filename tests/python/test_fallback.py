"""The visible CPU fallback: policies and per-op counts."""

import os
import subprocess
import sys
import warnings

import pytest
import torch

import torch_ocl
from cpu_only_ops import NS, ops

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def policy():
    old = torch_ocl.get_fallback_policy()
    yield torch_ocl.set_fallback_policy
    torch_ocl.set_fallback_policy(old)


def test_counts_and_result_correct(policy):
    policy("silent")
    torch_ocl.reset_fallback_stats()
    a = torch.randn(8, 5)
    # cpu_only_ops.trace has no ocl kernel: it runs on the CPU
    r = ops.trace(a.to("ocl"))
    assert r.device.type == "ocl"
    torch.testing.assert_close(r.cpu(), torch.trace(a))
    stats = torch_ocl.fallback_stats()
    assert sum(n for k, n in stats.items() if k.startswith(NS + "::trace")) == 1
    torch_ocl.reset_fallback_stats()
    assert torch_ocl.fallback_stats() == {}


def test_error_policy_names_the_op(policy):
    policy("error")
    x = torch.ones(4, device="ocl")
    with pytest.raises(NotImplementedError, match=NS + r"::trace.*TORCH_OCL_FALLBACK"):
        ops.trace(x.view(2, 2))
    # Native ops still run under 'error'.
    assert torch.equal((x + x).cpu(), torch.full((4,), 2.0))


def test_warn_policy_warns_once_per_op(policy):
    policy("warn")
    torch_ocl.reset_fallback_stats()
    x = torch.ones(4, device="ocl")
    # torch dedups identical warnings per call site; run in a subprocess for a clean count.
    code = (f"import sys; sys.path.insert(0, {HERE!r})\n"
            "import warnings, torch, torch_ocl\n"
            "from cpu_only_ops import ops\n"
            "warnings.simplefilter('always')\n"
            "x = torch.ones(4, device='ocl')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    for _ in range(3): ops.trace(x.view(2, 2))\n"
            "print(sum('::trace' in str(m.message) for m in w))\n")
    env = dict(os.environ, TORCH_OCL_FALLBACK="warn")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    # through torch.ops the C++ warning reaches stderr rather than Python's warnings: count both
    assert int(r.stdout.strip()) + r.stderr.count(f"'{NS}::trace' has no ocl kernel") == 1, r.stderr
    assert torch.equal(ops.trace(x.view(2, 2)).cpu(), torch.trace(torch.ones(2, 2)))


def test_env_policy_error():
    code = (f"import sys; sys.path.insert(0, {HERE!r})\nimport torch, torch_ocl\nfrom cpu_only_ops import ops\n"
            "ops.cross(torch.ones(2, 3, device='ocl'), torch.ones(2, 3, device='ocl'))\n")
    env = dict(os.environ, TORCH_OCL_FALLBACK="error")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0
    assert NS + "::cross" in r.stderr and "TORCH_OCL_FALLBACK" in r.stderr


def test_bad_policy_name(policy):
    with pytest.raises(ValueError, match="warn"):
        policy("sometimes")


# Dtype routes: an op with an ocl kernel whose dtype the device kernels lack but the CPU has
# (uint8 images, int64 convolution) runs on the CPU, counted and governed by the policy.
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest-exact", "nearest"])
def test_uint8_resize_runs_on_the_cpu_exactly(policy, mode):
    policy("silent")
    x = torch.randint(0, 256, (1, 3, 10, 12), dtype=torch.uint8)
    torch_ocl.reset_fallback_stats()
    out = torch.nn.functional.interpolate(x.to("ocl"), size=(7, 9), mode=mode)
    assert out.device.type == "ocl"
    assert torch.equal(out.cpu(), torch.nn.functional.interpolate(x, size=(7, 9), mode=mode))
    assert sum(torch_ocl.fallback_stats().values()) == 1


def test_int64_convolution_runs_on_the_cpu_exactly(policy):
    policy("silent")
    x = torch.randint(-5, 5, (2, 3, 8, 8))
    w = torch.randint(-3, 3, (4, 3, 3, 3))
    torch_ocl.reset_fallback_stats()
    out = torch.nn.functional.conv2d(x.to("ocl"), w.to("ocl"), padding=1)
    assert out.device.type == "ocl" and out.dtype == torch.int64
    assert torch.equal(out.cpu(), torch.nn.functional.conv2d(x, w, padding=1))
    assert torch_ocl.fallback_stats().get("aten::convolution") == 1
