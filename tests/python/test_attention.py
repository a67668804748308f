"""scaled_dot_product_attention on ocl, forward and backward, against PyTorch
on the CPU (float64 reference), by every route: the flash-style kernels, the
blocked matrix products (runtime/ops/attention_gemm.c, the backward and the
float64 forward on CPU devices) and the one-kernel forward for CPU devices
(kernels/attention_cpu.cl, their default forward); TORCH_OCL_ATTENTION picks one."""

import math

import pytest
import torch
import torch.nn.functional as F
import torch_ocl
from torch.utils._python_dispatch import TorchDispatchMode

from conftest import dtype_id, ocl_kernels_run

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
TOL = {torch.float32: 2e-5, torch.float64: 1e-10, torch.float16: 4e-3, torch.bfloat16: 3e-2}
FLASH = 4  # at::SDPBackend::overrideable
MATH = 0


# gemm forms on CPU devices: K and V packed once per call with the row step on S^T (8 rows a
# vector; the default where the GEMM block is 8 rows), packed once with P scattered into
# panels, or packed per block (the GEMMs' own packing)
GEMM_FORMS = {"gemm": {}, "gemm-scatter": {"TORCH_OCL_ATTENTION_ROWS_T": "0"},
              "gemm-perblock": {"TORCH_OCL_ATTENTION_PREPACK": "0"}}


@pytest.fixture(params=["fused", "gemm", "gemm-scatter", "gemm-perblock", "flash"])
def route(request, monkeypatch):
    monkeypatch.setenv("TORCH_OCL_ATTENTION", request.param.split("-")[0])
    for k, v in GEMM_FORMS.get(request.param, {}).items():
        monkeypatch.setenv(k, v)
    return request.param


class OpLog(TorchDispatchMode):
    """Records the aten ops that reach the backend."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def rand(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def close(got, ref, dtype, what):
    """Compare an ocl result with a float64 CPU reference, scaled by the reference's magnitude."""
    got = got.cpu().double()
    scale = max(ref.abs().max().item(), 1.0)
    err = (got - ref).abs().max().item() if ref.numel() else 0.0
    assert err <= TOL[dtype] * scale * 4, f"{what}: max error {err:.3g} (scale {scale:.3g}) for {dtype}"


def check(q, k, v, dtype, grads=True, **kw):
    """Run SDPA on ocl (flash path asserted) and on the CPU in float64; compare output and q/k/v gradients."""
    qc, kc, vc = (t.to(dtype) for t in (q, k, v))  # the values the dtype can hold
    mask = kw.pop("attn_mask", None)
    ref_in = [t.double().requires_grad_(grads) for t in (qc, kc, vc)]
    ref_mask = mask.double() if mask is not None and mask.dtype != torch.bool else mask
    ref = F.scaled_dot_product_attention(*ref_in, attn_mask=ref_mask, **kw)
    dev_in = [t.to("ocl").requires_grad_(grads) for t in (qc, kc, vc)]
    dev_mask = None if mask is None else mask.to(dtype if mask.dtype != torch.bool else torch.bool).to("ocl")
    log = OpLog()
    with log:
        out = F.scaled_dot_product_attention(*dev_in, attn_mask=dev_mask, **kw)
    assert "_scaled_dot_product_fused_attention_overrideable" in log.ops, sorted(log.ops)
    assert out.dtype == dtype and out.shape == ref.shape
    close(out, ref, dtype, "output")
    if not grads:
        return
    go = rand(ref.shape, torch.float64, 99).to(dtype)
    ref_g = torch.autograd.grad(ref, ref_in, go.double())
    dev_g = torch.autograd.grad(out, dev_in, go.to("ocl"))
    for name, a, b in zip("qkv", dev_g, ref_g):
        assert a.shape == b.shape
        close(a, b, dtype, f"grad_{name}")


