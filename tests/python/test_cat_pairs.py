"""Two cats in one launch (torch_ocl::cat_pair, compile/cat_pairs.py): a
decoding step's key and value caches grow in one kernel. Checked bit for
bit against torch.cat on the CPU for dtypes, strided and offset sources
(the views of a split projection), empty parts; what cannot be paired runs
as two cats; compiled decoding pairs each layer's cats and matches eager."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import ocl_kernels_run

OCL = "ocl"
cat_pair = torch.ops.torch_ocl.cat_pair


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * 50).to(dtype)


def kv_parts(dtype, length=40, heads=4, dh=64):
    """A cache of `length` positions and one new position, the new k and v
    as the transposed views of a projection split in three."""
    ck, cv = rand((1, heads, length, dh), 1, dtype), rand((1, heads, length, dh), 2, dtype)
    qkv = rand((1, 1, 3 * heads * dh), 3, dtype)
    return ck, cv, qkv


def views(qkv, heads=4, dh=64):
    return [z.view(1, 1, heads, dh).transpose(1, 2) for z in qkv.split(heads * dh, -1)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
                                   torch.int32, torch.uint8, torch.bool])
def test_kv_pair_is_one_launch_and_equals_cpu(dtype):
    ck, cv, qkv = kv_parts(dtype)
    _, k, v = views(qkv)
    o = lambda t: t.to(OCL)  # noqa: E731
    _, ko, vo = views(o(qkv))
    a, b = cat_pair([o(ck), ko], [o(cv), vo], 2)
    assert torch.equal(a.cpu(), torch.cat([ck, k], 2)) and torch.equal(b.cpu(), torch.cat([cv, v], 2))
    assert a.is_contiguous() and b.is_contiguous()
    names = ocl_kernels_run(lambda: cat_pair([o(ck), ko], [o(cv), vo], 2))
    assert names.count("tocl_shape_cat_runs") == 1 and "tocl_shape_cat" not in names  # contiguous runs


@pytest.mark.parametrize("widths,split", [([6, 1, 2, 3], 1), ([2, 4, 3, 3], 2), ([1, 2, 3, 6], 3)])
def test_groups_of_one_to_three_offsets_and_negative_dim(widths, split):
    parts = [rand((3, 5, w), 10 + i) for i, w in enumerate(widths)]
    big = rand((3, 5, 20), 20)
    parts[0] = big[:, :, 3:3 + widths[0]]  # an offset view
    o = [p.to(OCL) for p in parts]
    o[0] = big.to(OCL)[:, :, 3:3 + widths[0]]
    a, b = cat_pair(o[:split], o[split:], -1)
    assert torch.equal(a.cpu(), torch.cat(parts[:split], -1)) and torch.equal(b.cpu(), torch.cat(parts[split:], -1))
    names = ocl_kernels_run(lambda: cat_pair(o[:split], o[split:], -1))
    assert names.count("tocl_shape_cat_runs") + names.count("tocl_shape_cat") == 1


def test_legacy_empty_sources_are_skipped_as_cat_skips_them():
    """A fresh KV cache in transformers starts as torch.tensor([]): cat
    skips 1-D empty sources whatever dim it is given."""
    e, k, v = torch.tensor([]), rand((2, 4, 1, 8), 1), rand((2, 4, 1, 8), 2)
    a, b = cat_pair([e.to(OCL), k.to(OCL)], [e.to(OCL), v.to(OCL)], -2)
    assert torch.equal(a.cpu(), torch.cat([e, k], -2)) and torch.equal(b.cpu(), torch.cat([e, v], -2))
    a, b = cat_pair([k.to(OCL), e.to(OCL)], [v.to(OCL), e.to(OCL)], 2)
    assert torch.equal(a.cpu(), k) and torch.equal(b.cpu(), v)


def test_equal_shapes_with_an_empty_part():
    x, y, z = rand((2, 0, 4), 1), rand((2, 3, 4), 2), rand((2, 3, 4), 3)
    a, b = cat_pair([x.to(OCL), y.to(OCL)], [z.to(OCL)], 1)
    assert torch.equal(a.cpu(), torch.cat([x, y], 1)) and torch.equal(b.cpu(), z)


@pytest.mark.parametrize("case", ["shapes differ", "dtypes differ", "five sources"])
def test_what_cannot_share_a_launch_runs_as_two_cats(case):
    x, y = rand((2, 3), 1), rand((2, 3), 2)
    a_in, b_in = [x, y], [y, x]
    if case == "shapes differ":
        b_in = [y]
    if case == "dtypes differ":
        b_in = [y.double(), x.double()]
    if case == "five sources":
        a_in, b_in = [x, y, x], [y, x]
    a, b = cat_pair([t.to(OCL) for t in a_in], [t.to(OCL) for t in b_in], 0)
    assert torch.equal(a.cpu(), torch.cat(a_in, 0)) and torch.equal(b.cpu(), torch.cat(b_in, 0))


def test_bad_input_raises_as_cat_does():
    x = torch.randn(2, 3, device=OCL)
    with pytest.raises(RuntimeError, match="non-empty"):
        cat_pair([], [x], 0)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        cat_pair([x, torch.randn(3, 4, device=OCL)], [x], 0)
    with pytest.raises(RuntimeError):
        cat_pair([x, x.cpu()], [x, x], 0)
    with pytest.raises(IndexError):
        cat_pair([x, x], [x, x], 5)
    z = torch.complex(x, x)  # the compile pass never pairs complex cats; the op says why
    with pytest.raises(TypeError, match="ComplexFloat"):
        cat_pair([z, z], [z, z], 0)
    assert torch.equal(cat_pair([x, x], [x, x], 1)[0].cpu(), torch.cat([x, x], 1).cpu())


def _step(cache, qkv_w, x):
    """One attention step of a 2-layer model with a KV cache per layer."""
    grown = []
    for i, (ck, cv) in enumerate(cache):
        q, k, v = F.linear(x, qkv_w[i]).chunk(3, -1)
        q, k, v = (z.view(1, 1, 4, 16).transpose(1, 2) for z in (q, k, v))
        k, v = torch.cat([ck, k], 2), torch.cat([cv, v], 2)
        grown.append((k, v))
        x = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, 1, 64)
    return x, grown


def decode_steps(mode):
    """Four steps of _step compiled (dynamic: a new cache length each step)
    against eager, equal bit for bit; returns the compiled step, the last
    cache and (weights, cache0, x)."""
    torch.manual_seed(0)
    w = [torch.randn(192, 64, device=OCL) / 8 for _ in range(2)]
    cache0 = [(torch.randn(1, 4, 5, 16, device=OCL), torch.randn(1, 4, 5, 16, device=OCL)) for _ in range(2)]
    x = torch.randn(1, 1, 64, device=OCL)
    f = torch.compile(_step, backend="ocl", dynamic=True, mode=mode)
    with torch.no_grad():
        ce, cc = cache0, cache0
        for _ in range(4):
            xe, ce = _step(ce, w, x)
            xc, cc = f(cc, w, x)
            assert torch.equal(xc.cpu(), xe.cpu())
            for (ke, ve), (kc, vc) in zip(ce, cc):
                assert torch.equal(kc.cpu(), ke.cpu()) and torch.equal(vc.cpu(), ve.cpu())
    return f, cc, (w, cache0, x)


def made_when_switched_off(switch, stat, inputs, monkeypatch):
    """compile_stats()[stat] of a fresh compile of _step with switch=0."""
    torch._dynamo.reset()
    torch_ocl.reset_compile_stats()
    monkeypatch.setenv(switch, "0")
    w, cache0, x = inputs
    with torch.no_grad():
        torch.compile(_step, backend="ocl", dynamic=True)(cache0, w, x)
    return torch_ocl.compile_stats()[stat]


@pytest.mark.usefixtures("fresh_dynamo")
@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_compiled_decoding_pairs_each_layers_cats(mode, monkeypatch):
    _, _, inputs = decode_steps(mode)
    assert torch_ocl.compile_stats()["cat_pairs"] >= 2
    assert made_when_switched_off("TORCH_OCL_CAT_PAIRS", "cat_pairs", inputs, monkeypatch) == 0


@pytest.mark.usefixtures("fresh_dynamo")
def test_compiled_cats_onto_a_fresh_cache_match_eager():
    """transformers' DynamicCache: the first step cats onto torch.tensor([])
    (the models sweep caught every decoder failing here once)."""
    def f(ck, cv, k, v):
        return torch.cat([ck, k], dim=-2), torch.cat([cv, v], dim=-2)

    e = torch.tensor([], device=OCL)
    k, v = torch.randn(2, 4, 3, 8, device=OCL), torch.randn(2, 4, 3, 8, device=OCL)
    cf = torch.compile(f, backend="ocl")
    for got, want in zip(cf(e, e, k, v), f(e, e, k, v)):
        assert torch.equal(got.cpu(), want.cpu())
    ck, cv = f(e, e, k, v)
    for got, want in zip(cf(ck, cv, k, v), f(ck, cv, k, v)):
        assert torch.equal(got.cpu(), want.cpu())
