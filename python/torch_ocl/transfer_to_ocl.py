"""Run a script written for CUDA on the ocl device without editing it.

    import torch_ocl.transfer_to_ocl          # at the top of the script, or
    python -m torch_ocl.transfer_to_ocl train.py --its --args

torch.cuda answers from torch.ocl; "cuda" devices in factories, .to(),
.cuda(), torch.load, autocast, GradScaler, Generator, Stream, Event and
`with torch.device("cuda")` become ocl devices. TORCH_OCL_TRANSFER_LOG=1
prints at exit which calls were rewritten, the torch.cuda names that had no
ocl counterpart and the ops that fell back to the CPU. undo() restores
torch. How and why: docs/design.md, "Moving a CUDA script".
"""

import os
import runpy
import sys

from torch_ocl._transfer import apply, is_applied, undo  # noqa: F401
from torch_ocl._transfer.patchset import counts, missing, summary  # noqa: F401

apply()


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m torch_ocl.transfer_to_ocl SCRIPT.py [ARGS...] | -m MODULE [ARGS...]"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage + "\n\n" + __doc__.strip())
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print(usage, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.isfile(script):
        print(f"torch_ocl.transfer_to_ocl: no such script: {script}", file=sys.stderr)
        return 2
    sys.argv = argv
    # The script sees its own directory first on sys.path, as `python script.py` gives it.
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
