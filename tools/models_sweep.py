"""torchvision classification models on `ocl` against the CPU; with tools/hf_sweep.py, `make models`.

Each model is built without weights (seeded, 10 classes), deep-copied to ocl
and run at the smallest input its architecture accepts:

  forward    eval-mode logits
  train step train-mode forward, cross-entropy loss, backward and one SGD
             (momentum) step: loss, every parameter gradient, the updated
             parameters and the batch-norm running statistics

Both are compared with the same model in float64 on the CPU, beside the CPU
in float32: a tensor passes if ocl's error is within a relative tolerance of
the float64 value or no more than CPU_FACTOR times the CPU float32's own
error (see judge(); some models at these tiny sizes are ill-conditioned in
train mode, and float32 on the CPU is itself off by percents there).

Dropout and stochastic depth are set to p=0: their random masks cannot match
the CPU's. Batch norm in train mode is deterministic, so it stays. The CPU
fallback is 'silent': a model that needs an op without an ocl kernel still
passes if its numbers are right, and the ops that fell back are listed.
Times are of a second (warm) eval forward + train step on each device; the
first ocl run, which includes compiling kernels, is in the JSON.

The Hugging Face transformers sweep (tools/hf_sweep.py) runs after these,
into the same report (its own section, and the "transformers" key of the JSON).

Usage:
  python tools/models_sweep.py [--models resnet18,vit_tiny] [--timeout 600] \
      [--hf-models gpt2,bert|none] [--hf-timeout 300] [--markdown docs/models.md] [--json docs/models.json]
"""

import argparse
import copy
import json
import os
import platform
import signal
import subprocess
import sys
import time
import traceback
import warnings

import torch
import torch.nn as nn
import torch_ocl
import torchvision
from torchvision import models as tvm
from torchvision.ops import StochasticDepth

import compiled_check  # noqa: E402  (tools/, as hf_sweep)
import hf_sweep  # tools/ is on sys.path: this file's folder, or put there by the test that imports it

NUM_CLASSES = 10
BATCH = 4
LOGIT_RTOL = 1e-4  # eval logits: norm of the error over the norm of the float64 logits
GRAD_RTOL = 1e-3   # loss, gradients, updated parameters, batch-norm statistics: the same, per tensor
GRAD_ATOL = 1e-6   # of the largest norm in the group (gradients whose true value is ~0)
CPU_FACTOR = 10    # or: no more than this many times the CPU float32's own error
# Also run the eval forward under torch.compile(backend="ocl"); --no-compiled
# or TOCL_SWEEP_COMPILED=0 turns it off (an environment variable, so the
# Hugging Face sweep's worker processes see it too).
COMPILED = os.environ.get("TOCL_SWEEP_COMPILED", "1") != "0"


def _vit_tiny():
    return tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                                 mlp_dim=128, num_classes=NUM_CLASSES)


def _maxvit_tiny():
    # maxvit_t fixes partition_size=7, so it needs 224x224; the same blocks, smaller.
    return tvm.MaxVit(input_size=(32, 32), stem_channels=16, partition_size=4, block_channels=[32, 64],
                      block_layers=[1, 1], head_dim=16, stochastic_depth_prob=0.0, num_classes=NUM_CLASSES)


def _tv(name, **kw):
    return lambda: getattr(tvm, name)(weights=None, num_classes=NUM_CLASSES, **kw)


