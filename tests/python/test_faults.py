"""Injected faults leave the process usable: running out of device memory
in the middle of a training step raises torch.OutOfMemoryError, and the same
script goes on with a smaller batch and matches the CPU. (Build failures:
test_build_failures.py; cache files: test_program_cache.py.)"""

import os
import subprocess
import sys
import textwrap

OOM_SCRIPT = """
import copy, gc, torch, torch_ocl

torch.manual_seed(0)
cpu = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 256))
dev = copy.deepcopy(cpu).to('ocl')
opt_cpu = torch.optim.Adam(cpu.parameters(), lr=1e-3)
opt_dev = torch.optim.Adam(dev.parameters(), lr=1e-3)
X, Y = torch.randn(8192, 256), torch.randn(8192, 256)

def step(model, opt, x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()

def small(i):
    return X[i * 128:(i + 1) * 128], Y[i * 128:(i + 1) * 128]

losses = []
for i in range(2):
    losses.append((step(cpu, opt_cpu, *small(i)), step(dev, opt_dev, *(t.to('ocl') for t in small(i)))))
base = torch.ocl.memory_allocated()
try:  # the whole data set at once does not fit under TORCH_OCL_MEMORY_LIMIT
    step(dev, opt_dev, X.to('ocl'), Y.to('ocl'))
    raise SystemExit('expected an out-of-memory error')
except torch.OutOfMemoryError as e:
    assert 'out of memory' in str(e), e
opt_dev.zero_grad(set_to_none=True)
gc.collect()
leaked = torch.ocl.memory_allocated() - base
for i in range(2, 6):
    losses.append((step(cpu, opt_cpu, *small(i)), step(dev, opt_dev, *(t.to('ocl') for t in small(i)))))
worst = max(abs(a - b) for a, b in losses)
pworst = max((p.detach().cpu() - q.detach()).abs().max().item() for p, q in zip(dev.parameters(), cpu.parameters()))
print(len(losses), leaked <= 0, worst < 1e-4, pworst < 1e-4, torch.ocl.memory_stats()['num_ooms'] >= 1)
"""


def test_oom_mid_training_step_then_smaller_batch_matches_cpu():
    env = dict(os.environ, TORCH_OCL_MEMORY_LIMIT="40M", TORCH_OCL_FALLBACK="error")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(OOM_SCRIPT)], capture_output=True, text=True,
                       env=env, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["6", "True", "True", "True", "True"], r.stdout + r.stderr
