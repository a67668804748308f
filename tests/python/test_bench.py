"""The benchmark command runs (tiny sizes) and its arithmetic is right. It
measures; nothing here asserts a speed."""

import json

import pytest
import torch

from torch_ocl.bench import __main__ as bench_main
from torch_ocl.bench import micro, report
from torch_ocl.bench.timing import Measurement, measure


def fig(name, unit, value, fb=()):
    return {"name": name, "unit": unit, "value": value, "method": "host clock", "spread": 0.0, "note": "",
            "fallback_ops": list(fb), "limit": None}


def fake_run():
    return {"meta": {"title": "t", "date": "d", "commit": "c", "torch": "x", "torch_ocl": "y", "machine": "m",
                     "quick": True},
            "devices": {"cpu": {"description": "CPU", "micro": [fig("add", "GB/s", 10.0), fig("op", "us", 2.0)],
                                "models": [fig("gen", "tokens/s", 100.0), fig("img", "images/s", 50.0)]},
                        "ocl:0": {"description": "PoCL", "micro": [fig("add", "GB/s", 20.0), fig("op", "us", 8.0)],
                                  "models": [fig("gen", "tokens/s", 50.0, ["aten::foo"]),
                                             fig("img", "images/s", 25.0)]}}}


def test_measurement_statistics():
    m = Measurement([4.0, 2.0, 6.0], inner=2, method="host clock + sync")
    assert m.median_ms == 2.0  # median 4 ms per repetition of 2 calls
    assert m.spread == pytest.approx(1.0)  # (6 - 2) / 4


def test_ratios_follow_the_unit_direction():
    md = report.markdown(fake_run(), {})
    assert "| add | GB/s | 10.0 | 20.0 | 2.00x |" in md  # throughput: ocl / cpu
    assert "| op | us | 2 | 8 | 0.25x |" in md  # time: cpu / ocl, so higher is better
    assert "| gen | tokens/s | 100 | 50.0 † | 0.50x |" in md
    assert "ocl:0, gen: CPU fallback for aten::foo" in md


def test_costs_per_token_and_per_image():
    c = {(x["device"], x["figure"]): x for x in report.costs(fake_run(), {"ocl:0": 3.6})}
    # 3.6 USD/h = 0.001 USD/s; 50 tokens/s -> 2e-5 USD per token -> 20 USD per 1M tokens
    assert c[("ocl:0", "gen")]["cost"] == pytest.approx(20.0)
    assert c[("ocl:0", "img")]["cost"] == pytest.approx(0.04)  # per 1k images at 25 images/s
    assert ("cpu", "gen") not in c  # no price given for the CPU


def test_compare_reports_change():
    old = fake_run()
    new = fake_run()
    new["devices"]["ocl:0"]["micro"][0]["value"] = 30.0
    assert "| ocl:0 | add | 20.0 | 30.0 | +50% |" in report.compare(new, old)


@pytest.mark.parametrize("dev", ["cpu", "ocl"])
def test_micro_figures_run_tiny(dev):
    d = torch.device(dev)
    m = measure(lambda: torch.ones(8, device=d) + 1, d, reps=2, warmup=1)
    assert len(m.times_ms) == 2 and m.median_ms >= 0
    figs = micro.bandwidth(d, 1, 2) + micro.host_cost(d, 20) + micro.gemm(d, [16], [torch.float32], 2)
    names = [f["name"] for f in figs]
    assert names[:3] == ["copy 1 MiB fp32", "add 1 MiB fp32", "sum 1 MiB fp32"]
    assert all(f["value"] and f["value"] > 0 for f in figs)
    assert all(f["fallback_ops"] == [] for f in figs)


def test_command_writes_markdown_json_and_chart(tmp_path, monkeypatch):
    # The smallest end-to-end run: micro figures only, with their sizes shrunk.
    monkeypatch.setattr(micro, "run", lambda device, quick: micro.bandwidth(device, 1, 2))
    out = tmp_path / "run"
    assert bench_main.main(["--quick", "--suite", "micro", "--devices", "cpu,ocl:0", "--out", str(out)]) == 0
    data = json.loads((tmp_path / "run.json").read_text())
    assert set(data["devices"]) == {"cpu", "ocl:0"}
    assert "copy 1 MiB fp32" in (tmp_path / "run.md").read_text()
    assert (tmp_path / "run.png").stat().st_size > 0


