"""Run a function on N spawned ranks of a real process group.

Each rank is a fresh process (spawn: OpenCL state does not survive fork) on
its own ocl device (rank r on ocl:r; POCL_DEVICES must give N devices), and
the group meets through a FileStore, so no port is needed. A rank's
exception comes back with its traceback; a world that outlives its deadline
is killed and reported, so a bug fails the test instead of hanging it.
"""

import datetime
import os
import tempfile
import time

import torch.multiprocessing as mp

# Collective timeout inside the group: long enough for a loaded 2-core
# machine, short enough that a hang fails the test.
PG_TIMEOUT = datetime.timedelta(seconds=90)


def _entry(rank, world_size, store_path, target, args, backend, timeout_s):
    import torch
    import torch.distributed as dist

    torch.ocl.set_device(rank)
    if backend is not None:
        dist.init_process_group(backend, init_method=f"file://{store_path}", rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(seconds=timeout_s))
    try:
        target(rank, world_size, *args)
    finally:
        if backend is not None and dist.is_initialized():
            dist.destroy_process_group()


def run_world(target, world_size=2, args=(), backend="cpu:gloo,ocl:oclgloo", deadline_s=600,
              pg_timeout_s=PG_TIMEOUT.total_seconds()):
    """Run target(rank, world_size, *args) on world_size ranks in a group
    made with ``backend`` (None: the target makes its own)."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="tocl_dist_") as tmp:
        store = os.path.join(tmp, "store")
        ctx = mp.start_processes(_entry, args=(world_size, store, target, args, backend, pg_timeout_s),
                                 nprocs=world_size, join=False, start_method="spawn")
        end = time.monotonic() + deadline_s
        try:
            while not ctx.join(timeout=1):
                if time.monotonic() > end:
                    raise TimeoutError(f"{target.__name__}: the {world_size} ranks did not finish in {deadline_s} s")
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.kill()


class Checks:
    """Collects failed comparisons on a rank, so one world reports every
    mismatch at once (each rank still runs every collective, in order)."""

    def __init__(self, rank):
        self.rank = rank
        self.failures = []
        self.count = 0

    def close(self, name, got, want, **tol):
        import torch

        self.count += 1
        try:
            got = got.cpu() if isinstance(got, torch.Tensor) else got
            torch.testing.assert_close(got, want, **tol)
        except AssertionError as e:
            self.failures.append(f"rank {self.rank}: {name}: {str(e).splitlines()[0]}")

    def equal(self, name, got, want):
        self.count += 1
        if got != want:
            self.failures.append(f"rank {self.rank}: {name}: got {got!r}, want {want!r}")

    def done(self):
        assert not self.failures, f"{len(self.failures)} of {self.count} checks failed:\n" + "\n".join(self.failures)
