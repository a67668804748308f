// ocl_pointwise_table.h - the pointwise table (ocl_pointwise_table.cpp) as
// data for other code: one entry per aten overload that is exactly one IR
// op over a TensorIterator. torch_ocl._C._pointwise_table() returns it to
// Python, where the torch.compile lowering reads which aten ops are pure
// pointwise IR ops.
#pragma once

#include <string>
#include <tuple>
#include <vector>

namespace torch_ocl {

// (aten overload "sin.out", IR op "sin", iterator kind "unary_float",
//  dtypes {"float16", ...}), in table order.
using PointwiseEntry = std::tuple<std::string, std::string, std::string, std::vector<std::string>>;
std::vector<PointwiseEntry> pointwise_table();

}  // namespace torch_ocl
