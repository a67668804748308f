"""Graph capture and replay (runtime/graph/, torch.ocl.OCLGraph,
torch.compile(mode="reduce-overhead")): a replay must equal running the work
again, never touch memory it did not own at capture, refuse what it cannot
repeat, and leave nothing held once dropped."""

import copy
import time

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl

OCL = "ocl"


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def _work(x, w):
    return torch.relu(w @ x + 1.0).sum(0) * 0.5


# ---------------------------------------------------------------- torch.ocl.OCLGraph

@pytest.mark.parametrize("shape", [(33, 5), (1, 1), (64, 17)])
def test_replay_equals_rerun_on_new_inputs(shape):
    torch.manual_seed(0)
    x = torch.randn(*shape, device=OCL)
    w = torch.randn(7, shape[0], device=OCL)
    _work(x, w)  # programs built before the capture
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        out = _work(x, w)
    assert g.commands() > 0
    for _ in range(3):
        x.copy_(torch.randn(*shape))
        w.mul_(1.1)
        g.replay()
        torch.testing.assert_close(out.cpu(), _work(x.cpu(), w.cpu()), rtol=1e-5, atol=1e-5)
    g.reset()


def test_strided_and_offset_inputs():
    torch.manual_seed(0)
    base = torch.randn(10, 12, device=OCL)
    x = base[1:, ::2].t()  # offset, transposed, strided
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        out = torch.tanh(x) * x[:, :1] + x.sum(1, keepdim=True)
    base.copy_(torch.randn(10, 12))
    g.replay()
    xc = base.cpu()[1:, ::2].t()
    torch.testing.assert_close(out.cpu(), torch.tanh(xc) * xc[:, :1] + xc.sum(1, keepdim=True), rtol=1e-5, atol=1e-5)


def test_memory_of_the_capture_is_not_handed_out_again():
    """Intermediates freed during the capture stay the graph's: a tensor made
    after the capture must survive replays untouched."""
    torch.manual_seed(0)
    x = torch.randn(256, device=OCL)
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        y = x
        for _ in range(6):
            y = torch.sin(y) * 2.0 + 1.0  # each step frees the one before
        out = y.sum()
    keep = [torch.full((256,), float(i), device=OCL) for i in range(8)]
    for _ in range(3):
        g.replay()
    torch.ocl.synchronize()
    for i, k in enumerate(keep):
        assert torch.equal(k.cpu(), torch.full((256,), float(i))), i
    ref = x.cpu()
    for _ in range(6):
        ref = torch.sin(ref) * 2.0 + 1.0
    torch.testing.assert_close(out.cpu(), ref.sum(), rtol=1e-4, atol=1e-4)


def test_reset_returns_the_memory():
    torch.ocl.synchronize()
    x = torch.randn(4096, device=OCL)
    torch.exp(x)
    before = torch.ocl.memory_reserved()
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        for _ in range(4):
            torch.exp(x)  # freed at once: held by the graph
    g.reset()
    # Everything the capture took can be allocated again without growing.
    again = [torch.empty(4096, device=OCL) for _ in range(4)]
    assert torch.ocl.memory_reserved() == before
    del again


@pytest.mark.parametrize("what", ["item", "cpu", "synchronize"])
def test_host_reads_refuse_the_capture(what):
    x = torch.randn(16, device=OCL)
    g = torch.ocl.OCLGraph()
    with pytest.raises(RuntimeError, match="cannot be replayed: .*host"):
        with torch.ocl.graph(g):
            y = x * 2
            if what == "item":
                y.sum().item()
            elif what == "cpu":
                y.cpu()
            else:
                torch.ocl.synchronize()
    with pytest.raises(RuntimeError, match="nothing was captured"):
        g.replay()
    assert not torch.ocl.is_current_stream_capturing()
    # The device still works, and a new capture is fine.
    with torch.ocl.graph(g):
        z = x + 1
    g.replay()
    torch.testing.assert_close(z.cpu(), x.cpu() + 1)


def test_random_ops_refuse_the_capture():
    g = torch.ocl.OCLGraph()
    with pytest.raises(RuntimeError, match="random numbers"):
        with torch.ocl.graph(g):
            torch.randn(8, device=OCL)


