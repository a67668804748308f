"""Ops with a CPU kernel and no ocl kernel, for the tests of the CPU fallback.

The fallback serves every op the ocl device lacks; which aten ops those are
changes as kernels land. These stand-ins (in their own namespace, CPU kernels
that call the aten op) always take the fallback, whatever is native:
tocl_cpu_only::angle (and .out, elementwise, keeps layout), ::trace and
::cross."""

import torch

NS = "tocl_cpu_only"

_lib = torch.library.Library(NS, "DEF")
_lib.define("angle(Tensor self) -> Tensor")
_lib.define("angle.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
_lib.define("trace(Tensor self) -> Tensor")
_lib.define("cross(Tensor self, Tensor other) -> Tensor")
_lib.impl("angle", lambda x: torch.angle(x), "CPU")
_lib.impl("angle.out", lambda x, *, out: torch.angle(x, out=out), "CPU")
_lib.impl("trace", lambda x: torch.trace(x), "CPU")
_lib.impl("cross", lambda a, b: torch.linalg.cross(a, b), "CPU")

ops = getattr(torch.ops, NS)


def angle(x, out=None):
    return ops.angle(x) if out is None else ops.angle.out(x, out=out)
