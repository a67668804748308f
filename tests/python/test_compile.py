"""torch.compile on ocl: backend="ocl" and the default backend, against eager
on ocl and the CPU. Dynamo and AOTAutograd run as users get them."""

import copy
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl

OCL = "ocl"


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))


class Block(nn.Module):
    """A GPT-style block: embedding, causal attention, layer norms, MLP."""

    def __init__(self, vocab=50, d=32, heads=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab)
        self.heads = heads

    def forward(self, idx):
        x = self.emb(idx)
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return self.head(x)


def _close(a, b, tol=1e-5):
    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=tol, atol=tol)


def test_backend_ocl_forward_backward_match_eager():
    m = _mlp().to(OCL)
    mc = copy.deepcopy(m)
    cm = torch.compile(mc, backend="ocl")
    x = torch.randn(5, 8, device=OCL)
    y, yc = m(x), cm(x)
    _close(yc, y)
    y.square().sum().backward()
    yc.square().sum().backward()
    for p, pc in zip(m.parameters(), mc.parameters()):
        _close(pc.grad, p.grad)
    s = torch_ocl.compile_stats()
    assert s["graphs"] == 2 and s["calls"] == 2  # forward and backward, each run once
    assert s["nodes"] > 10 and s["fallback_nodes"] == 0
    assert s["pointwise_nodes"] > 0 and s["native_nodes"] > 0


def test_default_backend_compiles_through_ocl():
    m = _mlp().to(OCL)
    x = torch.randn(3, 8, device=OCL)
    y = torch.compile(m)(x)  # Inductor has no ocl code generator: the graph must come here
    assert y.device.type == OCL
    _close(y, m(x))
    assert torch_ocl.compile_stats()["graphs"] >= 1


def test_cpu_graphs_are_not_routed():
    from torch_ocl.compile.routing import _on_ocl

    assert not _on_ocl([torch.ones(2), 3])
    assert _on_ocl([torch.ones(2), torch.ones(2, device=OCL)])


