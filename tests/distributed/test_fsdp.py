"""FSDP2 (fully_shard) on ocl: parity with a single-process CPU reference
over several optimizer steps, resharding, mixed precision, gradient
accumulation, full state dicts and torch.distributed.checkpoint."""

import copy
import os
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn

from harness import run_world

STEPS = 3
BATCH = 4


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(torch.tanh(self.fc(x)) + x)


class Net(nn.Module):
    def __init__(self, width=12):
        super().__init__()
        self.inp = nn.Linear(6, width)  # 6 * 12 + 12: uneven shards on 4 ranks
        self.blocks = nn.ModuleList([Block(width) for _ in range(2)])
        self.out = nn.Linear(width, 3)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return self.out(x)


def batch(rank, step, micro=0):
    g = torch.Generator().manual_seed(100 * step + 10 * rank + micro)
    return torch.randn(BATCH, 6, generator=g), torch.randn(BATCH, 3, generator=g)


def reference(ws, micro=1, steps=STEPS):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(steps):
        opt.zero_grad()
        for m in range(micro):
            xs, ys = zip(*(batch(r, step, m) for r in range(ws)))
            nn.functional.mse_loss(model(torch.cat(xs)), torch.cat(ys)).backward()
        opt.step()
    return model.state_dict()


def shard(model, mesh, **kw):
    from torch.distributed.fsdp import fully_shard

    for b in model.blocks:
        fully_shard(b, mesh=mesh, **kw)
    fully_shard(model, mesh=mesh, **kw)
    return model


def full_state(model):
    return {k: (v.full_tensor() if hasattr(v, "full_tensor") else v).cpu() for k, v in model.state_dict().items()}


def _fsdp_world(rank, ws, cfg):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy

    dev = torch.device("ocl", rank)
    if cfg.get("hsdp"):
        mesh = init_device_mesh("ocl", (2, ws // 2), mesh_dim_names=("replicate", "shard"))
    else:
        mesh = init_device_mesh("ocl", (ws,))
    kw = {}
    if "reshard" in cfg:
        kw["reshard_after_forward"] = cfg["reshard"]
    if cfg.get("bf16"):
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    torch.manual_seed(0)
    model = shard(Net().to(dev), mesh, **kw)
    if cfg.get("force_sum") and hasattr(model, "set_force_sum_reduction_for_comms"):
        model.set_force_sum_reduction_for_comms(True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    micro = cfg.get("micro", 1)
    for step in range(STEPS):
        opt.zero_grad()
        for m in range(micro):
            model.set_requires_gradient_sync(m == micro - 1)
            x, y = batch(rank, step, m)
            nn.functional.mse_loss(model(x.to(dev)), y.to(dev)).backward()
        opt.step()
    if cfg.get("reshard", True) is True:
        # Resharded after forward: every unsharded parameter's storage is freed.
        sizes = [p._unsharded_param.untyped_storage().size() for p in _fsdp_params(model)
                 if hasattr(p, "_unsharded_param")]
        assert sizes and all(s == 0 for s in sizes), sizes
    want = reference(ws, micro)
    tol = dict(rtol=3e-2, atol=3e-2) if cfg.get("bf16") else dict(rtol=1e-4, atol=1e-5)
    got = full_state(model)
    for k, v in want.items():
        torch.testing.assert_close(got[k], v, **tol, msg=lambda m: f"rank {rank} {k}: {m}")


def _fsdp_params(model):
    for mod in model.modules():
        state = getattr(mod, "_get_fsdp_state", None)
        group = state()._fsdp_param_group if state else None
        if group is not None:
            yield from group.fsdp_params


CONFIGS = {
    "reshard_true": ({}, 2),
    "reshard_false": (dict(reshard=False), 2),
    "grad_accumulation": (dict(micro=2), 2),
    "mixed_precision_bf16": (dict(bf16=True), 2),
    "force_sum_reduction": (dict(force_sum=True), 2),
    "reshard_int_4_ranks": (dict(reshard=2), 4),
    "hsdp_2x2": (dict(hsdp=True), 4),
}
SLOW = {"reshard_false", "force_sum_reduction", "mixed_precision_bf16", "reshard_int_4_ranks", "hsdp_2x2"}


def _param(name):
    cfg, ws = CONFIGS[name]
    marks = [pytest.mark.world(ws)] + ([pytest.mark.slow] if name in SLOW else [])
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", [_param(n) for n in CONFIGS])
def test_fsdp2_matches_cpu_reference(name):
    cfg, ws = CONFIGS[name]
    run_world(_fsdp_world, world_size=ws, args=(cfg,), deadline_s=400)


def _checkpoint_world(rank, ws, path):
    """Save a sharded model and optimizer with torch.distributed.checkpoint,
    load them into a fresh sharded model, and train on identically."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.device_mesh import init_device_mesh

    dev = torch.device("ocl", rank)
    mesh = init_device_mesh("ocl", (ws,))
    torch.manual_seed(0)
    model = shard(Net().to(dev), mesh)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(2):
        opt.zero_grad()
        x, y = batch(rank, step)
        nn.functional.mse_loss(model(x.to(dev)), y.to(dev)).backward()
        opt.step()
    dcp.save({"model": model.state_dict(), "optim": opt.state_dict()}, checkpoint_id=path)
    torch.manual_seed(1)  # different initial weights
    fresh = shard(Net().to(dev), mesh)
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=1e-2)
    fresh_opt.zero_grad()
    nn.functional.mse_loss(fresh(batch(rank, 0)[0].to(dev)), batch(rank, 0)[1].to(dev)).backward()
    fresh_opt.step()  # materialise the optimizer state to load into
    state = {"model": fresh.state_dict(), "optim": fresh_opt.state_dict()}
    dcp.load(state, checkpoint_id=path)
    fresh.load_state_dict(state["model"])
    fresh_opt.load_state_dict(state["optim"])
    a, b = full_state(model), full_state(fresh)
    for k in a:
        torch.testing.assert_close(b[k], a[k], rtol=0, atol=0, msg=lambda m: f"rank {rank} loaded {k}: {m}")
    want = reference(ws, steps=3)
    for m_, o_ in ((fresh, fresh_opt),):
        o_.zero_grad()
        x, y = batch(rank, 2)
        nn.functional.mse_loss(m_(x.to(dev)), y.to(dev)).backward()
        o_.step()
    got = full_state(fresh)
    for k, v in want.items():
        torch.testing.assert_close(got[k], v, rtol=1e-4, atol=1e-5, msg=lambda m: f"rank {rank} resumed {k}: {m}")


def test_fsdp2_distributed_checkpoint_round_trip():
    with tempfile.TemporaryDirectory() as d:
        run_world(_checkpoint_world, args=(os.path.join(d, "ckpt"),), deadline_s=400)
