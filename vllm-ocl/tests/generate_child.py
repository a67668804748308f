"""Child process of test_generate.py: vLLM's LLM.generate on ocl, results as JSON on the
last line of stdout. The engine runs in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0),
so its shutdown (vLLM's cleanup calls torch.accelerator.empty_host_cache()) decides this
process's exit code. The child ends as vLLM's own tests do: the engine deleted, then
cleanup_dist_env_and_memory(), which calls empty_host_cache() after the runner's pinned
host-to-device copies (it crashed torch-ocl once)."""

import json
import sys
import time

from vllm import LLM, SamplingParams
from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

import torch
import torch_ocl

# Count vLLM's calls to empty_host_cache() (each still runs the real one).
calls = []
_empty_host_cache = torch.accelerator.empty_host_cache
torch.accelerator.empty_host_cache = lambda: (calls.append(1), _empty_host_cache())[1]

path, dtype, prompts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
llm = LLM(model=path, dtype=dtype, max_model_len=256, max_num_seqs=8, kv_cache_memory_bytes=32 << 20, seed=0)
greedy = llm.generate(prompts, SamplingParams(temperature=0, max_tokens=24, ignore_eos=True), use_tqdm=False)
sampled = SamplingParams(temperature=0.8, top_k=20, top_p=0.9, min_p=0.05, repetition_penalty=1.2,
                         presence_penalty=0.1, frequency_penalty=0.1, seed=7, max_tokens=12, logprobs=2,
                         ignore_eos=True)
s1 = llm.generate([prompts[0]] * 2, sampled, use_tqdm=False)
s2 = llm.generate(prompts[:1], sampled, use_tqdm=False)
# Throughput: 8 requests x 64 tokens, greedy, as python -m torch_ocl.bench --suite serving.
t0 = time.perf_counter()
burst = llm.generate([prompts[0]] * 8, SamplingParams(temperature=0, max_tokens=64, ignore_eos=True), use_tqdm=False)
seconds = time.perf_counter() - t0
result = {
    "prompt_ids": [o.prompt_token_ids for o in greedy],
    "greedy": [list(o.outputs[0].token_ids) for o in greedy],
    "sampled": [list(o.outputs[0].token_ids) for o in s1 + s2],
    "logprobs": len(s1[0].outputs[0].logprobs),
    "tokens_per_s": sum(len(o.outputs[0].token_ids) for o in burst) / seconds,
    "fallbacks": {str(k): v for k, v in torch_ocl.fallback_stats().items()},
}
del llm
cleanup_dist_env_and_memory()
result["empty_host_cache_calls"] = len(calls)
print(json.dumps(result))
