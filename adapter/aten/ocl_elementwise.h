// ocl_elementwise.h - run a TensorIterator through the runtime's IR engine.
#pragma once

#include <ATen/TensorIterator.h>

#include <optional>

#include "ocl_common.h"

namespace torch_ocl {

// out = op(in0, in1) [with in1 scaled by alpha first when given and != 1],
// computed in the iterator's common dtype (float for half types).
void run_binary(at::TensorIteratorBase& iter, tocl_ir_op op, const std::optional<c10::Scalar>& alpha);

}  // namespace torch_ocl