SEQ = [1, 7, 64, 130]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("D", [8, 64])
@pytest.mark.parametrize("L", SEQ)
@pytest.mark.parametrize("S", SEQ)
def test_shapes_float32(no_fallback, route, S, L, D, causal):
    B, H = 2, 2
    check(rand((B, H, L, D), torch.float64, 1), rand((B, H, S, D), torch.float64, 2),
          rand((B, H, S, D), torch.float64, 3), torch.float32, is_causal=causal)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("L,S,D,causal", [(7, 130, 64, True), (130, 7, 8, True), (64, 64, 64, False),
                                          (1, 7, 8, False), (130, 130, 8, True)])
def test_dtypes(no_fallback, route, dtype, L, S, D, causal):
    check(rand((1, 3, L, D), torch.float64, 4), rand((1, 3, S, D), torch.float64, 5),
          rand((1, 3, S, D), torch.float64, 6), dtype, is_causal=causal)


def bool_mask(shape, seed):
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(shape, generator=g) > 0.4
    m[..., 0] = True  # every query sees a key (fully masked rows: test_fully_masked_row)
    return m


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("kind", ["bool_2d", "bool_4d", "float_4d", "float_bcast"])
def test_masks(no_fallback, route, dtype, kind):
    B, H, L, S, D = 2, 3, 33, 70, 8
    mask = {
        "bool_2d": lambda: bool_mask((L, S), 7),
        "bool_4d": lambda: bool_mask((B, 1, L, S), 8),
        "float_4d": lambda: rand((B, H, L, S), torch.float64, 9),
        "float_bcast": lambda: rand((1, H, 1, S), torch.float64, 10),
    }[kind]()
    if mask.dtype != torch.bool:
        mask = mask.to(dtype)
    check(rand((B, H, L, D), torch.float64, 11), rand((B, H, S, D), torch.float64, 12),
          rand((B, H, S, D), torch.float64, 13), dtype, attn_mask=mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_scale_gqa_noncontiguous(no_fallback, route, dtype):
    B, L, S, Hq, Hk, D = 2, 19, 45, 6, 2, 64
    # (B, L, H, D) storage seen as (B, H, L, D), as attention modules make it
    q = rand((B, L, Hq, D), torch.float64, 14).transpose(1, 2)
    k = rand((B, S, Hk, D), torch.float64, 15).transpose(1, 2)
    v = rand((B, S, Hk, D), torch.float64, 16).transpose(1, 2)
    check(q, k, v, dtype, scale=0.3, enable_gqa=True)
    check(q, k, v, dtype, scale=0.05, enable_gqa=True, is_causal=True)


def test_noncontiguous_views_stay_views(no_fallback):
    # q transposed from (B, L, H, D): the kernels read strides, and the output keeps q's layout
    q = torch.randn(2, 9, 4, 8).to("ocl").transpose(1, 2)
    out = F.scaled_dot_product_attention(q, q, q)
    assert out.transpose(1, 2).is_contiguous()
    ref = F.scaled_dot_product_attention(*(q.cpu(),) * 3)
    torch.testing.assert_close(out.cpu(), ref, atol=1e-5, rtol=1e-5)


def test_unfolded_batch_is_copied_dense(no_fallback, monkeypatch):
    # q, k, v as [B, H, L, D] views of one [B, L, 3, H, D] projection (as a fused qkv
    # layer makes them) do not fold into one GEMM batch: the forward copies them dense,
    # so its products run once for the whole batch instead of once per batch item, and
    # the output still has q's dimension order. (The other routes read the views in place.)
    monkeypatch.setenv("TORCH_OCL_ATTENTION", "gemm")
    B, L, H, D = 4, 24, 3, 16
    qkv = rand((B, L, 3, H, D), torch.float64, 31).permute(2, 0, 3, 1, 4)
    ref = F.scaled_dot_product_attention(*qkv, is_causal=True)
    dev = qkv.float().to("ocl")
    counts, outs = {}, {}
    for dense in ("1", "0"):
        monkeypatch.setenv("TORCH_OCL_ATTENTION_DENSE", dense)
        names = ocl_kernels_run(lambda: outs.__setitem__(dense, F.scaled_dot_product_attention(*dev, is_causal=True)))
        counts[dense] = sum(n.startswith("tocl_gemm") for n in names)
        out = outs[dense]
        close(out, ref, torch.float32, f"output, dense={dense}")
        assert out.transpose(1, 2).is_contiguous()  # q's order: (B, L, H, D) storage
    assert counts["1"] < counts["0"], counts


def test_fully_masked_row(no_fallback, route):
    # a query that sees no key: PyTorch's math path gives 0 (safe softmax) and so do the kernels
    B, H, L, S, D = 1, 2, 5, 9, 8
    q, k, v = (rand((B, H, n, D), torch.float32, s) for n, s in ((L, 1), (S, 2), (S, 3)))
    mask = torch.ones(L, S, dtype=torch.bool)
    mask[2] = False
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    qo, ko, vo = (t.to("ocl").requires_grad_() for t in (q, k, v))
    out = F.scaled_dot_product_attention(qo, ko, vo, attn_mask=mask.to("ocl"))
    torch.testing.assert_close(out.cpu(), ref, atol=1e-5, rtol=1e-5)
    assert (out[:, :, 2].cpu() == 0).all()
    gq, gk, gv = torch.autograd.grad(out.sum(), (qo, ko, vo))
    assert (gq[:, :, 2].cpu() == 0).all() and torch.isfinite(gk.cpu()).all() and torch.isfinite(gv.cpu()).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_cpu_forward_is_one_kernel(no_fallback, monkeypatch, dtype):
    # on a CPU device the forward is one launch of att_cpu_fwd for the whole call
    # (the route by matrix products would pack, multiply and run a row kernel per block),
    # reading views of one qkv projection in place, with a mask
    if torch_ocl._C._device_props(0)["type"] != "cpu":
        pytest.skip("the one-kernel forward is for CPU devices")
    monkeypatch.delenv("TORCH_OCL_ATTENTION", raising=False)
    B, L, H, D = 2, 40, 3, 16
    qkv = rand((B, L, 3, H, D), torch.float64, 7).permute(2, 0, 3, 1, 4)
    mask = rand((L, L), torch.float64, 8)
    ref = F.scaled_dot_product_attention(*qkv, attn_mask=mask)
    dev, dmask = qkv.to(dtype).to("ocl"), mask.to(dtype).to("ocl")
    out = []
    names = ocl_kernels_run(lambda: out.append(F.scaled_dot_product_attention(*dev, attn_mask=dmask)))
    assert [n for n in names if n.startswith(("att_", "tocl_gemm"))] == ["att_cpu_fwd"], names
    close(out[0], ref, dtype, "output")


def test_backend_choice(no_fallback):
    q = torch.randn(1, 2, 4, 8, device="ocl")
    k = torch.randn(1, 1, 4, 8, device="ocl")
    choice = torch.ops.aten._fused_sdp_choice
    assert choice(q, q, q) == FLASH
    assert choice(q, q, q, dropout_p=0.1) == MATH  # dropout: the math path
    assert choice(q, k, k) == MATH  # heads differ without enable_gqa: math (which raises)
    assert choice(q, k, k, enable_gqa=True) == FLASH
    assert choice(torch.randn(1, 2, 4, 300, device="ocl"), *(torch.randn(1, 2, 4, 300, device="ocl"),) * 2) == MATH
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        assert choice(q, q, q) == MATH


def test_dropout_uses_math_path(no_fallback):
    q = torch.randn(1, 2, 6, 8, device="ocl")
    log = OpLog()
    with log:
        out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert "_scaled_dot_product_fused_attention_overrideable" not in log.ops
    assert out.shape == q.shape and torch.isfinite(out.cpu()).all()


def test_direct_call_errors():
    q = torch.randn(1, 2, 4, 8, device="ocl")
    with pytest.raises(RuntimeError, match="dropout"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, q, q, dropout_p=0.2)


def test_deterministic_backward(no_fallback, route):
    q, k, v = (torch.randn(2, 4, 70, 64, device="ocl", requires_grad=True) for _ in range(3))
    go = torch.randn(2, 4, 70, 64, device="ocl")
    a = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), go)
    b = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), go)
    for x, y in zip(a, b):
        assert torch.equal(x.cpu(), y.cpu())


