"""A decoding step's cache growth and attention in one launch
(torch_ocl::attention_append, runtime/ops/attention.c
tocl_attn_forward_append, compile/attention_append.py). The op's three
results are the same bits as the cat pair and the attention it replaces,
whichever way it runs; the attention matches a float64 CPU referee."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import ocl_kernels_run
from test_cat_pairs import decode_steps, made_when_switched_off

OCL = "ocl"
append = torch.ops.torch_ocl.attention_append


def operands(dtype, sc, hq, hk, d, rows, seed=0):
    """Caches of sc positions; q, k and v of `rows` new positions as the
    transposed views of one projection split three ways (as decoders do)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g).to(dtype).to(OCL)  # noqa: E731
    kc, vc = r(1, hk, sc, d), r(1, hk, sc, d)
    q, k, v = r(1, rows, (hq + 2 * hk) * d).split([hq * d, hk * d, hk * d], -1)
    q, k, v = (z.view(1, rows, z.shape[-1] // d, d).transpose(1, 2) for z in (q, k, v))
    return q, kc, k, vc, v


def separate(q, kc, k, vc, v, scale=None):
    kk, vv = torch.ops.torch_ocl.cat_pair([kc, k], [vc, v], 2)
    return F.scaled_dot_product_attention(q, kk, vv, scale=scale, enable_gqa=q.shape[1] != kk.shape[1]), kk, vv


def referee(q, kc, k, vc, v, scale=None):
    kk, vv = (torch.cat([a.cpu().double(), b.cpu().double()], 2) for a, b in ((kc, k), (vc, v)))
    rep = q.shape[1] // kk.shape[1]
    kk, vv = kk.repeat_interleave(rep, 1), vv.repeat_interleave(rep, 1)
    return F.scaled_dot_product_attention(q.cpu().double(), kk, vv, scale=scale)


def attention_kernels(fn):
    return [n for n in ocl_kernels_run(fn) if n.startswith(("att_", "tocl_shape_cat", "tocl_gemm"))]


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("sc,hq,hk,d,rows", [(40, 4, 4, 64, 1), (1, 4, 4, 64, 1), (17, 8, 2, 32, 1),
                                             (9, 4, 4, 16, 3), (5, 2, 2, 256, 4)])
def test_one_launch_the_same_bits_as_cat_and_attention(dtype, tol, sc, hq, hk, d, rows):
    ops = operands(dtype, sc, hq, hk, d, rows)
    out, k, v = append(*ops)
    want = separate(*ops)
    for got, ref in zip((out, k, v), want):
        assert got.shape == ref.shape and got.stride() == ref.stride() and got.dtype == ref.dtype
        assert torch.equal(got.cpu(), ref.cpu())
    torch.testing.assert_close(out.cpu().double(), referee(*ops), atol=tol, rtol=tol)
    assert attention_kernels(lambda: append(*ops)) == ["att_cpu_row_append"]


def test_scale_and_caches_that_are_views():
    q, kc, k, vc, v = operands(torch.float32, 12, 4, 4, 64, 1)
    big_k, big_v = torch.randn(1, 4, 20, 64, device=OCL), torch.randn(1, 4, 20, 64, device=OCL)
    kc, vc = big_k[:, :, 3:15], big_v[:, :, 5:17]  # offset views with a longer row stride
    for scale in (None, 0.3):
        got, want = append(q, kc, k, vc, v, scale), separate(q, kc, k, vc, v, scale)
        assert all(torch.equal(a.cpu(), b.cpu()) for a, b in zip(got, want))
        torch.testing.assert_close(got[0].cpu().double(), referee(q, kc, k, vc, v, scale), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("case", ["rows", "float64", "head_dim", "empty_cache", "strided_head_dim", "no_rows",
                                  "switch"])
def test_outside_the_row_kernel_it_is_the_cat_pair_and_attention(case, monkeypatch):
    dtype, sc, d, rows = torch.float32, 10, 64, 1
    if case == "rows":
        rows = 6
    elif case == "float64":
        dtype = torch.float64
    elif case == "head_dim":
        d = 12
    elif case == "empty_cache":
        sc = 0
    elif case == "no_rows":  # the composite's math path, as the CPU: an empty output
        rows = 0
    else:
        monkeypatch.setenv("TORCH_OCL_ATTENTION_APPEND", "0")
    ops = operands(dtype, sc, 4, 4, d, rows)
    if case == "strided_head_dim":  # new keys every other element along the head dim
        ops = (*ops[:2], torch.randn(1, 4, 1, 2 * d, device=OCL)[..., ::2], *ops[3:])
    got = append(*ops)
    assert all(torch.equal(a.cpu(), b.cpu()) for a, b in zip(got, separate(*ops)))
    torch.testing.assert_close(got[0].cpu().double(), referee(*ops), atol=1e-5, rtol=1e-5)
    assert "att_cpu_row_append" not in attention_kernels(lambda: append(*ops))


def test_bad_input_raises_clearly():
    q, kc, k, vc, v = operands(torch.float32, 4, 4, 4, 64, 1)
    with pytest.raises(RuntimeError, match="attention_append: a key or value operand is on cpu"):
        append(q, kc.cpu(), k, vc, v)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        append(q, kc, k[:, :2], vc, v)  # two key heads against four in the cache
    out = append(q, kc, k, vc, v)[0]  # the device is still usable
    assert torch.equal(out.cpu(), separate(q, kc, k, vc, v)[0].cpu())


@pytest.mark.usefixtures("fresh_dynamo")
@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_compiled_decoding_fuses_each_layer(mode, monkeypatch):
    f, cc, inputs = decode_steps(mode)  # test_cat_pairs.py: four steps equal to eager bit for bit
    assert torch_ocl.compile_stats()["attention_appends"] == 2  # one graph, two layers
    w, _, x = inputs
    with torch.no_grad():
        names = attention_kernels(lambda: f(cc, w, x))
    assert names.count("att_cpu_row_append") == 2 and "tocl_shape_cat_runs" not in names
    assert made_when_switched_off("TORCH_OCL_ATTENTION_APPEND", "attention_appends", inputs, monkeypatch) == 0


@pytest.mark.usefixtures("fresh_dynamo")
def test_attention_whose_other_results_are_used_is_left_alone():
    """The pass fuses only attentions of which nothing but the output is
    read; under autograd the forward keeps its logsumexp for the backward."""
    torch.manual_seed(1)
    ck, cv = torch.randn(1, 4, 5, 16, device=OCL), torch.randn(1, 4, 5, 16, device=OCL)
    q = torch.randn(1, 4, 1, 16, device=OCL, requires_grad=True)
    k, v = torch.randn(1, 4, 1, 16, device=OCL), torch.randn(1, 4, 1, 16, device=OCL)

    def f(q, ck, cv, k, v):
        return F.scaled_dot_product_attention(q, torch.cat([ck, k], 2), torch.cat([cv, v], 2))

    out = torch.compile(f, backend="ocl")(q, ck, cv, k, v)
    out.sum().backward()
    q2 = q.detach().clone().requires_grad_()
    f(q2, ck, cv, k, v).sum().backward()
    assert torch_ocl.compile_stats()["attention_appends"] == 0
    torch.testing.assert_close(q.grad.cpu(), q2.grad.cpu())
