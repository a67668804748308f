// ocl_scan_ops.cpp - cumsum, cumprod, cummax/cummin (through the helpers
// the composite cummax/cummin call) and logcumsumexp (real and complex), one
// tocl_scan_run each.
// The input is converted to the result dtype first, as PyTorch does.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_common.h"
#include "tocl/reduce.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using c10::ScalarType;

// Run kind along dim; 0-dim tensors scan as one element.
void scan(const at::Tensor& in, const at::Tensor& out, const at::Tensor* idx, int64_t dim, tocl_scan_kind kind) {
  if (in.numel() == 0)
    return;
  c10::DeviceGuard guard(in.device());
  auto v = [](const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; };
  tocl_tensor ti = to_tocl_tensor(v(in)), to = to_tocl_tensor(v(out)), tx{};
  if (idx)
    tx = to_tocl_tensor(v(*idx));
  int d = static_cast<int>(at::maybe_wrap_dim(dim, in.dim()));
  int dev = in.device().index();
  TOCL_CHECK(tocl_scan_run(dev, tocl_stream_current(dev), kind, d, &to, idx ? &tx : nullptr, &ti));
}

// Each element is read before it is written, so an input may be its own
// output when both layouts agree; any other overlap scans a copy.
bool overlaps(const at::Tensor& in, const at::Tensor& out) {
  if (!out.is_alias_of(in))
    return false;
  return !(in.data_ptr() == out.data_ptr() && in.strides() == out.strides() && in.sizes() == out.sizes());
}

ScalarType cum_dtype(const at::Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype)
    return *dtype;
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong : self.scalar_type();
}

template <tocl_scan_kind KIND>
struct Cum {
  static at::Tensor& out(const at::Tensor& self, int64_t dim, std::optional<ScalarType> dtype, at::Tensor& result) {
    at::maybe_wrap_dim(dim, self.dim());
    ScalarType dt = dtype.value_or(result.scalar_type());
    TORCH_CHECK(result.scalar_type() == dt, "Expected out tensor to have dtype ", dt, ", but got ",
                result.scalar_type(), " instead");
    resize_out(result, self.sizes());
    at::Tensor in = self.scalar_type() == dt ? self : self.to(dt);
    if (overlaps(in, result))
      in = in.clone();
    scan(in, result, nullptr, dim, KIND);
    return result;
  }
  static at::Tensor fn(const at::Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    at::maybe_wrap_dim(dim, self.dim());
    at::Tensor result = at::empty(self.sizes(), self.options().dtype(cum_dtype(self, dtype)));
    return out(self, dim, dtype.value_or(result.scalar_type()), result);
  }
  static at::Tensor& inplace(at::Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    at::maybe_wrap_dim(dim, self.dim());
    TORCH_CHECK(!dtype || *dtype == self.scalar_type(), "provided dtype must match the dtype of self tensor in "
                "cumsum/cumprod; got ", *dtype, " and ", self.scalar_type());
    scan(self, self, nullptr, dim, KIND);
    return self;
  }
};

template <tocl_scan_kind KIND>
void cum_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  resize_out(values, self.sizes());
  resize_out(indices, self.sizes());
  scan(self, values, &indices, dim, KIND);
}

complex_route::OpRef& lse_op() {
  static complex_route::OpRef op("_logcumsumexp.out");
  return op;
}
complex_route::OpRef& lse_fn_op() {
  static complex_route::OpRef op("_logcumsumexp");
  return op;
}

// Complex logcumsumexp: the scan reads and writes view_as_real's pairs, so
// conj/neg bits are resolved first and such an out gets a temporary.
void scan_complex_lse(const at::Tensor& self, at::Tensor& result, int64_t dim) {
  at::Tensor in = self.resolve_conj().resolve_neg();
  if (in.scalar_type() != result.scalar_type())
    in = in.to(result.scalar_type());
  bool direct = !result.is_conj() && !result.is_neg();
  if (direct && overlaps(in, result))
    in = in.clone();
  at::Tensor out = direct ? result : at::empty(result.sizes(), result.options().dtype(result.scalar_type()));
  if (in.numel() > 0) {
    c10::DeviceGuard guard(in.device());
    auto pairs = [](const at::Tensor& t) { return at::view_as_real(t.dim() == 0 ? t.view({1}) : t); };
    tocl_tensor ti = to_tocl_tensor(pairs(in)), to = to_tocl_tensor(pairs(out));
    int d = static_cast<int>(at::maybe_wrap_dim(dim, in.dim()));
    int dev = in.device().index();
    TOCL_CHECK(tocl_scan_run(dev, tocl_stream_current(dev), TOCL_SCAN_LOGSUMEXP_PAIRS, d, &to, nullptr, &ti));
  }
  if (!direct)
    result.copy_(out);
}

at::Tensor& logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& result) {
  at::maybe_wrap_dim(dim, self.dim());
  // uint16/32/64 results and inputs: the CPU's answer (its error)
  if ((complex_route::routed(self.scalar_type()) && !self.is_complex()) ||
      (complex_route::routed(result.scalar_type()) && !result.is_complex()))
    return complex_route::to_cpu<at::Tensor&, const at::Tensor&, int64_t, at::Tensor&>(
        lse_op(), self, dim, result);
  TORCH_CHECK(at::isFloatingType(result.scalar_type()) || result.is_complex(),
              "logcumsumexp(): expected a floating point result, got ", result.scalar_type());
  resize_out(result, self.sizes());
  if (result.is_complex()) {
    scan_complex_lse(self, result, dim);
    return result;
  }
  TORCH_CHECK(!self.is_complex(), "logcumsumexp(): a complex input needs a complex result, got ",
              result.scalar_type());
  at::Tensor in = self.scalar_type() == result.scalar_type() ? self : self.to(result.scalar_type());
  if (overlaps(in, result))
    in = in.clone();
  scan(in, result, nullptr, dim, TOCL_SCAN_LOGSUMEXP);
  return result;
}
at::Tensor logcumsumexp(const at::Tensor& self, int64_t dim) {
  if (complex_route::routed(self.scalar_type()) && !self.is_complex())
    return complex_route::to_cpu<at::Tensor, const at::Tensor&, int64_t>(lse_fn_op(), self, dim);
  auto dt = at::isIntegralType(self.scalar_type(), true) ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                                          : self.scalar_type();
  at::Tensor result = at::empty(self.sizes(), self.options().dtype(dt));
  return logcumsumexp_out(self, dim, result);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("cumsum", Cum<TOCL_SCAN_SUM>::fn);
  m.impl("cumsum.out", Cum<TOCL_SCAN_SUM>::out);
  m.impl("cumsum_", Cum<TOCL_SCAN_SUM>::inplace);
  m.impl("cumprod", Cum<TOCL_SCAN_PROD>::fn);
  m.impl("cumprod.out", Cum<TOCL_SCAN_PROD>::out);
  m.impl("cumprod_", Cum<TOCL_SCAN_PROD>::inplace);
  m.impl("_cummax_helper", cum_helper<TOCL_SCAN_MAX>);
  m.impl("_cummin_helper", cum_helper<TOCL_SCAN_MIN>);
  m.impl_complex("_logcumsumexp", logcumsumexp);
  m.impl_complex("_logcumsumexp.out", logcumsumexp_out);
}

}  // namespace torch_ocl
