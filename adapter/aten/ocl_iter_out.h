// ocl_iter_out.h - out= overloads that keep the out= contract unwrapped.
#pragma once

#include <torch/library.h>

namespace torch_ocl {

// An out= overload whose ocl kernel hands every out argument to a
// TensorIterator before anything writes it: the iterator refuses an out on
// another device ("Expected all tensors to be on the same device") before it
// resizes or writes, and writes a strided out in place. So the out= contract
// holds without the boxed wrapper install_out_device_checks()
// (adapter/fallback.cpp) puts in front of every other out= overload, which
// boxes and unboxes the arguments of every call on the host path of a small
// out= op (torch.add(x, y, out=z), the benchmarks' "small op, queued").
// Register such an overload with TOCL_ITER_OUT instead of m.impl; every
// overload so registered is held to the contract (a CPU and an ocl:1 out
// refused and left unwritten, gapped and transposed outs written in place
// with the CPU's values) by tests/python/test_out_checks.py, schema by
// schema. Anything else registered with m.impl stays wrapped.
void note_iterator_out(const char* name);

}  // namespace torch_ocl

#define TOCL_ITER_OUT(m, name, ...)         \
  do {                                      \
    m.impl(name, __VA_ARGS__);              \
    ::torch_ocl::note_iterator_out(name);   \
  } while (0)
