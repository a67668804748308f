"""DTensor and tensor parallelism on ocl meshes: every redistribute between
Shard, Replicate and Partial on 1-D and 2-D meshes, ops on DTensors, random
ops, Colwise/Rowwise/SequenceParallel and loss_parallel against one device."""

import itertools

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn

from harness import Checks, run_world


def _global(shape, salt=0):
    g = torch.Generator().manual_seed(7 + salt)
    return torch.randint(-8, 8, shape, generator=g).float()  # sums and means stay exact


def _placements_1d():
    from torch.distributed.tensor import Partial, Replicate, Shard

    return {"S0": Shard(0), "S1": Shard(1), "R": Replicate(), "Psum": Partial("sum"), "Pavg": Partial("avg"),
            "Pmax": Partial("max")}


def _make(G, mesh, placements, rank_coords):
    """A DTensor whose global value is G under any placements (Partial:
    locals chosen so that their reduction is G)."""
    from torch.distributed.tensor import DTensor, Partial, Shard, distribute_tensor

    if not any(isinstance(p, Partial) for p in placements):
        return distribute_tensor(G.to(mesh.device_type), mesh, placements)
    local = G.clone()
    for dim, p in enumerate(placements):
        n, c = mesh.size(dim), rank_coords[dim]
        if isinstance(p, Shard):
            local = local.chunk(n, p.dim)[c]
        elif isinstance(p, Partial) and p.reduce_op == "sum":
            local = local / n  # n is a power of two: exact
        elif isinstance(p, Partial) and p.reduce_op == "max":
            local = local - (c != 0) * 3  # rank 0 on this dim holds the max
    dev = torch.device("ocl", torch.ocl.current_device())
    return DTensor.from_local(local.to(dev), mesh, placements, run_check=False)


def _redistribute_1d_world(rank, ws):
    from torch.distributed.device_mesh import init_device_mesh

    c = Checks(rank)
    mesh = init_device_mesh("ocl", (ws,))
    P = _placements_1d()
    G = _global((4, 6))
    for a, b in itertools.product(P, P):
        if P[b].is_partial() and P[a] != P[b] and not (P[a].is_shard() and P[b].reduce_op == "sum"):
            continue  # DTensor's own rule (any device): only Shard -> Partial(sum) makes a Partial
        src = _make(G, mesh, [P[a]], (rank,))
        try:
            dst = src.redistribute(mesh, [P[b]])
        except Exception as e:  # noqa: BLE001  (reported as a failed check)
            c.failures.append(f"rank {rank}: {a} -> {b}: {type(e).__name__}: {e}")
            continue
        c.close(f"{a} -> {b}", dst.full_tensor(), G)
    # distribute_tensor from rank 0's data, and with src_data_rank=None (each
    # rank's own data, no communication)
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    mine = _global((4, 6), salt=rank)
    d0 = distribute_tensor(mine.to("ocl"), mesh, [Shard(0)], src_data_rank=0)
    c.close("distribute_tensor src_data_rank=0", d0.full_tensor(), _global((4, 6), salt=0))
    dn = distribute_tensor(mine.to("ocl"), mesh, [Shard(0)], src_data_rank=None)
    c.close("distribute_tensor src_data_rank=None", dn.to_local(), mine.chunk(ws)[rank])
    # ops: sharded matmul and a sum that leaves a Partial
    A, B = _global((4, 6), 1), _global((6, 5), 2)
    dA = distribute_tensor(A.to("ocl"), mesh, [Shard(0)])
    dB = distribute_tensor(B.to("ocl"), mesh, [Replicate()])
    c.close("Shard(0) @ Replicate", (dA @ dB).full_tensor(), A @ B)
    dA1 = distribute_tensor(A.to("ocl"), mesh, [Shard(1)])
    dB0 = distribute_tensor(B.to("ocl"), mesh, [Shard(0)])
    prod = dA1 @ dB0
    c.equal("Shard(1) @ Shard(0) is Partial", prod.placements[0].is_partial(), True)
    c.close("Shard(1) @ Shard(0)", prod.full_tensor(), A @ B)
    c.close("sum of a sharded tensor", dA.sum().full_tensor(), A.sum())
    # random ops: the same on Replicate, different per shard
    torch.manual_seed(1234)
    rep = distribute_tensor(torch.ones(64, 8, device="ocl"), mesh, [Replicate()])
    drop = nn.functional.dropout(rep, p=0.5).to_local()
    both = [torch.empty_like(drop) for _ in range(ws)]
    dist.all_gather(both, drop)
    c.equal("dropout on Replicate is the same on every rank", torch.equal(both[0].cpu(), both[1].cpu()), True)
    sh = distribute_tensor(torch.ones(64, 8, device="ocl"), mesh, [Shard(0)])
    drop = nn.functional.dropout(sh, p=0.5).to_local()
    both = [torch.empty_like(drop) for _ in range(ws)]
    dist.all_gather(both, drop)
    c.equal("dropout differs between shards", torch.equal(both[0].cpu(), both[1].cpu()), False)
    c.done()


