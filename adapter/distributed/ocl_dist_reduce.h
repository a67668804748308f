// ocl_dist_reduce.h - the reduce ops Gloo lacks or gets wrong, as host-side
// steps around a SUM.
// Part of the oclgloo backend's one translation unit (included only by
// ocl_process_group.cpp, so torch's headers are compiled once).
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "ocl_common.h"

namespace torch_ocl {
namespace dist {

using Tensors = std::vector<at::Tensor>;

using c10d::ReduceOp;


// What Gloo runs for a reduce op, and the host-side steps around it.
struct Reduction {
  ReduceOp op = ReduceOp::SUM;  // the op Gloo applies
  double scale = 1.0;           // PREMUL_SUM: multiply inputs first
  int64_t divide = 1;           // AVG: divide the result by the group size
};

inline double premul_factor(const ReduceOp& op) {
  // torch up to 2.1x named the supplement NCCLPreMulSumSupplement; the
  // fields are the same.
#ifdef TOCL_C10D_PREMUL_LEGACY
  auto* s = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
#else
  auto* s = dynamic_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
#endif
  TORCH_CHECK(s, "oclgloo: PREMUL_SUM without a factor");
  return s->tensor_factor.defined() ? s->tensor_factor.item<double>() : s->double_factor;
}

inline Reduction plan_reduction(const ReduceOp& op, at::ScalarType dtype, int size, const char* what) {
  Reduction r;
  switch (op.op_) {
    case ReduceOp::AVG:
      TORCH_CHECK(dtype != at::kBool, "oclgloo: ", what, " with ReduceOp.AVG is not supported for bool tensors");
      r.divide = size;
      return r;
    case ReduceOp::PREMUL_SUM:
      TORCH_CHECK(at::isFloatingType(dtype) || at::isComplexType(dtype), "oclgloo: ", what,
                  " with ReduceOp.PREMUL_SUM needs a floating-point tensor, got ", dtype);
      r.scale = premul_factor(op);
      return r;
    case ReduceOp::UNUSED:
      TORCH_CHECK(false, "oclgloo: ", what, ": invalid reduce op");
    default:
      r.op = op;
      return r;
  }
}

inline at::Tensor scaled(const at::Tensor& h, const Reduction& r) {
  return r.scale == 1.0 ? h : h.mul(r.scale);  // out of place: h may be the caller's CPU tensor
}

inline void finish_reduction(const at::Tensor& h, const Reduction& r) {
  if (r.divide == 1)
    return;
  if (at::isFloatingType(h.scalar_type()) || at::isComplexType(h.scalar_type()))
    h.div_(r.divide);
  else
    h.div_(r.divide, "trunc");  // integer AVG rounds toward zero
}

}  // namespace dist
}  // namespace torch_ocl
