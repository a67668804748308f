"""Soak, short form: a few hundred GPT training steps with flat memory and OpenCL object counts.

`make soak` runs the long form (10,000 steps, docs/soak.*). Here tools/soak.py
runs 200 steps in a child process (hard timeout) with the cl_live shim
preloaded, so leaked cl_mem, events, programs or kernels fail the test.
It runs in both pytest runs. Under TORCH_OCL_GUARD=1 every free holds one
cl_event (the canary read-back) until it is polled; synchronize polls them
(before, at the next allocation only, the count after synchronize moved
between 32 and 188 with the frees since the last allocation, bounded but
not flat), so the samples, taken after synchronize, are flat there too.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _shim(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the cl_live shim")
    out = str(tmp_path / "cl_live.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", out, os.path.join(ROOT, "tools", "cl_live.c"), "-ldl"],
                   check=True, timeout=120)
    return out


def test_soak_short_form_is_flat(tmp_path):
    env = dict(os.environ, LD_PRELOAD=_shim(tmp_path))
    prefix = str(tmp_path / "soak")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "soak.py"), "--steps", "200", "--every", "10",
                        "--warmup", "60", "--out", prefix], env=env, capture_output=True, text=True, timeout=300)
    rep = json.load(open(prefix + ".json")) if os.path.exists(prefix + ".json") else None
    assert rep is not None, p.stdout[-2000:] + p.stderr[-3000:]
    names = [c[0] for c in rep["checks"]]
    assert any(n.startswith("cl_event") for n in names), "the cl_live shim was not active"
    assert os.path.getsize(prefix + ".png") > 1000
    assert p.returncode == 0, "\n".join(map(str, rep["checks"]))


def test_soak_checks_can_fail():
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import soak
    flat = [{"step": s, "reserved": 100 << 20, "allocated": 50 << 20, "peak_allocated": 90 << 20,
             "rss": 500 << 20, "cl_mem": 5, "cl_event": 3, "cl_program": 40, "cl_kernel": 60} for s in range(0, 2000, 100)]
    assert all(c[3] for c in soak.checks(flat, 500))
    leak = [dict(s, cl_event=s["step"] // 100, rss=(500 << 20) + s["step"] * (1 << 16)) for s in flat]
    bad = {c[0].split(":")[0].split(" ")[0] for c in soak.checks(leak, 500) if not c[3]}
    assert bad == {"rss", "cl_event"}
    slack = [dict(s, reserved=200 << 20) for s in flat]
    assert not soak.checks(slack, 500)[0][3]
