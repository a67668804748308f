"""Hugging Face transformers on ocl: a few tiny architectures and the whole-stack checks.

The same code as `make models` (tools/hf_sweep.py, tools/hf_checks.py) on a
handful of architectures: GPT-2 and Llama (decoders), BERT (encoder), T5
(encoder-decoder) must match the CPU in forward, train step and greedy
generate; the pretrained all-MiniLM-L6-v2 must embed like the CPU; a saved
model must load with device_map="ocl" and run under pipeline(device="ocl").
"""

import os
import sys

import pytest
import torch_ocl

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before the first import of huggingface_hub, which reads it once
pytest.importorskip("transformers", reason="transformers is not installed (make test installs requirements.txt)")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import hf_checks  # noqa: E402
import hf_sweep  # noqa: E402

ARCHS = ["gpt2", "llama", "bert", "t5"]


@pytest.fixture
def silent_fallback():
    # Like the sweep: ops without an ocl kernel may run on the CPU; they are counted, not warned.
    old = torch_ocl.get_fallback_policy()
    torch_ocl.set_fallback_policy("silent")
    yield
    torch_ocl.set_fallback_policy(old)


@pytest.mark.parametrize("name", ARCHS)
def test_architecture_matches_cpu(silent_fallback, name):
    row = hf_sweep.run_arch(name)
    assert row["forward"] == "pass", row["detail"] + row.get("traceback", "")
    assert row["train"] == "pass", row["detail"]
    assert row["generate"] in ("pass", "n/a"), row["detail"]
    assert row["generate"] == ("n/a" if name == "bert" else "pass")
    assert row["logit_tol_ratio"] <= 1 and row["grad_tol_ratio"] <= 1
    assert row["fallback"] == {}, f"ops fell back to the CPU: {row['fallback']}"
    # The compiled column: the eval forward under torch.compile(backend="ocl").
    assert row["compiled"] == "pass", row["compiled_detail"]
    assert row["compiled_graphs"] >= 1 and row["compiled_eager_calls"] == 0, row
    assert row["compiled_train"] == "pass", row["compiled_train_detail"]
    assert row["compiled_train_graphs"] >= 1 and row["compiled_train_eager_calls"] == 0, row


def test_minilm_embeddings_match_cpu(silent_fallback):
    ok, detail = hf_checks.minilm()
    assert ok, detail


def test_from_pretrained_device_map(silent_fallback):
    ok, detail = hf_checks.device_map()
    assert ok, detail


def test_pipeline_on_ocl(silent_fallback):
    ok, detail = hf_checks.pipeline()
    assert ok, detail


def test_report_counts_and_markdown():
    rows = [dict(hf_sweep._failed("gpt2", "timeout after 1 s"), wall_s=1),
            {"check": "minilm", "status": "pass", "detail": "", "fallback": {"aten::isin.Tensor_Tensor_out": 2}}]
    rows[0]["fallback"] = {"aten::isin.Tensor_Tensor_out": 1, "aten::cumsum.out": 3}
    rep = hf_sweep.summarize(rows)
    rep.update(transformers="x", seconds=1.0, batch=2, seq=8, new_tokens=8)
    assert (rep["models"], rep["forward_pass"], rep["generate_models"], rep["checks_pass"]) == (1, 0, 1, 1)
    # ranked by how many models (and checks) need the op
    assert list(rep["fallback_ops"]) == ["aten::isin.Tensor_Tensor_out", "aten::cumsum.out"]
    md = "\n".join(hf_sweep.markdown(rep))
    assert "| gpt2 | decoder |" in md and "timeout after 1 s" in md
    assert "1 architectures: 0 pass forward" in md


def test_worker_death_costs_one_model():
    # An unknown name makes the worker raise outside any model's try block and exit:
    # that name is recorded as lost, and a new worker runs the rest.
    rows = hf_sweep.run_isolated(["no_such_model", "pipeline"], timeout=120)
    assert [r.get("model") or r.get("check") for r in rows] == ["no_such_model", "pipeline"]
    assert rows[0]["forward"] == "error" and "worker died (exit 1): KeyError" in rows[0]["detail"], rows[0]
    assert rows[1]["status"] == "pass", rows[1]["detail"]


def test_timeout_is_recorded():
    # No worker imports torch and transformers within a second: killed, each name recorded, no hang.
    rows = hf_sweep.run_isolated(["bert", "pipeline"], timeout=1)
    assert [r["detail"] for r in rows] == ["timeout after 1 s"] * 2
    assert rows[0]["forward"] == "error" and rows[1]["status"] == "error"