def test_multihead_attention_module(no_fallback):
    torch.manual_seed(0)
    cpu = torch.nn.MultiheadAttention(32, 4, batch_first=True).double()
    dev = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    dev.load_state_dict({n: p.float() for n, p in cpu.state_dict().items()})
    dev = dev.to("ocl")
    x = torch.randn(3, 11, 32, dtype=torch.float64)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(11, dtype=torch.float64)
    ref, _ = cpu(x, x, x, attn_mask=mask, need_weights=False)
    ref.sum().backward()
    xo = x.float().to("ocl")
    log = OpLog()
    with log:
        out, _ = dev(xo, xo, xo, attn_mask=mask.float().to("ocl"), need_weights=False)
        out.sum().backward()
    assert "_scaled_dot_product_fused_attention_overrideable" in log.ops
    assert "_scaled_dot_product_fused_attention_overrideable_backward" in log.ops
    torch.testing.assert_close(out.cpu().double(), ref, atol=1e-4, rtol=1e-4)
    for (n, pc), pd in zip(cpu.named_parameters(), dev.parameters()):
        torch.testing.assert_close(pd.grad.cpu().double(), pc.grad, atol=1e-4, rtol=1e-4, msg=n)


@pytest.mark.parametrize("form", list(GEMM_FORMS))
@pytest.mark.parametrize("block", ["16", "20"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(70, 70), (70, 33), (33, 90), (1, 40), (100, 1)])
def test_gemm_blocks(no_fallback, monkeypatch, L, S, causal, block, form):
    # blocks of 16 or 20 query rows: block edges, partial last blocks (and panels of 8 rows),
    # causal key ranges that stop mid-row
    monkeypatch.setenv("TORCH_OCL_ATTENTION", "gemm")
    for k, v in GEMM_FORMS[form].items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TORCH_OCL_ATTENTION_BLOCK", block)
    monkeypatch.setenv("TORCH_OCL_ATTENTION_CHUNK", "4")  # the GEMM batch (2 x 3 heads) in chunks of 4 and 2
    for dtype in (torch.float32, torch.float64):
        check(rand((2, 3, L, 24), torch.float64, 20), rand((2, 3, S, 24), torch.float64, 21),
              rand((2, 3, S, 24), torch.float64, 22), dtype, is_causal=causal)


