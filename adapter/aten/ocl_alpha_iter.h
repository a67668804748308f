// ocl_alpha_iter.h - the TensorIterator of add/sub (a + alpha * b), shared by
// the real kernels (ocl_binary_ops.cpp) and the complex ones
// (ocl_complex_ops.cpp) so their checks come in the CPU's order once.
#pragma once

#include <ATen/TensorIterator.h>

namespace torch_ocl {

// sub's bool check first (before the iterator's cast check, as the CPU: fuzz
// seeds 100128, 100332), then the iterator over `out` (which it borrows: out
// must outlive it), then alpha's dtype check against the common dtype.
at::TensorIterator alpha_binary_iter(at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                                     const c10::Scalar& alpha, bool sub);

}  // namespace torch_ocl
