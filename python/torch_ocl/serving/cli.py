"""python -m torch_ocl serve: an OpenAI-compatible server on ocl (transformers serve, continuous batching).

With no MODEL it builds a tiny chat model offline (tiny.py) and serves that,
so it runs on a machine with no network. Continuous batching is on, with the
paged cache sized from the ocl device (see torch_ocl.serving.plan).
"""

from __future__ import annotations

import argparse
import os
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help="model folder or hub id (default: a tiny model built offline)")
    p.add_argument("--tiny", default="llama", choices=["llama", "qwen2", "gemma"],
                   help="architecture of the tiny model built when MODEL is not given")
    p.add_argument("--tiny-dir", default=os.path.join("build", "serve"),
                   help="where the tiny model is written (default: build/serve/<arch>)")
    p.add_argument("--device", default="ocl:0")
    p.add_argument("--dtype", default="auto", help="float32, bfloat16, float16 or auto (the model's)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--no-continuous-batching", dest="cb", action="store_false",
                   help="generate one request at a time (no paged cache)")
    p.add_argument("--no-native-attention", dest="native_attention", action="store_false",
                   help="keep transformers' sdpa over the packed batch (default: torch_ocl.paged_attention)")
    p.add_argument("--max-batch-tokens", type=int, default=None, help="tokens per step (default: sized here)")
    p.add_argument("--log-level", default="warning")


def run(args) -> int:
    import torch
    import torch_ocl  # noqa: F401
    from transformers import AutoConfig

    from . import plan, resolve_dtype

    model = args.model
    if model is None:
        from . import tiny

        model = os.path.abspath(os.path.join(args.tiny_dir, args.tiny))
        if not os.path.exists(os.path.join(model, "config.json")):
            tiny.build(model, args.tiny)
    kw = {}
    if args.cb:
        config = AutoConfig.from_pretrained(model)
        dtype = resolve_dtype(config, args.dtype)
        extra = {} if args.max_batch_tokens is None else {"max_batch_tokens": args.max_batch_tokens}
        s = plan(config, dtype, args.device, page_size=256, **extra)
        print(f"torch_ocl serve: {s.describe()}", flush=True)
        kw = dict(cb_num_blocks=s.num_blocks, cb_max_batch_tokens=s.max_batch_tokens)
        if args.native_attention:
            from . import attention

            attention.enable()
    from transformers.cli.serve import Serve

    print(f"torch_ocl serve: {model} on {args.device} at http://{args.host}:{args.port}/v1 "
          f"(continuous batching {'on' if args.cb else 'off'})", flush=True)
    Serve(force_model=model, device=args.device, dtype=args.dtype, continuous_batching=args.cb,
          host=args.host, port=args.port, log_level=args.log_level, **kw)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m torch_ocl serve", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
