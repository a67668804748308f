"""`module.to("ocl")` behaves as `module.to("cuda")`: parameters keep their
identity (so tied weights stay tied and optimizers built before the move keep
working), and gradients flow back across the device boundary."""

import torch
import torch.nn as nn


def tied_pair():
    emb = nn.Embedding(7, 4)
    head = nn.Linear(4, 7, bias=False)
    head.weight = emb.weight
    return nn.ModuleList([emb, head])


def test_tied_weights_stay_tied_both_ways():
    m = tied_pair()
    p = m[0].weight
    m.to("ocl")
    assert m[0].weight is m[1].weight is p  # same Parameter object, now on ocl
    assert p.device.type == "ocl"
    assert len(list(m.parameters())) == 1
    m.to("cpu")
    assert m[0].weight is m[1].weight is p and p.device.type == "cpu"


def test_tied_weight_gradient_is_the_sum_of_both_uses(no_fallback):
    grads = {}
    for dev in ("cpu", "ocl"):
        torch.manual_seed(0)
        m = tied_pair().to(dev)
        idx = torch.tensor([[1, 2, 2, 5]], device=dev)
        out = m[1](m[0](idx))
        (out * out).sum().backward()
        grads[dev] = m[0].weight.grad
    torch.testing.assert_close(grads["ocl"].cpu(), grads["cpu"])


def test_optimizer_built_before_the_move_updates_the_moved_parameters(no_fallback):
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    opt = torch.optim.SGD(lin.parameters(), lr=0.5)
    lin.to("ocl")
    before = lin.weight.detach().cpu().clone()
    lin(torch.ones(1, 3, device="ocl")).sum().backward()
    opt.step()
    assert not torch.equal(lin.weight.detach().cpu(), before)


def test_compatibility_rule():
    cpu, ocl = torch.ones(2), torch.ones(2, device="ocl")
    assert torch._has_compatible_shallow_copy_type(cpu, ocl)
    assert torch._has_compatible_shallow_copy_type(ocl, cpu)
    assert not torch._has_compatible_shallow_copy_type(ocl, torch.ones(2).to_sparse())
