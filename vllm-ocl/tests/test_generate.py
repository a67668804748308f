"""LLM.generate on ocl: greedy equals HF transformers' CPU greedy token for token; seeded
sampling (temperature, top-k, top-p, min-p, penalties, logprobs) repeats; no op falls
back to the CPU; the process exits 0 (vLLM's shutdown empties the host cache)."""

import json

import pytest

from conftest import PROMPTS, hf_greedy, run_script


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_generate_matches_hf_greedy(tiny_model, arch):
    path = tiny_model(arch)
    proc = run_script("generate_child.py", path, "float32", json.dumps(PROMPTS),
                      env={"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "TORCH_OCL_FALLBACK": "error"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["empty_host_cache_calls"] >= 1  # vLLM's shutdown path ran, and the process still exits 0
    assert got["greedy"] == hf_greedy(path, got["prompt_ids"], 24)
    a, b, again = got["sampled"]
    assert a == b == again and len(a) == 12  # same seed, same prompt: same tokens, in a batch or alone
    assert got["logprobs"] == 12
    assert got["fallbacks"] == {}
    print(f"{arch}: {got['tokens_per_s']:.0f} tokens/s (8 x 64, greedy)")
