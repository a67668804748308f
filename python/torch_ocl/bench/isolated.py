"""Run one suite on a CUDA/XPU device in a child process that never loads
torch_ocl.

PyTorch has one accelerator per process: once torch_ocl names the ocl device,
the autograd engine asserts on every backward over CUDA tensors
(torch_ocl/_accelerators.py). The benchmark runs in a process with ocl, so
another accelerator's suites run in a child where `import torch` does not
load torch_ocl, and the bench package is imported from its files under
another name (importing it as torch_ocl.bench would run torch_ocl/__init__).
"""

import json
import os
import subprocess
import sys
from typing import Dict, List

import torch

_CHILD = r"""
import importlib, importlib.util, json, sys
path, module, device, quick = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
spec = importlib.util.spec_from_file_location("_tocl_bench", path + "/__init__.py",
                                              submodule_search_locations=[path])
pkg = importlib.util.module_from_spec(spec)
sys.modules["_tocl_bench"] = pkg
spec.loader.exec_module(pkg)
import torch
assert not hasattr(torch, "ocl"), "torch_ocl was loaded in the isolated child"
rows = importlib.import_module("_tocl_bench." + module).run(torch.device(device), quick)
print("\n__ROWS__" + json.dumps(rows))
"""


# The suites that measure other devices; the rest (fusion, compile,
# distributed) measure ocl only and import torch_ocl themselves.
SUITES = ("micro", "models", "serving")


def needed(module: str, device: torch.device) -> bool:
    return module in SUITES and device.type in ("cuda", "xpu") and hasattr(torch, "ocl")


def run(module: str, device: torch.device, quick: bool, timeout: float = 3600) -> List[Dict]:
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", TORCH_OCL_AUTOLOAD="0")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _CHILD, here, module, str(device), "1" if quick else "0"],
                       env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 or "__ROWS__" not in r.stdout:
        raise RuntimeError(f"the {module} suite on {device} (in a child process without torch_ocl) failed "
                           f"with exit code {r.returncode}:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.rsplit("__ROWS__", 1)[1])
