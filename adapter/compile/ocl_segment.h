// ocl_segment.h - torch_ocl._C bindings of compiled pointwise segments
// (tocl/segment.h), for the torch.compile lowering (python/torch_ocl/compile/segments.py).
#pragma once

#include <pybind11/pybind11.h>

namespace torch_ocl {

// _compile_segment(spec) -> (handle or None, message); _run_segment(handle, tensors).
void register_segment_bindings(pybind11::module_& m);

}  // namespace torch_ocl
