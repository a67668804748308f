"""On PoCL, programs are built behind only the builtin declarations their
source names (runtime/program/lean_header.c). A builtin the lean text left
out makes the build fail there and build again behind the whole header
(counted as a fallback): correct, but twice the work. A fresh process that
trains small models and runs many kinds of op must build every program lean,
with no fallback."""

import os
import subprocess
import sys

import pytest
import torch
import torch_ocl

WORKLOAD = r"""
import torch, torch.nn as nn, torch.nn.functional as F, torch_ocl
from torch_ocl import _C
torch.manual_seed(0)
dev = 'ocl'
# a GPT-style block: embedding, layer norm, attention, GELU MLP, cross-entropy, AdamW
emb = nn.Embedding(64, 32).to(dev)
blk = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation='gelu', batch_first=True, norm_first=True).to(dev)
head = nn.Linear(32, 64).to(dev)
ps = list(emb.parameters()) + list(blk.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(ps, lr=1e-3)
tok = torch.randint(0, 64, (2, 16), device=dev)
for _ in range(2):
    logits = head(blk(emb(tok), is_causal=True, src_mask=nn.Transformer.generate_square_subsequent_mask(16, device=dev)))
    F.cross_entropy(logits.flatten(0, 1), tok.flatten()).backward()
    opt.step(); opt.zero_grad()
# a CNN step: conv, batch norm, pooling, SGD with momentum
cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(8, 8, 3, stride=2, groups=8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)).to(dev)
sgd = torch.optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(4, 3, 16, 16, device=dev).to(memory_format=torch.channels_last)
F.cross_entropy(cnn(x), torch.tensor([0, 1, 2, 3], device=dev)).backward(); sgd.step()
# pointwise math over dtypes, reductions, scans, sorting, indexing
for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
    a = torch.rand(37, 5, device=dev, dtype=dt) + 0.1
    b = torch.randn(37, 5, device=dev, dtype=dt)
    r = [a.log1p(), a.lgamma(), a.digamma(), torch.atan2(a, b), a.pow(b), b.round(), b.sign(), b.erfinv().nan_to_num(),
         torch.special.i0(a), b.sigmoid(), F.silu(b), F.softplus(b), b.clamp(-0.5, 0.5), torch.where(b > 0, a, b),
         b.softmax(-1), b.log_softmax(0), b.cumsum(0), b.amax(1), b.var(0), b.norm(dim=1), b.sort(0)[0], b.topk(2, 1)[0],
         torch.remainder(b, a), torch.fmod(b, a), b.floor_divide(a), torch.hypot(a, b), b.abs().sqrt().rsqrt()]
    torch.ocl.synchronize()
i = torch.randint(-50, 50, (64,), device=dev)
r = [i // 7, i % 7, i.bitwise_and(5), i << 2, i.abs(), i.float().div(3).trunc(), i.sum(),
     i.to(torch.int8).clamp(-3, 3), i.argmax(), i.cummax(0)[0]]
x = torch.randn(8, 8, device=dev)
r = [x @ x.t(), torch.linalg.solve(x + 8 * torch.eye(8, device=dev), x), torch.fft.rfft(x).abs(), x[i.abs() % 8].sum(),
     x.index_add(0, torch.arange(8, device=dev), x), F.interpolate(x[None, None], scale_factor=2, mode='bilinear')]
torch.ocl.synchronize()
s = _C._program_stats()
print(s['builds'], s['lean_builds'], s['lean_fallbacks'])
"""


def _on_pocl():
    return "Portable Computing Language" in torch_ocl._C._device_props(0)["platform_name"]


def _header_found():
    # where lean_header.c looks for PoCL's opencl-c.h
    dirs = [os.environ.get("TORCH_OCL_POCL_INCLUDE", ""), "/usr/share/pocl/include", "/usr/local/share/pocl/include"]
    return any(d and os.path.exists(os.path.join(d, "opencl-c.h")) for d in dirs)


@pytest.mark.skipif(not _on_pocl(), reason="the lean header is for PoCL only")
@pytest.mark.skipif(not _header_found(), reason="PoCL's opencl-c.h is not where the runtime looks")
def test_models_and_ops_build_lean_without_fallback(tmp_path):
    env = dict(os.environ, TORCH_OCL_CACHE_DIR=str(tmp_path), TORCH_OCL_FALLBACK="error")
    r = subprocess.run([sys.executable, "-c", WORKLOAD], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    builds, lean, fallbacks = map(int, r.stdout.split()[-3:])
    assert builds > 20, r.stdout
    assert fallbacks == 0, "programs that needed the whole opencl-c.h: run with TORCH_OCL_LOG=builds"
    assert lean == builds


@pytest.mark.skipif(not _on_pocl(), reason="the lean header is for PoCL only")
def test_switched_off_builds_behind_the_whole_header(tmp_path):
    code = (
        "import torch, torch_ocl\nfrom torch_ocl import _C\n"
        "x = torch.arange(10.0, device='ocl')\nassert (x.exp().log() - x).abs().max().item() < 1e-5\n"
        "s = _C._program_stats()\nprint(s['builds'], s['lean_builds'])\n"
    )
    env = dict(os.environ, TORCH_OCL_CACHE_DIR=str(tmp_path), TORCH_OCL_LEAN_HEADER="0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    builds, lean = map(int, r.stdout.split()[-2:])
    assert builds > 0 and lean == 0
