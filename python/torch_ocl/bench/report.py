"""Markdown, JSON and PNG output of a benchmark run, and comparison with an
earlier run."""

import json
from typing import Dict, List, Optional

HIGHER_IS_BETTER = {"GB/s", "GFLOP/s", "samples/s", "images/s", "tokens/s", "sequences/s"}


def _fmt(v: Optional[float]) -> str:
    if v is None:
        return "n/a"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def _ratio(a, b, unit):
    if a is None or b is None or not a or not b:
        return None
    return a / b if unit in HIGHER_IS_BETTER else b / a


def costs(run: Dict, prices: Dict[str, float]) -> List[Dict]:
    """Cost per million tokens / per thousand images at the given USD per hour."""
    out = []
    for dev, data in run["devices"].items():
        if dev not in prices:
            continue
        per_s = prices[dev] / 3600.0
        for f in data.get("models", []):
            if not f["value"]:
                continue
            if f["unit"] == "tokens/s":
                out.append({"device": dev, "figure": f["name"], "cost": per_s / f["value"] * 1e6,
                            "unit": "USD per 1M tokens"})
            elif f["unit"] == "images/s":
                out.append({"device": dev, "figure": f["name"], "cost": per_s / f["value"] * 1e3,
                            "unit": "USD per 1k images"})
    return out


