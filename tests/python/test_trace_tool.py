"""python -m torch_ocl trace (what a script ran on ocl, what fell back, where
from, and the copies) and python -m torch_ocl port --run (the scan plus a
run under the shim)."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "fixtures", "trace", "small_script.py")


def _run(args, timeout=300, **env):
    e = dict(os.environ, TORCH_OCL_FALLBACK="silent", **env)
    return subprocess.run([sys.executable, "-m", "torch_ocl"] + args, capture_output=True, text=True,
                          timeout=timeout, env=e)


def _fallback_line():
    with open(SCRIPT) as f:
        return next(i for i, l in enumerate(f, 1) if "FALLBACK LINE" in l)


def test_trace_reports_ops_fallbacks_with_call_sites_and_copies(tmp_path):
    out = tmp_path / "trace.json"
    r = _run(["trace", "--json", str(out), SCRIPT])
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "[2.0, 4.0, 6.0, 8.0, 10.0, 12.0]"  # the script's own output is untouched
    rep = json.loads(out.read_text())
    fb = rep["fallback"]
    assert list(fb) == ["tracefixture::twice"], fb
    assert fb["tracefixture::twice"]["count"] == 1
    assert fb["tracefixture::twice"]["call_sites"] == {f"{SCRIPT}:{_fallback_line()}": 1}
    assert rep["ops_on_ocl"].get("aten::relu", 0) >= 1 and rep["ops_on_ocl"].get("aten::add.Tensor", 0) >= 1
    assert "tracefixture::twice" not in rep["ops_on_ocl"]
    assert rep["copies"]["cpu->ocl"]["count"] >= 1 and rep["copies"]["cpu->ocl"]["bytes"] >= 24
    assert rep["copies"]["ocl->cpu"]["count"] >= 1
    assert "ops that left the device:" in r.stderr and "tracefixture::twice" in r.stderr


def test_trace_passes_the_exit_code_and_reports_anyway(tmp_path):
    r = _run(["trace", SCRIPT, "3"])
    assert r.returncode == 3
    assert "torch_ocl trace:" in r.stderr and "1 on the CPU (fallback)" in r.stderr


def test_trace_missing_script():
    r = _run(["trace", "/nonexistent/script.py"])
    assert r.returncode == 2 and "no such script" in r.stderr


def test_port_run_reports_what_left_the_device(tmp_path):
    script = tmp_path / "cuda_script.py"
    script.write_text(
        "import torch\n"
        "lib = torch.library.Library('portfixture', 'DEF')\n"
        "lib.define('twice(Tensor x) -> Tensor')\n"
        "lib.impl('twice', lambda x: x * 2, 'CPU')\n"
        "x = torch.ones(3).cuda()\n"
        "print(torch.ops.portfixture.twice(x).sum().item())\n"
        "try:\n"
        "    torch.cuda.cudart()\n"
        "except Exception:\n"
        "    pass\n")
    r = _run(["port", str(script), "--json", "--run", f"python {script}"])
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout)
    run = doc["run"]
    assert run["exit_code"] == 0, run
    assert run["fallback"] == {"portfixture::twice": 1}, run
    assert "cudart" in run["missing_cuda"], run
    assert run["rewritten"].get("torch.Tensor.cuda", 0) >= 1, run
    assert any(f["kind"] == "is_cuda" or ".cuda()" in f["what"] for f in doc["findings"]), doc["findings"]
    text = _run(["port", str(script), "--run", f"python {script}"]).stdout
    assert "ops that left the device (CPU fallback): portfixture::twice x1" in text
    assert "torch.cuda.cudart" in text
