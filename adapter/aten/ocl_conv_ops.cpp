// ocl_conv_ops.cpp - convolution and transposed convolution (1-3 spatial
// dims), forward and backward, on runtime/ops/conv.c. PrivateUse1 tensors
// reach here through aten::convolution_overrideable and
// convolution_backward_overrideable (at::convolution has already expanded
// 'same'/'valid' padding and unbatched inputs). Operands are made dense
// here; results take the input's memory format as on the CPU.
#include <ATen/ops/convolution.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "fallback.h"
#include "ocl_common.h"
#include "tocl/conv.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

int64_t param(at::IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

void check_params(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                  at::IntArrayRef padding, at::IntArrayRef dilation, at::IntArrayRef output_padding, int64_t groups,
                  bool transposed) {
  int64_t nd = input.dim() - 2;
  TORCH_CHECK(nd >= 1 && nd <= TOCL_CONV_MAX_DIMS, "convolution: expected a 3-d, 4-d or 5-d (batched) input, got ",
              input.dim(), "-d input of size ", input.sizes());
  TORCH_CHECK(weight.dim() == input.dim(), "convolution: weight of size ", weight.sizes(), " has ", weight.dim(),
              " dims, expected ", input.dim(), " like the input of size ", input.sizes());
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), "\"convolution\" not implemented for '",
              c10::toString(input.scalar_type()), "'");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
  TORCH_CHECK(groups > 0, "non-positive groups is not supported");
  for (auto [v, name] : {std::pair{stride, "stride"}, {padding, "padding"}, {dilation, "dilation"}})
    TORCH_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd, "convolution: ", name, " has ", v.size(),
                " values, expected ", nd);
  for (int64_t i = 0; i < nd; i++) {
    TORCH_CHECK(param(stride, i) > 0, "non-positive stride is not supported");
    TORCH_CHECK(param(dilation, i) > 0, "dilation should be greater than zero");
    TORCH_CHECK(param(padding, i) >= 0, "negative padding is not supported");
  }
  int64_t cin = input.size(1);
  if (transposed) {
    TORCH_CHECK(weight.size(0) == cin, "Given transposed=1, weight of size ", weight.sizes(),
                ", expected input", input.sizes(), " to have ", weight.size(0), " channels, but got ", cin,
                " channels instead");
    TORCH_CHECK(cin % groups == 0, "convolution: input channels (", cin, ") must be divisible by groups (", groups,
                ")");
    TORCH_CHECK(output_padding.size() == 1 || static_cast<int64_t>(output_padding.size()) == nd,
                "convolution: output_padding has ", output_padding.size(), " values, expected ", nd);
  } else {
    TORCH_CHECK(weight.size(1) * groups == cin, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", input.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", cin,
                " channels instead");
    TORCH_CHECK(weight.size(0) % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ",
                groups, " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  }
}

// The geometry of conv.h: x side [N, cx, xs...], y side [N, cy, ys...].
tocl_conv_desc make_desc(at::IntArrayRef xs, at::IntArrayRef ys, const at::Tensor& weight, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  tocl_conv_desc d{};
  d.nd = static_cast<int>(xs.size()) - 2;
  d.batch = xs[0];
  d.groups = groups;
  d.cx = xs[1];
  d.cy = ys[1];
  for (int i = 0; i < d.nd; i++) {
    d.x[i] = xs[i + 2];
    d.y[i] = ys[i + 2];
    d.k[i] = weight.size(i + 2);
    d.stride[i] = param(stride, i);
    d.pad[i] = param(padding, i);
    d.dilation[i] = param(dilation, i);
  }
  return d;
}

// Output sizes: y from x for a convolution, x from y for a transposed one.
std::vector<int64_t> out_sizes(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                               at::IntArrayRef padding, at::IntArrayRef dilation, at::IntArrayRef output_padding,
                               int64_t groups, bool transposed) {
  std::vector<int64_t> s{input.size(0), transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t i = 0; i < input.dim() - 2; i++) {
    int64_t in = input.size(i + 2), span = param(dilation, i) * (weight.size(i + 2) - 1);
    int64_t o = transposed ? (in - 1) * param(stride, i) - 2 * param(padding, i) + span + param(output_padding, i) + 1
                           : (in + 2 * param(padding, i) - span - 1) / param(stride, i) + 1;
    bool ok = transposed ? o > 0 : in + 2 * param(padding, i) - span - 1 >= 0;
    TORCH_CHECK(ok, "convolution: input of size ", input.sizes(), " with weight of size ", weight.sizes(),
                " gives no output positions in spatial dim ", i, ": the output size is too small");
    s.push_back(o);
  }
  return s;
}

c10::MemoryFormat layout_of(const at::Tensor& input, const at::Tensor& weight) {
  auto f = input.suggest_memory_format();
  return f != c10::MemoryFormat::Contiguous ? f : weight.suggest_memory_format();
}

at::Tensor in_layout(const at::Tensor& t, c10::MemoryFormat f) {
  return f == c10::MemoryFormat::Contiguous || t.dim() != (f == c10::MemoryFormat::ChannelsLast ? 4 : 5)
             ? t
             : t.contiguous(f);
}

int stream_of(const at::Tensor& t) { return tocl_stream_current(t.device().index()); }

at::Tensor convolution(const at::Tensor& input_, const at::Tensor& weight_, const std::optional<at::Tensor>& bias_,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  if (at::isIntegralType(input_.scalar_type(), /*includeBool=*/true)) {
    // integer convolution (the CPU has a slow kernel for int64): run there, counted by the fallback policy
    note_fallback("aten::convolution");
    std::optional<at::Tensor> b;
    if (bias_ && bias_->defined())
      b = bias_->cpu();
    return at::convolution(input_.cpu(), weight_.cpu(), b, stride, padding, dilation, transposed, output_padding,
                           groups).to(input_.device());
  }
  check_params(input_, weight_, stride, padding, dilation, output_padding, groups, transposed);
  c10::DeviceGuard guard(input_.device());
  at::Tensor input = input_.contiguous(), weight = weight_.contiguous(), bias;
  if (bias_ && bias_->defined()) {
    bias = bias_->contiguous();
    TORCH_CHECK(bias.scalar_type() == input.scalar_type(), "Input type (", input.scalar_type(),
                ") and bias type (", bias.scalar_type(), ") should be the same");
  }
  auto os = out_sizes(input, weight, stride, padding, dilation, output_padding, groups, transposed);
  TORCH_CHECK(!bias.defined() || bias.numel() == os[1], "convolution: bias has ", bias.numel(),
              " elements, expected ", os[1], " (one per output channel)");
  at::Tensor out = at::empty(os, input.options());
  tocl_tensor ti = to_tocl_tensor(input), tw = to_tocl_tensor(weight), to = to_tocl_tensor(out), tb{};
  if (bias.defined())
    tb = to_tocl_tensor(bias);
  const tocl_tensor* pb = bias.defined() ? &tb : nullptr;
  int dev = input.device().index(), st = stream_of(input);
  if (transposed) {
    auto d = make_desc(out.sizes(), input.sizes(), weight, stride, padding, dilation, groups);
    TOCL_CHECK(tocl_conv_backward_data(dev, st, &d, &ti, &tw, pb, &to));
  } else {
    auto d = make_desc(input.sizes(), out.sizes(), weight, stride, padding, dilation, groups);
    TOCL_CHECK(tocl_conv_forward(dev, st, &d, &ti, &tw, pb, &to));
  }
  return in_layout(out, layout_of(input_, weight_));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output_, const at::Tensor& input_, const at::Tensor& weight_, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  check_params(input_, weight_, stride, padding, dilation, output_padding, groups, transposed);
  TORCH_CHECK(grad_output_.scalar_type() == input_.scalar_type(), "convolution_backward: grad_output type (",
              grad_output_.scalar_type(), ") and input type (", input_.scalar_type(), ") should be the same");
  c10::DeviceGuard guard(input_.device());
  at::Tensor go = grad_output_.contiguous(), input = input_.contiguous(), weight = weight_.contiguous();
  auto expect = out_sizes(input, weight, stride, padding, dilation, output_padding, groups, transposed);
  TORCH_CHECK(go.sizes().equals(expect), "convolution_backward: grad_output has size ", go.sizes(),
              ", expected ", at::IntArrayRef(expect));
  int dev = input.device().index(), st = stream_of(input);
  tocl_tensor tg = to_tocl_tensor(go), ti = to_tocl_tensor(input), tw = to_tocl_tensor(weight);
  // x side / y side of conv.h: (input, grad_output) for a convolution, swapped for a transposed one.
  const at::Tensor& xs = transposed ? go : input;
  const at::Tensor& ys = transposed ? input : go;
  auto d = make_desc(xs.sizes(), ys.sizes(), weight, stride, padding, dilation, groups);
  auto fmt = layout_of(input_, weight_);
  at::Tensor gi, gw, gb;
  if (output_mask[0]) {
    gi = at::empty(input.sizes(), input.options());
    tocl_tensor t = to_tocl_tensor(gi);
    if (transposed)
      TOCL_CHECK(tocl_conv_forward(dev, st, &d, &tg, &tw, nullptr, &t));
    else
      TOCL_CHECK(tocl_conv_backward_data(dev, st, &d, &tg, &tw, nullptr, &t));
    gi = in_layout(gi, fmt);
  }
  if (output_mask[1]) {
    gw = at::empty(weight.sizes(), weight.options());
    tocl_tensor t = to_tocl_tensor(gw);
    const tocl_tensor *tx = transposed ? &tg : &ti, *ty = transposed ? &ti : &tg;
    TOCL_CHECK(tocl_conv_backward_weight(dev, st, &d, tx, ty, &t));
    gw = in_layout(gw, weight_.suggest_memory_format());
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t i = 2; i < go.dim(); i++)
      dims.push_back(i);
    // float32 accumulation for half types, as the GEMM does
    auto acc = go.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
    gb = go.sum(dims, false, acc).to(go.scalar_type());
  }
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

}  // namespace torch_ocl
