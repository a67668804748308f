"""The GPT example under torchrun: --standalone on one machine, and a
two-"node" launch (two torchrun processes on 127.0.0.1, one rank each).
Each rank trains on its slice of the same global batch, so the loss curve
must be the single-process one."""

import json
import os
import socket
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "train_gpt.py")
sys.path.insert(0, os.path.join(ROOT, "examples"))

import train_gpt  # noqa: E402


def _env():
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", TQDM_DISABLE="1")
    env.setdefault("POCL_DEVICES", "pthread pthread")
    return env


def _torchrun(args, timeout=300, **kw):
    return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", *args], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _check(proc, timeout=300):
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"torchrun did not finish in {timeout} s:\n{out[-3000:]}")
    assert proc.returncode == 0, out[-3000:]
    return out


def _close(got, want, rtol):
    assert len(got) == len(want)
    for step, (a, b) in enumerate(zip(got, want)):
        assert abs(a - b) <= rtol * abs(b) + 1e-5, f"step {step}: {a} vs single process {b}\n{got}\n{want}"


@pytest.mark.parametrize("mode,amp,rtol", [("ddp", False, 1e-5), ("fsdp", True, 1e-3)], ids=["ddp", "fsdp_bf16"])
def test_torchrun_standalone(tmp_path, mode, amp, rtol):
    out_json = tmp_path / "losses.json"
    args = ["--standalone", "--nproc-per-node=2", EXAMPLE, "--preset", "test", "--parallel", mode,
            "--losses-json", str(out_json)] + ([] if amp else ["--no-amp"])
    out = _check(_torchrun(args))
    assert "all ops native" in out, out[-2000:]
    want = train_gpt.train("ocl", "test", amp=amp, progress=False)
    _close(json.loads(out_json.read_text()), want, rtol)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_torchrun_two_nodes(tmp_path):
    port = _free_port()
    out_json = tmp_path / "losses.json"
    common = ["--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}",
              "--rdzv-id=tocl-two-nodes"]
    tail = [EXAMPLE, "--preset", "test", "--parallel", "ddp", "--no-amp", "--losses-json", str(out_json)]
    nodes = [_torchrun(common + [f"--node-rank={r}"] + tail) for r in (0, 1)]
    outs = [_check(p) for p in nodes]
    want = train_gpt.train("ocl", "test", amp=False, progress=False)
    _close(json.loads(out_json.read_text()), want, 1e-5)
    assert all("loss" in o for o in outs[:1]), outs[0][-2000:]


def test_cuda_ddp_script_under_transfer_to_ocl(tmp_path):
    """A script written for CUDA + NCCL runs unchanged under torchrun and
    torch_ocl.transfer_to_ocl ("nccl" becomes oclgloo, "cuda:r" ocl:r)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "ddp_cuda.py")
    out = tmp_path / "ocl.json"
    _check(_torchrun(["--standalone", "--nproc-per-node=2", "-m", "torch_ocl.transfer_to_ocl", script,
                      "--out", str(out)]))
    ref = tmp_path / "cpu.json"
    r = subprocess.run([sys.executable, script, "--device", "cpu", "--out", str(ref)], env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got, want = json.loads(out.read_text()), json.loads(ref.read_text())
    assert got["device"].startswith("ocl"), got
    _close(got["losses"], want["losses"], 1e-4)


def test_hf_trainer_two_ranks_with_accelerate_integration(tmp_path):
    # A Trainer script written for ocl (torch_ocl.integrations.accelerate.enable())
    # under torchrun: accelerate runs it as DDP over oclgloo, so both ranks
    # end with the same parameters (without the integration each rank
    # would train alone on the CPU).
    script = os.path.join(ROOT, "tests", "python", "fixtures", "port", "hf_trainer_cuda.py")
    out = tmp_path / "hf.json"
    args = ["--standalone", "--nproc-per-node=2", script, "--ocl-accelerate", "--precision", "bf16",
            "--out", str(out), "--workdir", str(tmp_path / "work")]
    _check(_torchrun(args), timeout=600)
    ranks = [json.loads((tmp_path / f"hf.json.rank{r}").read_text()) for r in range(2)]
    for r, res in enumerate(ranks):
        assert res["world_size"] == 2 and res["distributed_type"].endswith("MULTI_CPU"), res
        assert res["param_devices"] == ["ocl"] and res["device"] == f"ocl:{r}", res
        assert res["steps"] == 3 and all(l == l for l in res["losses"]), res
    assert ranks[0]["param_sum"] == ranks[1]["param_sum"], ranks
