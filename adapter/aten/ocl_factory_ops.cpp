// ocl_factory_ops.cpp - arange, linspace, logspace, eye, tril/triu_indices:
// the CPU's argument checks, sizes and formulas, with the values computed on
// the device (runtime/ops/factory.c). full/zeros/ones/empty_like/rand* are
// composite over empty + fill_/zero_/uniform_/normal_/random_.
#include <ATen/Dispatch.h>
#include <ATen/native/RangeUtils.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "ocl_common.h"
#include "tocl/factory.h"
#include "ocl_complex_route.h"
#include "ocl_value_range.h"

namespace torch_ocl {
namespace {

// Run fn on a contiguous tensor standing for result, copying back when
// result is strided (as the CPU kernels do).
template <typename F>
void on_contiguous(at::Tensor& result, F fn) {
  c10::DeviceGuard guard(result.device());
  if (result.is_contiguous()) {
    fn(result);
    return;
  }
  at::Tensor r = result.contiguous();
  fn(r);
  result.copy_(r);
}

int dev_of(const at::Tensor& t) { return t.device().index(); }

at::Tensor& arange_out(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step,
                       at::Tensor& result) {
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "arange_cpu", [&]() {
    int64_t size = at::native::compute_arange_size<scalar_t>(start, end, step);
    int64_t numel = result.numel();
    if (numel != size) {
      if (numel > 0) {
        TORCH_WARN("The number of elements in the out tensor of shape ", result.sizes(), " is ", numel,
                   " which does not match the computed number of elements ", size,
                   ". Note that this may occur as a result of rounding error. "
                   "The out tensor will be resized to a tensor of shape (",
                   size, ",).");
      }
      result.resize_({size});
    }
  });
  if (result.numel() == 0)
    return result;
  tocl_scalar s0{}, s1{};
  if (at::isFloatingType(result.scalar_type())) {
    s0.is_float = s1.is_float = 1;
    s0.f = start.to<double>();
    s1.f = step.to<double>();
  } else {
    s0.i = start.to<int64_t>();
    s1.i = step.to<int64_t>();
  }
  on_contiguous(result, [&](at::Tensor& r) {
    tocl_tensor t = to_tocl_tensor(r);
    TOCL_CHECK(tocl_op_arange(dev_of(r), tocl_stream_current(dev_of(r)), &t, s0, s1));
  });
  // Positions for an embedding (a decoding step's arange(start, start + t)):
  // the host knows their range, so the index check need not wait
  // (ocl_value_range.h). int64 and int32 whose values fit, no wrap-around.
  auto st = result.scalar_type();
  int64_t span, last;
  if ((st == at::kLong || st == at::kInt) && !__builtin_mul_overflow(result.numel() - 1, s1.i, &span) &&
      !__builtin_add_overflow(s0.i, span, &last)) {
    int64_t lo = std::min(s0.i, last), hi = std::max(s0.i, last);
    if (st == at::kLong || (lo >= INT32_MIN && hi <= INT32_MAX))
      note_value_range(result, lo, hi);
  }
  return result;
}

at::Tensor& linspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, at::Tensor& result) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (result.numel() != steps)
    result.resize_({steps});
  if (steps == 0)
    return result;
  if (steps == 1) {
    result.fill_(start);
    return result;
  }
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "linspace_cpu", [&]() {
    // the CPU's types: the step is double for integers, the dtype itself otherwise
    using step_t = std::conditional_t<std::is_integral<scalar_t>::value, double, scalar_t>;
    const scalar_t s = start.to<scalar_t>();
    const scalar_t e = end.to<scalar_t>();
    const step_t step = (static_cast<step_t>(e) - static_cast<step_t>(s)) / (steps - 1);
    on_contiguous(result, [&](at::Tensor& r) {
      tocl_tensor t = to_tocl_tensor(r);
      TOCL_CHECK(tocl_op_linspace(dev_of(r), tocl_stream_current(dev_of(r)), &t, static_cast<double>(s),
                                  static_cast<double>(e), static_cast<double>(step)));
    });
  });
  return result;
}

at::Tensor& logspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, double base,
                         at::Tensor& result) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (result.numel() != steps)
    result.resize_({steps});
  if (steps == 0)
    return result;
  if (steps == 1) {
    result.fill_(std::pow(base, start.to<double>()));
    return result;
  }
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "logspace_cpu", [&]() {
    const scalar_t s = start.to<scalar_t>();
    const scalar_t e = end.to<scalar_t>();
    const double step = static_cast<double>(e - s) / (steps - 1);
    on_contiguous(result, [&](at::Tensor& r) {
      tocl_tensor t = to_tocl_tensor(r);
      TOCL_CHECK(tocl_op_logspace(dev_of(r), tocl_stream_current(dev_of(r)), &t, static_cast<double>(s),
                                  static_cast<double>(e), step, base));
    });
  });
  return result;
}

at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  result.resize_({n, m});
  result.zero_();
  int64_t sz = std::min<int64_t>(n, m);
  if (sz > 0)  // the diagonal as a strided view, filled natively
    result.as_strided({sz}, {result.stride(0) + result.stride(1)}, result.storage_offset()).fill_(1);
  return result;
}

at::Tensor& eye_out(int64_t n, at::Tensor& result) { return eye_m_out(n, n, result); }

at::Tensor tri_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                       std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin,
                       bool upper) {
  at::native::check_args(row, col, layout);
  int64_t size = upper ? row * col - at::native::get_tril_size(row, col, offset - 1)
                       : at::native::get_tril_size(row, col, offset);
  auto opts = at::TensorOptions().dtype(dtype.value_or(at::kLong)).layout(layout).device(device).pinned_memory(pin);
  at::Tensor result = at::empty({2, size}, opts);
  auto fill = [&]() {
    if (size > 0) {
      c10::DeviceGuard guard(result.device());
      tocl_tensor t = to_tocl_tensor(result);
      TOCL_CHECK(tocl_op_tri_indices(dev_of(result), tocl_stream_current(dev_of(result)), &t, row, col, offset,
                                     upper ? 1 : 0));
    }
  };
  // int32/int64 only, with the CPU's message for other dtypes
  if (upper)
    AT_DISPATCH_INDEX_TYPES(result.scalar_type(), "triu_indices", fill);
  else
    AT_DISPATCH_INDEX_TYPES(result.scalar_type(), "tril_indices", fill);
  return result;
}

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin) {
  return tri_indices(row, col, offset, dtype, layout, device, pin, false);
}

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin) {
  return tri_indices(row, col, offset, dtype, layout, device, pin, true);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("arange.start_out", arange_out);
  m.impl("linspace.out", linspace_out);
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
  m.impl("tril_indices", tril_indices);
  m.impl("triu_indices", triu_indices);
}

}  // namespace torch_ocl