def test_compiled_table_marks_goals_and_compile_time():
    from torch_ocl.bench import compiled

    rows = [{"name": "train", "goal": 1.3, "eager_mode": "strict", "eager_ms": 13.0, "compiled_ms": 10.0,
             "speedup": 1.3},
            {"name": "decode", "goal": 2.0, "eager_mode": "fused", "eager_ms": 10.0, "compiled_ms": 8.0,
             "speedup": 1.25, "tokens_per_s_eager": 800.0, "tokens_per_s_compiled": 1000.0},
            {"name": "compile, cold", "seconds": 12.5, "program_builds": 40},
            {"name": "compile, warm", "error": "Traceback\nRuntimeError: boom"}]
    md = "\n".join(compiled.markdown(rows))
    assert "| train | 13.000 | 10.000 | 1.30x | 1.30x | yes |  |" in md
    assert "| decode | 10.000 | 8.000 | 1.25x | 2.00x | no | 800.0 vs 1000.0 tokens/s |" in md
    assert "| compile, cold | 12.5 | 40 |" in md
    assert "| compile, warm | failed: RuntimeError: boom | |" in md


def test_distributed_table_marks_goals():
    from torch_ocl.bench import distributed

    rows = [{"kind": "allreduce", "bytes": 1024, "cpu_ms": 0.2, "ocl_ms": 0.5, "ocl_unchecked_ms": 0.3,
             "cpu_busbw_gbs": 0.005, "ocl_busbw_gbs": 0.002, "ocl_unchecked_busbw_gbs": 0.003, "ratio": 0.4,
             "ratio_unchecked": 0.67},
            {"kind": "allreduce", "bytes": 4 << 20, "cpu_ms": 4.0, "ocl_ms": 4.4, "ocl_unchecked_ms": 4.2,
             "cpu_busbw_gbs": 1.0, "ocl_busbw_gbs": 0.95, "ocl_unchecked_busbw_gbs": 1.0, "ratio": 0.91,
             "ratio_unchecked": 0.95},
            {"kind": "ddp", "name": "DDP step", "local_ms": 10.0, "ddp_ms": 14.0, "scaling_efficiency": 0.71,
             "hidden_share": 0.4, "buckets": 3}]
    md = "\n".join(distributed.markdown(rows))
    assert "| 1 KiB | 0.2 | 0.5 | 0.3 |" in md and "0.40x | 0.67x |  |" in md  # below 1 MiB: no goal
    assert "| 4 MiB |" in md and "0.91x | 0.95x | met |" in md
    assert "| DDP step (3 buckets) | 10.0 | 14.0 | 0.71 | 40% | not met (> 50%) |" in md
    assert distributed.markdown([]) == []


def test_cached_decoding_equals_the_full_forward():
    """TinyGPT.forward_cached (the bench's KV-cache decode) picks the tokens
    forward picks on the whole sequence."""
    from torch_ocl.bench.models import TinyGPT

    torch.manual_seed(0)
    g = TinyGPT(vocab=64, d=32, layers=2, heads=4, ctx=32).to("ocl").eval()
    seq = torch.randint(0, 64, (1, 5), device="ocl")
    with torch.no_grad():
        logits, cache = g.forward_cached(seq)
        cached = [logits.argmax(-1, keepdim=True)]
        for i in range(7):
            logits, cache = g.forward_cached(cached[-1], cache, 5 + i)
            cached.append(logits.argmax(-1, keepdim=True))
        full = seq
        for _ in range(8):
            full = torch.cat([full, g(full)[:, -1].argmax(-1, keepdim=True)], 1)
    assert torch.equal(torch.cat(cached, 1).cpu(), full[:, 5:].cpu())
