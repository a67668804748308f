"""python -m torch_ocl.bench: run the suite on every device present and write
Markdown, JSON and a PNG chart.

  python -m torch_ocl.bench                  full suite, all devices
  python -m torch_ocl.bench --quick          small sizes (a minute or two)
  --devices cpu,ocl:0   --suite micro,models,fusion,compile,distributed,serving   --price ocl:0=0.5,cpu=0.1
  --out bench/results/run   (writes run.md, run.json, run.png)
  --baseline cuda:0         the device the ratio columns divide by (default: cpu)
  --compare bench/results/old.json
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import torch

import torch_ocl

from . import devices as devmod
from . import fusion as fusion_bench
from . import compiled, isolated, micro, models, report, serving
from . import distributed as dist_bench

SUITES = {"micro": micro, "models": models, "fusion": fusion_bench, "compile": compiled,
          "distributed": dist_bench, "serving": serving}


def _commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=os.getcwd())
        return r.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def parse_prices(s):
    out = {}
    for part in filter(None, (s or "").split(",")):
        k, v = part.split("=")
        out[k.strip()] = float(v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_ocl.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--devices", default="auto")
    ap.add_argument("--suite", default="micro,models,fusion,compile,distributed,serving")
    ap.add_argument("--price", default="", help="DEVICE=USD_PER_HOUR,...")
    ap.add_argument("--out", default="bench/results/latest")
    ap.add_argument("--title", default="")
    ap.add_argument("--compare")
    ap.add_argument("--baseline", default="cpu", help="device the ratio columns divide by (cpu, cuda:0, ...)")
    args = ap.parse_args(argv)
    prices = parse_prices(args.price)
    suites = args.suite.split(",")
    devs = devmod.available(args.devices)
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    run = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M"), "commit": _commit(), "torch": torch.__version__,
                    "torch_ocl": torch_ocl.__version__, "machine": f"{platform.node()} {platform.machine()}, "
                    f"{os.cpu_count()} CPUs", "quick": args.quick,
                    "title": args.title or f"torch-ocl benchmark ({'quick' if args.quick else 'full'})",
                    "baseline": args.baseline},
           "devices": {}}
    tasks = [(d, s) for d in devs for s in suites]
    bar = tqdm(tasks, desc="benchmark", unit="suite") if tqdm else tasks
    for d, s in bar:
        if tqdm:
            bar.set_postfix_str(f"{s} on {d}")
        entry = run["devices"].setdefault(devmod.label(d), {"description": devmod.describe(d)})
        module = SUITES[s].__name__.rsplit(".", 1)[1]
        if isolated.needed(module, d):
            rows = isolated.run(module, d, args.quick)
        else:
            rows = SUITES[s].run(d, args.quick)
        if rows or s not in ("fusion", "compile", "distributed"):
            entry[s] = rows
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    md = report.markdown(run, prices)
    run["costs"] = report.costs(run, prices)
    with open(args.out + ".json", "w") as f:
        json.dump(run, f, indent=1)
    report.chart(run, args.out + ".png")
    if args.compare:
        md += "\n### Change against " + os.path.basename(args.compare) + "\n\n" + report.compare(run, report.load(args.compare)) + "\n"
    with open(args.out + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"wrote {args.out}.md, .json, .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
