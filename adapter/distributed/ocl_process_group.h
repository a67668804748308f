// ocl_process_group.h - the "oclgloo" c10d backend's one entry point for the
// Python module: binds torch_ocl._C._ProcessGroupOCL (a c10d::Backend that
// stages ocl tensors through host memory and runs an inner Gloo backend).
#pragma once

#include <pybind11/pybind11.h>

namespace torch_ocl {

// No-op when torch was built without distributed (TOCL_WITH_C10D unset).
void register_distributed_bindings(pybind11::module& m);

}  // namespace torch_ocl
