"""Backward on the calling thread (python/torch_ocl/_autograd.py): importing
torch_ocl turns the autograd engine's device threads off on the importing
thread; TORCH_OCL_BACKWARD_THREADS=1 keeps them; gradients are the same
either way."""

import os
import subprocess
import sys

import torch

import torch_ocl  # noqa: F401

_PROBE = r"""
import threading, torch, torch_ocl
torch.manual_seed(0)
x = torch.randn(8, 4, device="ocl", requires_grad=True)
w = torch.randn(4, 3, device="ocl", requires_grad=True)
seen = []
h = x @ w
h.register_hook(lambda g: seen.append(threading.get_ident()))
(torch.tanh(h) * 2).sum().backward()
print(torch._C._is_multithreading_enabled(), seen[0] == threading.get_ident())
print(repr(x.grad.cpu().tolist()), repr(w.grad.cpu().tolist()))
"""


def _probe(**env):
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    flags, grads = out.stdout.strip().splitlines()
    return flags, grads


def test_backward_runs_on_the_calling_thread():
    flags, _ = _probe()
    assert flags == "False True"


def test_env_keeps_the_engines_device_thread():
    flags, _ = _probe(TORCH_OCL_BACKWARD_THREADS="1")
    assert flags == "True False"


def test_gradients_equal_with_and_without_the_device_thread():
    assert _probe()[1] == _probe(TORCH_OCL_BACKWARD_THREADS="1")[1]


def test_users_own_setting_wins():
    prev = torch._C._is_multithreading_enabled()
    try:
        with torch.autograd.set_multithreading_enabled(True):
            x = torch.ones(3, device="ocl", requires_grad=True)
            (x * x).sum().backward()
            assert torch._C._is_multithreading_enabled()
            assert x.grad.cpu().tolist() == [2.0, 2.0, 2.0]
    finally:
        torch.autograd.set_multithreading_enabled(prev)
