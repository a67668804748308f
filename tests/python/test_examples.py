"""The examples in examples/ train on ocl like on the CPU: same seed, same
initial weights and batches, short settings, no CPU fallback allowed.

Float32 runs agree closely at first and drift slowly with the different
summation orders of the two devices' kernels, so the tolerance grows with
the step; the bfloat16 autocast run is compared more loosely."""

import json
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

import train_cnn  # noqa: E402
import train_gpt  # noqa: E402
import train_mlp  # noqa: E402


def assert_curves_match(ocl, cpu, rtol):
    assert len(ocl) == len(cpu)
    for step, (a, b) in enumerate(zip(ocl, cpu)):
        assert abs(a - b) <= rtol * (1 + step) * abs(b) + 1e-4, f"step {step}: ocl {a} vs cpu {b}\n{ocl}\n{cpu}"


def test_mlp_matches_cpu(no_fallback):
    ocl, acc_ocl = train_mlp.train("ocl", steps=20, progress=False)
    cpu, acc_cpu = train_mlp.train("cpu", steps=20, progress=False)
    assert_curves_match(ocl, cpu, 1e-4)
    assert abs(acc_ocl - acc_cpu) < 0.02


def test_cnn_matches_cpu(no_fallback):
    ocl, acc_ocl = train_cnn.train("ocl", "test", progress=False, eval_images=64)
    cpu, acc_cpu = train_cnn.train("cpu", "test", progress=False, eval_images=64)
    assert_curves_match(ocl, cpu, 1e-3)
    assert abs(acc_ocl - acc_cpu) <= 0.05


def test_gpt_float32_matches_cpu(no_fallback):
    ocl = train_gpt.train("ocl", "test", amp=False, progress=False)
    cpu = train_gpt.train("cpu", "test", amp=False, progress=False)
    assert_curves_match(ocl, cpu, 1e-4)


def test_gpt_bfloat16_autocast_matches_cpu(no_fallback):
    ocl = train_gpt.train("ocl", "test", amp=True, progress=False)
    cpu = train_gpt.train("cpu", "test", amp=True, progress=False)
    # bfloat16 keeps 8 bits of mantissa: the two devices round differently.
    assert_curves_match(ocl, cpu, 1e-2)


# torch.compile(backend="ocl"): the same training, compiled, against eager on
# ocl with the tolerances above (compiled graphs run the same kernels, but
# AOTAutograd's decompositions and the partitioner change some summation
# orders).
def test_mlp_compiled_matches_eager(no_fallback):
    torch._dynamo.reset()
    comp, acc_c = train_mlp.train("ocl", steps=20, progress=False, compile=True)
    eager, acc_e = train_mlp.train("ocl", steps=20, progress=False)
    assert_curves_match(comp, eager, 1e-4)
    assert abs(acc_c - acc_e) < 0.02


def test_cnn_compiled_matches_eager(no_fallback):
    torch._dynamo.reset()
    comp, acc_c = train_cnn.train("ocl", "test", progress=False, eval_images=64, compile=True)
    eager, acc_e = train_cnn.train("ocl", "test", progress=False, eval_images=64)
    assert_curves_match(comp, eager, 1e-3)
    assert abs(acc_c - acc_e) <= 0.05


@pytest.mark.parametrize("amp,rtol", [(False, 1e-4), (True, 1e-2)], ids=["float32", "bfloat16_autocast"])
def test_gpt_compiled_matches_eager(no_fallback, amp, rtol):
    torch._dynamo.reset()
    comp = train_gpt.train("ocl", "test", amp=amp, progress=False, compile=True)
    eager = train_gpt.train("ocl", "test", amp=amp, progress=False)
    assert_curves_match(comp, eager, rtol)


def test_gpt_profile_writes_a_trace(tmp_path, capsys):
    path = tmp_path / "gpt.json"
    plain = train_gpt.train("ocl", "test", amp=False, progress=False)
    profiled = train_gpt.train("ocl", "test", amp=False, progress=False, profile_path=str(path))
    assert profiled == plain  # profiling a step changes no result
    out = capsys.readouterr().out
    assert "Self OCL" in out and str(path) in out
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert any(k["name"].startswith("tocl_gemm") for k in kernels)
    assert any(e.get("cat") == "ac2g" for e in events)