def test_capture_state_and_errors():
    g = torch.ocl.OCLGraph()
    x = torch.ones(4, device=OCL)
    assert not torch.ocl.is_current_stream_capturing()
    with torch.ocl.graph(g):
        assert torch.ocl.is_current_stream_capturing()
        y = x * 3
        with pytest.raises(RuntimeError, match="already under way"):
            torch.ocl.OCLGraph().capture_begin()
    with pytest.raises(RuntimeError, match="reset"):
        g.capture_begin()
    with pytest.raises(NotImplementedError, match="pool"):
        torch.ocl.OCLGraph().capture_begin(pool=(0, 1))
    # An exception inside the block ends the capture and drops it.
    with pytest.raises(ValueError, match="boom"):
        with torch.ocl.graph(torch.ocl.OCLGraph()):
            x * 2
            raise ValueError("boom")
    assert not torch.ocl.is_current_stream_capturing()
    g.replay()
    assert torch.equal(y.cpu(), torch.full((4,), 3.0))


def test_index_bounds_are_checked_at_each_replay():
    # As CUDA reports a device-side assert: a replay does not wait for its
    # bounds check; the bad index fails the next call that waits for the
    # device (or the next replay once the check has arrived), and the
    # index kernels skip it meanwhile.
    emb = torch.randn(10, 4, device=OCL)
    idx = torch.tensor([1, 2, 3], device=OCL)
    F.embedding(idx, emb)
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        out = F.embedding(idx, emb) * 2
    idx.copy_(torch.tensor([9, 0, 4]))
    g.replay()
    torch.testing.assert_close(out.cpu(), emb.cpu()[[9, 0, 4]] * 2)
    reported_by = {
        "synchronize": torch.ocl.synchronize,
        "stream synchronize": lambda: torch.ocl.current_stream().synchronize(),
        "copy to the host": out.cpu,
        "event synchronize": lambda: torch.ocl.current_stream().record_event().synchronize(),
        "a later replay": lambda: [time.sleep(0.005) or g.replay() for _ in range(400)],
    }
    for bad, value in (([10, 0, 0], 10), ([0, -1, 0], -1)):
        for name, report in reported_by.items():
            idx.copy_(torch.tensor(bad))
            g.replay()
            with pytest.raises(RuntimeError, match=rf"index {value} is out of bounds \[0, 9\]"):
                report()
            torch.ocl.synchronize()  # reported once: nothing left to raise
    idx.copy_(torch.tensor([5, 5, 5]))
    g.replay()
    torch.testing.assert_close(out.cpu(), emb.cpu()[[5, 5, 5]] * 2)


def test_replay_on_another_stream_orders_after_its_work():
    x = torch.zeros(1024, device=OCL)
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        out = x + 1
    s = torch.ocl.Stream()
    # As on CUDA: x was made on the current stream, so s waits for it first
    # (without this the test raced: fused eager's deferred zeros could land
    # after the fill, 2-3 in 300 runs under load).
    s.wait_stream(torch.ocl.current_stream())
    with torch.ocl.stream(s):
        x.fill_(5.0)
        g.replay()
    s.synchronize()
    assert torch.equal(out.cpu(), torch.full((1024,), 6.0))


# ---------------------------------------------------------------- torch.compile(mode="reduce-overhead")

def _decoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, norm_first=True)
    emb, pos, head = nn.Embedding(50, 32), nn.Embedding(64, 32), nn.Linear(32, 50, bias=False)
    return nn.ModuleList([emb, pos, layer, head]).to(OCL).eval()


def _cached_step(m, tok, cache, start: int):
    """One decoding step with a growing KV cache: a new shape at every step."""
    emb, pos, layer, head = m
    a = layer.self_attn
    t = tok.shape[1]
    h = emb(tok) + pos(torch.arange(start, start + t, device=tok.device))
    q, k, v = F.linear(layer.norm1(h), a.in_proj_weight, a.in_proj_bias).chunk(3, -1)
    q, k, v = (z.view(1, t, 4, 8).transpose(1, 2) for z in (q, k, v))
    if cache is not None:
        k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
    h = h + a.out_proj(o.transpose(1, 2).reshape(1, t, 32))
    h = h + layer.linear2(F.relu(layer.linear1(layer.norm2(h))))
    return head(h[:, -1]), (k, v)


