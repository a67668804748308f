"""The compiled column of `make models`: one model's eval forward under
torch.compile(backend="ocl"), judged like the eager forward.

Both sweeps (tools/models_sweep.py, tools/hf_sweep.py) call compiled_forward()
with the model already on ocl and a function that judges logits against the
float64 reference, so "compiled pass" means exactly what "forward pass"
means for eager. The row also gets the graph count and the nodes that ran as
eager calls on the CPU fallback (compile_stats()), and how far the compiled
logits are from eager ocl's.
"""

import time

import torch

import torch_ocl


def compiled_forward(model, run_forward, eager_logits, judge_logits):
    """model: on ocl, eval mode. run_forward(m) -> logits (a tensor or a dict
    of tensors). judge_logits(logits) -> "" when they pass, else a message.
    Returns the row fields: compiled, compiled_detail, compiled_graphs,
    compiled_eager_calls, compiled_vs_eager, compile_s."""
    torch._dynamo.reset()
    torch_ocl.reset_compile_stats()
    row = {"compiled": "error", "compiled_detail": ""}
    t0 = time.perf_counter()
    try:
        cm = torch.compile(model, backend="ocl")
        with torch.no_grad():
            got = run_forward(cm)
        row["compile_s"] = round(time.perf_counter() - t0, 1)
        s = torch_ocl.compile_stats()
        row["compiled_graphs"] = s["graphs"]
        row["compiled_eager_calls"] = s["fallback_nodes"]
        row["compiled_lowering_errors"] = s["lowering_errors"]
        row["compiled_vs_eager"] = _max_diff(got, eager_logits)
        msg = judge_logits(got)
        if s["graphs"] == 0:
            row["compiled"], row["compiled_detail"] = "no graph", "Dynamo captured no graph"
        elif s["lowering_errors"]:
            row["compiled"], row["compiled_detail"] = "eager", f"{s['lowering_errors']} graphs fell back to eager"
        else:
            row["compiled"], row["compiled_detail"] = ("mismatch", msg) if msg else ("pass", "")
    except Exception as e:  # the row records it; the sweep goes on
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        row["compiled_detail"] = f"{type(e).__name__}: {first[:200]}"
    finally:
        torch._dynamo.reset()
    return row


def _max_diff(a, b):
    if isinstance(a, dict):
        return max((_max_diff(a[k], b[k]) for k in a), default=0.0)
    return float((a.detach().cpu().double() - b.detach().cpu().double()).abs().max()) if a.numel() else 0.0


def summary(rows):
    """(models that ran the check, how many passed) for a headline."""
    ran = [r for r in rows if "compiled" in r]
    return len(ran), sum(r["compiled"] == "pass" for r in ran)


def cell(r):
    """The table cell: pass/mismatch/error, graphs and eager calls."""
    if "compiled" not in r:
        return ""
    if r["compiled"] == "error":
        return "error"
    return f"{r['compiled']} ({r.get('compiled_graphs', 0)} graphs, {r.get('compiled_eager_calls', 0)} eager calls)"