# name -> (constructor, input side, note). The side is the smallest the
# architecture accepts (or a multiple of its downsampling near it).
MODELS = {
    "resnet18": (_tv("resnet18"), 32, ""),
    "resnet50": (_tv("resnet50"), 32, ""),
    "resnext50_32x4d": (_tv("resnext50_32x4d"), 32, ""),
    "wide_resnet50_2": (_tv("wide_resnet50_2"), 32, ""),
    "mobilenet_v2": (_tv("mobilenet_v2"), 32,
                     "train at this seed: one ReLU6 input of features.18 is -5.5e-5 in float64 and carries a "
                     "float32 error of 1.9e-4 on the CPU and on ocl alike; ocl's lands above 0, so one gradient "
                     "element passes the ReLU6 that the float64 run blocks, and every earlier layer inherits it "
                     "(traced 2026-12-05)"),
    "mobilenet_v3_small": (_tv("mobilenet_v3_small"), 32, ""),
    "mobilenet_v3_large": (_tv("mobilenet_v3_large"), 32, ""),
    "efficientnet_b0": (_tv("efficientnet_b0"), 32, ""),
    "regnet_x_400mf": (_tv("regnet_x_400mf"), 32, ""),
    "regnet_y_400mf": (_tv("regnet_y_400mf"), 32, ""),
    "densenet121": (_tv("densenet121"), 32, ""),
    "squeezenet1_1": (_tv("squeezenet1_1"), 32, ""),
    "shufflenet_v2_x0_5": (_tv("shufflenet_v2_x0_5"), 32, ""),
    "mnasnet0_5": (_tv("mnasnet0_5"), 32, ""),
    "vgg11_bn": (_tv("vgg11_bn"), 32, ""),
    "alexnet": (_tv("alexnet"), 64, "needs at least 63x63"),
    "googlenet": (_tv("googlenet", aux_logits=False, init_weights=True), 32, "without the auxiliary heads"),
    "convnext_tiny": (_tv("convnext_tiny"), 32, ""),
    "vit_tiny": (_vit_tiny, 32, "VisionTransformer(image_size=32, patch 8, 2 layers, 4 heads, dim 64)"),
    "vit_b_16": (_tv("vit_b_16", image_size=32), 32, "image_size=32 (4 patches)"),
    "swin_t": (_tv("swin_t"), 32, ""),
    "maxvit_tiny": (_maxvit_tiny, 32, "MaxVit(32x32, partition 4, channels [32, 64], 1+1 blocks)"),
}


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def _no_randomness(model):
    for m in model.modules():
        if isinstance(m, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, StochasticDepth)):
            m.p = 0.0
        elif hasattr(m, "stochastic_depth_prob"):
            m.stochastic_depth_prob = 0.0
        # torchvision passes attention dropout to the functional API as a float.
        for attr in ("dropout", "attention_dropout"):
            if isinstance(getattr(m, attr, None), float):
                setattr(m, attr, 0.0)
    return model


def _logits(out):
    return out.logits if hasattr(out, "logits") else out


def _sync(device, t):
    if device != "cpu":
        t.sum().item()  # waits for the device


TRAIN_GROUPS = ("loss", "grad", "updated param", "buffer")  # what a train step is judged on


def _run(model, x, y, device):
    """Eval forward then one train step; returns ({group: {name: tensor}}, seconds)."""
    model.eval()
    t0 = time.perf_counter()
    with torch.no_grad():
        logits = _logits(model(x))
    _sync(device, logits)
    t_fwd = time.perf_counter() - t0
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    opt.zero_grad()
    t1 = time.perf_counter()
    loss = nn.functional.cross_entropy(_logits(model(x)), y)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    opt.step()
    _sync(device, next(model.parameters()))
    t_train = time.perf_counter() - t1
    out = {"logits": {"logits": logits}, "loss": {"loss": loss.detach()}, "grad": grads,
           "updated param": {n: p.detach() for n, p in model.named_parameters()},
           "buffer": {n: b.detach() for n, b in model.named_buffers() if b.is_floating_point()}}
    out = {g: {n: t.cpu().double() for n, t in d.items()} for g, d in out.items()}
    return out, t_fwd + t_train


