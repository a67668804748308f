"""python -m torch_ocl: small command-line tools.

  python -m torch_ocl info          devices and their properties
  python -m torch_ocl cache info    program cache directory, files, bytes, hit counts
  python -m torch_ocl cache clear   remove cached program binaries
"""

import argparse
import sys


def _info(_args):
    import torch
    import torch_ocl  # noqa: F401

    n = torch.ocl.device_count()
    print(f"torch {torch.__version__}, torch_ocl {torch_ocl.__version__}, {n} OpenCL device(s)")
    for i in range(n):
        p = torch.ocl.get_device_properties(i)
        print(f"  ocl:{i}  {p.name} [{p.type}] {p.vendor}; {p.platform_name} {p.driver_version}; "
              f"{p.compute_units} CUs, {p.total_memory / 2**30:.1f} GiB, fp64={p.has_fp64} fp16={p.has_fp16}")
    return 0


def _cache(args):
    from torch_ocl import _C

    if args.action == "clear":
        n = _C._cache_clear()
        print(f"removed {n} cached program(s) from {_C._cache_info()['dir']}")
        return 0
    info = _C._cache_info()
    print(f"cache dir: {info['dir']}")
    print(f"files: {info['files']}  bytes: {info['bytes']}")
    stats = _C._program_stats()
    print("this process: " + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                                       for k, v in stats.items()))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_ocl", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info", help="list devices").set_defaults(fn=_info)
    c = sub.add_parser("cache", help="program cache")
    c.add_argument("action", choices=["info", "clear"])
    c.set_defaults(fn=_cache)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
