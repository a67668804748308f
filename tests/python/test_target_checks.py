"""nll_loss / cross_entropy's target check without a host wait.

The CPU raises IndexError on a target outside [0, C), so the ocl kernel
flags one and the host reads the flag back, which waits for everything
queued before (a training step's whole forward). Where the host already
knows the target's values (copied from the host, torch.randint, a device
copy of either) and its version counter has not moved since, the wait is
spared and the flag is read back later: a write that bypassed the counter
fails the next synchronization. adapter/aten/ocl_value_range.{h,cpp}."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import check_counted

OCL = "ocl"


def counts():
    return torch_ocl._C._target_check_counts()


def checked(logits, target, spared, **kw):
    """cross_entropy equal to the CPU's, and whether its check waited."""
    loss = check_counted(counts, spared, lambda: F.cross_entropy(logits, target, **kw))
    torch.testing.assert_close(loss.cpu(), F.cross_entropy(logits.cpu(), target.cpu(), **kw))
    return loss


@pytest.fixture
def logits():
    torch.manual_seed(0)
    return torch.randn(16, 5, device=OCL)


def test_randint_targets_spare_the_wait(logits):
    checked(logits, torch.randint(0, 5, (16,), device=OCL), spared=True)
    checked(logits, torch.randint(2, 4, (16,), device=OCL), spared=True)


def test_targets_copied_from_the_host_spare_the_wait(logits):
    checked(logits, torch.tensor([0, 1, 2, 3, 4] * 3 + [4]).to(OCL), spared=True)
    checked(logits, torch.tensor([0, 1, 2, 3, 4] * 3 + [4], device=OCL), spared=True)
    # int32 from the host becomes int64 on the device: a different dtype, no fact
    checked(logits, torch.tensor([1] * 16, dtype=torch.int32).to(OCL, torch.int64), spared=False)


def test_device_copies_of_known_targets_spare_the_wait(logits):
    tok = torch.randint(0, 5, (4, 5), device=OCL)
    y = tok[:, 1:]  # a view of the randint storage: non-contiguous
    checked(logits, y.reshape(-1), spared=True)  # reshape copies
    # a fact covers its whole storage, so any view's values lie inside it
    checked(logits, tok.reshape(-1)[:16].clone(), spared=True)
    checked(logits, (tok.reshape(-1)[:16] + 0), spared=False)  # computed: unknown


def test_a_range_outside_the_classes_waits_and_raises(logits):
    t = torch.tensor([0] * 15 + [9]).to(OCL)
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        F.cross_entropy(logits, t)
    # ignore_index outside [0, C) is allowed, but the fact's range is then not inside [0, C)
    t = torch.tensor([-100] * 4 + [1] * 12).to(OCL)
    checked(logits, t, spared=False, ignore_index=-100)


def test_in_place_writes_move_the_version_and_wait(logits):
    t = torch.randint(0, 5, (16,), device=OCL)
    t[3] = 4
    checked(logits, t, spared=False)
    t[3] = 7
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(logits, t)
    u = torch.randint(0, 5, (16,), device=OCL)
    u.copy_(torch.randint(0, 5, (16,)))  # copy_ from Python bumps the version after noting
    checked(logits, u, spared=False)


def test_other_views_dtypes_and_inference_tensors_wait(logits):
    t = torch.randint(0, 5, (16,), device=OCL, dtype=torch.uint8)
    checked(logits, t, spared=True)  # kByte targets are accepted as the CPU does
    # uploads are scanned only for int64 / int32 (uint8 is mostly images)
    checked(logits, torch.tensor([1] * 16, dtype=torch.uint8).to(OCL), spared=False)
    with torch.inference_mode():
        ti = torch.randint(0, 5, (16,), device=OCL)
        checked(logits, ti, spared=False)  # no version counter
    w = torch.randint(0, 5, (32,), device=OCL, dtype=torch.int32)
    checked(logits, w.view(torch.int64)[:16] % 5, spared=False)


def test_a_freed_storage_leaves_no_fact_for_its_successor(logits):
    for _ in range(40):  # more than the table holds, each freed at once
        t = torch.randint(0, 5, (16,), device=OCL)
        del t
    bad = torch.full((16,), 6, dtype=torch.int64, device=OCL)
    with pytest.raises(IndexError, match="Target 6 is out of bounds"):
        F.cross_entropy(logits, bad)


def test_a_write_that_bypasses_the_version_counter_fails_the_next_synchronization(logits):
    t = torch.randint(0, 5, (16,), device=OCL)
    t.data[5] = 8  # .data has its own version counter: t's does not move
    s0, _ = counts()
    F.cross_entropy(logits, t)  # no wait, so no error yet
    assert counts()[0] == s0 + 1
    with pytest.raises(RuntimeError, match="Target 8 is out of bounds"):
        torch.ocl.synchronize()
    torch.ocl.synchronize()  # reported once; the device is usable
    checked(logits, torch.randint(0, 5, (16,), device=OCL), spared=True)


def test_a_training_step_with_known_targets_does_not_wait():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(OCL)
    mc = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    mc.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})
    x, y = torch.randn(32, 8), torch.randint(0, 4, (32,))
    xo, yo = x.to(OCL), y.to(OCL)
    s0, w0 = counts()
    for mod, xx, yy in ((m, xo, yo), (mc, x, y)):
        opt = torch.optim.SGD(mod.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            F.cross_entropy(mod(xx), yy).backward()
            opt.step()
    assert counts() == (s0 + 3, w0)
    for a, b in zip(m.parameters(), mc.parameters()):
        torch.testing.assert_close(a.detach().cpu(), b.detach(), atol=1e-5, rtol=1e-5)