def judge(actual, cpu, ref, what, rtol):
    """Compares ocl and the CPU in float32 with a float64 CPU reference.

    A tensor passes when ocl's error (norm of the difference from float64) is
    within rtol of the reference's norm (plus GRAD_ATOL of the group's largest
    norm, for tensors whose true value is ~0, e.g. the bias before a batch
    norm), or within CPU_FACTOR times the CPU's own float32 error: at 32x32 the
    last stages see 1x1 maps, batch norm then normalizes 4 values and some
    models are so ill-conditioned that float32 on the CPU is off by percents.
    Returns (worst error / tolerance, ocl error / CPU error over the group,
    a message naming the worst tensor if it failed or "").
    """
    if set(actual) != set(ref):
        return float("inf"), float("inf"), f"{what}: names differ ({sorted(set(actual) ^ set(ref))[:3]})"
    scale = max([r.norm().item() for r in ref.values()] + [0.0])
    worst, sa, sc, msg = 0.0, 0.0, 0.0, ""
    for n, r in ref.items():
        e = r.norm().item()
        da, dc = (actual[n] - r).norm().item(), (cpu[n] - r).norm().item()
        sa, sc = sa + da * da, sc + dc * dc
        tol = max(rtol * e + GRAD_ATOL * scale, CPU_FACTOR * dc)
        ratio = da / tol if tol > 0 else (0.0 if da == 0 else float("inf"))
        if not ratio <= worst:  # also catches NaN
            worst = ratio
            if not da <= tol:
                msg = f"{what} {n}: ocl off by {da:.3g}, cpu float32 by {dc:.3g}, |ref| {e:.3g}"
    vs_cpu = (sa ** 0.5) / (sc ** 0.5) if sc > 0 else (0.0 if sa == 0 else float("inf"))
    return worst, vs_cpu, msg


def run_model(name, timeout=600, seed=0):
    """Runs one model on CPU (float32 and float64) and ocl; returns a result dict."""
    ctor, side, note = MODELS[name]
    row = {"model": name, "input": [BATCH, 3, side, side], "note": note, "forward": "error", "train": "error",
           "detail": "", "fallback": {}, "params": 0}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    policy = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("silent")
    torch_ocl.reset_fallback_stats()
    try:
        torch.manual_seed(seed)
        cpu_model = _no_randomness(ctor())
        row["params"] = sum(p.numel() for p in cpu_model.parameters())
        dev_model = copy.deepcopy(cpu_model).to("ocl")
        # The timed runs below train dev_model: the compiled checks get untouched copies.
        comp_model, comp_train_model = ((copy.deepcopy(dev_model), copy.deepcopy(dev_model)) if COMPILED
                                        else (None, None))
        g = torch.Generator().manual_seed(seed + 1)
        x = torch.randn(BATCH, 3, side, side, generator=g)
        y = torch.randint(0, NUM_CLASSES, (BATCH,), generator=g)
        xd, yd = x.to("ocl"), y.to("ocl")

        ref, _ = _run(copy.deepcopy(cpu_model).double(), x.double(), y, "cpu")
        cpu, _ = _run(copy.deepcopy(cpu_model), x, y, "cpu")
        got, row["ocl_first_s"] = _run(copy.deepcopy(dev_model), xd, yd, "ocl")
        row["ocl_first_s"] = round(row["ocl_first_s"], 3)
        row["fallback"] = torch_ocl.fallback_stats()
        # Second runs, on the untouched models, are the timed ones (warm caches, kernels compiled).
        row["cpu_s"] = round(_run(cpu_model, x, y, "cpu")[1], 3)
        row["ocl_s"] = round(_run(dev_model, xd, yd, "ocl")[1], 3)

        row["logit_tol_ratio"], row["logit_err_vs_cpu"], msg = judge(
            got["logits"], cpu["logits"], ref["logits"], "logits", LOGIT_RTOL)
        row["forward"], row["detail"] = ("mismatch", msg) if msg else ("pass", "")
        msgs = []
        for group in TRAIN_GROUPS:
            ratio, vs_cpu, msg = judge(got[group], cpu[group], ref[group], group, GRAD_RTOL)
            msgs += [msg] if msg else []
            if group == "grad":
                row["grad_tol_ratio"], row["grad_err_vs_cpu"] = ratio, vs_cpu
        row["train"] = "mismatch" if msgs else "pass"
        row["detail"] = "; ".join(([row["detail"]] if row["detail"] else []) + msgs)[:300]
        if COMPILED:
            def judge_compiled(logits):
                got_c = {"logits": logits.detach().cpu().double()}
                return judge(got_c, cpu["logits"], ref["logits"], "compiled logits", LOGIT_RTOL)[2]
            row.update(compiled_check.compiled_forward(comp_model.eval(), lambda m: _logits(m(xd)),
                                                       got["logits"]["logits"], judge_compiled))

            def judge_compiled_train(res):
                return "; ".join(m for m in (judge(res[g], cpu[g], ref[g], "compiled " + g, GRAD_RTOL)[2]
                                             for g in TRAIN_GROUPS) if m)
            row.update(compiled_check.compiled_train(comp_train_model, lambda m: _run(m, xd, yd, "ocl")[0],
                                                     judge_compiled_train))
    except Timeout:
        row["detail"] = f"timeout after {timeout} s"
    except Exception as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        row["detail"] = f"{type(e).__name__}: {msg[:200]}"
        row["traceback"] = traceback.format_exc(limit=-3)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        row["fallback"] = row["fallback"] or torch_ocl.fallback_stats()
        torch_ocl.set_fallback_policy(policy)
    return row


