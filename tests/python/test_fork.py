"""fork after the parent used ocl: the child gets a clear RuntimeError (as
CUDA's "Cannot re-initialize CUDA in forked subprocess"), never a hang;
DataLoader workers forked by the default start method feed an ocl training
loop; the 'spawn' start method gives children that use ocl. Each case runs
in its own process under a hard timeout."""

import os
import subprocess
import sys
import textwrap

import torch

TIMEOUT = 180


def _run(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=TIMEOUT, env=dict(os.environ, TORCH_OCL_FALLBACK="error"))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_forked_child_raises_instead_of_hanging():
    out = _run("""
        import os, sys, time, torch, torch_ocl
        x = torch.arange(6., device='ocl') * 2
        assert x.cpu().tolist() == [0., 2., 4., 6., 8., 10.]
        assert torch.ocl.is_initialized() and not torch.ocl._is_in_bad_fork()
        pid = os.fork()
        if pid == 0:
            ok = not torch.ocl.is_initialized() and torch.ocl._is_in_bad_fork()
            ok = ok and torch.ocl.device_count() >= 1  # known without the driver
            for attempt in (lambda: torch.ones(2, device='ocl'), lambda: x + 1, lambda: x.cpu(),
                            lambda: torch.ocl.synchronize(), lambda: torch.ocl.init()):
                try:
                    attempt()
                    ok = False
                except RuntimeError as e:
                    msg = str(e)
                    ok = ok and 'forked subprocess' in msg and 'spawn' in msg
            torch.manual_seed(1)  # seeds the CPU only, as in a DataLoader worker
            del x  # the parent's memory: left alone
            sys.exit(0 if ok else 3)  # a normal exit: atexit handlers run in the child
        deadline = time.time() + 120
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() > deadline:
                os.kill(pid, 9)
                raise SystemExit('the forked child hung')
            time.sleep(0.05)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        # The parent is unaffected.
        print((x + 1).sum().item(), torch.ones(3, device='ocl').sum().item())
    """)
    assert out.split() == ["36.0", "3.0"]


def test_fork_before_first_use_is_fine():
    """A child forked before the parent touched the driver initialises on its own."""
    out = _run("""
        import os, torch, torch_ocl
        pid = os.fork()
        if pid == 0:
            ok = torch.ocl.is_initialized() and (torch.ones(4, device='ocl') * 3).sum().item() == 12
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print(os.WEXITSTATUS(status), torch.ones(2, device='ocl').sum().item())
    """)
    assert out.split() == ["0", "2.0"]


TRAIN = """
import sys, torch, torch_ocl
from torch.utils.data import DataLoader, TensorDataset

def train(device, loader_kw):
    torch.manual_seed(0)
    xs = torch.randn(96, 8)
    ys = xs @ torch.randn(8, 1) + 0.1
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(TensorDataset(xs, ys), batch_size=16, shuffle=False, **loader_kw)
    losses = []
    for epoch in range(2):
        for xb, yb in loader:
            loss = torch.nn.functional.mse_loss(model(xb.to(device)), yb.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses

if __name__ == '__main__':
    torch.ones(1, device='ocl').sum().item()  # the parent has used ocl before the workers fork
    kw = dict(num_workers=2, pin_memory=True)
    if len(sys.argv) > 1:
        kw['multiprocessing_context'] = sys.argv[1]
    got = train('ocl', kw)
    want = train('cpu', {})
    assert len(got) == len(want) == 12
    assert all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, want)), (got, want)
    print('ok', len(got))
"""


def _run_file(tmp_path, code, *args):
    path = tmp_path / "train.py"
    path.write_text(code)
    r = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, TORCH_OCL_FALLBACK="error"))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_dataloader_fork_workers_pin_memory_feed_ocl_training(tmp_path):
    import multiprocessing

    assert multiprocessing.get_start_method() == "fork"  # the default this test is about
    assert _run_file(tmp_path, TRAIN).split() == ["ok", "12"]


def test_spawn_children_use_ocl(tmp_path):
    code = """
import multiprocessing as mp, torch, torch_ocl

def work(i):
    return (torch.arange(5., device='ocl') * i).sum().item()

if __name__ == '__main__':
    torch.ones(1, device='ocl').sum().item()
    with mp.get_context('spawn').Pool(2) as pool:
        print(pool.map(work, [1, 2, 3]))
"""
    assert _run_file(tmp_path, code).strip() == str([(torch.arange(5.0) * i).sum().item() for i in (1, 2, 3)])
