"""Shared fixtures for the torch-ocl Python tests.

Run with two PoCL CPU devices so the multi-device tests run:
    POCL_DEVICES="pthread pthread" PYTHONPATH=python python -m pytest tests/python
"""

import atexit
import os
import shutil
import tempfile

import pytest
import torch
import torch_ocl  # noqa: F401  (registers the "ocl" device; import torch alone does it once installed)

# Where a test turns AOTAutogradCache on for compiled graphs
# (TORCH_OCL_COMPILE_CACHE=1, torch_ocl/compile/artifact.py), each session
# (each xdist worker) has its own empty cache directory.
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    _inductor_dir = tempfile.mkdtemp(prefix="tocl-test-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _inductor_dir
    atexit.register(shutil.rmtree, _inductor_dir, True)

def check_counted(counts, spared, fn):
    """fn() under a check counter (counts() -> (spared, waited), e.g.
    torch_ocl._C._index_check_counts): it must add exactly one check,
    spared or waited as the caller expects. Returns fn()'s result."""
    s0, w0 = counts()
    out = fn()
    s1, w1 = counts()
    assert (s1 - s0, w1 - w0) == ((1, 0) if spared else (0, 1))
    return out


ALL_DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.float64,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
]
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]


def dtype_id(dt):
    return str(dt).replace("torch.", "")


def ocl_kernels_run(fn):
    """The names of the OpenCL kernels fn launches, one entry per launch, as
    the profiler records them (its PrivateUse1 activity)."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.PrivateUse1] if hasattr(ProfilerActivity, "PrivateUse1") else [])
    with profile(activities=acts) as p:
        fn()
        torch.ocl.synchronize()
    return [e.name for e in p.events()]


def randn_seeded(*shape, dtype, seed=0):
    """Standard normal values drawn in float64 from a seeded generator, then
    cast (complex dtypes: independent real and imaginary parts)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        x = torch.complex(x, torch.randn(shape, generator=g, dtype=torch.float64))
    return x.to(dtype)


def make_cpu(shape, dtype, low=-50, high=100, seed=0):
    """Deterministic CPU tensor whose values fit every dtype in ALL_DTYPES.

    Floats get a fractional part (multiples of 1/8) so casts to ints truncate
    and casts to bfloat16/float16 round; uint8 gets non-negative values.
    """
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == torch.uint8:
        low = max(low, 0)
    if dtype.is_floating_point:
        v = torch.randint(low * 8, high * 8, shape, generator=g).double() / 8
        return v.to(dtype)
    return torch.randint(low, high, shape, generator=g).to(dtype)


@pytest.fixture(autouse=True, scope="session")
def _ocl_available():
    if not torch.ocl.is_available() or torch.ocl.device_count() < 1:
        pytest.skip("no OpenCL device available", allow_module_level=True)


@pytest.fixture(autouse=True)
def _guard_canaries():
    """Under TORCH_OCL_GUARD=1 (one CI run), a test fails if any device
    block's canaries changed while it ran: an out-of-bounds write."""
    if not torch_ocl._C._guard_enabled():
        yield
        return
    before = torch_ocl._C._guard_check()
    yield
    after = torch_ocl._C._guard_check()
    assert after == before, f"{after - before} out-of-bounds device writes (see the torch-ocl guard lines on stderr)"


@pytest.fixture(autouse=True)
def _lean_builds_complete():
    """On PoCL every program is first built behind only the builtins it names
    (runtime/program/lean_header.c); one that needed the whole opencl-c.h
    (a builtin the lean text left out) is built twice: a test fails if that
    happened while it ran (or, for a background build, just before)."""
    before = torch_ocl._C._program_stats()["lean_fallbacks"]
    yield
    after = torch_ocl._C._program_stats()["lean_fallbacks"]
    assert after <= before, (f"{after - before} program(s) failed behind the lean header and built behind the whole "
                             "opencl-c.h (TORCH_OCL_LOG=builds names them)")


@pytest.fixture
def fresh_dynamo():
    """torch.compile tests: Dynamo's caches and torch_ocl's compile counters
    start empty, and nothing compiled outlives the test."""
    torch._dynamo.reset()
    torch_ocl.reset_compile_stats()
    yield
    torch._dynamo.reset()


@pytest.fixture
def two_devices():
    if torch.ocl.device_count() < 2:
        pytest.skip("needs two ocl devices (run with POCL_DEVICES='pthread pthread')")
    return torch.device("ocl:0"), torch.device("ocl:1")


@pytest.fixture
def no_fallback():
    """Make any CPU fallback raise for the duration of the test, then restore the policy.

    Also checks afterwards that the fallback counters did not move.
    """
    old = torch_ocl.get_fallback_policy()
    torch_ocl.reset_fallback_stats()
    torch_ocl.set_fallback_policy("error")
    try:
        yield
    finally:
        torch_ocl.set_fallback_policy(old if old in ("warn", "error", "silent") else "warn")
    stats = torch_ocl.fallback_stats()
    assert not stats, f"ops fell back to the CPU: {stats}"


@pytest.fixture
def fallback_warn():
    """Policy 'warn' for a test that legitimately uses fallback ops; restored afterwards."""
    old = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("warn")
    yield
    torch_ocl.set_fallback_policy(old)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long matrix runs, skipped unless TORCH_OCL_SLOW=1 "
                                       "(make test-serving sets it)")


def pytest_collection_modifyitems(config, items):
    import os

    if os.environ.get("TORCH_OCL_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set TORCH_OCL_SLOW=1 (make test-serving)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