def _table(run: Dict, section: str) -> List[str]:
    devs = list(run["devices"])
    names = []
    for d in devs:
        for f in run["devices"][d].get(section, []):
            if (f["name"], f["unit"]) not in names:
                names.append((f["name"], f["unit"]))
    if not names:
        return []
    want = run["meta"].get("baseline", "cpu")
    base = want if want in devs else None
    others = [d for d in devs if d != base]
    head = "| figure | unit | " + " | ".join(devs) + " | " + " | ".join(f"{d} / {base}" for d in others if base) + " |"
    lines = [head, "|---|---|" + "---:|" * len(devs) + "---:|" * (len(others) if base else 0)]
    notes = []
    for name, unit in names:
        vals = {}
        cells = []
        for d in devs:
            f = next((x for x in run["devices"][d].get(section, []) if x["name"] == name), None)
            vals[d] = f["value"] if f else None
            mark = ""
            if f and f.get("fallback_ops"):
                mark = " †"
                notes.append(f"{d}, {name}: CPU fallback for {', '.join(f['fallback_ops'][:8])}"
                             + (" ..." if len(f["fallback_ops"]) > 8 else ""))
            cells.append(_fmt(vals[d]) + mark if f else "")
        ratios = []
        if base:
            for d in others:
                r = _ratio(vals[d], vals[base], unit)
                ratios.append(f"{r:.2f}x" if r else "")
        lines.append(f"| {name} | {unit} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    if notes:
        lines += ["", "† ran partly on the CPU through the visible fallback (no ocl kernel yet):", ""]
        lines += [f"- {n}" for n in notes]
    return lines


def markdown(run: Dict, prices: Dict[str, float]) -> str:
    m = run["meta"]
    out = [f"## {m['title']}", "",
           f"{m['date']}, commit {m['commit']}, torch {m['torch']}, torch_ocl {m['torch_ocl']}, "
           f"{m['machine']}. Ratios are measured side by side in this one run.", ""]
    for d, data in run["devices"].items():
        out.append(f"- `{d}`: {data['description']}")
    out += ["", "Host-clock figures synchronise the device around each timed repetition; ocl/cuda "
            "bandwidth figures use device events. Each value is the median of several repetitions after "
            "warm-up; the JSON has the spread. Micro figures run ocl in strict eager mode (one kernel per op: "
            "what a kernel achieves); models run in the default mode (fused eager).", ""]
    for section, title in (("micro", "Micro"), ("models", "Models"), ("serving", "Serving")):
        t = _table(run, section)
        if t:
            out += [f"### {title}", ""] + t + [""]
    from .fusion import markdown as fusion_table
    for d, data in run["devices"].items():
        if data.get("fusion"):
            out += [f"### Fused eager vs strict eager on `{d}`", "",
                    "Each workload alternates strict and fused repetitions in this run; speedup = strict time / "
                    "fused time (median). Fused kernels were built during warm-up.", ""]
            out += fusion_table(data["fusion"]) + [""]
    from .compiled import markdown as compiled_table
    for d, data in run["devices"].items():
        if data.get("compile"):
            out += [f"### torch.compile(backend=\"ocl\") vs eager on `{d}`", "",
                    "Each workload alternates eager and compiled repetitions in this run; speedup = eager time / "
                    "compiled time (median). Compilation and kernel builds happened in warm-up; the compile-time "
                    "rows ran in fresh processes, one after another, over new program and AOTAutogradCache "
                    "directories (AOTAutogradCache only where the row turns it on).", ""]
            out += compiled_table(data["compile"]) + [""]
    from .distributed import markdown as distributed_table
    for d, data in run["devices"].items():
        if data.get("distributed"):
            out += [f"### Distributed: 2 ranks (ocl:0, ocl:1) over loopback Gloo", "",
                    "All-reduce: the three columns alternate in one run (median); bus bandwidth = bytes x "
                    "2(n-1)/n / time. DDP: a local step on each rank and a DDP step alternate; the hidden "
                    "share is the part of the all-reduce time (issued to Gloo until complete) before the last "
                    "gradient was ready.", ""]
            out += distributed_table(data["distributed"]) + [""]
    c = costs(run, prices)
    if c:
        out += ["### Cost", "", "| device | figure | cost |", "|---|---|---:|"]
        out += [f"| {x['device']} | {x['figure']} | {x['cost']:.4g} {x['unit']} |" for x in c]
        out.append("")
    return "\n".join(out)


def compare(run: Dict, old: Dict) -> str:
    lines = ["| device | figure | old | new | change |", "|---|---|---:|---:|---:|"]
    for d, data in run["devices"].items():
        od = old.get("devices", {}).get(d, {})
        for section in ("micro", "models"):
            for f in data.get(section, []):
                o = next((x for x in od.get(section, []) if x["name"] == f["name"]), None)
                if not o or not o["value"] or not f["value"]:
                    continue
                r = _ratio(f["value"], o["value"], f["unit"])
                lines.append(f"| {d} | {f['name']} | {_fmt(o['value'])} | {_fmt(f['value'])} | {r - 1:+.0%} |")
    return "\n".join(lines)


def chart(run: Dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = run["meta"].get("baseline", "cpu")
    devs = [d for d in run["devices"] if d != base]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    ax = axes[0]
    cpu = {f["name"]: f for f in run["devices"].get(base, {}).get("models", [])}
    names = [f["name"] for f in run["devices"].get(base, {}).get("models", [])]
    width = 0.8 / max(len(devs), 1)
    for i, d in enumerate(devs):
        vals = []
        for n in names:
            f = next((x for x in run["devices"][d].get("models", []) if x["name"] == n), None)
            vals.append(_ratio(f["value"], cpu[n]["value"], f["unit"]) or 0 if f else 0)
        ax.barh([k + i * width for k in range(len(names))], vals, height=width, label=d)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks([k + width * (len(devs) - 1) / 2 for k in range(len(names))])
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xlabel(f"throughput relative to {'PyTorch CPU' if base == 'cpu' else base} (higher is better)")
    ax.set_title("Models")
    ax.legend(fontsize=7)
    ax = axes[1]
    labels, vals = [], []
    for d in devs:
        for f in run["devices"][d].get("micro", []):
            if f.get("limit") and f["value"]:
                labels.append(f"{d}: {f['name']}")
                vals.append(f["value"] / f["limit"])
    ax.barh(range(len(vals)), vals)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(range(len(vals)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("fraction of the device's measured copy bandwidth")
    ax.set_title("Micro: bandwidth vs limit")
    fig.suptitle(run["meta"]["title"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def load(path: str) -> Dict:
    with open(path) as f:
        return json.load(f)
