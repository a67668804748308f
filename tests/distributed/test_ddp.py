"""DistributedDataParallel on ocl: parity with a single-process CPU
reference over several SGD steps (the reference trains on the ranks' batches
concatenated; DDP's averaged gradients are that batch's mean gradient)."""

import copy

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from harness import run_world

STEPS = 3
BATCH = 4  # per rank


class MLP(nn.Module):
    def __init__(self, unused_branch=False, width=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                  nn.Linear(width, 4))
        self.unused = nn.Linear(8, 4) if unused_branch else None

    def forward(self, x):
        return self.body(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                                 nn.Conv2d(6, 4, 3, stride=2), nn.BatchNorm2d(4), nn.ReLU(),
                                 nn.Flatten(), nn.Linear(4 * 3 * 3, 5))

    def forward(self, x):
        return self.net(x)


def batches(kind, rank, step, micro=0):
    g = torch.Generator().manual_seed(100 * step + 10 * rank + micro)
    if kind == "cnn":
        return torch.randn(BATCH, 3, 8, 8, generator=g), torch.randint(0, 5, (BATCH,), generator=g)
    return torch.randn(BATCH, 8, generator=g), torch.randn(BATCH, 4, generator=g)


def loss_fn(kind, out, y):
    return nn.functional.cross_entropy(out, y) if kind == "cnn" else nn.functional.mse_loss(out, y)


def make_model(kind, cfg):
    torch.manual_seed(0)
    return CNN() if kind == "cnn" else MLP(unused_branch=cfg.get("find_unused_parameters", False))


def reference_params(kind, cfg, ws):
    """The same training on one CPU process."""
    model = make_model(kind, cfg)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    micro = cfg.get("micro", 1)
    for step in range(STEPS):
        opt.zero_grad()
        if kind == "cnn":
            # BatchNorm normalises per rank: average the ranks' own gradients,
            # and keep rank 0's running statistics (DDP broadcasts them).
            grads = None
            replicas = [copy.deepcopy(model) for _ in range(ws)]
            for r, rep in enumerate(replicas):
                x, y = batches(kind, r, step)
                loss_fn(kind, rep(x), y).backward()
                g = [p.grad / ws for p in rep.parameters()]
                grads = g if grads is None else [a + b for a, b in zip(grads, g)]
            for p, g in zip(model.parameters(), grads):
                p.grad = g
            model.load_state_dict({**model.state_dict(), **{k: v for k, v in replicas[0].state_dict().items()
                                                            if "running" in k or "num_batches" in k}})
        else:
            for m in range(micro):
                xs, ys = zip(*(batches(kind, r, step, m) for r in range(ws)))
                loss_fn(kind, model(torch.cat(xs)), torch.cat(ys)).backward()
        opt.step()
    return [p.detach() for p in model.parameters()], {k: v for k, v in model.state_dict().items() if "running" in k}


