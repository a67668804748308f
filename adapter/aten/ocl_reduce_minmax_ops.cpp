// ocl_reduce_minmax_ops.cpp - amax/amin, max/min (whole and along a dim, with
// indices), argmax/argmin and aminmax on tocl_reduce_run (runtime/ops/reduce.c).
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
#include "ocl_value_range.h"

namespace torch_ocl {
namespace {

using namespace reduce_util;

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
  // They lie in [0, extent): an index op taking them (a decoding step's
  // embedding of its argmax) need not wait to check them (ocl_value_range.h).
  int64_t extent = !dim ? self.numel() : self.dim() == 0 ? 1 : self.size(at::maybe_wrap_dim(*dim, self.dim()));
  if (extent > 0)
    note_value_range(indices, 0, extent - 1);
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
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
}

}  // namespace torch_ocl