def _decode(m, step, prompt, n):
    with torch.no_grad():
        logits, cache = _cached_step(m, prompt, None, 0)
        out = [logits.argmax(-1, keepdim=True)]
        for i in range(n - 1):
            logits, cache = step(m, out[-1], cache, prompt.shape[1] + i)
            out.append(logits.argmax(-1, keepdim=True))
    return torch.cat(out, 1)


@pytest.mark.parametrize("dynamic", [True, None])
def test_decode_replays_equal_eager(dynamic):
    m = _decoder()
    prompt = torch.randint(0, 50, (1, 6), device=OCL)
    ref = _decode(m, _cached_step, prompt, 12).cpu()
    cstep = torch.compile(_cached_step, backend="ocl", mode="reduce-overhead", dynamic=dynamic)
    for run in range(3):
        assert torch.equal(_decode(m, cstep, prompt, 12).cpu(), ref), run
    s = torch_ocl.compile_stats()
    assert s["captures"] == 11 and s["captures_refused"] == 0, s
    assert s["replays"] == 11, s  # the third run replays every length
    # Different prompts through the same recordings.
    other = torch.randint(0, 50, (1, 6), device=OCL)
    assert torch.equal(_decode(m, cstep, other, 12).cpu(), _decode(m, _cached_step, other, 12).cpu())


def test_default_backend_reduce_overhead_replays_on_ocl():
    m = _decoder()
    prompt = torch.randint(0, 50, (1, 5), device=OCL)
    cstep = torch.compile(_cached_step, mode="reduce-overhead", dynamic=True)
    ref = _decode(m, _cached_step, prompt, 6).cpu()
    for _ in range(3):
        assert torch.equal(_decode(m, cstep, prompt, 6).cpu(), ref)
    assert torch_ocl.compile_stats()["replays"] > 0


def test_kept_outputs_are_never_overwritten():
    lin = nn.Linear(8, 8).to(OCL)
    f = torch.compile(lambda x: torch.tanh(lin(x)), backend="ocl", mode="reduce-overhead")
    xs = [torch.randn(4, 8, device=OCL) for _ in range(5)]
    with torch.no_grad():
        outs = [f(x) for x in xs]  # each output is still referenced at the next call
        for x, o in zip(xs, outs):
            torch.testing.assert_close(o.cpu(), torch.tanh(lin(x)).cpu())
        assert torch_ocl.compile_stats()["replay_live_outputs"] > 0
        views = [f(x)[1:] for x in xs]  # a view keeps its output alive too
        for x, v in zip(xs, views):
            torch.testing.assert_close(v.cpu(), torch.tanh(lin(x))[1:].cpu())
        del outs, views, o, v
        for x in xs:  # outputs dropped at once: replayed
            torch.testing.assert_close(f(x).cpu(), torch.tanh(lin(x)).cpu())
    assert torch_ocl.compile_stats()["replays"] > 0


def test_buffer_mutation_reaches_the_real_buffer():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", torch.zeros(3))

        def forward(self, x):
            self.n.add_(x.sum(0))
            return self.n * 2

    m = Counter().to(OCL)
    f = torch.compile(m, backend="ocl", mode="reduce-overhead")
    total = torch.zeros(3)
    with torch.no_grad():
        for i in range(6):
            x = torch.full((2, 3), float(i), device=OCL)
            total += x.cpu().sum(0)
            torch.testing.assert_close(f(x).cpu(), total * 2)
    torch.testing.assert_close(m.n.cpu(), total)
    assert torch_ocl.compile_stats()["replays"] > 0


def test_not_replayed_random_and_cpu_fallback():
    drop = nn.Dropout(0.5).train()
    f = torch.compile(lambda x: drop(x) + 1, backend="ocl", mode="reduce-overhead")
    x = torch.ones(4096, device=OCL)
    with torch.no_grad():
        a, b, c = (f(x).cpu() for _ in range(3))
    assert not torch.equal(a, b) and not torch.equal(b, c)  # fresh draws every call
    assert 0.4 < (a == 1).float().mean() < 0.6
    assert torch_ocl.compile_stats()["captures"] == 0


def _train(model, opt, xs, ys, steps, accumulate=1):
    losses = []
    for i in range(steps):
        opt.zero_grad(set_to_none=True)
        for k in range(accumulate):
            loss = F.cross_entropy(model(xs[(i + k) % len(xs)]), ys[(i + k) % len(ys)])
            loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("accumulate", [1, 2])
