"""index_select's (and so embedding's) index check without a host wait.

The CPU raises on an index outside the indexed dim before writing, so the
ocl op reads the indices' min and max back, which waits for everything
queued before (in a decoding loop, the whole previous step). Where the
host already knows the indices' range (an argmax / argmin / max(dim)
result, arange, randint, a copy from the host) and their version counter
has not moved since, the wait is spared; the bounds are still read back,
later, so a write that bypassed the counter fails the next
synchronization. adapter/aten/ocl_value_range.{h,cpp},
runtime/ops/index.c tocl_index_check_later."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import check_counted

OCL = "ocl"


def counts():
    return torch_ocl._C._index_check_counts()


def looked_up(weight, idx, spared):
    """embedding equal to the CPU's, and whether its check waited."""
    out = check_counted(counts, spared, lambda: F.embedding(idx, weight))
    assert torch.equal(out.cpu(), F.embedding(idx.cpu(), weight.cpu()))
    return out


@pytest.fixture
def weight():
    torch.manual_seed(0)
    return torch.randn(10, 4, device=OCL)


def test_argmax_and_arange_indices_spare_the_wait(weight):
    logits = torch.randn(3, 10, device=OCL)
    looked_up(weight, logits.argmax(-1), spared=True)
    looked_up(weight, logits.argmax(-1, keepdim=True), spared=True)
    looked_up(weight, logits.argmin(1), spared=True)
    looked_up(weight, logits.max(1).indices, spared=True)
    looked_up(weight, torch.randn(2, 5, device=OCL).argmax().view(1), spared=True)  # over all 10 elements
    looked_up(weight, torch.arange(2, 9, device=OCL), spared=True)
    looked_up(weight, torch.arange(9, -1, -3, device=OCL), spared=True)  # 9, 6, 3, 0
    looked_up(weight, torch.arange(0, 10, dtype=torch.int32, device=OCL), spared=True)
    looked_up(weight, torch.randint(0, 10, (6,), device=OCL), spared=True)
    looked_up(weight, torch.tensor([0, 9, 4]).to(OCL), spared=True)


def test_unknown_or_too_wide_ranges_wait(weight):
    looked_up(weight, torch.randn(3, 12, device=OCL).argmax(-1) % 10, spared=False)  # computed
    idx = torch.randn(4, 10, device=OCL).argmax(0)  # argmax over 4 rows: [0, 3], inside
    looked_up(weight, idx, spared=True)
    wide = torch.randn(3, 11, device=OCL)
    wide[:, 10] = -1e9  # never the max: the values are fine, the known range [0, 10] is not
    looked_up(weight, wide.argmax(-1), spared=False)
    with torch.inference_mode():  # inference tensors have no version counter: no facts
        looked_up(weight, torch.arange(3, device=OCL), spared=False)


def test_a_known_range_outside_the_dim_waits_and_raises_at_once(weight):
    s0, w0 = counts()
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(torch.arange(5, 11, device=OCL), weight)
    assert counts() == (s0, w0 + 1)


def test_in_place_writes_move_the_version_and_wait(weight):
    idx = torch.arange(5, device=OCL)
    idx.add_(0)
    looked_up(weight, idx, spared=False)
    idx = torch.arange(5, device=OCL)
    idx.copy_(torch.tensor([1, 1, 1, 1, 1]))  # copy_ from Python moves the counter after its copy noted a range
    looked_up(weight, idx, spared=False)


def test_a_write_that_bypasses_the_version_counter_fails_the_next_synchronization(weight):
    idx = torch.randn(1, 10, device=OCL).argmax(-1)
    idx.data.fill_(15)  # .data has its own version counter: idx's does not move
    s0, _ = counts()
    F.embedding(idx, weight)  # no wait, so no error yet
    assert counts()[0] == s0 + 1
    with pytest.raises(RuntimeError, match=r"index 15 is out of bounds \[0, 9\]"):
        torch.ocl.synchronize()
    torch.ocl.synchronize()  # reported once; the device is usable
    looked_up(weight, torch.arange(10, device=OCL), spared=True)


def test_a_captured_graph_keeps_its_own_check(weight):
    idx = torch.arange(3, device=OCL)
    out = torch.empty(3, 4, device=OCL)
    F.embedding(idx, weight)
    g = torch.ocl.OCLGraph()
    s0, w0 = counts()
    with torch.ocl.graph(g):
        out.copy_(F.embedding(idx, weight))
    assert counts() == (s0, w0 + 1)  # recorded with the check a replay repeats
    idx.copy_(torch.tensor([7, 8, 9]))
    g.replay()
    assert torch.equal(out.cpu(), weight.cpu()[7:10])
    idx.data.fill_(12)
    g.replay()
    with pytest.raises(RuntimeError, match=r"index 12 is out of bounds \[0, 9\]"):
        torch.ocl.synchronize()


def test_greedy_decoding_never_waits_on_its_indices():
    torch.manual_seed(0)
    tok, pos = torch.nn.Embedding(50, 8).to(OCL), torch.nn.Embedding(16, 8).to(OCL)
    head = torch.nn.Linear(8, 50).to(OCL)
    seq = [torch.tensor([[3]]).to(OCL)]
    s0, w0 = counts()
    with torch.no_grad():
        for t in range(8):
            h = tok(seq[-1]) + pos(torch.arange(t, t + 1, device=OCL))
            seq.append(head(h).argmax(-1))
    assert counts() == (s0 + 16, w0)
    ref = [torch.tensor([[3]])]
    tc, pc, hc = (m.cpu() for m in (tok, pos, head))
    for t in range(8):
        ref.append(hc(tc(ref[-1]) + pc(torch.arange(t, t + 1))).argmax(-1))
    assert torch.equal(torch.cat(seq, 1).cpu(), torch.cat(ref, 1))
