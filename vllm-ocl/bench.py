"""LLM.generate throughput on ocl: 8 requests x 64 new tokens, greedy, on the tiny Llama
of torch_ocl.serving.tiny (the workload of `python -m torch_ocl.bench --suite serving`).

    .venv-vllm/bin/python vllm-ocl/bench.py [--arch llama] [--dtype float32] [--repeats 3]

Prints tokens/s of each repeat and the median (engine start-up excluded)."""

import argparse
import os
import statistics
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="llama")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from torch_ocl.serving import tiny
    from vllm import LLM, SamplingParams

    path = tiny.build(os.path.join(tempfile.mkdtemp(), args.arch), args.arch)
    t0 = time.perf_counter()
    llm = LLM(model=path, dtype=args.dtype, max_model_len=512, max_num_seqs=args.requests,
              kv_cache_memory_bytes=64 << 20, seed=0)
    print(f"engine start: {time.perf_counter() - t0:.1f} s")
    params = SamplingParams(temperature=0, max_tokens=args.tokens, ignore_eos=True)
    prompts = [f"The quick brown fox {i}" for i in range(args.requests)]
    llm.generate(prompts, params, use_tqdm=False)  # warm-up: OpenCL kernels are built on first use
    rates = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        outs = llm.generate(prompts, params, use_tqdm=False)
        rates.append(sum(len(o.outputs[0].token_ids) for o in outs) / (time.perf_counter() - t0))
    print("tokens/s:", " ".join(f"{r:.0f}" for r in rates), f"median {statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