def _ddp_world(rank, ws, kind, cfg):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    dev = torch.device("ocl", rank)
    model = make_model(kind, cfg).to(dev)
    kwargs = {k: v for k, v in cfg.items() if k not in ("micro", "hook", "device_ids")}
    ddp = DDP(model, device_ids=[rank] if cfg.get("device_ids", True) else None, **kwargs)
    if cfg.get("hook") == "fp16":
        ddp.register_comm_hook(dist.group.WORLD, default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    micro = cfg.get("micro", 1)
    for step in range(STEPS):
        opt.zero_grad()
        for m in range(micro):
            x, y = batches(kind, rank, step, m)
            ctx = ddp.no_sync() if m < micro - 1 else torch.enable_grad()
            with ctx:
                loss_fn(kind, ddp(x.to(dev)), y.to(dev)).backward()
        opt.step()
    want, running = reference_params(kind, cfg, ws)
    tol = dict(rtol=2e-3, atol=2e-3) if cfg.get("hook") == "fp16" else dict(rtol=1e-4, atol=1e-5)
    for i, (p, w) in enumerate(zip(model.parameters(), want)):
        torch.testing.assert_close(p.detach().cpu(), w, **tol, msg=lambda m: f"rank {rank} parameter {i}: {m}")
    # DDP broadcasts rank 0's buffers at each forward, so after the last
    # step only rank 0's running statistics are the reference's.
    for k, v in (running.items() if rank == 0 else ()):
        torch.testing.assert_close(model.state_dict()[k].cpu(), v, rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"rank {rank} buffer {k}: {m}")


CONFIGS = {
    "default": ("mlp", {}),
    "small_buckets_bucket_view_no_device_ids": ("mlp", dict(bucket_cap_mb=0.0005, gradient_as_bucket_view=True,
                                                            device_ids=False)),
    "find_unused_parameters": ("mlp", dict(find_unused_parameters=True)),
    "static_graph": ("mlp", dict(static_graph=True)),
    "no_sync": ("mlp", dict(micro=2)),
    "fp16_compress_hook": ("mlp", dict(hook="fp16")),
    "cnn_batchnorm": ("cnn", {}),
}
SLOW = {"static_graph", "small_buckets_bucket_view_no_device_ids", "fp16_compress_hook"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in CONFIGS])
def test_ddp_matches_cpu_reference(name):
    kind, cfg = CONFIGS[name]
    run_world(_ddp_world, args=(kind, cfg))


def _join_world(rank, ws):
    """Uneven inputs under Join: rank 0 has one batch more; nobody hangs and
    the replicas stay identical."""
    from torch.distributed.algorithms.join import Join

    dev = torch.device("ocl", rank)
    model = make_model("mlp", {}).to(dev)
    ddp = DDP(model, device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    with Join([ddp]):
        for step in range(3 if rank == 0 else 2):
            opt.zero_grad()
            x, y = batches("mlp", rank, step)
            loss_fn("mlp", ddp(x.to(dev)), y.to(dev)).backward()
            opt.step()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    both = [torch.empty_like(flat) for _ in range(ws)]
    dist.all_gather(both, flat)
    torch.testing.assert_close(both[0].cpu(), both[1].cpu())


def test_ddp_join_uneven_inputs():
    run_world(_join_world)


def _overlap_world(rank, ws):
    """The first bucket's all-reduce starts in Gloo before backward has
    produced the last gradient (the backend returns at once, so DDP's hooks
    do not wait for communication)."""
    import time

    dev = torch.device("ocl", rank)
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(256, 256), nn.Tanh()) for _ in range(12)]).to(dev)
    ddp = DDP(model, device_ids=[rank], bucket_cap_mb=0.25)
    backend = dist.group.WORLD._get_backend(dev)
    x = torch.randn(64, 256, device=dev)
    for _ in range(2):  # the first step builds kernels and rebuilds buckets
        ddp(x).sum().backward()
    torch.ocl.synchronize()
    backend._timeline(clear=True)
    ddp(x).sum().backward()
    spans = [s for s in backend._timeline() if s[0] == "oclgloo:all_reduce"]
    assert len(spans) >= 3, spans
    t0 = min(s[1] for s in spans)
    print(f"rank {rank} (op, queued, issued, done) ms:", [(round((q - t0) / 1e6, 2), round((i - t0) / 1e6, 2),
                                                          round((d - t0) / 1e6, 2)) for _, q, i, d in spans])
    # A bucket is issued once its gradients exist on the device (the issue
    # thread waits for the caller's stream), so the last bucket's issue
    # time is when backward's last gradient was ready.
    first_issued = min(s[2] for s in spans)
    last_ready = max(s[2] for s in spans)
    assert first_issued < last_ready, (
        f"rank {rank}: the first all-reduce started {(first_issued - last_ready) / 1e6:.2f} ms after backward's "
        f"last gradient: no overlap with backward")


def test_ddp_communication_starts_before_backward_ends():
    run_world(_overlap_world)
