// fallback_routes.cpp - CPU routes for "overrideable" ops. PyTorch sends
// convolution on out-of-tree devices to convolution_overrideable, whose
// default kernel raises, so the boxed fallback never sees it. Until native
// convolution lands these run the CPU convolution, counted and governed by
// the same TORCH_OCL_FALLBACK policy as every other fallback.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "fallback.h"

namespace torch_ocl {
namespace {

at::Tensor cpu_or_undef(const at::Tensor& t) { return t.defined() ? t.cpu() : t; }

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  note_fallback("aten::convolution_overrideable");
  std::optional<at::Tensor> b;
  if (bias && bias->defined())
    b = bias->cpu();
  return at::convolution(input.cpu(), weight.cpu(), b, stride, padding, dilation, transposed, output_padding, groups)
      .to(input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  note_fallback("aten::convolution_backward_overrideable");
  std::vector<int64_t> bias_sizes{transposed ? weight.size(1) * groups : weight.size(0)};
  auto [gi, gw, gb] = at::convolution_backward(grad_output.cpu(), input.cpu(), weight.cpu(), bias_sizes, stride,
                                               padding, dilation, transposed, output_padding, groups, output_mask);
  auto dev = input.device();
  return {gi.defined() ? gi.to(dev) : gi, gw.defined() ? gw.to(dev) : gw, gb.defined() ? gb.to(dev) : gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

}  // namespace torch_ocl
