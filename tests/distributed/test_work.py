"""Work semantics and bad input: errors surface from the call or from
wait() on the ranks that can see them, no rank hangs past the group's
timeout, and a group that reported a mismatch keeps working."""

import datetime
import os
import time

import pytest
import torch
import torch.distributed as dist

from harness import run_world


def _init(rank, ws, store_dir, timeout_s, **kw):
    dist.init_process_group("cpu:gloo,ocl:oclgloo", init_method=f"file://{store_dir}/store", rank=rank,
                            world_size=ws, timeout=datetime.timedelta(seconds=timeout_s), **kw)


def _bad_input_world(rank, ws):
    dev = torch.device("ocl", rank)

    def raises(what, fn, *needles):
        try:
            fn()
        except (RuntimeError, ValueError) as e:
            msg = str(e)
            assert all(n in msg for n in needles), f"{what}: unclear message: {msg}"
            return
        raise AssertionError(f"{what}: no error")

    # A mismatch across ranks: every rank gets the same clear error...
    raises("shape mismatch", lambda: dist.all_reduce(torch.ones(4 + rank, device=dev)),
           "do not match", "rank 0: Float[4]", "rank 1: Float[5]")
    raises("dtype mismatch",
           lambda: dist.all_reduce(torch.ones(4, device=dev, dtype=torch.float32 if rank == 0 else torch.float64)),
           "do not match", "Double")
    raises("reduce-op mismatch",
           lambda: dist.all_reduce(torch.ones(4, device=dev), op=dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX),
           "do not match")
    raises("root mismatch", lambda: dist.broadcast(torch.ones(4, device=dev), src=rank), "do not match")
    # ...and the group still works afterwards.
    t = torch.ones(3, device=dev)
    dist.all_reduce(t)
    assert t.cpu().tolist() == [2.0, 2.0, 2.0], t
    # Bad input on one rank's own call: raised there, before anything is queued.
    other = torch.device("ocl", 1 - rank)
    raises("tensors on two devices", lambda: dist.all_to_all_single(torch.empty(2, device=dev),
                                                                       torch.ones(2, device=other)),
           "one ocl device")
    raises("AVG of bools", lambda: dist.all_reduce(torch.ones(2, device=dev, dtype=torch.bool), op=dist.ReduceOp.AVG),
           "AVG", "bool")
    raises("PREMUL_SUM of ints", lambda: dist.all_reduce(torch.ones(2, device=dev, dtype=torch.int32),
                                                         op=dist._make_nccl_premul_sum(2.0)), "PREMUL_SUM")
    raises("wrong output size", lambda: dist.all_gather_into_tensor(torch.empty(3, device=dev),
                                                                   torch.ones(2, device=dev)), "expected")
    raises("sparse", lambda: dist.all_reduce(torch.ones(2, 2).to_sparse().to(dev)), "")
    t = torch.full((2,), float(rank), device=dev)
    dist.all_reduce(t)
    assert t.cpu().tolist() == [1.0, 1.0], t


def _bound_device_world(rank, ws, store_dir):
    _init(rank, ws, store_dir, 60, device_id=torch.device("ocl", rank))
    assert dist.get_backend() == "cpu:gloo,ocl:oclgloo", dist.get_backend()
    other = torch.device("ocl", 1 - rank)
    try:
        dist.all_reduce(torch.ones(2, device=other))
    except RuntimeError as e:
        assert "bound to ocl:" in str(e), str(e)
    else:
        raise AssertionError("a tensor on another device than the group's was accepted")
    t = torch.ones(2, device=torch.device("ocl", rank))
    dist.all_reduce(t)
    assert t.cpu().tolist() == [2.0, 2.0]
    dist.destroy_process_group()


def _skipped_collective_world(rank, ws, store_dir):
    """Rank 1 never joins the all-reduce: rank 0's wait() raises within the
    group's timeout instead of hanging."""
    _init(rank, ws, store_dir, 5)
    store = dist.distributed_c10d._get_default_store()
    if rank == 0:
        t0 = time.monotonic()
        work = dist.all_reduce(torch.ones(4, device="ocl:0"), async_op=True)
        try:
            work.wait()
        except RuntimeError as e:
            took = time.monotonic() - t0
            assert took < 60, took
            store.set("rank0_done", "1")
            print(f"rank 0: the skipped collective failed after {took:.1f} s: {str(e).splitlines()[0][:120]}")
        else:
            raise AssertionError("a collective that rank 1 skipped completed")
    else:
        store.wait(["rank0_done"], datetime.timedelta(seconds=120))
    os._exit(0)  # the group is broken by design; skip its teardown


def _dead_peer_world(rank, ws, store_dir):
    """Rank 1 dies after joining: rank 0's next collective fails, no hang."""
    _init(rank, ws, store_dir, 10)
    dist.barrier()
    if rank == 1:
        os._exit(0)
    time.sleep(1)
    t0 = time.monotonic()
    try:
        t = torch.ones(4, device="ocl:0")
        dist.all_reduce(t)
    except RuntimeError as e:
        print(f"rank 0: a collective with a dead peer failed after {time.monotonic() - t0:.1f} s: "
              f"{str(e).splitlines()[0][:120]}")
    else:
        raise AssertionError("a collective with a dead peer completed")
    os._exit(0)


def test_bad_input_is_a_clear_error_and_the_group_survives():
    run_world(_bad_input_world)


def test_group_bound_to_a_device_rejects_another():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run_world(_bound_device_world, args=(d,), backend=None)


def test_skipped_collective_times_out():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run_world(_skipped_collective_world, args=(d,), backend=None, deadline_s=120)


def test_dead_peer_is_an_error():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run_world(_dead_peer_world, args=(d,), backend=None, deadline_s=120)


def _destroy_while_a_job_is_held_world(rank, ws, store_dir):
    # Each finished job is held 1.5 s after its Work completes (test knob),
    # so destroy_process_group runs while the completion thread still owns
    # the temporaries' tensors, whose Python objects died first: freeing
    # them takes the GIL, which the destroying thread held while it joined
    # the comm threads (a deadlock until stop() let go of the GIL).
    _init(rank, ws, store_dir, 60)
    dev = torch.device("ocl", rank)
    out = torch.empty(4, device=dev)
    dist.reduce_scatter_tensor(out, torch.full((4 * ws,), float(rank + 1), device=dev))
    assert torch.equal(out.cpu(), torch.full((4,), float(sum(range(1, ws + 1)))))
    t0 = time.monotonic()
    dist.destroy_process_group()
    assert time.monotonic() - t0 < 30


def test_destroying_the_group_while_a_comm_thread_holds_tensors(monkeypatch):
    import tempfile

    monkeypatch.setenv("TORCH_OCL_DIST_TEST_HOLD_MS", "1500")
    with tempfile.TemporaryDirectory() as d:
        run_world(_destroy_while_a_job_is_held_world, args=(d,), backend=None, deadline_s=150)
