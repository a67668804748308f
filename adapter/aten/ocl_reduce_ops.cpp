// ocl_reduce_ops.cpp - reductions (sum, mean, prod, max/min and their arg
// forms, var/std, norms, logsumexp, any/all, count_nonzero, equal) as one
// call each to tocl_reduce_run. Shapes come from PyTorch's reduction helpers
// (make_dim_mask, shape_from_dim_mask, review_reduce_result), so outputs,
// keepdim and errors match the CPU; out= and functional forms share a body.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ocl_common.h"
#include "tocl/reduce.h"

namespace torch_ocl {
namespace {

using at::native::DimMask;
using c10::ScalarType;

// Accumulator dtype for a value computed in `t`: float32 for 16-bit floats,
// int64 for integer and bool sums/products (as PyTorch).
tocl_dtype acc_of(ScalarType t, bool int_to_long) {
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
void run(const at::Tensor& self, std::initializer_list<at::Tensor> outs, const DimMask& mask, bool keepdim,
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
void prepare_out(at::Tensor& out, const at::Tensor& self, const DimMask& mask, bool keepdim, ScalarType dt) {
  TORCH_CHECK(out.scalar_type() == dt, "Expected out tensor to have dtype ", dt, ", but got ", out.scalar_type(),
              " instead");
  resize_out(out, at::native::shape_from_dim_mask(self, mask, keepdim));
}

at::Tensor make_out(const at::Tensor& self, const DimMask& mask, bool keepdim, ScalarType dt) {
  return at::empty(at::native::shape_from_dim_mask(self, mask, keepdim), self.options().dtype(dt));
}

DimMask mask_of(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  return at::native::make_dim_mask(dim, self.dim());
}

// ---- sum, nansum, prod, mean ----

ScalarType sum_dtype(const at::Tensor& self, std::optional<ScalarType> dtype) {
  return at::native::get_dtype_from_self(self, dtype, /*promote_integers=*/true);
}

at::Tensor& sum_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, ScalarType dt,
                     at::Tensor& out, tocl_reduce_kind kind, tocl_reduce_map map) {
  auto mask = mask_of(self, dim);
  prepare_out(out, self, mask, keepdim, dt);
  Spec s;
  s.kind = kind;
  s.acc = acc_of(dt, true);
  s.in_dtype = dt;
  s.map = at::isFloatingType(dt) ? map : TOCL_REDUCE_MAP_NONE;
  run(self, {out}, mask, keepdim, s);
  return out;
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<ScalarType> dtype, at::Tensor& out) {
  return sum_impl(self, dim, keepdim, dtype.value_or(out.scalar_type()), out, TOCL_REDUCE_SUM, TOCL_REDUCE_MAP_NONE);
}
at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  auto dt = sum_dtype(self, dtype);
  at::Tensor out = make_out(self, mask_of(self, dim), keepdim, dt);
  return sum_impl(self, dim, keepdim, dt, out, TOCL_REDUCE_SUM, TOCL_REDUCE_MAP_NONE);
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype, at::Tensor& out) {
  // A floating input into an integer out (no dtype=): the CPU and CUDA
  // kernels dispatch on floating types and raise NotImplementedError. (With
  // dtype= the input is cast first and summed; an integer input is a sum.)
  TORCH_CHECK_NOT_IMPLEMENTED(dtype.has_value() || at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ||
                                  at::isFloatingType(out.scalar_type()),
                              "\"nansum\" not implemented for '", out.scalar_type(), "'");
  return sum_impl(self, dim, keepdim, dtype.value_or(out.scalar_type()), out, TOCL_REDUCE_SUM,
                  TOCL_REDUCE_MAP_NAN_ZERO);
}
at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  auto dt = sum_dtype(self, dtype);
  at::Tensor out = make_out(self, mask_of(self, dim), keepdim, dt);
  return sum_impl(self, dim, keepdim, dt, out, TOCL_REDUCE_SUM, TOCL_REDUCE_MAP_NAN_ZERO);
}

at::Tensor& prod_int_out(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype,
                         at::Tensor& out) {
  return sum_impl(self, at::IntArrayRef{dim}, keepdim, dtype.value_or(out.scalar_type()), out, TOCL_REDUCE_PROD,
                  TOCL_REDUCE_MAP_NONE);
}
at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  auto dt = sum_dtype(self, dtype);
  at::Tensor out = make_out(self, mask_of(self, at::IntArrayRef{dim}), keepdim, dt);
  return sum_impl(self, at::IntArrayRef{dim}, keepdim, dt, out, TOCL_REDUCE_PROD, TOCL_REDUCE_MAP_NONE);
}
at::Tensor prod_all(const at::Tensor& self, std::optional<ScalarType> dtype) {
  auto dt = sum_dtype(self, dtype);
  at::Tensor out = make_out(self, mask_of(self, std::nullopt), false, dt);
  return sum_impl(self, std::nullopt, false, dt, out, TOCL_REDUCE_PROD, TOCL_REDUCE_MAP_NONE);
}
at::Tensor& prod_out(const at::Tensor& self, std::optional<ScalarType> dtype, at::Tensor& out) {
  return sum_impl(self, std::nullopt, false, dtype.value_or(out.scalar_type()), out, TOCL_REDUCE_PROD,
                  TOCL_REDUCE_MAP_NONE);
}

