"""Device discovery, selection and properties (torch.ocl mirrors torch.cuda)."""

import os
import subprocess
import sys

import pytest
import torch

import torch_ocl  # noqa: F401
from torch_ocl._accelerators import other_accelerator as _other_accelerator


def test_available_and_count():
    assert torch.ocl.is_available()
    assert torch.ocl.device_count() >= 1
    assert torch.accelerator.current_accelerator().type == "ocl"
    assert torch.accelerator.device_count() == torch.ocl.device_count()


def test_properties():
    p = torch.ocl.get_device_properties(0)
    assert p.name == torch.ocl.get_device_name(0) and p.name
    assert p.type in ("gpu", "accelerator", "cpu", "other")
    assert p.compute_units >= 1 and p.total_memory > 0 and p.max_work_group_size >= 1
    assert p.opencl_version.startswith("OpenCL")
    assert isinstance(p.extensions, tuple)
    assert p.has_fp64 == ("cl_khr_fp64" in p.extensions) or p.has_fp64
    assert torch.ocl.get_device_properties("ocl:0") == p
    assert torch.ocl.get_device_properties(torch.device("ocl", 0)) == p


def test_device_strings():
    x = torch.ones(2, device="ocl")
    assert x.device == torch.device("ocl:0") and x.is_ocl
    assert torch.ones(2, device=torch.device("ocl", 0)).device.index == 0
    assert torch.ones(2).ocl().device.type == "ocl"


def test_set_device_and_context(two_devices):
    assert torch.ocl.current_device() == 0
    with torch.ocl.device(1):
        assert torch.ocl.current_device() == 1
        assert torch.empty(3, device="ocl").device == torch.device("ocl:1")
    assert torch.ocl.current_device() == 0
    torch.ocl.set_device("ocl:1")
    try:
        assert torch.ocl.current_device() == 1
    finally:
        torch.ocl.set_device(0)
    y = torch.ones(3, device="ocl:1")
    with torch.ocl.device_of(y):
        assert torch.ocl.current_device() == 1


def test_bad_device_index_is_a_clear_error():
    n = torch.ocl.device_count()
    with pytest.raises(RuntimeError, match=r"device index|out of range|valid"):
        torch.empty(2, device=f"ocl:{n + 3}")
    with pytest.raises(RuntimeError):
        torch.ocl.set_device(n + 3)
    # The process is still usable.
    assert torch.ones(2, device="ocl").sum().item() == 2


def _run(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)


def test_devices_env_selects_by_name_and_index(two_devices):
    r = _run("import torch, torch_ocl; print(torch.ocl.device_count())", TORCH_OCL_DEVICES="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
    r = _run("import torch, torch_ocl; print(torch.ocl.device_count())", TORCH_OCL_DEVICES="pthread,0")
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip()) >= 1


def test_no_driver_means_unavailable_with_install_hint():
    # An ICD loader with no vendor files behaves like a machine with no driver.
    code = (
        "import torch, torch_ocl\n"
        "print(torch.ocl.is_available(), torch.ocl.device_count())\n"
        "try:\n    torch.ones(1, device='ocl')\nexcept RuntimeError as e:\n    print('ERR', e)\n"
    )
    r = _run(code, OCL_ICD_VENDORS="/nonexistent", OPENCL_VENDOR_PATH="/nonexistent")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("False 0")
    assert "pocl-opencl-icd" in r.stdout


@pytest.mark.skipif(_other_accelerator() is not None, reason="a CUDA/XPU device is present: `import torch` "
                    "alone does not load torch_ocl there (torch_ocl/_accelerators.py)")
def test_autoload_without_import():
    # The torch.backends entry point registers ocl on `import torch` alone
    # (only when the package is installed, which `make test` does).
    r = _run("import torch; x = torch.arange(10., device='ocl'); print((x[2:5] * 2).cpu())",
             TORCH_OCL_FALLBACK="silent", PYTHONPATH="")
    assert r.returncode == 0, r.stderr
    assert "tensor([4., 6., 8.])" in r.stdout


_FAKE_CUDA = """
import os, warnings, torch
real_exists = os.path.exists
os.path.exists = lambda p: p == "/dev/nvidiactl" or real_exists(p)
torch.cuda.is_available = lambda: True
torch.version.cuda = torch.version.cuda or "13.0"
import torch_ocl_autoload
torch_ocl_autoload.load()
print("after autoload:", hasattr(torch, "ocl"))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import torch_ocl
print("after import:", hasattr(torch, "ocl"), any("one accelerator per process" in str(x.message) for x in w))
"""


def test_autoload_steps_aside_for_cuda():
    # With a CUDA device present, the entry point must not register ocl (it
    # would break CUDA autograd: pytorch/pytorch#161129); an explicit import
    # registers it and warns. CUDA is faked: this machine has none.
    r = _run(_FAKE_CUDA, TORCH_DEVICE_BACKEND_AUTOLOAD="0", PYTHONPATH="")
    assert r.returncode == 0, r.stderr
    assert "after autoload: False" in r.stdout
    assert "after import: True True" in r.stdout
    r = _run(_FAKE_CUDA, TORCH_DEVICE_BACKEND_AUTOLOAD="0", TORCH_OCL_AUTOLOAD="1", PYTHONPATH="")
    assert r.returncode == 0, r.stderr
    assert "after autoload: True" in r.stdout
