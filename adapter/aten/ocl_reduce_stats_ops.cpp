// ocl_reduce_stats_ops.cpp - var/std (Welford), var_mean/std_mean, vector norms and
// logsumexp on tocl_reduce_run (runtime/ops/reduce.c); renorm over the vector norm.
#include <ATen/ATen.h>
#include <ATen/AccumulateType.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ocl_reduce_util.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace reduce_util;

// ---- var / std (Welford) ----

// dt: the dtype computed in and written. var/std.correction_out compute in
// the out's dtype (a float16 input with a float64 out: in float64), as the
// CPU's make_reduction does.
void var_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
              bool keepdim, at::Tensor& out, at::Tensor* mean, bool take_sqrt, ScalarType dt) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  TORCH_CHECK(at::canCast(self.scalar_type(), dt), "result type ", self.scalar_type(),
              " can't be cast to the desired output type ", dt);
  TORCH_CHECK(at::isFloatingType(dt), "std and var only support floating point and complex dtypes, got an out of ",
              dt);
  auto mask = mask_of(self, dim);
  prepare_out(out, self, mask, keepdim, dt);
  if (mean)
    prepare_out(*mean, self, mask, keepdim, dt);
  Spec s;
  s.kind = TOCL_REDUCE_WELFORD;
  s.acc = acc_of(dt, false);
  if (dt != self.scalar_type())
    s.in_dtype = dt;
  s.fin = take_sqrt ? TOCL_REDUCE_FINAL_STD : TOCL_REDUCE_FINAL_NONE;
  s.correction = correction ? correction->toDouble() : 1.0;
  if (mean)
    run(self, {out, *mean}, mask, keepdim, s);
  else
    run(self, {out}, mask, keepdim, s);
}
at::Tensor& var_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& corr,
                    bool keepdim, at::Tensor& out) {
  var_impl(self, dim, corr, keepdim, out, nullptr, false, out.scalar_type());
  return out;
}
at::Tensor& std_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& corr,
                    bool keepdim, at::Tensor& out) {
  var_impl(self, dim, corr, keepdim, out, nullptr, true, out.scalar_type());
  return out;
}
at::Tensor var(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& corr,
               bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  var_impl(self, dim, corr, keepdim, out, nullptr, false, self.scalar_type());
  return out;
}
at::Tensor std_(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& corr,
                bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  var_impl(self, dim, corr, keepdim, out, nullptr, true, self.scalar_type());
  return out;
}
std::tuple<at::Tensor, at::Tensor> var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& corr, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), m = at::empty({0}, self.options());
  var_impl(self, dim, corr, keepdim, v, &m, false, self.scalar_type());
  return {v, m};
}
std::tuple<at::Tensor, at::Tensor> std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& corr, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), m = at::empty({0}, self.options());
  var_impl(self, dim, corr, keepdim, v, &m, true, self.scalar_type());
  return {v, m};
}

// ---- norms ----

at::Tensor& vector_norm_impl(const at::Tensor& self, double ord, at::OptionalIntArrayRef dim, bool keepdim,
                             std::optional<ScalarType> dtype, at::Tensor& out, const char* name) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()), name,
              ": Expected a floating point or complex tensor as input. Got ", self.scalar_type());
  if (dtype)
    TORCH_CHECK(at::isFloatingType(*dtype), name, ": dtype should be floating point, but got ", *dtype);
  auto mask = mask_of(self, dim);
  if (self.numel() == 0 && (ord < 0 || std::isinf(ord))) {
    // No identity: every reduced dim must be non-empty (CPU's message).
    TORCH_CHECK(dim.has_value() && !dim->empty(), "linalg.vector_norm cannot compute the ", ord,
                " norm on an empty tensor because the operation does not have an identity");
    for (int64_t d : *dim)
      TORCH_CHECK(self.size(at::maybe_wrap_dim(d, self.dim())) != 0, "linalg.vector_norm cannot compute the ", ord,
                  " norm on the dimension ", d, "because this dimension is empty and the operation does not have an "
                  "identity");
  }
  ScalarType dt = dtype.value_or(self.scalar_type());
  prepare_out(out, self, mask, keepdim, dt);
  Spec s;
  s.acc = acc_of(dt, false);
  s.in_dtype = dt;
  s.p = ord;
  if (ord == 0) {
    s.to_bool = true;
  } else if (std::isinf(ord)) {
    s.kind = ord > 0 ? TOCL_REDUCE_MAX : TOCL_REDUCE_MIN;
    s.map = TOCL_REDUCE_MAP_ABS;
  } else if (ord == 1) {
    s.map = TOCL_REDUCE_MAP_ABS;
  } else if (ord == 2) {
    s.map = TOCL_REDUCE_MAP_SQUARE;
    s.fin = TOCL_REDUCE_FINAL_SQRT;
  } else {
    s.map = TOCL_REDUCE_MAP_ABS_POW;
    s.fin = TOCL_REDUCE_FINAL_ROOT;
  }
  run(self, {out}, mask, keepdim, s);
  return out;
}
at::Tensor& vector_norm_out(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                            bool keepdim, std::optional<ScalarType> dtype, at::Tensor& out) {
  return vector_norm_impl(self, ord.toDouble(), dim, keepdim, dtype, out, "linalg.vector_norm");
}
at::Tensor vector_norm(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  at::Tensor out = at::empty({0}, self.options().dtype(dtype.value_or(self.scalar_type())));
  return vector_norm_out(self, ord, dim, keepdim, dtype, out);
}
at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim,
                           bool keepdim, ScalarType dtype, at::Tensor& out) {
  return vector_norm_impl(self, p ? p->toDouble() : 2.0, dim, keepdim, dtype, out, "linalg.vector_norm");
}
at::Tensor& norm_out(const at::Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out) {
  return vector_norm_impl(self, p ? p->toDouble() : 2.0, dim, keepdim, std::nullopt, out, "linalg.vector_norm");
}
at::Tensor norm_dim(const at::Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  return norm_out(self, p, dim, keepdim, out);
}
at::Tensor norm_dim_dtype(const at::Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim,
                          bool keepdim, ScalarType dtype) {
  at::Tensor out = at::empty({0}, self.options().dtype(dtype));
  return norm_dtype_out(self, p, dim, keepdim, dtype, out);
}