ScalarType mean_dtype(const at::Tensor& self, std::optional<ScalarType> dtype) {
  auto in = at::native::get_dtype_from_self(self, dtype, true);
  TORCH_CHECK(at::isFloatingType(in) || at::isComplexType(in), "mean(): could not infer output dtype. ",
              (dtype.has_value() ? "Optional" : "Input"), " dtype must be either a floating point or complex dtype. ",
              "Got: ", in);
  return in;
}
at::Tensor& mean_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, ScalarType dt,
                      at::Tensor& out) {
  auto mask = mask_of(self, dim);
  prepare_out(out, self, mask, keepdim, dt);
  Spec s;
  s.acc = acc_of(dt, false);
  s.in_dtype = dt;
  s.fin = TOCL_REDUCE_FINAL_MEAN;
  run(self, {out}, mask, keepdim, s);
  return out;
}
at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<ScalarType> dtype, at::Tensor& out) {
  mean_dtype(self, dtype);
  return mean_impl(self, dim, keepdim, dtype.value_or(out.scalar_type()), out);
}
at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<ScalarType> dtype) {
  auto dt = mean_dtype(self, dtype);
  at::Tensor out = make_out(self, mask_of(self, dim), keepdim, dt);
  return mean_impl(self, dim, keepdim, dt, out);
}

// ---- amax / amin, max / min, argmax / argmin, aminmax ----

void check_nonempty(const at::Tensor& self, at::IntArrayRef dims, const char* name) {
  if (self.numel() == 0)
    at::native::zero_numel_check_dims(self, dims, name);
}

at::Tensor& extreme_impl(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out, bool is_max) {
  check_nonempty(self, dims, is_max ? "amax()" : "amin()");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "Expected the dtype for input and out to match, but got ",
              self.scalar_type(), " for input's dtype and ", out.scalar_type(), " for out's dtype.");
  auto mask = at::native::make_dim_mask(dims, self.dim());
  resize_out(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  Spec s;
  s.kind = is_max ? TOCL_REDUCE_MAX : TOCL_REDUCE_MIN;
  s.acc = acc_of(self.scalar_type(), false);
  run(self, {out}, mask, keepdim, s);
  return out;
}
at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  return extreme_impl(self, dims, keepdim, out, true);
}
at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  return extreme_impl(self, dims, keepdim, out, false);
}
at::Tensor amax(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  return extreme_impl(self, dims, keepdim, out, true);
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options());
  return extreme_impl(self, dims, keepdim, out, false);
}

