"""`vllm serve` on ocl (a subprocess on 127.0.0.1 and a free port, stopped by the test):
/health, greedy /v1/completions equal to HF CPU greedy, concurrent requests, and exit code
0 after Ctrl-C (the engine core runs in its own process here, as in production)."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from conftest import PROMPTS, free_port, hf_greedy

START_TIMEOUT = 300  # the loaded 2-core machine starts the server in ~30 s
REQUEST_TIMEOUT = 120


def _get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as r:
        return json.loads(r.read())


def test_vllm_serve(tiny_model, tmp_path):
    path = tiny_model("llama")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    vllm = os.path.join(os.path.dirname(sys.executable), "vllm")
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen([vllm, "serve", path, "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32",
                             "--max-model-len", "256", "--max-num-seqs", "8", "--kv-cache-memory-bytes",
                             str(32 << 20)], stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, TORCH_OCL_FALLBACK="error"))
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert proc.poll() is None, "server died:\n" + open(tmp_path / "serve.log").read()[-4000:]
            try:
                if _get(base + "/health") == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(1)

        def complete(prompt):
            return _post(base + "/v1/completions", {"model": path, "prompt": prompt, "max_tokens": 12,
                                                     "temperature": 0, "ignore_eos": True,
                                                     "return_token_ids": True})

        with ThreadPoolExecutor(len(PROMPTS)) as pool:
            answers = list(pool.map(complete, PROMPTS))
        prompt_ids = [a["choices"][0]["prompt_token_ids"] for a in answers]
        got = [a["choices"][0]["token_ids"] for a in answers]
        assert got == hf_greedy(path, prompt_ids, 12)
        assert all(a["choices"][0]["finish_reason"] == "length" for a in answers)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = "killed after 60 s"
    assert rc == 0, open(tmp_path / "serve.log").read()[-4000:]