def sweep(names, timeout=600, progress=False):
    rows, start = [], time.time()
    for name in names:
        t0 = time.time()
        row = run_model(name, timeout)
        row["wall_s"] = round(time.time() - t0, 1)
        rows.append(row)
        if progress:
            print(f"{name:20s} forward {row['forward']:8s} train {row['train']:8s} grad err/cpu {row.get('grad_err_vs_cpu', -1):.2g} "
                  f"ocl {row.get('ocl_s', '-')} s cpu {row.get('cpu_s', '-')} s  "
                  f"fallback {sorted(row['fallback'])} {row['detail']}  [{row['wall_s']} s]", flush=True)
    return summarize(rows, time.time() - start)


def summarize(rows, seconds):
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    ranked = {}
    for r in rows:
        for op in r["fallback"]:
            ranked.setdefault(op, []).append(r["model"])
    return {
        "torch": torch.__version__, "torchvision": torchvision.__version__, "torch_ocl": torch_ocl.__version__,
        "commit": commit, "device": torch.ocl.get_device_name(0), "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d"), "seconds": round(seconds, 1), "batch": BATCH,
        "models": len(rows), "forward_pass": sum(r["forward"] == "pass" for r in rows),
        "train_pass": sum(r["train"] == "pass" for r in rows),
        **compiled_check.report_fields(rows),
        "fallback_ops": dict(sorted(ranked.items(), key=lambda kv: (-len(kv[1]), kv[0]))),
        "rows": rows,
    }


def headline(rep):
    comp = compiled_check.headline(rep, "pass forward compiled")
    return (f"{rep['forward_pass']} of {rep['models']} models pass forward (eval), {rep['train_pass']} pass the "
            f"train step{comp}; {len(rep['fallback_ops'])} ops fell back to the CPU ({rep['seconds']} s)")


