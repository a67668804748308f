"""F.embedding_bag / nn.EmbeddingBag on ocl (adapter/aten/ocl_embedding_bag_ops.cpp)
against the CPU: every mode, padding_idx, include_last_offset, per-sample
weights, scale_grad_by_freq, empty bags and 2-D input; forward and the
gradients of the weight and of the per-sample weights."""

import itertools

import pytest
import torch
import torch.nn.functional as F

native = pytest.mark.usefixtures("no_fallback")

CASES = [(mode, pad, last, psw, freq)
         for mode, pad, last, psw, freq in itertools.product(["sum", "mean", "max"], [None, 2], [False, True],
                                                           [False, True], [False, True])
         if (not psw or mode == "sum") and not (freq and mode == "max")]


@native
@pytest.mark.parametrize("mode,pad,last,psw,freq", CASES)
def test_embedding_bag_matches_cpu(mode, pad, last, psw, freq):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(10, 4, generator=g, dtype=torch.float64)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
    off = torch.tensor([0, 4, 4, 7])  # bag 1 is empty
    ps = torch.rand(10, generator=g, dtype=torch.float64)
    wd, wc = w.to("ocl").requires_grad_(), w.clone().requires_grad_()
    pd = ps.to("ocl").requires_grad_() if psw else None
    pc = ps.clone().requires_grad_() if psw else None
    kw = dict(mode=mode, padding_idx=pad, include_last_offset=last, scale_grad_by_freq=freq)
    out = F.embedding_bag(idx.to("ocl"), wd, off.to("ocl"), per_sample_weights=pd, **kw)
    ref = F.embedding_bag(idx, wc, off, per_sample_weights=pc, **kw)
    torch.testing.assert_close(out.cpu(), ref)
    gout = torch.randn(ref.shape, generator=g, dtype=torch.float64)
    out.backward(gout.to("ocl"))
    ref.backward(gout)
    torch.testing.assert_close(wd.grad.cpu(), wc.grad)
    if psw:
        torch.testing.assert_close(pd.grad.cpu(), pc.grad)


@native
def test_embedding_bag_module_2d_input_float32():
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(20, 8, mode="max")
    x = torch.randint(0, 20, (5, 3))
    torch.testing.assert_close(bag.to("ocl")(x.to("ocl")).cpu(), bag.cpu()(x))


def test_embedding_bag_bad_offsets_raise_as_the_cpu():
    w, idx = torch.randn(5, 2), torch.tensor([0, 1, 2])
    for off in (torch.tensor([1, 2]), torch.tensor([0, 5])):
        with pytest.raises(RuntimeError) as cpu:
            F.embedding_bag(idx, w, off)
        with pytest.raises(RuntimeError) as dev:
            F.embedding_bag(idx.to("ocl"), w.to("ocl"), off.to("ocl"))
        assert type(dev.value) is type(cpu.value)
