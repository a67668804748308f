"""Every collective on ocl tensors against the expected values and against
CPU Gloo on the same data, in one two-rank world per family (the group is
"cpu:gloo,ocl:oclgloo", so CPU tensors take Gloo itself).

The expected value is computed on every rank from every rank's data (each
rank can make any rank's inputs): that referee also catches CPU Gloo's own
reduce-scatter AVG bug (pytorch#162338), where comparing with Gloo would not.
"""

import pytest
import torch
import torch.distributed as dist

from harness import Checks, run_world

R = dist.ReduceOp
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
INTS = [torch.int32, torch.int64, torch.uint8]


def data(rank, shape, dtype, salt=0):
    g = torch.Generator().manual_seed(1000 * rank + salt)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.randint(-64, 64, shape, generator=g).double() / 8).to(dtype)
    return torch.randint(0 if dtype == torch.uint8 else -9, 10, shape, generator=g).to(dtype)


def reference(op, xs, ws):
    """op over the ranks' tensors, in float64 (ints exactly), cast back."""
    dt = xs[0].dtype
    if dt == torch.bool:
        st = torch.stack(xs)
        return {R.SUM: st.any(0), R.MAX: st.any(0), R.MIN: st.all(0), R.PRODUCT: st.all(0)}[op]
    wide = torch.stack([x.double() if dt.is_floating_point else x.long() for x in xs])
    if op == R.SUM:
        v = wide.sum(0)
    elif op == R.AVG:
        v = wide.sum(0) / ws if dt.is_floating_point else torch.div(wide.sum(0), ws, rounding_mode="trunc")
    elif op == R.MAX:
        v = wide.max(0).values
    elif op == R.MIN:
        v = wide.min(0).values
    elif op == R.PRODUCT:
        v = wide.prod(0)
    else:  # PREMUL_SUM by 0.5
        v = (wide * 0.5).sum(0)
    return v.to(dt)


def ops_for(dtype):
    if dtype == torch.bool:
        return [R.SUM, R.MAX, R.MIN, R.PRODUCT]
    if dtype.is_floating_point:
        return [R.SUM, R.AVG, R.MAX, R.MIN, R.PRODUCT, "premul"]
    return [R.SUM, R.AVG, R.MAX, R.MIN, R.PRODUCT]


def make_op(op):
    return dist._make_nccl_premul_sum(0.5) if op == "premul" else op


def op_key(op):
    return "PREMUL_SUM(0.5)" if op == "premul" else str(op).split(".")[-1]


def _all_reduce_world(rank, ws):
    c = Checks(rank)
    dev = torch.device("ocl", rank)
    for dtype in FLOATS + INTS + [torch.bool]:
        for op in ops_for(dtype):
            name = f"all_reduce {dtype} {op_key(op)}"
            xs = [data(r, (5, 3), dtype) for r in range(ws)]
            want = reference(R.SUM if op == "premul" else op, [x * 0.5 for x in xs] if op == "premul" else xs, ws)
            t = xs[rank].to(dev)
            dist.all_reduce(t, op=make_op(op))
            c.close(name, t, want)
            if op not in (R.AVG, "premul"):  # CPU Gloo has no PREMUL_SUM; its AVG may round differently
                cpu = xs[rank].clone()
                dist.all_reduce(cpu, op=make_op(op))
                c.close(name + " vs CPU Gloo", t, cpu)
    # Async, the future and its then(), and a kernel queued after wait().
    xs = [data(r, (7,), torch.float32, 1) for r in range(ws)]
    t = xs[rank].to(dev)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    c.close("async all_reduce, then a kernel after wait()", t * 2, (xs[0] + xs[1]) * 2)
    t = xs[rank].to(dev)
    fut = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0] + 1)
    c.close("get_future().then()", fut.wait(), xs[0] + xs[1] + 1)
    # Layouts: a transposed view, an offset view, an empty and a 0-dim tensor.
    base = data(rank, (3, 5), torch.float32, 2).to(dev)
    view = base.t()
    dist.all_reduce(view)
    want = sum(data(r, (3, 5), torch.float32, 2) for r in range(ws)).t()
    c.close("all_reduce of a transposed view", view, want)
    big = data(rank, (10,), torch.float32, 3).to(dev)
    dist.all_reduce(big[2:7])
    wbig = data(rank, (10,), torch.float32, 3)
    wbig[2:7] = sum(data(r, (10,), torch.float32, 3)[2:7] for r in range(ws))
    c.close("all_reduce of an offset view leaves the rest", big, wbig)
    e = torch.empty(0, device=dev)
    dist.all_reduce(e)
    c.equal("all_reduce of an empty tensor", tuple(e.shape), (0,))
    z = torch.tensor(float(rank + 1), device=dev)
    dist.all_reduce(z)
    c.close("all_reduce of a 0-dim tensor", z, torch.tensor(3.0))
    # Coalesced.
    a, b = data(rank, (4,), torch.float32, 4).to(dev), data(rank, (2, 3), torch.float32, 5).to(dev)
    dist.all_reduce_coalesced([a, b], op=R.AVG)
    c.close("all_reduce_coalesced AVG (first)", a, sum(data(r, (4,), torch.float32, 4) for r in range(ws)) / ws)
    c.close("all_reduce_coalesced AVG (second)", b, sum(data(r, (2, 3), torch.float32, 5) for r in range(ws)) / ws)
    c.done()


