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
    "_C._program_cache_flush()\n"  # CPU devices save when builds go quiet; this process ends first
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


def _run_raw(cache, code=CODE, **env):
    e = dict(os.environ, TORCH_OCL_CACHE_DIR=str(cache), TORCH_OCL_FALLBACK="error", **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=300)


def test_four_processes_writing_at_once(tmp_path):
    """Four processes build and write the same new programs at the same
    moment: every one computes the right answer, and the files they leave
    are whole (a fifth process loads them all and builds nothing)."""
    e = dict(os.environ, TORCH_OCL_CACHE_DIR=str(tmp_path), TORCH_OCL_FALLBACK="error")
    procs = [subprocess.Popen([sys.executable, "-c", CODE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=e) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        builds, hits, rejects = map(int, out.split())
        assert rejects == 0 and builds + hits > 0
    assert not list(tmp_path.glob("*.tmp.*"))
    builds, hits, rejects = map(int, _run(tmp_path).split())
    assert builds == 0 and hits > 0 and rejects == 0


def test_files_replaced_by_directories_are_rebuilt(tmp_path):
    _run(tmp_path)
    files = sorted(Path(tmp_path).glob("*.bin"))
    for i, f in enumerate(files):
        f.unlink()
        f.mkdir()
        if i % 2:
            (f / "x").write_bytes(b"")  # not empty: cannot be removed, so rebuilt every time
    builds, hits, rejects = map(int, _run(tmp_path).split())
    assert rejects == len(files) and builds == len(files) and hits == 0
    builds, hits, rejects = map(int, _run(tmp_path).split())
    assert builds == rejects == len(files) // 2  # the empty ones were replaced by files


def test_unwritable_cache_dir_works_from_memory_with_one_warning(tmp_path):
    if os.geteuid() != 0:
        cache = tmp_path / "ro"
        cache.mkdir(mode=0o500)
    else:  # root writes anywhere a mode allows; /proc refuses even root, and is owned by the process's user
        cache = "/proc/self/fdinfo"
    r = _run_raw(cache)
    assert r.returncode == 0, r.stderr
    builds, hits, rejects = map(int, r.stdout.split())
    assert builds > 1 and hits == 0 and rejects == 0
    warnings = [line for line in r.stderr.splitlines() if "torch_ocl: warning" in line]
    assert len(warnings) == 1 and "cannot write to the program cache" in warnings[0], r.stderr


def test_planted_files_are_never_loaded(tmp_path):
    """Cached binaries are native code on CPU devices: a file writable by
    group or others, or (as root) owned by another user, is refused."""
    _run(tmp_path)
    files = sorted(Path(tmp_path).glob("*.bin"))
    for i, f in enumerate(files):
        if i % 2 and os.geteuid() == 0:
            os.chown(f, 12345, 12345)
        else:
            f.chmod(0o666 if i % 4 == 0 else 0o620)
    r = _run_raw(tmp_path)
    assert r.returncode == 0, r.stderr
    builds, hits, rejects = map(int, r.stdout.split())
    assert hits == 0 and rejects == len(files) and builds == len(files)
    assert r.stderr.count("rejected program cache file") == len(files)


def test_permissive_cache_dir_is_refused_with_a_message(tmp_path):
    cache = tmp_path / "c"
    cache.mkdir()
    _run(cache)
    cache.chmod(0o777)
    r = _run_raw(cache)
    assert r.returncode == 0, r.stderr
    builds, hits, rejects = map(int, r.stdout.split())
    assert hits == 0 and builds > 0
    warnings = [line for line in r.stderr.splitlines() if "torch_ocl: warning" in line]
    assert len(warnings) == 1 and "writable by group or others" in warnings[0] and "chmod 700" in warnings[0]


def test_symlinked_cache_dir_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    _run(real)
    link = tmp_path / "link"
    link.symlink_to(real)
    r = _run_raw(link)
    assert r.returncode == 0, r.stderr
    builds, hits, rejects = map(int, r.stdout.split())
    assert hits == 0 and builds > 0
    assert "symbolic link" in r.stderr


def _stderr(cache, **env):
    e = dict(os.environ, TORCH_OCL_CACHE_DIR=str(cache), TORCH_OCL_FALLBACK="error", **env)
    r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_a_cold_cache_says_why_the_first_step_waits(tmp_path):
    """Building from source prints one line naming the device and the cache (runtime/program/
    build_notice.c): shown on a terminal, or with TORCH_OCL_BUILD_NOTICE=1; here the threshold is 0 s."""
    err = _stderr(tmp_path, TORCH_OCL_BUILD_NOTICE="1", TORCH_OCL_BUILD_NOTICE_S="0")
    lines = [ln for ln in err.splitlines() if "building OpenCL kernels for" in ln]
    assert len(lines) == 1, err  # then at most one line per 10 s of building
    assert "1 built, " in lines[0] and str(tmp_path) in lines[0] and "one-time cost" in lines[0]
    # a warm cache builds nothing and says nothing
    assert "building OpenCL kernels" not in _stderr(tmp_path, TORCH_OCL_BUILD_NOTICE="1", TORCH_OCL_BUILD_NOTICE_S="0")


def test_the_build_notice_stays_off_when_asked_and_off_a_terminal(tmp_path):
    assert "building OpenCL" not in _stderr(tmp_path / "a", TORCH_OCL_BUILD_NOTICE="0", TORCH_OCL_BUILD_NOTICE_S="0")
    assert "building OpenCL" not in _stderr(tmp_path / "b", TORCH_OCL_BUILD_NOTICE_S="0")  # stderr is a pipe


def test_exit_drops_unsaved_programs_and_the_next_process_builds_them(tmp_path):
    """On CPU devices a built program is written to disk once builds have
    been quiet for a while. A process that ends sooner does not wait for
    that: it exits at once, leaves no partial file, and the next process
    builds what is missing."""
    code = CODE.replace("_C._program_cache_flush()\n", "")
    r = _run_raw(tmp_path, code, TORCH_OCL_CACHE_SAVE="later")
    assert r.returncode == 0, r.stderr
    builds, hits, _ = map(int, r.stdout.split())
    assert builds > 0 and hits == 0
    assert not list(tmp_path.glob("*.bin")) and not list(tmp_path.glob("*.tmp.*"))
    builds2, hits2, rejects2 = map(int, _run(tmp_path).split())
    assert builds2 > 0 and hits2 == 0 and rejects2 == 0
    builds3, hits3, _ = map(int, _run(tmp_path).split())
    assert builds3 == 0 and hits3 > 0


def test_saving_now_writes_before_the_build_returns(tmp_path):
    code = CODE.replace("_C._program_cache_flush()\n", "")
    code = code.replace("s = _C._program_stats()\n", "s = _C._program_stats()\nassert s['disk_writes_pending'] == 0, s\n")
    r = _run_raw(tmp_path, code, TORCH_OCL_CACHE_SAVE="now")
    assert r.returncode == 0, r.stderr
    builds, _, _ = map(int, r.stdout.split())
    assert len(list(tmp_path.glob("*.bin"))) == builds
