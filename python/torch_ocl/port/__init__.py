"""python -m torch_ocl port PATH: which CUDA-specific uses a script or project
has, and whether each runs under torch_ocl.transfer_to_ocl, needs an edit or
is blocked (rules.py says why for each kind)."""

import json
import os
import shlex
import subprocess
import sys
import tempfile

from .report import summarize, to_json, to_markdown, to_text  # noqa: F401
from .scan import Finding, scan_path, scan_source  # noqa: F401


def run_under_shim(command: str, timeout=None) -> dict:
    """Run COMMAND (a python command line) under torch_ocl.transfer_to_ocl
    with the fallback policy on warn; what the shim saw at exit: the ops
    that left the device, the torch.cuda names ocl lacks, calls rewritten."""
    argv = shlex.split(command)
    if argv and os.path.basename(argv[0]).startswith("python"):
        argv = argv[1:]
    if not argv:
        raise ValueError(f"--run: no script in {command!r}")
    with tempfile.TemporaryDirectory(prefix="tocl_port_") as tmp:
        path = os.path.join(tmp, "report.json")
        env = dict(os.environ, TORCH_OCL_FALLBACK="warn", TORCH_OCL_TRANSFER_REPORT=path)
        try:
            p = subprocess.run([sys.executable, "-m", "torch_ocl.transfer_to_ocl"] + argv, env=env,
                               capture_output=True, text=True, timeout=timeout)
            rc, tail = p.returncode, p.stderr[-2000:]
        except subprocess.TimeoutExpired:
            rc, tail = None, f"timed out after {timeout} s"
        doc = {"command": command, "exit_code": rc}
        try:
            with open(path) as f:
                doc.update(json.load(f))
        except (OSError, ValueError):
            doc["error"] = "the run wrote no report (it died before exit): " + tail
        else:
            if rc != 0:
                doc["stderr_tail"] = tail
    return doc


def run(path: str, fmt: str = "text", command: str = None, timeout=None) -> str:
    files, findings = scan_path(path)
    ran = run_under_shim(command, timeout) if command else None
    return {"text": to_text, "json": to_json, "markdown": to_markdown}[fmt](files, findings, ran)
