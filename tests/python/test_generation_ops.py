"""Ops that LLM serving leans on, native on ocl and equal to the CPU: repeat_interleave (slot mappings)
and the samplers of generate (temperature, top-k, top-p, min-p, repetition penalty, multinomial,
logprobs), all under TORCH_OCL_FALLBACK=error; plus the pinned-memory exit path vLLM takes."""

import subprocess
import sys

import pytest
import torch

D = "ocl"


# ---- repeat_interleave ----

@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_repeat_interleave_tensor(no_fallback, dtype):
    r = torch.tensor([3, 0, 2, 1, 0, 5], dtype=dtype)
    got = torch.repeat_interleave(r.to(D))
    assert got.dtype == dtype and got.device.type == D
    torch.testing.assert_close(got.cpu(), torch.repeat_interleave(r))


def test_repeat_interleave_tensor_output_size(no_fallback):
    r = torch.tensor([2, 4, 1])
    torch.testing.assert_close(torch.repeat_interleave(r.to(D), output_size=7).cpu(),
                               torch.repeat_interleave(r, output_size=7))


def test_repeat_interleave_non_contiguous_and_empty(no_fallback):
    r = torch.arange(12).reshape(3, 4)[:, 1]
    rd = torch.arange(12, device=D).reshape(3, 4)[:, 1]
    assert rd.stride() == (4,)
    torch.testing.assert_close(torch.repeat_interleave(rd).cpu(), torch.repeat_interleave(r))
    e = torch.repeat_interleave(torch.empty(0, dtype=torch.long, device=D))
    assert e.shape == (0,) and e.device.type == D
    z = torch.repeat_interleave(torch.zeros(4, dtype=torch.long, device=D))
    assert z.shape == (0,)


def test_repeat_interleave_self_forms(no_fallback):
    x = torch.randn(3, 5)
    xd = x.to(D)
    torch.testing.assert_close(torch.repeat_interleave(xd, 2).cpu(), torch.repeat_interleave(x, 2))
    torch.testing.assert_close(torch.repeat_interleave(xd, 3, dim=1).cpu(), torch.repeat_interleave(x, 3, dim=1))
    reps = torch.tensor([1, 0, 2])
    torch.testing.assert_close(torch.repeat_interleave(xd, reps.to(D), dim=0).cpu(),
                               torch.repeat_interleave(x, reps, dim=0))
    torch.testing.assert_close(
        torch.repeat_interleave(xd, reps.to(D), dim=0, output_size=3).cpu(),
        torch.repeat_interleave(x, reps, dim=0, output_size=3))
    # 0-dim repeats: expanded over the dim (a stride-0 repeats tensor reaches the kernel).
    r0 = torch.tensor(2)
    torch.testing.assert_close(torch.repeat_interleave(xd, r0.to(D), dim=1).cpu(),
                               torch.repeat_interleave(x, r0, dim=1))
    torch.testing.assert_close(xd.t().repeat_interleave(2, dim=0).cpu(), x.t().repeat_interleave(2, dim=0))


def test_repeat_interleave_errors():
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        torch.repeat_interleave(torch.tensor([1, -1], device=D))
    with pytest.raises(RuntimeError, match="1D vector"):
        torch.repeat_interleave(torch.ones(2, 2, dtype=torch.long, device=D))
    with pytest.raises(RuntimeError, match="Long or Int"):
        torch.repeat_interleave(torch.ones(2, device=D))


# ---- sampling ----

def test_sampling_ops_native(no_fallback):
    """The tensor ops of temperature / top-k / top-p / min-p / penalties / multinomial / logprobs."""
    torch.manual_seed(0)
    logits = torch.randn(4, 300) * 3
    ld = logits.to(D)
    ids = torch.randint(0, 300, (4, 7))
    idsd = ids.to(D)
    # temperature + softmax, log_softmax (logprobs)
    torch.testing.assert_close((ld / 0.7).softmax(-1).cpu(), (logits / 0.7).softmax(-1))
    torch.testing.assert_close(ld.log_softmax(-1).cpu(), logits.log_softmax(-1))
    # repetition penalty: gather, where, scatter
    score = torch.gather(ld, 1, idsd)
    score = torch.where(score < 0, score * 1.2, score / 1.2)
    pen = ld.scatter(1, idsd, score)
    ref = logits.scatter(1, ids, torch.where(torch.gather(logits, 1, ids) < 0, torch.gather(logits, 1, ids) * 1.2,
                                             torch.gather(logits, 1, ids) / 1.2))
    torch.testing.assert_close(pen.cpu(), ref)
    # top-k: topk + masked_fill
    kth = torch.topk(pen, 20)[0][..., -1, None]
    tk = pen.masked_fill(pen < kth, -float("inf"))
    ref_tk = ref.masked_fill(ref < torch.topk(ref, 20)[0][..., -1, None], -float("inf"))
    torch.testing.assert_close(tk.cpu(), ref_tk)
    # top-p: sort, softmax, cumsum, scatter back
    sl, si = torch.sort(pen, descending=False)
    cp = sl.softmax(-1).cumsum(-1)
    rm = cp <= 1 - 0.9
    rm[..., -1:] = 0
    tp = pen.masked_fill(rm.scatter(1, si, rm), -float("inf"))
    rsl, rsi = torch.sort(ref, descending=False)
    rrm = rsl.softmax(-1).cumsum(-1) <= 1 - 0.9
    rrm[..., -1:] = 0
    torch.testing.assert_close(tp.cpu(), ref.masked_fill(rrm.scatter(1, rsi, rrm), -float("inf")))
    # min-p: max of probs, compare
    probs = tp.softmax(-1)
    mp = tp.masked_fill(probs < probs.amax(-1, keepdim=True) * 0.05, -float("inf"))
    # multinomial draws only tokens with non-zero probability; argmax for greedy
    draws = torch.multinomial(mp.softmax(-1), 1)
    assert draws.device.type == D
    assert torch.isfinite(mp.cpu().gather(1, draws.cpu())).all()
    torch.testing.assert_close(mp.argmax(-1).cpu(), mp.cpu().argmax(-1))
    # seeds reproduce
    torch.manual_seed(5)
    a = torch.multinomial(mp.softmax(-1), 3, replacement=True).cpu()
    torch.manual_seed(5)
    b = torch.multinomial(mp.softmax(-1), 3, replacement=True).cpu()
    assert torch.equal(a, b)


def test_generate_sampling_native(no_fallback):
    """HF generate with every sampler on (transformers' own logits processors), no op on the CPU."""
    from torch_ocl.serving import tiny

    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(tiny.config("llama")).to(D).eval()
    ids = torch.tensor([[1, 40, 41, 42, 43]], device=D)
    out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, temperature=0.7, top_k=20,
                         top_p=0.9, min_p=0.05, repetition_penalty=1.2, max_new_tokens=6, output_scores=True,
                         output_logits=True, return_dict_in_generate=True, pad_token_id=0)
    assert out.sequences.shape[1] >= ids.shape[1] + 1 and out.sequences.device.type == D
    lp = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
    assert lp.device.type == D and torch.isfinite(lp.cpu()).any()


# ---- pinned memory at exit (vLLM calls empty_host_cache during cleanup) ----

def test_empty_host_cache_after_pinned_copy_exits_0():
    code = ("import torch, torch_ocl; x = torch.ones(4).pin_memory(); y = x.to('ocl'); "
            "torch.accelerator.empty_host_cache(); assert y.cpu().sum().item() == 4")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