def _train(model, steps, compiled):
    torch.manual_seed(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    f = torch.compile(model, backend="ocl") if compiled else model
    losses = []
    x = torch.randn(16, 8, device=OCL)
    t = torch.randn(16, 4, device=OCL)
    for _ in range(steps):
        loss = F.mse_loss(f(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_loss_curve_matches_eager():
    eager = _train(_mlp().to(OCL), 6, compiled=False)
    comp = _train(_mlp().to(OCL), 6, compiled=True)
    assert comp == pytest.approx(eager, rel=1e-4, abs=1e-5)
    assert eager[-1] < eager[0]


def _program_builds():
    return torch_ocl._C._program_stats()["builds"]


@pytest.mark.parametrize("how", ["dynamic", "mark_dynamic"])
def test_dynamic_shapes_one_compile_no_new_programs(how):
    torch.manual_seed(0)
    m = Block().to(OCL)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    cm = torch.compile(m, backend="ocl", dynamic=True if how == "dynamic" else None)
    sizes = [(b, t) for b in (2, 3, 5) for t in (6, 9, 12, 17)]
    builds_after_first = None
    for i, (b, t) in enumerate(sizes):
        idx = torch.randint(0, 50, (b, t), device=OCL)
        if how == "mark_dynamic":
            torch._dynamo.mark_dynamic(idx, 0)
            torch._dynamo.mark_dynamic(idx, 1)
        ref = m(idx)
        out = cm(idx)
        _close(out, ref, 1e-4)
        F.cross_entropy(out.flatten(0, 1), idx.flatten()).backward()
        opt.step()
        opt.zero_grad()
        if i == 1:  # the second size: eager and compiled kernels of this shape family exist
            torch_ocl.fusion.wait_for_builds()
            builds_after_first = _program_builds()
    torch_ocl.fusion.wait_for_builds()
    s = torch_ocl.compile_stats()
    assert s["graphs"] == 2, s  # one forward and one backward graph for all 12 sizes
    assert _program_builds() == builds_after_first, "a new size built OpenCL programs"


def test_graph_break_and_disable():
    @torch.compiler.disable
    def host_side(x):
        return x * 2

    def f(x):
        y = torch.sin(x) + 1
        print("", end="")  # a graph break
        z = host_side(y)
        return torch.cos(z).sum()

    x = torch.randn(10, device=OCL)
    want = f(x)
    got = torch.compile(f, backend="ocl")(x)
    _close(got, want)
    assert torch_ocl.compile_stats()["graphs"] >= 2


def test_fullgraph_and_no_grad():
    m = _mlp().to(OCL)
    x = torch.randn(4, 8, device=OCL)
    cm = torch.compile(m, backend="ocl", fullgraph=True)
    with torch.no_grad():
        y = cm(x)
    assert not y.requires_grad
    _close(y, m(x))


def test_input_mutation_and_batch_norm_running_stats():
    def f(x, buf):
        buf.add_(x.sum())  # mutates an input
        return x * 2

    x = torch.randn(6, device=OCL)
    buf = torch.zeros(1, device=OCL)
    torch.compile(f, backend="ocl")(x, buf)
    _close(buf, x.sum().reshape(1))

    torch.manual_seed(0)
    bn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).to(OCL).train()
    bc = copy.deepcopy(bn)
    cb = torch.compile(bc, backend="ocl")
    for _ in range(3):
        x = torch.randn(2, 3, 8, 8, device=OCL)
        _close(cb(x), bn(x), 1e-4)
    _close(bc[1].running_mean, bn[1].running_mean, 1e-5)
    _close(bc[1].running_var, bn[1].running_var, 1e-5)
    assert int(bc[1].num_batches_tracked) == 3


def test_views_and_aliasing_outputs():
    def f(x):
        v = x.view(2, 8)
        return v, v.t(), x[3:9]

    x = torch.arange(16.0, device=OCL)
    a, b, c = torch.compile(f, backend="ocl")(x)
    _close(a, x.view(2, 8))
    _close(b, x.view(2, 8).t())
    _close(c, x[3:9])


def test_dropout_statistics_and_seed():
    def f(x):
        return F.dropout(x, p=0.3, training=True)

    cf = torch.compile(f, backend="ocl")
    x = torch.ones(20000, device=OCL)
    torch.manual_seed(123)
    a = cf(x)
    torch.manual_seed(123)
    b = cf(x)
    assert torch.equal(a.cpu(), b.cpu())  # the same seed gives the same mask
    zeros = (a == 0).float().mean().item()
    assert abs(zeros - 0.3) < 0.02
    kept = a[a != 0]
    _close(kept, torch.full_like(kept, 1 / 0.7))


def test_control_flow_on_sizes():
    def f(x):
        if x.shape[0] > 4:
            return x.sum(0)
        return x.mean(0)

    cf = torch.compile(f, backend="ocl", dynamic=True)
    for n in (3, 6, 9):
        x = torch.randn(n, 5, device=OCL)
        _close(cf(x), f(x))


def test_autocast_inside_compiled_region():
    m = _mlp().to(OCL)

    def f(x):
        with torch.autocast(OCL, dtype=torch.bfloat16):
            return m(x)

    x = torch.randn(4, 8, device=OCL)
    y = torch.compile(f, backend="ocl")(x)
    assert y.dtype == torch.bfloat16
    _close(y.float(), f(x).float(), 1e-2)


def test_compiled_optimizer_step_matches_eager():
    torch.manual_seed(0)
    pe = [torch.randn(5, 3, device=OCL, requires_grad=True) for _ in range(3)]
    pc = [p.detach().clone().requires_grad_() for p in pe]
    oe = torch.optim.AdamW(pe, lr=0.01)
    oc = torch.optim.AdamW(pc, lr=0.01)
    step = torch.compile(oc.step, backend="ocl")
    for _ in range(3):
        for a, b in zip(pe, pc):
            g = torch.randn_like(a)
            a.grad, b.grad = g, g.clone()
        oe.step()
        step()
    for a, b in zip(pe, pc):
        _close(b, a, 1e-5)


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_modes_are_accepted(mode):
    m = _mlp().to(OCL)
    x = torch.randn(2, 8, device=OCL)
    _close(torch.compile(m, mode=mode)(x), m(x))


def test_lowering_error_falls_back_or_raises(monkeypatch):
    from torch_ocl.compile import lowering

    def broken(gm):
        raise ValueError("planted")

    monkeypatch.setattr(lowering, "classify", broken)
    x = torch.randn(4, device=OCL)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = torch.compile(lambda t: t.sin() * 2, backend="ocl")(x)
    _close(y, x.sin() * 2)
    assert any("planted" in str(e.message) for e in w)
    assert torch_ocl.compile_stats()["lowering_errors"] == 1
    torch._dynamo.reset()
    monkeypatch.setenv("TORCH_OCL_COMPILE_STRICT", "1")
    with pytest.raises(Exception, match="planted"):
        torch.compile(lambda t: t.cos() * 3, backend="ocl")(x)


# A fresh process compiling a GPT-style train step: with the program cache
# the first process left, it builds no OpenCL program.
_SECOND_PROCESS = r"""
import json, sys, time, torch, torch.nn.functional as F, torch_ocl
sys.path.insert(0, sys.argv[1])
from test_compile import Block
torch.manual_seed(0)
m = Block().to("ocl")
opt = torch.optim.SGD(m.parameters(), lr=0.01)
idx = torch.randint(0, 50, (2, 8), device="ocl")
t0 = time.perf_counter()
out = torch.compile(m, backend="ocl")(idx)
F.cross_entropy(out.flatten(0, 1), idx.flatten()).backward()
opt.step()
torch.ocl.synchronize()
torch_ocl.fusion.wait_for_builds()
print(json.dumps({"seconds": time.perf_counter() - t0, "builds": torch_ocl._C._program_stats()["builds"],
                  "graphs": torch_ocl.compile_stats()["graphs"]}))
torch_ocl.save_program_cache()  # CPU devices save when builds go quiet; this process ends first
"""


def test_second_process_builds_no_program(tmp_path):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, TORCH_OCL_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _SECOND_PROCESS, os.path.dirname(__file__)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["graphs"] == second["graphs"] == 2  # forward and backward
    assert first["builds"] > 0, "the first process should have built its kernels"
    assert second["builds"] == 0, f"the second process built {second['builds']} OpenCL programs"
