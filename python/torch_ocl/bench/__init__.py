"""torch_ocl.bench: the same models and micro-kernels, same inputs and dtype,
measured side by side on every device present (cpu, each ocl device, cuda).

    python -m torch_ocl.bench [--quick] [--price ocl:0=0.50] [--compare old.json]

It measures; it never asserts speed. See docs/benchmarks.md for the last run.
"""
