"""The compiled columns of `make models`: one model's eval forward and its
train step under torch.compile(backend="ocl"), each judged like its eager
counterpart.

Both sweeps (tools/models_sweep.py, tools/hf_sweep.py) call
compiled_forward() and compiled_train() with a copy of the model already on
ocl and a function that judges the result against the float64 reference, so
"compiled pass" means exactly what "forward pass" (or "train step pass")
means for eager. The row also gets the graph count and the nodes that ran as
eager calls on the CPU fallback (compile_stats()), and how far the compiled
logits are from eager ocl's.
"""

import contextlib
import time

import torch

import torch_ocl


def compiled_forward(model, run_forward, eager_logits, judge_logits):
    """model: on ocl, eval mode. run_forward(m) -> logits (a tensor or a dict
    of tensors). judge_logits(logits) -> "" when they pass, else a message.
    Returns the row fields: compiled, compiled_detail, compiled_graphs,
    compiled_eager_calls, compiled_vs_eager, compile_s."""
    row, got, seconds = _compiled("compiled", model, run_forward, judge_logits, torch.no_grad)
    if got is not None:
        row["compile_s"] = round(seconds, 1)
        row["compiled_vs_eager"] = _max_diff(got, eager_logits)
    return row


def compiled_train(model, run_train, judge_train):
    """model: a copy on ocl that no train step has changed. run_train(m) ->
    the sweep's own train-step result for m (dicts of tensors, keyed by
    parameter names as on the eager model: the compiled module's
    "_orig_mod." prefix is taken off). judge_train(result) -> "" or a
    message. Returns compiled_train, compiled_train_detail,
    compiled_train_graphs, compiled_train_eager_calls."""
    return _compiled("compiled_train", model, lambda m: _unprefixed(run_train(m)), judge_train,
                     contextlib.nullcontext)[0]


def _compiled(key, model, run, judge, context):
    """Compile model, run and judge it: (the row fields under key, what run
    returned or None, seconds to compile and run)."""
    torch._dynamo.reset()
    torch_ocl.reset_compile_stats()
    row = {key: "error", f"{key}_detail": ""}
    got, seconds = None, 0.0
    t0 = time.perf_counter()
    try:
        cm = torch.compile(model, backend="ocl")
        with context():
            got = run(cm)
        seconds = time.perf_counter() - t0
        s = torch_ocl.compile_stats()
        row[f"{key}_graphs"] = s["graphs"]
        row[f"{key}_eager_calls"] = s["fallback_nodes"]
        row[f"{key}_lowering_errors"] = s["lowering_errors"]
        msg = judge(got)
        if s["graphs"] == 0:
            row[key], row[f"{key}_detail"] = "no graph", "Dynamo captured no graph"
        elif s["lowering_errors"]:
            row[key], row[f"{key}_detail"] = "eager", f"{s['lowering_errors']} graphs fell back to eager"
        else:
            row[key], row[f"{key}_detail"] = ("mismatch", msg) if msg else ("pass", "")
    except Exception as e:  # the row records it; the sweep goes on
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        row[f"{key}_detail"] = f"{type(e).__name__}: {first[:200]}"
    finally:
        torch._dynamo.reset()
    return row, got, seconds


def _unprefixed(result):
    """The train-step result with torch.compile's "_orig_mod." taken out of its names."""
    if isinstance(result, dict):
        return {k.replace("_orig_mod.", ""): _unprefixed(v) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return type(result)(_unprefixed(v) for v in result)
    return result


def _max_diff(a, b):
    if isinstance(a, dict):
        return max((_max_diff(a[k], b[k]) for k in a), default=0.0)
    return float((a.detach().cpu().double() - b.detach().cpu().double()).abs().max()) if a.numel() else 0.0


KEYS = ("compiled", "compiled_train")  # the row keys of the two checks: forward, train step


def summary(rows, key="compiled"):
    """(models that ran the check, how many passed) for a headline."""
    ran = [r for r in rows if key in r]
    return len(ran), sum(r[key] == "pass" for r in ran)


def report_fields(rows):
    """A sweep report's counts of both checks: compiled_models,
    compiled_pass, compiled_train_models, compiled_train_pass."""
    out = {}
    for key in KEYS:
        out[f"{key}_models"], out[f"{key}_pass"] = summary(rows, key)
    return out


def headline(rep, forward):
    """The headline's part for both checks; forward: the sweep's phrase for
    the first (e.g. "pass forward compiled")."""
    out = f", {rep['compiled_pass']} of {rep['compiled_models']} {forward}" if rep.get("compiled_models") else ""
    if rep.get("compiled_train_models"):
        out += f", {rep['compiled_train_pass']} of {rep['compiled_train_models']} the train step compiled"
    return out


def details(r):
    """Both checks' details of a row, for its note."""
    return tuple(r.get(f"{key}_detail") for key in KEYS)


def cell(r, key="compiled"):
    """The table cell: pass/mismatch/error, graphs and eager calls."""
    if key not in r:
        return ""
    if r[key] == "error":
        return "error"
    return f"{r[key]} ({r.get(key + '_graphs', 0)} graphs, {r.get(key + '_eager_calls', 0)} eager calls)"
