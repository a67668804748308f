"""Soak: train the GPT example for many steps and check that memory and OpenCL objects stay flat.

Every --every steps it samples the device's reserved, allocated and
peak-allocated bytes, the host's resident set, and (when build/cl_live.so is
preloaded: `make soak` does it) the OpenCL memory objects, events, programs
and kernels the process holds. After the warm-up (--warmup steps) each must
be flat:

  * reserved / peak allocated <= 1.3 (the caching allocator keeps little slack);
  * no upward trend: the mean of the last quarter of the samples exceeds the
    mean of the first quarter by at most 2% + 2 MiB (bytes), 2% + 16 MiB (RSS:
    the driver's heap moves a little), and the OpenCL object counts' last
    quarter never exceeds the first quarter's maximum.

Writes <out>.json (every sample), <out>.md (the table of checks) and
<out>.png (the curves).

  make soak                              (10,000 steps, docs/soak.*)
  python tools/soak.py --steps 300 --every 25 --warmup 100 --out /tmp/soak
"""

import argparse
import ctypes
import json
import os
import resource
import sys
import time

import torch
import torch_ocl  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))


def cl_live():
    """(mem, event, program, kernel) references held, or None without the shim."""
    try:
        fn = ctypes.CDLL(None).cl_live_counts
    except AttributeError:
        return None
    arr = (ctypes.c_longlong * 4)()
    fn(arr)
    return list(arr)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def sample(step, loss):
    torch.ocl.synchronize()
    s = {"step": step, "loss": loss, "reserved": torch.ocl.memory_reserved(),
         "allocated": torch.ocl.memory_allocated(), "peak_allocated": torch.ocl.max_memory_allocated(),
         "rss": rss_bytes(), "t": time.time()}
    live = cl_live()
    if live is not None:
        s.update(cl_mem=live[0], cl_event=live[1], cl_program=live[2], cl_kernel=live[3])
    return s


def checks(samples, warmup):
    """[(name, value, limit, ok)] over the samples after the warm-up."""
    post = [s for s in samples if s["step"] >= warmup]
    out = []
    if len(post) < 4:
        return [("samples after warm-up", len(post), ">= 4", False)]
    q = max(1, len(post) // 4)
    first, last = post[:q], post[-q:]
    mean = lambda xs, k: sum(x[k] for x in xs) / len(xs)  # noqa: E731
    ratio = max(s["reserved"] / max(1, s["peak_allocated"]) for s in post)
    out.append(("reserved / peak allocated (max after warm-up)", round(ratio, 3), "<= 1.3", ratio <= 1.3))
    for k, slack in (("reserved", 2 << 20), ("allocated", 2 << 20), ("peak_allocated", 2 << 20), ("rss", 16 << 20)):
        a, b = mean(first, k), mean(last, k)
        lim = a * 1.02 + slack
        out.append((f"{k}: last quarter mean vs first (MiB)", f"{b / 2**20:.1f} vs {a / 2**20:.1f}",
                    f"<= {lim / 2**20:.1f}", b <= lim))
    for k in ("cl_mem", "cl_event", "cl_program", "cl_kernel"):
        if k in post[0]:
            a, b = max(x[k] for x in first), max(x[k] for x in last)
            out.append((f"{k} held: last quarter max vs first", f"{b} vs {a}", f"<= {a}", b <= a))
    return out


def plot(samples, warmup, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = [s["step"] for s in samples]
    has_cl = "cl_mem" in samples[0]
    fig, axes = plt.subplots(1, 3 if has_cl else 2, figsize=(15 if has_cl else 10, 4))
    ax = axes[0]
    for k in ("reserved", "allocated", "peak_allocated"):
        ax.plot(steps, [s[k] / 2**20 for s in samples], label=k)
    ax.set_title("device memory (MiB)")
    ax.legend()
    axes[1].plot(steps, [s["rss"] / 2**20 for s in samples], color="C3")
    axes[1].set_title("host RSS (MiB)")
    if has_cl:
        for k in ("cl_mem", "cl_event", "cl_program", "cl_kernel"):
            axes[2].plot(steps, [s[k] for s in samples], label=k)
        axes[2].set_title("OpenCL objects held")
        axes[2].legend()
    for ax in axes:
        ax.axvline(warmup, color="gray", ls=":", lw=1)
        ax.set_xlabel("step")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def run(steps, every, warmup, preset):
    import train_gpt
    samples = []

    def on_step(step, loss):
        if step % every == 0 or step == steps - 1:
            samples.append(sample(step, loss))

    t0 = time.time()
    train_gpt.train("ocl", preset, steps, progress=False, on_step=on_step)
    return samples, time.time() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--preset", default="test")
    ap.add_argument("--out", default=None, help="path prefix for .json/.md/.png")
    args = ap.parse_args(argv)
    samples, seconds = run(args.steps, args.every, args.warmup, args.preset)
    res = checks(samples, args.warmup)
    ok = all(r[3] for r in res)
    lines = ["# Soak: the GPT example trained for a long run", "",
             "Generated by `make soak` (tools/soak.py); do not edit by hand.", "",
             f"torch {torch.__version__}, device {torch.ocl.get_device_name(0)}, preset `{args.preset}`, "
             f"{args.steps} steps in {seconds:.0f} s, sampled every {args.every} steps, warm-up {args.warmup} steps, "
             f"eager mode {torch_ocl.get_eager_mode()}; loss {samples[0]['loss']:.3f} -> {samples[-1]['loss']:.3f}.",
             "", "| check | value | limit | ok |", "|---|---|---|---|"]
    lines += [f"| {n} | {v} | {lim} | {'yes' if good else 'NO'} |" for n, v, lim, good in res]
    last = samples[-1]
    lines += ["", f"At the end: reserved {last['reserved'] / 2**20:.1f} MiB, allocated "
              f"{last['allocated'] / 2**20:.1f} MiB, peak allocated {last['peak_allocated'] / 2**20:.1f} MiB, "
              f"host RSS {last['rss'] / 2**20:.0f} MiB"
              + (f", OpenCL held: {last['cl_mem']} memory objects, {last['cl_event']} events, "
                 f"{last['cl_program']} programs, {last['cl_kernel']} kernels" if "cl_mem" in last else "")
              + ".", ""]
    if args.out:
        with open(args.out + ".json", "w") as f:
            json.dump({"steps": args.steps, "every": args.every, "warmup": args.warmup, "preset": args.preset,
                       "seconds": round(seconds, 1), "checks": res, "samples": samples}, f, indent=1)
        lines += [f"![curves]({os.path.basename(args.out)}.png)", ""]
        with open(args.out + ".md", "w") as f:
            f.write("\n".join(lines))
        plot(samples, args.warmup, args.out + ".png")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