def _redistribute_2d_world(rank, ws):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Partial, Replicate, Shard

    c = Checks(rank)
    mesh = init_device_mesh("ocl", (2, 2), mesh_dim_names=("dp", "tp"))
    coords = mesh.get_coordinate()
    G = _global((4, 8))
    opts = [Shard(0), Shard(1), Replicate(), Partial("sum")]
    for a, b in itertools.product(itertools.product(opts, repeat=2), repeat=2):
        if any(pb.is_partial() and not (pa.is_shard() or pa == pb) for pa, pb in zip(a, b)):
            continue  # DTensor's own rule: only Shard -> Partial(sum) makes a Partial
        if a[0] == a[1] and a[0].is_shard():
            continue  # the same dim sharded twice: covered by S0,S1 cases
        src = _make(G, mesh, list(a), coords)
        name = f"{a} -> {b}"
        try:
            dst = src.redistribute(mesh, list(b))
        except Exception as e:  # noqa: BLE001
            c.failures.append(f"rank {rank}: {name}: {type(e).__name__}: {e}")
            continue
        c.close(name, dst.full_tensor(), G)
    c.done()


def test_dtensor_1d():
    run_world(_redistribute_1d_world)


@pytest.mark.world(4)
@pytest.mark.slow
def test_dtensor_redistribute_2d():
    run_world(_redistribute_2d_world, world_size=4, deadline_s=400)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)
        self.head = nn.Linear(8, 6)

    def forward(self, x):
        return self.head(self.down(torch.relu(self.up(self.norm(x)))))


def _tp_world(rank, ws):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                                   loss_parallel, parallelize_module)

    c = Checks(rank)
    dev = torch.device("ocl", rank)
    mesh = init_device_mesh("ocl", (ws,))
    torch.manual_seed(0)
    ref = MLP()
    x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(3))
    target = torch.randint(0, 6, (2, 4), generator=torch.Generator().manual_seed(4))
    ref_out = ref(x)
    loss = nn.functional.cross_entropy(ref_out.flatten(0, 1), target.flatten())
    loss.backward()
    import copy

    model = copy.deepcopy(ref).to(dev)
    for p in model.parameters():
        p.grad = None
    parallelize_module(model, mesh, {
        "norm": SequenceParallel(),
        "up": ColwiseParallel(input_layouts=Shard(1)),
        "down": RowwiseParallel(),
        "head": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False),
    })
    # SequenceParallel takes each rank's slice of the sequence (dim 1).
    out = model(x.chunk(ws, dim=1)[rank].to(dev))
    c.close("TP forward (SequenceParallel + Colwise + Rowwise)", out.full_tensor(), ref_out, rtol=1e-5, atol=1e-5)
    with loss_parallel():
        tp_loss = nn.functional.cross_entropy(out.flatten(0, 1), target.to(dev).flatten())
        tp_loss.backward()
    c.close("loss_parallel cross entropy", tp_loss.full_tensor(), loss.detach(), rtol=1e-5, atol=1e-6)
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        g = p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad
        c.close(f"TP gradient of {n}", g, q.grad, rtol=1e-4, atol=1e-5)
    c.done()


def test_tensor_parallel_matches_one_device():
    run_world(_tp_world)


def _fsdp_tp_world(rank, ws):
    """FSDP2 over dp and TP over tp on a 2x2 mesh trains like one CPU process."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("ocl", (2, 2), mesh_dim_names=("dp", "tp"))
    dp_rank = mesh.get_local_rank("dp")
    dev = torch.device("ocl", rank)
    torch.manual_seed(0)
    ref = MLP()
    import copy

    model = copy.deepcopy(ref).to(dev)
    parallelize_module(model, mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)

    def data(r, step):
        g = torch.Generator().manual_seed(50 + 10 * step + r)
        return torch.randn(3, 8, generator=g), torch.randn(3, 6, generator=g)

    for step in range(3):
        opt.zero_grad()
        x, y = data(dp_rank, step)
        nn.functional.mse_loss(model(x.to(dev)), y.to(dev)).backward()
        opt.step()
        ref_opt.zero_grad()
        xs, ys = zip(*(data(r, step) for r in range(2)))
        nn.functional.mse_loss(ref(torch.cat(xs)), torch.cat(ys)).backward()
        ref_opt.step()
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        torch.testing.assert_close(p.full_tensor().cpu(), q.detach(), rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"rank {rank} {n}: {m}")


@pytest.mark.world(4)
@pytest.mark.slow
def test_fsdp2_with_tensor_parallel_2x2():
    run_world(_fsdp_tp_world, world_size=4, deadline_s=400)
