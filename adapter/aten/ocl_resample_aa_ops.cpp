// ocl_resample_aa_ops.cpp - antialiased bilinear resize (interpolate(...,
// mode="bilinear", antialias=True), torchvision's Resize on tensors) as two
// matrix products: out = Wy @ x @ Wx^T, with the CPU kernel's separable
// weights (a triangle filter widened by the downscale factor, each row
// normalised to sum 1) built on the host per size; the backward is the
// transpose, Wy^T @ g @ Wx. uint8 runs through the CPU fallback: the CPU's
// uint8 path rounds fixed-point weights, which float weights would not match.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "fallback.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

double aa_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners)
    return out > 1 ? static_cast<double>(in - 1) / (out - 1) : 0.0;
  return scale.has_value() && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / out;
}

// [out, in] weights of one dimension (the CPU's _compute_indices_min_size_weights_aa).
Tensor aa_weights(int64_t in, int64_t out, bool align_corners, std::optional<double> scale_opt,
                  const at::TensorOptions& opts) {
  const double scale = aa_scale(in, out, align_corners, scale_opt);
  const double support = scale >= 1.0 ? scale : 1.0, invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  const int64_t max_size = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  std::vector<double> w(static_cast<size_t>(out * in), 0.0);
  for (int64_t i = 0; i < out; i++) {
    const double center = scale * (i + 0.5);
    const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t xsize = std::clamp<int64_t>(std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - xmin,
                                              0, max_size);
    double total = 0;
    for (int64_t j = 0; j < xsize; j++) {
      double x = std::abs((j + xmin - center + 0.5) * invscale);
      double v = x < 1.0 ? 1.0 - x : 0.0;
      w[i * in + xmin + j] = v;
      total += v;
    }
    if (total != 0)
      for (int64_t j = 0; j < xsize; j++)
        w[i * in + xmin + j] /= total;
  }
  return at::tensor(w, at::kDouble).view({out, in}).to(opts);
}

void aa_check(const Tensor& x, at::IntArrayRef osize) {
  TORCH_CHECK(x.dim() == 4, "Expected 4D input for _upsample_bilinear2d_aa, got ", x.dim(), "D");
  TORCH_CHECK(osize.size() == 2, "It is expected output_size equals to 2, but got size ", osize.size());
  TORCH_CHECK(x.size(2) > 0 && x.size(3) > 0 && osize[0] > 0 && osize[1] > 0,
              "Input and output sizes should be greater than 0, but got input (H: ", x.size(2), ", W: ", x.size(3),
              ") output (H: ", osize[0], ", W: ", osize[1], ")");
}

Tensor upsample_aa(const Tensor& self, at::IntArrayRef osize, bool align_corners, std::optional<double> sh,
                   std::optional<double> sw) {
  aa_check(self, osize);
  if (!at::isFloatingType(self.scalar_type())) {
    note_fallback("aten::_upsample_bilinear2d_aa");
    return at::_upsample_bilinear2d_aa(self.cpu(), osize, align_corners, sh, sw).to(self.device());
  }
  auto opts = self.options();
  Tensor wy = aa_weights(self.size(2), osize[0], align_corners, sh, opts);
  Tensor wx = aa_weights(self.size(3), osize[1], align_corners, sw, opts);
  // horizontal pass first, as the CPU kernel
  Tensor out = at::matmul(wy, at::matmul(self, wx.t()));
  return out.contiguous(self.suggest_memory_format());
}

Tensor upsample_aa_vec(const Tensor& input, at::OptionalIntArrayRef osize, bool align_corners,
                       std::optional<at::ArrayRef<double>> scales) {
  TORCH_CHECK(input.dim() == 4, "Expected 4D input for _upsample_bilinear2d_aa, got ", input.dim(), "D");
  std::vector<int64_t> out(2);
  std::optional<double> sh, sw;
  if (osize.has_value()) {
    TORCH_CHECK(!scales.has_value(), "Must specify exactly one of output_size and scale_factors");
    out = osize->vec();
  } else {
    TORCH_CHECK(scales.has_value() && scales->size() == 2, "Must specify exactly one of output_size and scale_factors");
    sh = (*scales)[0];
    sw = (*scales)[1];
    out[0] = static_cast<int64_t>(std::floor(input.size(2) * *sh));
    out[1] = static_cast<int64_t>(std::floor(input.size(3) * *sw));
  }
  return upsample_aa(input, out, align_corners, sh, sw);
}

Tensor& upsample_aa_out(const Tensor& self, at::IntArrayRef osize, bool align_corners, std::optional<double> sh,
                        std::optional<double> sw, Tensor& out) {
  Tensor r = upsample_aa(self, osize, align_corners, sh, sw);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor upsample_aa_backward(const Tensor& grad, at::IntArrayRef osize, at::IntArrayRef isize, bool align_corners,
                            std::optional<double> sh, std::optional<double> sw) {
  TORCH_CHECK(isize.size() == 4, "It is expected input_size equals to 4, but got size ", isize.size());
  TORCH_CHECK(grad.dim() == 4 && grad.size(2) == osize[0] && grad.size(3) == osize[1],
              "Expected grad_output to have the output size ", osize, ", but got ", grad.sizes());
  if (!at::isFloatingType(grad.scalar_type())) {
    note_fallback("aten::_upsample_bilinear2d_aa_backward");
    return at::_upsample_bilinear2d_aa_backward(grad.cpu(), osize, isize, align_corners, sh, sw).to(grad.device());
  }
  auto opts = grad.options();
  Tensor wy = aa_weights(isize[2], osize[0], align_corners, sh, opts);
  Tensor wx = aa_weights(isize[3], osize[1], align_corners, sw, opts);
  return at::matmul(wy.t(), at::matmul(grad, wx)).contiguous(grad.suggest_memory_format());
}

Tensor& upsample_aa_backward_out(const Tensor& grad, at::IntArrayRef osize, at::IntArrayRef isize, bool align_corners,
                                 std::optional<double> sh, std::optional<double> sw, Tensor& gi) {
  Tensor r = upsample_aa_backward(grad, osize, isize, align_corners, sh, sw);
  at::native::resize_output(gi, r.sizes());
  gi.copy_(r);
  return gi;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_upsample_bilinear2d_aa", upsample_aa);
  m.impl("_upsample_bilinear2d_aa.vec", upsample_aa_vec);
  m.impl("_upsample_bilinear2d_aa.out", upsample_aa_out);
  m.impl("_upsample_bilinear2d_aa_backward", upsample_aa_backward);
  m.impl("_upsample_bilinear2d_aa_backward.grad_input", upsample_aa_backward_out);
}

}  // namespace
}  // namespace torch_ocl