def _gather_scatter_world(rank, ws):
    c = Checks(rank)
    dev = torch.device("ocl", rank)
    for dtype in [torch.float32, torch.bfloat16, torch.int64, torch.bool]:
        xs = [data(r, (2, 3), dtype, 10) for r in range(ws)]
        # broadcast from the last rank
        t = xs[rank].to(dev)
        dist.broadcast(t, src=ws - 1)
        c.close(f"broadcast {dtype}", t, xs[ws - 1])
        # all_gather (list) and all_gather_into_tensor
        outs = [torch.empty_like(xs[0], device=dev) for _ in range(ws)]
        dist.all_gather(outs, xs[rank].to(dev))
        for r in range(ws):
            c.close(f"all_gather {dtype} [{r}]", outs[r], xs[r])
        flat = torch.empty((ws * 2, 3), dtype=dtype, device=dev)
        dist.all_gather_into_tensor(flat, xs[rank].to(dev))
        c.close(f"all_gather_into_tensor {dtype}", flat, torch.cat(xs))
        # gather to rank 0, scatter from rank 1
        g = [torch.empty_like(xs[0], device=dev) for _ in range(ws)] if rank == 0 else None
        dist.gather(xs[rank].to(dev), g, dst=0)
        if rank == 0:
            for r in range(ws):
                c.close(f"gather {dtype} [{r}]", g[r], xs[r])
        out = torch.empty_like(xs[0], device=dev)
        src_list = [xs[r].to(dev) for r in range(ws)] if rank == 1 else None
        dist.scatter(out, src_list, src=1)
        c.close(f"scatter {dtype}", out, xs[rank])
    # reduce to rank 0: only the root's tensor changes
    x = data(rank, (6,), torch.float32, 11)
    t = x.to(dev)
    dist.reduce(t, dst=0, op=R.SUM)
    c.close("reduce SUM", t, sum(data(r, (6,), torch.float32, 11) for r in range(ws)) if rank == 0 else x)
    t = x.to(dev)
    dist.reduce(t, dst=0, op=R.AVG)
    c.close("reduce AVG", t, sum(data(r, (6,), torch.float32, 11) for r in range(ws)) / ws if rank == 0 else x)
    # a non-contiguous all_gather input
    src = data(rank, (3, 4), torch.float32, 12).to(dev)[:, 1:3]
    flat = torch.empty((ws * 3, 2), device=dev)
    dist.all_gather_into_tensor(flat, src)
    c.close("all_gather_into_tensor of a sliced input", flat,
            torch.cat([data(r, (3, 4), torch.float32, 12)[:, 1:3] for r in range(ws)]))
    # objects (through the CPU backend of the group)
    objs = [None] * ws
    dist.all_gather_object(objs, {"rank": rank})
    c.equal("all_gather_object", objs, [{"rank": r} for r in range(ws)])
    lst = [f"from {rank}"]
    dist.broadcast_object_list(lst, src=1)
    c.equal("broadcast_object_list", lst, ["from 1"])
    dist.barrier()
    c.done()


def _reduce_scatter_world(rank, ws):
    c = Checks(rank)
    dev = torch.device("ocl", rank)
    for dtype in [torch.float32, torch.bfloat16, torch.float64, torch.int32]:
        for op in ops_for(dtype):
            name = f"reduce_scatter_tensor {dtype} {op_key(op)}"
            xs = [data(r, (ws * 4,), dtype, 20) for r in range(ws)]
            scaled = [x * 0.5 for x in xs] if op == "premul" else xs
            want = reference(R.SUM if op == "premul" else op, scaled, ws)[rank * 4:(rank + 1) * 4]
            out = torch.empty(4, dtype=dtype, device=dev)
            dist.reduce_scatter_tensor(out, xs[rank].to(dev), op=make_op(op))
            c.close(name, out, want)
        # the list form
        chunks = [[data(r, (3,), dtype, 30 + j) for j in range(ws)] for r in range(ws)]
        out = torch.empty(3, dtype=dtype, device=dev)
        dist.reduce_scatter(out, [t.to(dev) for t in chunks[rank]], op=R.SUM)
        c.close(f"reduce_scatter (list) {dtype}", out, reference(R.SUM, [chunks[r][rank] for r in range(ws)], ws))
    c.done()


