"""The program cache across processes: a second run builds nothing, and a
corrupt cache file is rebuilt instead of trusted."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

CODE = (
    "import torch, torch_ocl\n"
    "from torch_ocl import _C\n"
    "x = torch.ones(1000, dtype=torch.float64, device='ocl')\n"
    "y = (x * 3 + x / 2 - x).to(torch.float16)\n"
    "assert y.cpu().float().sum().item() == 2500\n"
    "s = _C._program_stats()\n"
    "print(s['builds'], s['disk_hits'], s['disk_rejects'])\n"
)


def _run(cache, code=CODE, *args):
    env = dict(os.environ, TORCH_OCL_CACHE_DIR=str(cache), TORCH_OCL_FALLBACK="error")
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "torch_ocl", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_second_process_builds_nothing(tmp_path):
    builds, hits, _ = map(int, _run(tmp_path).split())
    assert builds > 0 and hits == 0
    builds, hits, rejects = map(int, _run(tmp_path).split())
    assert builds == 0 and hits > 0 and rejects == 0


def test_corrupt_and_truncated_files_are_rebuilt(tmp_path):
    _run(tmp_path)
    files = sorted(Path(tmp_path).glob("*.bin"))
    assert files
    for i, f in enumerate(files):
        data = bytearray(f.read_bytes())
        if i % 2:
            f.write_bytes(data[: len(data) // 2])  # truncated
        else:
            data[len(data) // 2] ^= 0xFF  # corrupt payload
            f.write_bytes(bytes(data))
    builds, hits, rejects = map(int, _run(tmp_path).split())
    assert rejects == len(files) and builds == len(files)
    builds, hits, rejects = map(int, _run(tmp_path).split())  # rewritten files are good
    assert builds == 0 and rejects == 0


def test_cli_info_and_clear(tmp_path):
    _run(tmp_path)
    out = _run(tmp_path, None, "cache", "info")
    assert str(tmp_path) in out and "files:" in out
    n = len(list(Path(tmp_path).glob("*.bin")))
    out = _run(tmp_path, None, "cache", "clear")
    assert f"removed {n}" in out
    assert not list(Path(tmp_path).glob("*.bin"))
    out = _run(tmp_path, None, "info")
    assert "ocl:0" in out
