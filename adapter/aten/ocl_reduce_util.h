// ocl_reduce_util.h - what the reduction files share: one call to tocl_reduce_run
// for a reduction spec, and out= sizing from PyTorch's reduction helpers.
#pragma once

#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>

#include <initializer_list>
#include <optional>
#include <vector>

#include "ocl_common.h"
#include "tocl/reduce.h"

namespace torch_ocl::reduce_util {

using at::native::DimMask;
using c10::ScalarType;

// Accumulator dtype for a value computed in `t`: float32 for 16-bit floats,
// int64 for integer and bool sums/products (as PyTorch).
inline tocl_dtype acc_of(ScalarType t, bool int_to_long) {
  if (int_to_long && at::isIntegralType(t, /*includeBool=*/true))
    return TOCL_I64;
  return tocl_dtype_compute(to_tocl_dtype(t));
}

struct Spec {
  tocl_reduce_kind kind = TOCL_REDUCE_SUM;
  tocl_dtype acc = TOCL_F32;
  tocl_reduce_map map = TOCL_REDUCE_MAP_NONE;
  tocl_reduce_final fin = TOCL_REDUCE_FINAL_NONE;
  double p = 0, correction = 0;
  // Convert the input to this dtype first (PyTorch casts before reducing).
  std::optional<ScalarType> in_dtype;
  bool to_bool = false;  // value = (x != 0) before the accumulator cast
};

// Reduce self over mask into outs (already sized to the reduced shape).
inline void run(const at::Tensor& self, std::initializer_list<at::Tensor> outs, const DimMask& mask, bool keepdim,
         const Spec& s) {
  for (const auto& o : outs) {
    TORCH_CHECK(o.device() == self.device(), "Expected all tensors to be on the same device, but found ",
                o.device(), " and ", self.device());
    if (o.numel() == 0)
      return;
  }
  c10::DeviceGuard guard(self.device());
  int64_t nd = self.dim();
  tocl_ir_graph g;
  tocl_ir_init(&g);
  int x = tocl_ir_input(&g, to_tocl_dtype(self.scalar_type()));
  if (s.in_dtype)
    x = tocl_ir_cast(&g, x, to_tocl_dtype(*s.in_dtype));
  if (s.to_bool)
    x = tocl_ir_cast(&g, x, TOCL_BOOL);
  x = tocl_ir_cast(&g, x, s.acc);
  tocl_ir_output(&g, x, s.acc);
  TORCH_CHECK(!g.overflow, "torch_ocl: internal error building a reduction prologue");
  tocl_reduce_desc d{s.kind, s.acc, s.map, s.fin, s.p, s.correction, &g, 0};
  // A temporary (its storage referenced by this tensor alone) likely dies
  // right after: fused eager may then compute it inside the reduction.
  d.fuse_producer = self.has_storage() && self.storage().use_count() == 1;
  std::vector<tocl_tensor> to;
  for (const auto& o : outs)
    to.push_back(to_tocl_tensor(at::native::review_reduce_result(o, static_cast<int>(nd), mask, keepdim)));
  tocl_tensor in = to_tocl_tensor(self);
  int dev = self.device().index();
  TOCL_CHECK(tocl_reduce_run(dev, tocl_stream_current(dev), &d, static_cast<int>(to.size()), to.data(), 1, &in,
                             nullptr));
}

// Size `out` to the reduced shape, checking its dtype as structured kernels do.
inline void prepare_out(at::Tensor& out, const at::Tensor& self, const DimMask& mask, bool keepdim, ScalarType dt) {
  TORCH_CHECK(out.scalar_type() == dt, "Expected out tensor to have dtype ", dt, ", but got ", out.scalar_type(),
              " instead");
  resize_out(out, at::native::shape_from_dim_mask(self, mask, keepdim));
}

inline at::Tensor make_out(const at::Tensor& self, const DimMask& mask, bool keepdim, ScalarType dt) {
  return at::empty(at::native::shape_from_dim_mask(self, mask, keepdim), self.options().dtype(dt));
}

inline DimMask mask_of(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  return at::native::make_dim_mask(dim, self.dim());
}

}  // namespace torch_ocl::reduce_util
