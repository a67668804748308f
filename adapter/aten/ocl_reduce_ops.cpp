// ocl_reduce_ops.cpp - sum, nansum, prod, mean, any/all, count_nonzero and equal
// as one call each to tocl_reduce_run (runtime/ops/reduce.c). Shapes come from
// PyTorch's reduction helpers (make_dim_mask, shape_from_dim_mask,
// review_reduce_result), so outputs, keepdim and errors match the CPU; out= and
// functional forms share a body.
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

// hash_tensor (mode 0, the only one): the xor over dim of each element's
// bits as uint64, as the CPU's xor_sum kernel takes them: a float widened
// to double, an integer or bool sign-extended to int64. The reduction runs
// on int64 (the same bits); floats are widened and viewed first. Checks and
// their order are the structured kernel's (meta, then mode, then dtype).
at::Tensor& hash_tensor_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, int64_t mode,
                            at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kUInt64, "Expected result to be of dtype uint64, but got ",
              out.scalar_type());
  if (self.numel() == 0)
    at::native::zero_numel_check_dims(self, dim, "hash_tensor");
  DimMask mask = reduce_util::mask_of(self, dim);
  resize_out(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  TORCH_CHECK(mode == 0, "Unknown hash_tensor mode: ", mode);
  at::Tensor bits = out.view(at::kLong);
  if (self.numel() == 0) {
    bits.zero_();
    return out;
  }
  ScalarType st = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(st) || (at::isIntegralType(st, /*includeBool=*/true) &&
                                                         !complex_route::routed(st)),
                              "\"xor_sum_ocl\" not implemented for '", c10::toString(st), "'");
  at::Tensor in = at::isFloatingType(st) ? self.to(at::kDouble).view(at::kLong) : self;
  reduce_util::Spec s;
  s.kind = TOCL_REDUCE_XOR;
  s.acc = TOCL_I64;
  reduce_util::run(in, {bits}, mask, keepdim, s);
  return out;
}
at::Tensor hash_tensor(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, int64_t mode) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kUInt64));
  return hash_tensor_out(self, dim, keepdim, mode, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
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
  // a uint64 result, which routing would send to the CPU
  m.impl_complex("hash_tensor", hash_tensor);
  m.impl_complex("hash_tensor.out", hash_tensor_out);
}

}  // namespace torch_ocl
