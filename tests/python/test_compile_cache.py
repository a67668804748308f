"""AOTAutogradCache holding torch_ocl's compiled graphs (compile/artifact.py).

A second process compiling the same model loads the graphs AOTAutograd
traced and partitioned in the first, and lowers them again; its results
must equal the first's. It is on only with TORCH_OCL_COMPILE_CACHE=1;
entries are kept apart from other modes, and a graph that cannot be pickled
is compiled and left uncached."""

import json
import os
import subprocess
import sys

import pytest
import torch

import torch_ocl
from torch_ocl.compile import artifact

OCL = "ocl"

pytestmark = pytest.mark.skipif(not artifact.available(), reason="this torch cannot cache a backend's graphs")

# A train step of test_compile.Block, then a forward at another length
# (dynamic=True: the same graphs serve it). Prints what the caller checks.
_PROCESS = r"""
import json, sys, torch, torch.nn.functional as F, torch_ocl
from torch._dynamo.utils import counters
sys.path.insert(0, sys.argv[1])
from test_compile import Block
torch.manual_seed(0)
m = Block().to("ocl")
idx = torch.randint(0, 50, (2, 8), device="ocl")
cm = torch.compile(m, backend="ocl", dynamic=True, mode=sys.argv[2] or None)
out = cm(idx)
F.cross_entropy(out.flatten(0, 1), idx.flatten()).backward()
longer = cm(torch.randint(0, 50, (3, 11), device="ocl"))
torch.ocl.synchronize()
print(json.dumps({"out": out.detach().cpu().flatten().tolist()[:64], "longer": longer.detach().cpu().sum().item(),
                  "grads": [p.grad.cpu().sum().item() for p in m.parameters()],
                  "loads": torch_ocl.compile_stats()["cache_loads"], "graphs": torch_ocl.compile_stats()["graphs"],
                  "aot": dict(counters["aot_autograd"])}))
"""


def _run(tmp_path, mode="", **env_extra):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "aot"), TORCH_OCL_COMPILE_STRICT="1",
               TORCH_OCL_COMPILE_CACHE="1")
    env.update(env_extra)
    env = {k: v for k, v in env.items() if v is not None}
    r = subprocess.run([sys.executable, "-c", _PROCESS, os.path.dirname(__file__), mode], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_graphs_and_matches(tmp_path):
    first = _run(tmp_path)
    assert first["loads"] == 0 and first["aot"].get("autograd_cache_saved", 0) >= 1, first["aot"]
    second = _run(tmp_path)
    assert second["aot"].get("autograd_cache_hit", 0) >= 1, second["aot"]
    assert second["loads"] >= 2  # forward and backward at least, lowered again
    assert second["graphs"] == first["graphs"]
    assert second["out"] == first["out"] and second["grads"] == first["grads"]
    assert second["longer"] == first["longer"]


def test_modes_and_the_off_switch_keep_their_own_entries(tmp_path):
    _run(tmp_path)
    # reduce-overhead artifacts replay: not the default mode's entries
    ro = _run(tmp_path, mode="reduce-overhead")
    assert ro["loads"] == 0 and ro["aot"].get("autograd_cache_hit", 0) == 0, ro["aot"]
    for value in ("0", None):  # off, and unset: the default
        off = _run(tmp_path, TORCH_OCL_COMPILE_CACHE=value)
        assert off["loads"] == 0 and not any(k.startswith("autograd_cache") for k in off["aot"]), off["aot"]


def test_an_unpicklable_graph_is_compiled_and_not_saved(monkeypatch):
    from torch._dynamo.utils import counters

    monkeypatch.setenv("TORCH_OCL_COMPILE_CACHE", "1")  # off by default
    def refuse(gm, *a, **k):
        raise TypeError("planted: cannot pickle")

    monkeypatch.setattr(artifact.GraphPickler, "dumps", refuse)
    torch._dynamo.reset()
    counters.clear()
    x = torch.randn(5, device=OCL)
    y = torch.compile(lambda t: (t * 3).tanh() - 0.25, backend="ocl")(x)
    torch.testing.assert_close(y.cpu(), (x.cpu() * 3).tanh() - 0.25)
    assert counters["aot_autograd"].get("autograd_cache_saved", 0) == 0
    assert counters["aot_autograd"].get("autograd_cache_bypass", 0) >= 1, dict(counters["aot_autograd"])


def test_the_key_tag_names_torch_ocl_after_the_users(monkeypatch):
    monkeypatch.setenv("TORCH_OCL_COMPILE_CACHE", "1")
    before = torch.compiler.config.cache_key_tag
    with torch.compiler.config.patch(cache_key_tag="mine"):
        with artifact.caching({}, replay=False):
            tag = torch.compiler.config.cache_key_tag
        assert tag.startswith("mine+torch_ocl-") and torch.compiler.config.cache_key_tag == "mine"
    with torch.compiler.config.patch(cache_key_tag=""), artifact.caching({}, replay=True):
        assert torch.compiler.config.cache_key_tag.startswith("torch_ocl-")
        assert torch.compiler.config.cache_key_tag.endswith("-replay")
    assert torch.compiler.config.cache_key_tag == before
    assert torch_ocl.compile_stats()["cache_loads"] >= 0
