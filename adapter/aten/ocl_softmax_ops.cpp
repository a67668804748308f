// ocl_softmax_ops.cpp - softmax and log_softmax, forward and backward, on the row
// kernels of runtime/ops/softmax.c (kernels/softmax.cl).
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_nn_util.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace nn_util;

// ------------------------------------------------------------------ softmax

void softmax_run(const at::Tensor& input, int64_t dim, at::Tensor& out, bool log) {
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous();
  int d = input.dim() == 0 ? 0 : static_cast<int>(dim);
  at::Tensor y = dest_for(out, x.sizes(), out.scalar_type());
  TT tx(x), ty(y);
  TOCL_CHECK(tocl_nn_softmax(dev_of(x), stream_of(x), ty.p(), tx.p(), d, log));
  deliver(y, out);
}

at::ScalarType softmax_out_dtype(const at::Tensor& input, bool half_to_float, const char* op) {
  // The CPU returns an empty input before its dtype dispatch: softmax of an empty int tensor is empty.
  if (input.numel() > 0)
    check_float(input, op);
  if (half_to_float)
    TORCH_CHECK(input.scalar_type() == at::kHalf, "conversion is supported for Half type only");
  return half_to_float ? at::kFloat : input.scalar_type();
}

template <bool LOG>
at::Tensor& softmax_out(const at::Tensor& input, int64_t dim, bool half_to_float, at::Tensor& out) {
  auto dt = softmax_out_dtype(input, half_to_float, LOG ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  int64_t d = at::maybe_wrap_dim(dim, input.dim());
  TORCH_CHECK(out.scalar_type() == dt, "Expected out tensor to have dtype ", dt, ", but got ", out.scalar_type(),
              " instead");
  resize_out(out, input.sizes());
  if (input.numel() == 0)
    return out;
  softmax_run(input, d, out, LOG);
  return out;
}

template <bool LOG>
at::Tensor softmax(const at::Tensor& input, int64_t dim, bool half_to_float) {
  auto dt = softmax_out_dtype(input, half_to_float, LOG ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  at::Tensor out = at::empty(input.sizes(), input.options().dtype(dt));
  return softmax_out<LOG>(input, dim, half_to_float, out);
}

template <bool LOG>
at::Tensor& softmax_backward_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                 at::ScalarType input_dtype, at::Tensor& grad_input) {
  TORCH_CHECK(grad.sizes().equals(output.sizes()), "grad_output and output must have the same size, got ",
              grad.sizes(), " and ", output.sizes());
  if (grad.numel() > 0)  // as the CPU: an empty grad returns before the dtype dispatch
    check_float(grad, LOG ? "log_softmax_backward_lastdim_kernel_impl" : "softmax_backward_lastdim_kernel_impl");
  int64_t d = at::maybe_wrap_dim(dim, grad.dim());
  resize_out(grad_input, grad.sizes());
  if (grad.numel() == 0)
    return grad_input;
  c10::DeviceGuard guard(grad.device());
  at::Tensor g = grad.contiguous(), y = output.contiguous();
  at::Tensor z = dest_for(grad_input, g.sizes(), grad_input.scalar_type());
  TT tg(g), ty(y), tz(z);
  TOCL_CHECK(tocl_nn_softmax_backward(dev_of(g), stream_of(g), tz.p(), tg.p(), ty.p(),
                                      g.dim() == 0 ? 0 : static_cast<int>(d), LOG));
  return deliver(z, grad_input);
}

template <bool LOG>
at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  at::Tensor gi = at::empty(grad.sizes(), grad.options().dtype(input_dtype));
  return softmax_backward_out<LOG>(grad, output, dim, input_dtype, gi);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_softmax", softmax<false>);
  m.impl("_softmax.out", softmax_out<false>);
  m.impl("_log_softmax", softmax<true>);
  m.impl("_log_softmax.out", softmax_out<true>);
  m.impl("_softmax_backward_data", softmax_backward<false>);
  m.impl("_softmax_backward_data.out", softmax_backward_out<false>);
  m.impl("_log_softmax_backward_data", softmax_backward<true>);
  m.impl("_log_softmax_backward_data.out", softmax_backward_out<true>);
}

}  // namespace torch_ocl