// ---- logsumexp ----

at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(at::isFloatingType(out.scalar_type()), "logsumexp(): Expected floating point type for result tensor, "
              "but got: ", out.scalar_type());
  auto mask = at::native::make_dim_mask(dims, self.dim());
  resize_out(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  Spec s;
  s.kind = TOCL_REDUCE_LOGSUMEXP;
  s.acc = acc_of(out.scalar_type(), false);
  s.in_dtype = out.scalar_type();
  run(self, {out}, mask, keepdim, s);
  return out;
}
at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  auto dt = at::isIntegralType(self.scalar_type(), true) ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                                           : self.scalar_type();
  at::Tensor out = at::empty({0}, self.options().dtype(dt));
  return logsumexp_out(self, dims, keepdim, out);
}

// ---- renorm ----

// Each slice along dim scaled to p-norm at most maxnorm: the norms over the
// other dims in float (float16/bfloat16 too, as the CPU's accumulate type),
// the factor maxnorm / (norm + 1e-7) where the norm exceeds maxnorm, stored
// in the input's dtype, then one multiply.
at::Tensor& renorm_out(const at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm,
                       at::Tensor& out) {
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  dim = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < self.dim(); d++)
    if (d != dim)
      dims.push_back(d);
  auto acc = at::toAccumulateType(self.scalar_type(), /*is_cuda=*/true);
  at::Tensor norm = at::linalg_vector_norm(self, p, dims, /*keepdim=*/true, acc);
  at::Tensor q = at::div(at::scalar_tensor(maxnorm, norm.options()), norm + 1e-7);
  at::Tensor factor = at::where(norm > maxnorm, q, at::scalar_tensor(1.0, norm.options())).to(self.scalar_type());
  if (!out.is_same(self))
    at::native::resize_output(out, self.sizes());
  at::mul_out(out, self, factor);
  return out;
}
at::Tensor renorm(const at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  at::Tensor out = at::empty_like(self);
  return renorm_out(self, p, dim, maxnorm, out);
}
at::Tensor& renorm_(at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  return renorm_out(self, p, dim, maxnorm, self);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("renorm", renorm);
  m.impl("renorm_", renorm_);
  m.impl("renorm.out", renorm_out);
  m.impl("var.correction", var);
  m.impl("var.correction_out", var_out);
  m.impl("std.correction", std_);
  m.impl("std.correction_out", std_out);
  m.impl("var_mean.correction", var_mean);
  m.impl("std_mean.correction", std_mean);
  m.impl("linalg_vector_norm", vector_norm);
  m.impl("linalg_vector_norm.out", vector_norm_out);
  m.impl("norm.ScalarOpt_dim", norm_dim);
  m.impl("norm.out", norm_out);
  m.impl("norm.ScalarOpt_dim_dtype", norm_dim_dtype);
  m.impl("norm.dtype_out", norm_dtype_out);
  m.impl("logsumexp", logsumexp);
  m.impl("logsumexp.out", logsumexp_out);
}

}  // namespace torch_ocl