def test_training_replays_match_eager(accumulate):
    """Forward and backward graphs are replayed; with two forwards before a
    backward the first forward's saved tensors are alive, so the second runs
    normally instead of overwriting them."""
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 32), nn.LayerNorm(32), nn.ReLU(),
                         nn.Linear(32, 5))
    xs = [torch.randn(8, 16, device=OCL) for _ in range(3)]
    ys = [torch.randint(0, 5, (8,), device=OCL) for _ in range(3)]
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    oe = torch.optim.SGD(me.parameters(), lr=0.1, momentum=0.9)
    oc = torch.optim.SGD(mc.parameters(), lr=0.1, momentum=0.9)
    le = _train(me, oe, xs, ys, 8, accumulate)
    lc = _train(torch.compile(mc, backend="ocl", mode="reduce-overhead"), oc, xs, ys, 8, accumulate)
    torch.testing.assert_close(torch.tensor(lc), torch.tensor(le), rtol=1e-5, atol=1e-5)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        torch.testing.assert_close(pc.cpu(), pe.cpu(), rtol=1e-5, atol=1e-5)
    s = torch_ocl.compile_stats()
    assert s["replays"] > 0, s
    if accumulate > 1:
        assert s["replay_live_outputs"] > 0, s


def test_batchnorm_running_stats_replayed():
    torch.manual_seed(0)
    base = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 36, 3))
    me, mc = copy.deepcopy(base).to(OCL), copy.deepcopy(base).to(OCL)
    xs = [torch.randn(2, 3, 8, 8, device=OCL) for _ in range(2)]
    ys = [torch.randint(0, 3, (2,), device=OCL) for _ in range(2)]
    oe, oc = torch.optim.SGD(me.parameters(), lr=0.05), torch.optim.SGD(mc.parameters(), lr=0.05)
    le = _train(me, oe, xs, ys, 6)
    lc = _train(torch.compile(mc, backend="ocl", mode="reduce-overhead"), oc, xs, ys, 6)
    torch.testing.assert_close(torch.tensor(lc), torch.tensor(le), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(mc[1].running_mean.cpu(), me[1].running_mean.cpu(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(mc[1].running_var.cpu(), me[1].running_var.cpu(), rtol=1e-5, atol=1e-6)
    assert torch_ocl.compile_stats()["replays"] > 0


@pytest.mark.skipif(not hasattr(torch.accelerator, "Graph"), reason="torch.accelerator.Graph is torch >= 2.14")
def test_accelerator_graph_captures_on_ocl():
    x = torch.ones(4, device=OCL)
    g = torch.accelerator.Graph()
    with g:
        assert torch.ocl.is_current_stream_capturing()
        y = x * 5 + 1
    assert not torch.ocl.is_current_stream_capturing()
    x.fill_(2.0)
    g.replay()
    assert torch.equal(y.cpu(), torch.full((4,), 11.0))
    g.reset()
    with pytest.raises(RuntimeError, match="random numbers"):
        with torch.accelerator.Graph():
            torch.rand(3, device=OCL)
    with pytest.raises(RuntimeError, match="cannot be replayed: .*host"):
        with torch.accelerator.Graph():
            (x * 2).sum().item()
    assert not torch.ocl.is_current_stream_capturing()


def test_reduce_overhead_inside_a_capture_runs_into_it():
    lin = nn.Linear(8, 8).to(OCL)
    f = torch.compile(lambda x: torch.relu(lin(x)), backend="ocl", mode="reduce-overhead")
    x = torch.randn(4, 8, device=OCL)
    with torch.no_grad():
        for _ in range(3):
            f(x)  # its own recording exists
        g = torch.ocl.OCLGraph()
        with torch.ocl.graph(g):
            out = f(x)
        x.copy_(torch.randn(4, 8))
        g.replay()
        torch.testing.assert_close(out.cpu(), torch.relu(lin(x)).cpu())


def test_hf_static_cache_generate_reduce_overhead():
    """Hugging Face's own recipe, unchanged: a static KV cache and
    torch.compile(model.forward, mode="reduce-overhead") (default backend)."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    m = transformers.LlamaForCausalLM(cfg).to(OCL).eval()
    m.generation_config.cache_implementation = "static"
    ids = torch.randint(0, 256, (1, 7), device=OCL)
    ref = m.generate(ids, max_new_tokens=8, do_sample=False).cpu()
    m.forward = torch.compile(m.forward, mode="reduce-overhead")
    for _ in range(3):
        assert torch.equal(m.generate(ids, max_new_tokens=8, do_sample=False).cpu(), ref)
    s = torch_ocl.compile_stats()
    assert s["replays"] > 0 and s["captures_refused"] == 0, s


def test_cross_entropy_targets_are_checked_at_each_replay():
    # nll_loss reads its out-of-range flag back, as the CPU raises: a
    # capture records that read as a check, reported like a bad index.
    logits = torch.randn(4, 5, device=OCL)
    target = torch.tensor([0, 1, 2, 3], device=OCL)
    F.cross_entropy(logits, target)
    g = torch.ocl.OCLGraph()
    with torch.ocl.graph(g):
        loss = F.cross_entropy(logits, target)
    logits.copy_(torch.randn(4, 5))
    target.copy_(torch.tensor([4, 4, 0, 1]))
    g.replay()
    torch.testing.assert_close(loss.cpu(), F.cross_entropy(logits.cpu(), target.cpu()))
    target.copy_(torch.tensor([0, 7, 0, 1]))
    g.replay()
    with pytest.raises(RuntimeError, match="Target 7 is out of bounds"):
        torch.ocl.synchronize()
    torch.ocl.synchronize()  # reported once
    target.copy_(torch.tensor([1, 1, 1, 1]))
    g.replay()
    torch.testing.assert_close(loss.cpu(), F.cross_entropy(logits.cpu(), target.cpu()))


def test_a_loss_inside_the_compiled_graph_replays():
    torch.manual_seed(0)
    m = nn.Linear(8, 5).to(OCL)

    def loss_of(x, y):
        return F.cross_entropy(m(x), y)

    step = torch.compile(loss_of, backend="ocl", mode="reduce-overhead")
    with torch.no_grad():
        for i in range(4):
            x, y = torch.randn(6, 8, device=OCL), torch.randint(0, 5, (6,), device=OCL)
            torch.testing.assert_close(step(x, y).cpu(), loss_of(x, y).cpu())
    st = torch_ocl.compile_stats()
    assert st["captures"] == 1 and st["captures_refused"] == 0 and st["replays"] == 2


def test_replay_bindings_signature_and_refusals():
    """compile/replay.py's per-call work in C++ (torch_ocl._C._ReplaySignature,
    _ReplayRecording): the signature of a call, and a recording that refuses
    to replay while its last outputs are held or when an input's shape
    changed, with clear errors for arguments that cannot be part of one."""
    from torch_ocl import _C

    x, w = torch.randn(4, 3, device=OCL), torch.randn(4, 4, device=OCL)
    owned = {}
    sig = _C._ReplaySignature([1], [2], [0])
    key = sig([x, 7, w], owned)
    assert key == ((7,), (w.data_ptr(),), (None,))
    owned[x.untyped_storage().data_ptr()] = object()
    assert sig([x[1:], 7, w], owned) == ((7,), (w.data_ptr(),), (x[1:].data_ptr(),))
    with pytest.raises(IndexError):
        sig([x, 7], owned)
    with pytest.raises(TypeError, match="not a tensor"):
        sig([x, 7, 3.0], owned)

    place = torch.zeros(4, 3, device=OCL)
    g = _C._Graph()
    g.capture_begin(0)
    out = _work(place, w)
    assert g.capture_end() is None
    rec = _C._ReplayRecording(g, [(0, place)], [out, 5], [out])
    args = [x]
    first = rec.run(args)
    assert args == [] and first[1] == 5
    torch.testing.assert_close(first[0].cpu(), _work(x, w).cpu())
    assert first[0] is not out and first[0].data_ptr() == out.data_ptr()
    assert rec.run([x]) == "live"  # `first` still holds the outputs
    del first
    assert rec.run([torch.randn(3, 4, device=OCL)]) == "shape"
    with pytest.raises(TypeError, match="not a tensor"):
        rec.run([1.0])
    again = rec.run([x * 2])
    torch.testing.assert_close(again[0].cpu(), _work(x * 2, w).cpu())
