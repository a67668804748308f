"""Put benchmark JSON files (python -m torch_ocl.bench --out ...) side by
side: one row per micro figure and per fused-vs-strict workload, one column
per run, so a change can be judged against the run-to-run spread.

  python tools/bench_compare.py before.json after.json before2.json after2.json
"""

import json
import sys
from pathlib import Path


def rows(path):
    out = {}
    for dev, d in json.loads(Path(path).read_text())["devices"].items():
        for m in d.get("micro", []):
            out[(dev, m["name"], m["unit"])] = m["value"]
        for f in d.get("fusion", []):
            out[(dev, f["name"], "strict ms")] = f["strict_ms"]
            out[(dev, f["name"], "fused ms")] = f["fused_ms"]
            out[(dev, f["name"], "speedup")] = f["speedup"]
    return out


def main(paths):
    runs = [rows(p) for p in paths]
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    print("| device | figure | unit | " + " | ".join(Path(p).stem for p in paths) + " |")
    print("|---|---|---|" + "---:|" * len(paths))
    for k in keys:
        vals = " | ".join(f"{r[k]:.3g}" for r in runs)
        print(f"| {k[0]} | {k[1]} | {k[2]} | {vals} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:])