@pytest.mark.parametrize("dense", ["1", "0"], ids=["dense-copies", "runtime-loop"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_odd_head_dims_unfolded_batch(no_fallback, route, monkeypatch, dtype, dense):
    # head dims 5 and 12 (not multiples of 8, D != Dv); heads-major storage, so the batch dim
    # does not fold into the GEMM batch (the forward copies such operands dense unless
    # TORCH_OCL_ATTENTION_DENSE=0, when the runtime loops over the batch); GQA (6 query
    # heads on 2 kv heads); a float mask
    monkeypatch.setenv("TORCH_OCL_ATTENTION_DENSE", dense)
    monkeypatch.setenv("TORCH_OCL_ATTENTION_BLOCK", "16")
    monkeypatch.setenv("TORCH_OCL_ATTENTION_CHUNK", "1")
    B, Hq, Hk, L, S = 3, 6, 2, 37, 29
    q = rand((Hq, B, L, 5), torch.float64, 23).transpose(0, 1)
    k = rand((Hk, B, S, 5), torch.float64, 24).transpose(0, 1)
    v = rand((Hk, B, S, 12), torch.float64, 25).transpose(0, 1)
    mask = rand((B, 1, L, S), torch.float64, 26).to(dtype)
    check(q, k, v, dtype, attn_mask=mask, enable_gqa=True)
    check(q, k, v, dtype, is_causal=True, enable_gqa=True)


def test_empty_batch(no_fallback, route):
    q = torch.randn(0, 2, 5, 8, device="ocl", requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.shape == (0, 2, 5, 8)
    (g,) = torch.autograd.grad(out.sum(), (q,))
    assert g.shape == q.shape


def test_gemm_nan_propagates(no_fallback, monkeypatch):
    # a NaN in one query row gives that row NaN, as PyTorch's math path and its float64
    # path do (not a row of zeros that looks fully masked; the CPU's float32 flash kernel
    # and the ocl flash kernels give zeros)
    monkeypatch.setenv("TORCH_OCL_ATTENTION", "gemm")
    q, k = torch.randn(1, 2, 6, 8), torch.randn(1, 2, 9, 8)
    q[0, 1, 3, 2] = float("nan")
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q, k, k)
    out = F.scaled_dot_product_attention(q.to("ocl"), k.to("ocl"), k.to("ocl")).cpu()
    assert out[0, 1, 3].isnan().all() and not out[0, 0].isnan().any()
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("L,S,Hq,Hk,D,Dv,kind", [
    (1, 41, 4, 4, 64, 64, None), (1, 17, 8, 2, 32, 16, "float"), (2, 33, 4, 4, 64, 64, "bool"),
    (4, 9, 2, 1, 8, 24, "causal"), (1, 1, 1, 1, 256, 256, None), (3, 70, 6, 3, 128, 64, "causal")])
def test_decoding_rows_take_the_one_row_kernel(no_fallback, monkeypatch, dtype, L, S, Hq, Hk, D, Dv, kind):
    """A few query rows (a decoding step) on a CPU device: att_cpu_row, the
    head dimension in the lanes, against float64 with GQA, masks, causality
    and the backward that reads its logsumexp."""
    if torch_ocl._C._device_props(0)["type"] != "cpu":
        pytest.skip("the one-row kernel is for CPU devices")
    monkeypatch.delenv("TORCH_OCL_ATTENTION", raising=False)
    B = 2
    q, k, v = rand((B, Hq, L, D), torch.float64, 1), rand((B, Hk, S, D), torch.float64, 2), \
        rand((B, Hk, S, Dv), torch.float64, 3)
    kw = {"enable_gqa": Hq != Hk, "is_causal": kind == "causal"}
    if kind == "float":
        kw["attn_mask"] = rand((B, Hq, L, S), torch.float64, 4).to(dtype)
    if kind == "bool":
        kw["attn_mask"] = bool_mask((B, 1, L, S), 5)
    dev = [t.to(dtype).to("ocl") for t in (q, k, v)]
    dkw = dict(kw, attn_mask=kw["attn_mask"].to("ocl")) if "attn_mask" in kw else kw
    names = ocl_kernels_run(lambda: F.scaled_dot_product_attention(*dev, **dkw))
    assert [n for n in names if n.startswith("att_")] == ["att_cpu_row"], names
    check(q, k, v, dtype, **kw)


@pytest.mark.parametrize("case", ["five rows", "head dim 12", "strided head dim", "turned off"])
def test_other_rows_take_the_tiled_kernel(no_fallback, monkeypatch, case):
    if torch_ocl._C._device_props(0)["type"] != "cpu":
        pytest.skip("the one-row kernel is for CPU devices")
    monkeypatch.delenv("TORCH_OCL_ATTENTION", raising=False)
    L, D = (5, 16) if case == "five rows" else (1, 12) if case == "head dim 12" else (1, 16)
    q, k, v = rand((1, 2, L, D), torch.float64, 1), rand((1, 2, 9, D), torch.float64, 2), \
        rand((1, 2, 9, D), torch.float64, 3)
    dev = [t.float().to("ocl") for t in (q, k, v)]
    if case == "strided head dim":
        dev[0] = torch.stack([dev[0], dev[0]], -1)[..., 0]
    if case == "turned off":
        monkeypatch.setenv("TORCH_OCL_ATTENTION_ROWS", "0")
    out = []
    names = ocl_kernels_run(lambda: out.append(F.scaled_dot_product_attention(*dev)))
    assert [n for n in names if n.startswith("att_")] == ["att_cpu_fwd"], names
    close(out[0], F.scaled_dot_product_attention(q, k, v), torch.float32, "output")