// Full reductions max() / min(): refuse empty input as CPU does.
at::Tensor& max_all_impl(const at::Tensor& self, at::Tensor& out, bool is_max) {
  TORCH_CHECK(self.numel() > 0, is_max ? "max()" : "min()",
              ": Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
              "'dim' argument.");
  // The CPU takes an out of any dtype self casts to: the extreme in self's
  // dtype, then cast.
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), "max/min(): result type ", self.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  if (out.scalar_type() != self.scalar_type()) {
    at::Tensor r = at::empty({}, self.options());
    max_all_impl(self, r, is_max);
    resize_out(out, {});
    out.copy_(r);
    return out;
  }
  auto mask = mask_of(self, std::nullopt);
  resize_out(out, {});
  Spec s;
  s.kind = is_max ? TOCL_REDUCE_MAX : TOCL_REDUCE_MIN;
  s.acc = acc_of(self.scalar_type(), false);
  run(self, {out}, mask, false, s);
  return out;
}
at::Tensor max_all(const at::Tensor& self) {
  at::Tensor out = at::empty({}, self.options());
  return max_all_impl(self, out, true);
}
at::Tensor min_all(const at::Tensor& self) {
  at::Tensor out = at::empty({}, self.options());
  return max_all_impl(self, out, false);
}
at::Tensor& max_unary_out(const at::Tensor& self, at::Tensor& out) { return max_all_impl(self, out, true); }
at::Tensor& min_unary_out(const at::Tensor& self, at::Tensor& out) { return max_all_impl(self, out, false); }

void arg_impl(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor* values,
              at::Tensor& indices, bool is_max, const char* name) {
  DimMask mask;
  if (dim) {
    int64_t d = at::maybe_wrap_dim(*dim, self.dim());
    if (self.numel() == 0)
      at::native::zero_numel_check_dims(self, d, name);
    mask = at::native::make_dim_mask(at::IntArrayRef{d}, self.dim());
  } else {
    TORCH_CHECK_INDEX(self.numel() != 0, name, ": Expected reduction dim to be specified for input.numel() == 0.");
    mask = mask_of(self, std::nullopt);
  }
  auto shape = at::native::shape_from_dim_mask(self, mask, keepdim);
  if (values) {
    TORCH_CHECK(values->scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
                self.scalar_type(), ", but got ", values->scalar_type(), " instead");
    resize_out(*values, shape);
  }
  TORCH_CHECK(indices.scalar_type() == at::kLong, "Expected out tensor to have dtype Long, but got ",
              indices.scalar_type(), " instead");
  resize_out(indices, shape);
  Spec s;
  s.kind = is_max ? TOCL_REDUCE_ARGMAX : TOCL_REDUCE_ARGMIN;
  s.acc = acc_of(self.scalar_type(), false);
  if (values)
    run(self, {*values, indices}, mask, keepdim, s);
  else
    run(self, {indices}, mask, keepdim, s);
}

std::tuple<at::Tensor&, at::Tensor&> max_dim_max(const at::Tensor& self, int64_t dim, bool keepdim,
                                                 at::Tensor& values, at::Tensor& indices) {
  arg_impl(self, dim, keepdim, &values, indices, true, "max()");
  return {values, indices};
}
std::tuple<at::Tensor&, at::Tensor&> min_dim_min(const at::Tensor& self, int64_t dim, bool keepdim,
                                                 at::Tensor& values, at::Tensor& indices) {
  arg_impl(self, dim, keepdim, &values, indices, false, "min()");
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  arg_impl(self, dim, keepdim, &v, i, true, "max()");
  return {v, i};
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  arg_impl(self, dim, keepdim, &v, i, false, "min()");
  return {v, i};
}
at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "argmax(): does not support bool input");
  arg_impl(self, dim, keepdim, nullptr, out, true, "argmax()");
  return out;
}
at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "argmin(): does not support bool input");
  arg_impl(self, dim, keepdim, nullptr, out, false, "argmin()");
  return out;
}
at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor i = at::empty({0}, self.options().dtype(at::kLong));
  return argmax_out(self, dim, keepdim, i);
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor i = at::empty({0}, self.options().dtype(at::kLong));
  return argmin_out(self, dim, keepdim, i);
}

