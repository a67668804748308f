"""Shared pieces of the vllm-ocl tests: tiny models built offline, HF CPU greedy references,
free loopback ports. Every vLLM engine runs in a child process with a hard timeout, so a
crash (or a crash at exit) is a failed test, not a dead test session."""

import os
import socket
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPTS = ["The quick brown fox", "A tensor is a", "user: hello, how are you today?", "0123456789 +"]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """tiny_model(arch) -> a folder with a tiny chat model of that architecture
    (torch_ocl.serving.tiny: offline tokenizer, random weights from a fixed seed)."""
    from torch_ocl.serving import tiny

    root = tmp_path_factory.mktemp("models")
    built = {}

    def get(arch="llama"):
        if arch not in built:
            built[arch] = tiny.build(str(root / arch), arch)
        return built[arch]

    return get


def hf_greedy(path, prompt_ids, max_new_tokens, dtype=torch.float32):
    """HF transformers greedy continuation on the CPU, EOS ignored."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    out = []
    for ids in prompt_ids:
        x = torch.tensor([ids])
        y = model.generate(x, max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=None, pad_token_id=0)
        out.append(y[0, x.shape[1]:].tolist())
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_script(name, *args, timeout=420, env=None):
    """Run tests/<name> in a fresh interpreter; returns the CompletedProcess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, os.path.join(HERE, name), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=full_env)