def markdown(rep):
    hf = rep.get("transformers")
    out = ["# Models on `ocl`", "",
           "Generated by `make models` (tools/models_sweep.py, tools/hf_sweep.py); do not edit by hand.", "",
           f"torch {rep['torch']}, torchvision {rep['torchvision']}, torch_ocl {rep['torch_ocl']} "
           f"(commit {rep['commit']}), device {rep['device']}, {rep['date']}.", "",
           f"- **torchvision: {headline(rep)}**"]
    if hf:
        out.append(f"- **Hugging Face transformers: {hf_sweep.headline(hf)}**")
    out += ["", "## torchvision", "",
            f"Models built without weights, {NUM_CLASSES} classes, seeded, batch {rep['batch']}, at the smallest "
           "input each accepts; dropout and stochastic depth set to 0. forward = eval logits vs CPU; train step = "
           "train-mode forward, cross-entropy, backward and one SGD step (loss, gradients, updated "
           "parameters, batch-norm statistics). Each tensor is compared with the model run in float64 on the "
           f"CPU: it passes if the norm of ocl's error is within {LOGIT_RTOL:g} (logits) or {GRAD_RTOL:g} "
           f"(train step) of the reference's norm, or at most {CPU_FACTOR}x the CPU float32's own error. "
           "grad err / cpu = norm of ocl's gradient error over the CPU float32's, both against float64 "
           "(1 = as accurate as the CPU). The CPU fallback was on ('silent'): a model passes with "
           "fallbacks, and the ops that fell back are listed. Times: a warm eval forward + train step, seconds. "
           "compiled = the eval forward under torch.compile(backend=\"ocl\"), judged as forward is; the cell "
           "counts the graphs Dynamo made and the graph nodes that ran as eager calls on the CPU fallback; "
           "compiled train = the same eval forward and train step with the model under torch.compile, judged "
           "as the train step is; compile s = compile and first run of the eval forward.", "",
           "| model | input | params | forward | train step | compiled | compiled train | grad err / cpu | "
           "fallback ops | ocl s | cpu s | compile s | note |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep["rows"]:
        fb = ", ".join(f"{op.replace('aten::', '')} ({n})" for op, n in sorted(r["fallback"].items())) or "none"
        note = "; ".join(x for x in (r.get("note"), r.get("detail"), *compiled_check.details(r)) if x)
        note = note.replace("|", "\\|").replace("\n", " ")
        side = r["input"][-1]
        ratio = f"{r['grad_err_vs_cpu']:.2g}" if r.get("grad_err_vs_cpu") is not None else ""
        out.append(f"| {r['model']} | {side}x{side} | {r['params'] / 1e6:.1f}M | {r['forward']} | {r['train']} | "
                   f"{compiled_check.cell(r)} | {compiled_check.cell(r, 'compiled_train')} | {ratio} | {fb} | "
                   f"{r.get('ocl_s', '')} | {r.get('cpu_s', '')} | "
                   f"{r.get('compile_s', '')} | {note} |")
    out += ["", "### Ops that fell back to the CPU", ""]
    if not rep["fallback_ops"]:
        out.append("None: every model ran natively.")
    for op, ms in rep["fallback_ops"].items():
        out.append(f"- `{op}`: {len(ms)} model{'s' if len(ms) != 1 else ''} ({', '.join(ms)})")
    if hf:
        out += [""] + hf_sweep.markdown(hf)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="", help="comma-separated names (default: all): " + ",".join(MODELS))
    ap.add_argument("--timeout", type=int, default=900, help="seconds per model")
    ap.add_argument("--hf-models", default="", help="comma-separated Hugging Face architectures and checks "
                    "(default: all, see tools/hf_sweep.py); 'none' skips the Hugging Face sweep")
    ap.add_argument("--hf-timeout", type=int, default=300, help="seconds per Hugging Face model")
    ap.add_argument("--no-compiled", action="store_true", help="skip the torch.compile forward")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    global COMPILED
    if args.no_compiled:
        COMPILED, os.environ["TOCL_SWEEP_COMPILED"] = False, "0"
    warnings.simplefilter("ignore")
    names = [n for n in args.models.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown models: {', '.join(unknown)}; known: {', '.join(MODELS)}")
    hf_names = [n for n in args.hf_models.split(",") if n] or None
    unknown = [n for n in hf_names or [] if n != "none" and n not in hf_sweep.ARCHS and n not in hf_sweep.CHECKS]
    if unknown:
        sys.exit(f"unknown Hugging Face models: {', '.join(unknown)}")
    rep = sweep(names, args.timeout, progress=True)
    print(headline(rep))
    if hf_names != ["none"]:
        rep["transformers"] = hf_sweep.sweep(hf_names, args.hf_timeout, progress=True)
        print(hf_sweep.headline(rep["transformers"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rep))


if __name__ == "__main__":
    main()