std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& mn, at::Tensor& mx) {
  DimMask mask;
  if (dim) {
    int64_t d = at::maybe_wrap_dim(*dim, self.dim());
    if (self.numel() == 0)
      at::native::zero_numel_check_dims(self, d, "aminmax");
    mask = at::native::make_dim_mask(at::IntArrayRef{d}, self.dim());
  } else {
    TORCH_CHECK(self.numel() > 0,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    mask = mask_of(self, std::nullopt);
  }
  for (auto* o : {&mn, &mx}) {
    TORCH_CHECK(o->scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
                ", but got ", o->scalar_type(), " instead");
    resize_out(*o, at::native::shape_from_dim_mask(self, mask, keepdim));
  }
  Spec s;
  s.acc = acc_of(self.scalar_type(), false);
  s.kind = TOCL_REDUCE_MIN;
  run(self, {mn}, mask, keepdim, s);
  s.kind = TOCL_REDUCE_MAX;
  run(self, {mx}, mask, keepdim, s);
  return {mn, mx};
}
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor mn = at::empty({0}, self.options()), mx = at::empty({0}, self.options());
  aminmax_out(self, dim, keepdim, mn, mx);
  return {mn, mx};
}

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

// ---- any / all / count_nonzero ----

at::Tensor& anyall_impl(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim, at::Tensor& out,
                        bool is_any) {
  TORCH_CHECK(out.scalar_type() == at::kBool || out.scalar_type() == at::kByte, is_any ? "any" : "all",
              " only supports bool tensor for result, got: ", out.scalar_type());
  auto mask = at::native::make_dim_mask(dims, self.dim(), /*allow_empty_dims=*/true);
  resize_out(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  Spec s;
  s.kind = is_any ? TOCL_REDUCE_ANY : TOCL_REDUCE_ALL;
  s.acc = TOCL_BOOL;
  run(self, {out}, mask, keepdim, s);
  return out;
}
ScalarType anyall_dtype(const at::Tensor& self) { return self.scalar_type() == at::kByte ? at::kByte : at::kBool; }

template <bool ANY>
struct AnyAll {
  static at::Tensor all_(const at::Tensor& self) {
    at::Tensor out = at::empty({}, self.options().dtype(anyall_dtype(self)));
    return anyall_impl(self, std::nullopt, false, out, ANY);
  }
  static at::Tensor& all_out(const at::Tensor& self, at::Tensor& out) {
    return anyall_impl(self, std::nullopt, false, out, ANY);
  }
  static at::Tensor dim(const at::Tensor& self, int64_t d, bool keepdim) {
    at::Tensor out = at::empty({0}, self.options().dtype(anyall_dtype(self)));
    return anyall_impl(self, at::IntArrayRef{d}, keepdim, out, ANY);
  }
  static at::Tensor& dim_out(const at::Tensor& self, int64_t d, bool keepdim, at::Tensor& out) {
    return anyall_impl(self, at::IntArrayRef{d}, keepdim, out, ANY);
  }
  static at::Tensor dims(const at::Tensor& self, at::OptionalIntArrayRef d, bool keepdim) {
    at::Tensor out = at::empty({0}, self.options().dtype(anyall_dtype(self)));
    return anyall_impl(self, d, keepdim, out, ANY);
  }
  static at::Tensor& dims_out(const at::Tensor& self, at::OptionalIntArrayRef d, bool keepdim, at::Tensor& out) {
    return anyall_impl(self, d, keepdim, out, ANY);
  }
};

at::Tensor count_nonzero(const at::Tensor& self, at::IntArrayRef dims) {
  auto mask = at::native::make_dim_mask(dims, self.dim());
  at::Tensor out = make_out(self, mask, false, at::kLong);
  Spec s;
  s.acc = TOCL_I64;
  s.to_bool = true;
  run(self, {out}, mask, false, s);
  return out;
}

// ---- equal: same size and every element equal (NaN != NaN) ----

bool equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ",
              self.device(), " and ", other.device());
  if (!self.is_same_size(other))
    return false;
  if (self.numel() == 0)
    return true;
  c10::DeviceGuard guard(self.device());
  ScalarType common = at::promote_types(self.scalar_type(), other.scalar_type());
  tocl_ir_graph g;
  tocl_ir_init(&g);
  tocl_dtype ct = tocl_dtype_compute(to_tocl_dtype(common));
  int a = tocl_ir_cast(&g, tocl_ir_input(&g, to_tocl_dtype(self.scalar_type())), ct);
  int b = tocl_ir_cast(&g, tocl_ir_input(&g, to_tocl_dtype(other.scalar_type())), ct);
  tocl_ir_output(&g, a, ct);
  tocl_ir_output(&g, b, ct);
  TORCH_CHECK(!g.overflow, "torch_ocl: internal error building equal()");
  tocl_reduce_desc d{TOCL_REDUCE_ALL, TOCL_BOOL, TOCL_REDUCE_MAP_EQ, TOCL_REDUCE_FINAL_NONE, 0, 0, &g, 0};
  at::Tensor out = at::empty({}, self.options().dtype(at::kBool));
  int64_t nd = self.dim();
  std::vector<int64_t> ones(nd, 1);
  tocl_tensor to = to_tocl_tensor(out.as_strided(ones, std::vector<int64_t>(nd, 0)));
  tocl_tensor in[2] = {to_tocl_tensor(self), to_tocl_tensor(other)};
  int dev = self.device().index();
  TOCL_CHECK(tocl_reduce_run(dev, tocl_stream_current(dev), &d, 1, &to, 2, in, nullptr));
  return out.item<bool>();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", sum_dim);
  m.impl("sum.IntList_out", sum_out);
  m.impl("nansum", nansum);
  m.impl("nansum.out", nansum_out);
  m.impl("mean.dim", mean_dim);
  m.impl("mean.out", mean_out);
  m.impl("prod", prod_all);
  m.impl("prod.out", prod_out);
  m.impl("prod.dim_int", prod_dim);
  m.impl("prod.int_out", prod_int_out);
  m.impl("amax", amax);
  m.impl("amax.out", amax_out);
  m.impl("amin", amin);
  m.impl("amin.out", amin_out);
  m.impl("max", max_all);
  m.impl("max.unary_out", max_unary_out);
  m.impl("min", min_all);
  m.impl("min.unary_out", min_unary_out);
  m.impl("max.dim", max_dim);
  m.impl("max.dim_max", max_dim_max);
  m.impl("min.dim", min_dim);
  m.impl("min.dim_min", min_dim_min);
  m.impl("argmax", argmax);
  m.impl("argmax.out", argmax_out);
  m.impl("argmin", argmin);
  m.impl("argmin.out", argmin_out);
  m.impl("aminmax", aminmax);
  m.impl("aminmax.out", aminmax_out);
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
  m.impl("any", AnyAll<true>::all_);
  m.impl("any.all_out", AnyAll<true>::all_out);
  m.impl("any.dim", AnyAll<true>::dim);
  m.impl("any.out", AnyAll<true>::dim_out);
  m.impl("any.dims", AnyAll<true>::dims);
  m.impl("any.dims_out", AnyAll<true>::dims_out);
  m.impl("all", AnyAll<false>::all_);
  m.impl("all.all_out", AnyAll<false>::all_out);
  m.impl("all.dim", AnyAll<false>::dim);
  m.impl("all.out", AnyAll<false>::dim_out);
  m.impl("all.dims", AnyAll<false>::dims);
  m.impl("all.dims_out", AnyAll<false>::dims_out);
  m.impl("count_nonzero.dim_IntList", count_nonzero);
  m.impl("equal", equal);
}

}  // namespace torch_ocl
