"""python -m torch_ocl port: the static scan of CUDA scripts.

Each fixture in fixtures/port/ has a golden JSON in fixtures/port/golden/.
The verdicts for torch.cuda names, nccl and float64 come from this machine's
torch.ocl, shim and devices (PoCL: fp64 present, no ocl c10d backend yet),
so a golden file changes when those change: regenerate with
TORCH_OCL_REGEN_GOLDEN=1 and read the diff.
"""

import json
import os
import subprocess
import sys

import pytest

from torch_ocl import port
from torch_ocl.port import rules

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "port")
GOLDEN = os.path.join(FIXTURES, "golden")
CASES = ["nanogpt_cuda", "hf_trainer_cuda", "triton_kernel", "mixed_cuda"]


@pytest.mark.parametrize("name", CASES)
def test_matches_golden(name):
    got = json.loads(port.run(os.path.join(FIXTURES, name + ".py"), "json"))
    path = os.path.join(GOLDEN, name + ".json")
    if os.environ.get("TORCH_OCL_REGEN_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            json.dump(got, f, indent=2, sort_keys=True)
            f.write("\n")
    with open(path) as f:
        assert got == json.load(f)


def _verdicts(name):
    return json.loads(port.run(os.path.join(FIXTURES, name + ".py"), "json"))


def test_nanogpt_runs_under_the_shim():
    doc = _verdicts("nanogpt_cuda")
    assert doc["summary"]["verdict"] == "runs"
    kinds = {f["kind"] for f in doc["findings"]}
    assert {"cuda_api", "device_literal", "backend_flag", "compile", "is_cuda"} <= kinds


def test_triton_is_blocked_with_the_reason():
    doc = _verdicts("triton_kernel")
    assert doc["summary"]["verdict"] == "blocked"
    kernel = [f for f in doc["findings"] if f["kind"] == "triton_kernel"]
    assert [f["what"] for f in kernel] == ["@triton.jit add_kernel"]
    assert kernel[0]["verdict"] == "blocked" and "no OpenCL code generator" in kernel[0]["note"]


def test_mixed_has_every_kind():
    doc = _verdicts("mixed_cuda")
    by_what = {(f["kind"], f["what"]): f["verdict"] for f in doc["findings"]}
    assert by_what[("cuda_api", "torch.cuda.synchronize")] == "runs"
    assert by_what[("cuda_api", "torch.cuda.current_blas_handle")] == "edit"
    assert by_what[("cuda_api", "torch.cuda.CUDAGraph")] == "runs"  # torch.ocl.OCLGraph
    assert by_what[("nccl", "'nccl'")] == "runs"  # the shim maps it to oclgloo
    assert by_what[("import", "bitsandbytes")] == "blocked"
    assert by_what[("import", "flash_attn")] == "edit"
    assert by_what[("cpp_extension", "torch.utils.cpp_extension.CUDAExtension")] == "blocked"
    assert by_what[("cpp_extension", "torch.utils.cpp_extension.load_inline")] == "edit"
    assert by_what[("compile", "torch.compile(backend='inductor')")] == "runs"
    assert by_what[("compile", "torch.compile(backend='cudagraphs')")] == "edit"
    assert by_what[("device_type_compare", "x.device.type == 'cuda'")] == "edit"
    assert doc["summary"]["by_verdict"] == {
        v: sum(1 for f in doc["findings"] if f["verdict"] == v) for v in rules.ORDER}


def test_cuda_names_are_judged_by_introspecting_torch_ocl(monkeypatch):
    src = "import torch\ntorch.cuda.current_blas_handle()\n"
    assert port.scan_source(src, "s.py")[0].verdict == "edit"
    monkeypatch.setattr(sys.modules["torch_ocl._device_module"], "current_blas_handle", lambda: 0, raising=False)
    f = port.scan_source(src, "s.py")[0]
    assert f.verdict == "runs" and "torch.ocl.current_blas_handle" in f.note


def test_aliases_are_resolved():
    src = ("import torch as t\nfrom torch import cuda as c\nfrom torch.cuda.amp import GradScaler as GS\n"
           "t.cuda.synchronize()\nc.manual_seed(0)\nGS()\nfrom torch.utils import cpp_extension as ce\n"
           "ce.load_inline(name='k', cpp_sources='', cuda_sources='__global__ void k(){}')\n")
    got = [(f.line, f.what, f.verdict) for f in port.scan_source(src, "s.py")]
    assert got == [(4, "torch.cuda.synchronize", "runs"), (5, "torch.cuda.manual_seed", "runs"),
                   (6, "torch.cuda.amp.GradScaler", "runs"),
                   (8, "torch.utils.cpp_extension.load_inline", "blocked")]


def test_syntax_error_is_reported_not_raised(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    (tmp_path / "bad.py").write_text("def f(:\n")
    files, findings = port.scan_path(str(tmp_path))
    assert files == ["bad.py", "ok.py"]
    assert [(f.file, f.kind) for f in findings] == [("bad.py", "syntax_error"), ("ok.py", "dot_cuda")]


def test_text_and_markdown():
    text = port.run(os.path.join(FIXTURES, "mixed_cuda.py"), "text")
    assert "mixed_cuda.py:26: [runs] cuda_api: torch.cuda.CUDAGraph" in text
    assert text.rstrip().endswith("Overall: blocked.")
    md = port.run(FIXTURES, "markdown")
    assert md.startswith("# CUDA port report") and "## Blocked" in md and "| `triton_kernel.py:8` |" in md


def test_cli(tmp_path):
    r = subprocess.run([sys.executable, "-m", "torch_ocl", "port", os.path.join(FIXTURES, "triton_kernel.py"),
                        "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(GOLDEN, "triton_kernel.json")) as f:
        assert json.loads(r.stdout) == json.load(f)
    r = subprocess.run([sys.executable, "-m", "torch_ocl", "port", str(tmp_path / "missing")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "no such file or directory" in r.stderr