def _all_to_all_world(rank, ws):
    c = Checks(rank)
    dev = torch.device("ocl", rank)
    # even
    xs = [data(r, (ws * 2, 3), torch.float32, 40) for r in range(ws)]
    out = torch.empty(ws * 2, 3, device=dev)
    dist.all_to_all_single(out, xs[rank].to(dev))
    c.close("all_to_all_single even", out, torch.cat([xs[r][rank * 2:(rank + 1) * 2] for r in range(ws)]))
    # uneven: rank r sends r + j + 1 rows to rank j
    def splits(r):
        return [r + j + 1 for j in range(ws)]

    xs = [data(r, (sum(splits(r)), 2), torch.int64, 41) for r in range(ws)]
    recv = [splits(r)[rank] for r in range(ws)]
    out = torch.empty(sum(recv), 2, dtype=torch.int64, device=dev)
    dist.all_to_all_single(out, xs[rank].to(dev), output_split_sizes=recv, input_split_sizes=splits(rank))
    want = torch.cat([xs[r].split(splits(r))[rank] for r in range(ws)])
    c.close("all_to_all_single uneven", out, want)
    # the list form
    ins = [[data(r, (j + 2,), torch.float32, 42) for j in range(ws)] for r in range(ws)]
    outs = [torch.empty(rank + 2, device=dev) for _ in range(ws)]
    dist.all_to_all(outs, [t.to(dev) for t in ins[rank]])
    for r in range(ws):
        c.close(f"all_to_all [{r}]", outs[r], ins[r][rank])
    c.done()


def _p2p_world(rank, ws):
    c = Checks(rank)
    dev = torch.device("ocl", rank)
    peer = 1 - rank
    x = data(rank, (5,), torch.float32, 50).to(dev)
    got = torch.empty(5, device=dev)
    if rank == 0:
        dist.send(x, dst=peer)
        dist.recv(got, src=peer)
    else:
        dist.recv(got, src=peer)
        dist.send(x, dst=peer)
    c.close("send/recv", got, data(peer, (5,), torch.float32, 50))
    # isend/irecv both ways at once, and batch_isend_irecv
    got = torch.empty(5, device=dev)
    works = [dist.isend(x, dst=peer), dist.irecv(got, src=peer)]
    for w in works:
        w.wait()
    c.close("isend/irecv", got, data(peer, (5,), torch.float32, 50))
    got = torch.empty(5, device=dev)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, x, peer), dist.P2POp(dist.irecv, got, peer)])
    for w in reqs:
        w.wait()
    c.close("batch_isend_irecv", got, data(peer, (5,), torch.float32, 50))
    c.done()


def _funcol_world(rank, ws):
    """The functional collectives DTensor uses (c10d_functional ops: the
    coalesced all-gather and reduce-scatter forms, wait_tensor)."""
    import torch.distributed._functional_collectives as funcol

    c = Checks(rank)
    dev = torch.device("ocl", rank)
    group = dist.group.WORLD
    a = data(rank, (2, 3), torch.float32, 60).to(dev)
    b = data(rank, (4,), torch.float32, 61).to(dev)
    got = funcol.all_gather_into_tensor_coalesced([a, b], group)
    c.close("all_gather_into_tensor_coalesced (a)", got[0], torch.cat([data(r, (2, 3), torch.float32, 60) for r in range(ws)]))
    c.close("all_gather_into_tensor_coalesced (b)", got[1], torch.cat([data(r, (4,), torch.float32, 61) for r in range(ws)]))
    x = data(rank, (ws * 2, 3), torch.float32, 62).to(dev)
    y = data(rank, (ws * 3,), torch.float32, 63).to(dev)
    got = funcol.reduce_scatter_tensor_coalesced([x, y], "avg", [0, 0], group)
    wx = sum(data(r, (ws * 2, 3), torch.float32, 62) for r in range(ws)) / ws
    wy = sum(data(r, (ws * 3,), torch.float32, 63) for r in range(ws)) / ws
    c.close("reduce_scatter_tensor_coalesced avg (x)", got[0], wx[rank * 2:(rank + 1) * 2])
    c.close("reduce_scatter_tensor_coalesced avg (y)", got[1], wy[rank * 3:(rank + 1) * 3])
    s = funcol.all_reduce(a, "max", group)
    c.close("funcol all_reduce max", s, torch.stack([data(r, (2, 3), torch.float32, 60) for r in range(ws)]).max(0).values)
    c.done()


@pytest.mark.parametrize("world", [_all_reduce_world, _gather_scatter_world, _reduce_scatter_world,
                                   _all_to_all_world, _p2p_world, _funcol_world],
                         ids=lambda f: f.__name__.strip("_").replace("_world", ""))
def test_collectives(world):
    run_world(world)
