"""Run a function on N spawned ranks of a real process group.

Each rank is a fresh process (spawn: OpenCL state does not survive fork) on
its own ocl device (rank r on ocl:r; POCL_DEVICES must give N devices), and
the group meets through a FileStore, so no port is needed. A rank's
exception comes back with its traceback; a world that outlives its deadline
is killed and reported, so a bug fails the test instead of hanging it.
"""

import datetime
import faulthandler
import os
import shutil
import signal
import subprocess
import tempfile
import time

import torch.multiprocessing as mp

# Collective timeout inside the group: long enough for a loaded 2-core
# machine, short enough that a hang fails the test.
PG_TIMEOUT = datetime.timedelta(seconds=90)


def _entry(rank, world_size, store_path, target, args, backend, timeout_s):
    import torch
    import torch.distributed as dist

    # SIGUSR1 prints every Python thread's stack: the harness asks for it
    # before it kills a world that outlived its deadline.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
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
                    stacks = _dump_stacks(ctx.processes, tmp)
                    raise TimeoutError(f"{target.__name__}: the {world_size} ranks did not finish in {deadline_s} s; "
                                       f"their stacks (native stacks also in {stacks}):\n" + _tail(stacks))
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.kill()


def _dump_stacks(processes, tmp):
    """Native (gdb) and Python (faulthandler, on the rank's stderr) stacks of
    the ranks still alive, so a hang can be diagnosed from the test log.
    Returns the file with the native stacks (kept outside tmp)."""
    out = os.path.join(tempfile.gettempdir(), f"tocl_dist_hang_{os.getpid()}_{int(time.time())}.txt")
    with open(out, "w") as f:
        alive = [p for p in processes if p.is_alive()]
        # Every rank at once: under load gdb takes a minute to read torch's symbols.
        gdbs = []
        for p in alive:
            try:
                gdbs.append(subprocess.Popen(["gdb", "-p", str(p.pid), "-batch", "-ex", "thread apply all bt"],
                                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                            if shutil.which("gdb") else None)
            except OSError:
                gdbs.append(None)
        for p, g in zip(alive, gdbs):
            f.write(f"==== rank pid {p.pid}\n")
            if g is None:
                f.write("gdb is not available\n")
                continue
            try:
                f.write(g.communicate(timeout=150)[0])
            except subprocess.TimeoutExpired:
                g.kill()
                f.write("gdb failed: timed out after 150 s\n")
        # After gdb: a rank still importing torch has no handler yet, and
        # SIGUSR1 would end it.
        for p in processes:
            if p.is_alive():
                try:
                    os.kill(p.pid, signal.SIGUSR1)
                except OSError:
                    pass
    time.sleep(1)  # let faulthandler's output reach stderr
    return out


def _tail(path, lines=200):
    """The frames that say where each thread waits (torch_ocl/ocl/gloo/pthread lines)."""
    try:
        with open(path) as f:
            keep = [l.rstrip() for l in f if l.startswith(("====", "Thread")) or
                    any(k in l for k in ("tocl_", "torch_ocl", "gloo", "pthread_cond", "clEnqueue", "clWait"))]
        return "\n".join(keep[:lines])
    except OSError:
        return "(no stacks)"


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
