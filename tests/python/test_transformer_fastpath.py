"""nn.TransformerEncoderLayer and nn.MultiheadAttention in eval mode take
PyTorch's inference fast path on ocl (_transformer_encoder_layer_fwd,
_native_multi_head_attention); the results equal the CPU with no fallback."""

import pytest
import torch
import torch.nn as nn


def close(a, b, tol=2e-5):
    torch.testing.assert_close(a.cpu(), b, atol=tol, rtol=tol)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_eval(no_fallback, norm_first, activation):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=activation, batch_first=True,
                                       norm_first=norm_first).eval()
    x = torch.randn(3, 7, 16)
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[1, 5:] = True
    causal = nn.Transformer.generate_square_subsequent_mask(7)
    dev = layer.to("ocl")
    with torch.no_grad():
        for kw in ({}, {"src_key_padding_mask": pad}, {"src_mask": causal},
                   {"src_mask": causal, "src_key_padding_mask": pad}):
            ref = layer.to("cpu")(x, **kw)
            got = dev.to("ocl")(x.to("ocl"), **{k: v.to("ocl") for k, v in kw.items()})
            close(got, ref)


def test_encoder_stack_eval(no_fallback):
    torch.manual_seed(1)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), 2,
                                enable_nested_tensor=False).eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        ref = enc(x)
        got = enc.to("ocl")(x.to("ocl"))
    close(got, ref)


@pytest.mark.parametrize("need_weights,average", [(False, True), (True, True), (True, False)])
def test_multihead_attention_eval(no_fallback, need_weights, average):
    torch.manual_seed(2)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    q, k = torch.randn(2, 5, 16), torch.randn(2, 6, 16)
    pad = torch.zeros(2, 6, dtype=torch.bool)
    pad[0, 4:] = True
    with torch.no_grad():
        for kw in ({}, {"key_padding_mask": pad}):
            ref = mha.to("cpu")(q, k, k, need_weights=need_weights, average_attn_weights=average, **kw)
            got = mha.to("ocl")(q.to("ocl"), k.to("ocl"), k.to("ocl"), need_weights=need_weights,
                                average_attn_weights=average, **{n: v.to("ocl") for n, v in kw.items()})
            close(got[0], ref[0])
            if need_weights:
                close(got[1], ref[1])
