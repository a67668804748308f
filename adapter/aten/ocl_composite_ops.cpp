// ocl_composite_ops.cpp - aten ops whose CPU/CUDA kernels are device-specific
// but which compose exactly from ops that are native on ocl, so no new kernel
// is needed:
//   im2col / col2im (nn.Unfold / nn.Fold): padding, strided window views and
//     copies; col2im adds one window offset at a time in the CPU's order;
//   _weight_norm_interface and its backward (nn.utils.weight_norm, the
//     wav2vec2 family's positional convolution): norms in float32 for
//     float16/bfloat16, as the CPU kernel;
//   _cdist_forward/_backward, _pdist_forward/_backward: row differences and
//     vector norms (the matrix-product form where the CPU takes it);
//   multi_margin_loss, multilabel_margin_loss and their backward: gathers,
//     scatters and sums over classes, in the CPU's formula;
//   addr_: the composite addr.out resizes its out, so addr_ on a self that
//     broadcasts would resize self; the CPU's in-place TensorIterator raises;
//   unfold_backward (Tensor.unfold's gradient): index_add over the windows.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>
#include <vector>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

struct Window {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

Window window(at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride,
              const char* op) {
  TORCH_CHECK(kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 && stride.size() == 2, op,
              ": kernel_size, dilation, padding and stride must have 2 elements each");
  Window w{kernel[0], kernel[1], dilation[0], dilation[1], padding[0], padding[1], stride[0], stride[1]};
  TORCH_CHECK(w.kh > 0 && w.kw > 0, op, ": kernel size should be greater than zero, but got kernel_size ", kernel);
  TORCH_CHECK(w.dh > 0 && w.dw > 0, op, ": dilation should be greater than zero, but got dilation ", dilation);
  TORCH_CHECK(w.ph >= 0 && w.pw >= 0, op, ": padding should be non-negative, but got padding ", padding);
  TORCH_CHECK(w.sh > 0 && w.sw > 0, op, ": stride should be greater than zero, but got stride ", stride);
  return w;
}

int64_t blocks(int64_t size, int64_t pad, int64_t dil, int64_t k, int64_t stride) {
  return (size + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

// input [N, C, H, W] (or [C, H, W]) -> [N, C * kh * kw, L]
Tensor im2col(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
              at::IntArrayRef stride) {
  Window w = window(kernel, dilation, padding, stride, "im2col");
  TORCH_CHECK((self.dim() == 3 && self.size(0) != 0 && self.size(1) != 0 && self.size(2) != 0) ||
                  (self.dim() == 4 && self.size(1) != 0 && self.size(2) != 0 && self.size(3) != 0),
              "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
              "for input, but got: ", self.sizes());
  bool batched = self.dim() == 4;
  Tensor x = batched ? self : self.unsqueeze(0);
  int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
  int64_t lh = blocks(h, w.ph, w.dh, w.kh, w.sh), lw = blocks(wd, w.pw, w.dw, w.kw, w.sw);
  TORCH_CHECK(lh >= 1 && lw >= 1, "Given input with spatial size (", h, ", ", wd, "), kernel_size=", kernel,
              ", dilation=", dilation, ", padding=", padding, ", calculated shape of the array of sliding blocks as (",
              lh, ", ", lw, "), but its components must be at least one.");
  Tensor p = at::constant_pad_nd(x, {w.pw, w.pw, w.ph, w.ph}, 0).contiguous();
  int64_t sN = p.stride(0), sC = p.stride(1), sH = p.stride(2), sW = p.stride(3);
  // [N, C, kh, kw, lh, lw]: every window position as a view, then one copy.
  Tensor v = p.as_strided({n, c, w.kh, w.kw, lh, lw}, {sN, sC, w.dh * sH, w.dw * sW, w.sh * sH, w.sw * sW});
  Tensor out = v.reshape({n, c * w.kh * w.kw, lh * lw});
  if (out.is_alias_of(self))  // a 1x1 window without padding can come back as a view of the input
    out = out.clone();
  return batched ? out : out.squeeze(0);
}

// cols [N, C * kh * kw, L] (or unbatched) -> [N, C, H, W], overlapping windows summed.
Tensor col2im(const Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel, at::IntArrayRef dilation,
              at::IntArrayRef padding, at::IntArrayRef stride) {
  Window w = window(kernel, dilation, padding, stride, "col2im");
  TORCH_CHECK(output_size.size() == 2, "col2im: output_size must have 2 elements, got ", output_size);
  TORCH_CHECK((self.dim() == 2 && self.size(0) != 0 && self.size(1) != 0) ||
                  (self.dim() == 3 && self.size(1) != 0 && self.size(2) != 0),
              "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
              "for input, but got: ", self.sizes());
  bool batched = self.dim() == 3;
  Tensor cols = batched ? self : self.unsqueeze(0);
  int64_t n = cols.size(0), kk = w.kh * w.kw;
  TORCH_CHECK(cols.size(1) % kk == 0, "Expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=", cols.size(1), " and kernel_size=", kernel);
  int64_t c = cols.size(1) / kk, h = output_size[0], wd = output_size[1];
  int64_t lh = blocks(h, w.ph, w.dh, w.kh, w.sh), lw = blocks(wd, w.pw, w.dw, w.kw, w.sw);
  TORCH_CHECK(lh >= 1 && lw >= 1 && cols.size(2) == lh * lw, "Given output_size=", output_size, ", kernel_size=",
              kernel, ", dilation=", dilation, ", padding=", padding, ", stride=", stride, ", expected size of "
              "input's dimension 2 to match the calculated number of sliding blocks ", lh, " * ", lw, " = ",
              lh * lw, ", but got input.size(2)=", cols.size(2), ".");
  int64_t hp = h + 2 * w.ph, wp = wd + 2 * w.pw;
  Tensor out = at::zeros({n, c, hp, wp}, cols.options());
  Tensor cv = cols.reshape({n, c, w.kh, w.kw, lh, lw});
  // For one (i, j) the window positions are distinct, so each add is a
  // plain elementwise op; the CPU adds the offsets in this same order.
  for (int64_t i = 0; i < w.kh; i++)
    for (int64_t j = 0; j < w.kw; j++) {
      Tensor dst = out.as_strided({n, c, lh, lw}, {out.stride(0), out.stride(1), w.sh * out.stride(2), w.sw},
                                  i * w.dh * out.stride(2) + j * w.dw);
      dst.add_(cv.select(2, i).select(2, j));
    }
  Tensor res = out.narrow(2, w.ph, h).narrow(3, w.pw, wd).contiguous();
  return batched ? res : res.squeeze(0);
}

// Dims other than `dim` (dim == -1: all of them).
std::vector<int64_t> other_dims(const Tensor& v, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < v.dim(); d++)
    if (d != dim)
      dims.push_back(d);
  return dims;
}

std::tuple<Tensor, Tensor> weight_norm_interface(const Tensor& v, const Tensor& g, int64_t dim) {
  TORCH_CHECK(v.device() == g.device(), "weight_norm: v and g must be on the same device, got ", v.device(),
              " and ", g.device());
  dim = dim < -1 ? dim + v.dim() : dim;
  TORCH_CHECK(dim >= -1 && dim < v.dim(), "weight_norm: dim ", dim, " is out of range for a ", v.dim(), "-d tensor");
  auto acc = at::toOpMathType(v.scalar_type());
  Tensor vf = v.to(acc);
  Tensor norms = dim == -1 ? vf.norm() : vf.norm(2, other_dims(v, dim), /*keepdim=*/true);
  Tensor w = (vf * (g.to(acc) / norms)).to(v.scalar_type());
  return {w, norms.reshape(g.sizes())};
}

std::tuple<Tensor, Tensor> weight_norm_interface_backward(const Tensor& grad_w, const Tensor& saved_v,
                                                          const Tensor& saved_g, const Tensor& saved_norms,
                                                          int64_t dim) {
  dim = dim < -1 ? dim + saved_v.dim() : dim;
  TORCH_CHECK(dim >= -1 && dim < saved_v.dim(), "weight_norm backward: dim ", dim, " is out of range");
  auto acc = at::toOpMathType(saved_v.scalar_type());
  Tensor v = saved_v.to(acc), gw = grad_w.to(acc);
  std::vector<int64_t> shape(saved_v.dim(), 1);
  if (dim != -1)
    shape[dim] = saved_v.size(dim);
  Tensor norms = saved_norms.to(acc).reshape(shape), g = saved_g.to(acc).reshape(shape);
  Tensor dot = dim == -1 ? (gw * v).sum() : (gw * v).sum(other_dims(saved_v, dim), /*keepdim=*/true);
  Tensor grad_g = dot / norms;
  Tensor grad_v = (g / norms) * (gw - v * (dot / (norms * norms)));
  return {grad_v.to(saved_v.scalar_type()), grad_g.reshape(saved_g.sizes()).to(saved_g.scalar_type())};
}

// The CPU's checks for addr_ (build_addr_iter with result == self): self is
// not broadcast.
Tensor& addr_(Tensor& self, const Tensor& vec1, const Tensor& vec2, const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(vec1.dim() == 1, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  TORCH_CHECK(vec2.dim() == 1, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  TORCH_CHECK(self.dim() == 2, "2D tensor expected, got ", self.dim(), "D tensor for input");
  TORCH_CHECK(self.size(0) == vec1.size(0) && self.size(1) == vec2.size(0), "size mismatch, input: ", self.sizes(),
              ", v1: ", vec1.sizes(), ", v2: ", vec2.sizes());
  return at::addr_out(self, self, vec1, vec2, beta, alpha);
}

// ---- margin losses --------------------------------------------------------
// multi_margin_loss and multilabel_margin_loss with their backward, as the
// CPU's loops compute them (sums over classes, divided by the class count),
// from gather, scatter and reductions; checks and messages are the CPU's.

struct Frames {
  int64_t nframe, dim;
};

Frames margin_frames(const Tensor& input, const char* /*name*/) {
  int64_t nd = input.dim();
  TORCH_CHECK((nd == 2 && input.size(1) != 0) || (nd == 1 && input.size(0) != 0) || nd == 0,
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", input.sizes());
  if (nd <= 1)
    return {1, nd == 0 ? 1 : input.size(0)};
  return {input.size(0), input.size(1)};
}

// Scale per-frame gradients by grad_output (per frame for reduction none).
Tensor scale_by_grad_output(const Tensor& g, const Tensor& grad_output, int64_t reduction, bool per_frame) {
  if (reduction == at::Reduction::None && per_frame)
    return g * grad_output.reshape({-1, 1});
  return g * grad_output;
}

// multi_margin_loss terms h[n, d] = max(0, margin - x[n, y] + x[n, d])^p
// (times weight[y]) for d != y; and the mask z > 0.
std::tuple<Tensor, Tensor, Tensor> multi_margin_terms(const Tensor& input, const Tensor& target,
                                                      const c10::Scalar& p, const c10::Scalar& margin,
                                                      const std::optional<Tensor>& weight, Frames f) {
  TORCH_CHECK(p.toDouble() == 1 || p.toDouble() == 2, "only p == 1 and p == 2 supported");
  TORCH_CHECK(target.dim() <= 1 && target.numel() == f.nframe, "inconsistent target size, expected ", f.nframe,
              " but got ", target.sizes());
  if (weight && weight->defined())
    TORCH_CHECK(weight->dim() <= 1 && weight->numel() == f.dim, "inconsistent weight size, expected ", f.dim,
                " but got ", weight->sizes());
  Tensor x = input.reshape({f.nframe, f.dim});
  Tensor y = target.reshape({f.nframe, 1}).to(at::kLong);
  auto bad = ((y < 0) | (y >= f.dim)).any();
  TORCH_CHECK(!bad.item<bool>(), "target out of range");
  Tensor z = (x - x.gather(1, y)) + margin;
  Tensor not_y = at::ones_like(z, at::kBool).scatter_(1, y, false);
  Tensor pos = (z > 0) & not_y;
  Tensor h = p.toDouble() == 1 ? z : z * z;
  h = at::where(pos, h, at::zeros_like(h));
  Tensor wy;
  if (weight && weight->defined()) {
    wy = weight->reshape({-1}).index_select(0, y.reshape({-1})).reshape({-1, 1});
    h = h * wy;
  }
  return {h, pos, z};
}

Tensor& multi_margin_loss_out(const Tensor& input, const Tensor& target, const c10::Scalar& p,
                              const c10::Scalar& margin, const std::optional<Tensor>& weight, int64_t reduction,
                              Tensor& out) {
  Frames f = margin_frames(input, "multi_margin_loss");
  auto [h, pos, z] = multi_margin_terms(input, target, p, margin, weight, f);
  Tensor per = h.sum(1) / static_cast<double>(f.dim);
  Tensor r = reduction == at::Reduction::None
                 ? (target.dim() > 0 ? per : per.reshape({}))
                 : (reduction == at::Reduction::Mean ? per.sum() / static_cast<double>(f.nframe) : per.sum());
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const c10::Scalar& p, const c10::Scalar& margin,
                         const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor out = at::empty({0}, input.options());
  return multi_margin_loss_out(input, target, p, margin, weight, reduction, out);
}

Tensor& multi_margin_loss_backward_out(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                       const c10::Scalar& p, const c10::Scalar& margin,
                                       const std::optional<Tensor>& weight, int64_t reduction, Tensor& grad_input) {
  Frames f = margin_frames(input, "multi_margin_loss_backward");
  auto [h, pos, z] = multi_margin_terms(input, target, p, margin, weight, f);
  double g = reduction == at::Reduction::Mean ? 1.0 / (f.nframe * f.dim) : 1.0 / f.dim;
  Tensor d = p.toDouble() == 1 ? at::ones_like(z) * g : z * (2 * g);
  d = at::where(pos, d, at::zeros_like(d));
  if (weight && weight->defined())
    d = d * weight->reshape({-1}).index_select(0, target.reshape({-1}).to(at::kLong)).reshape({-1, 1});
  Tensor y = target.reshape({f.nframe, 1}).to(at::kLong);
  d = d.scatter(1, y, -d.sum(1, /*keepdim=*/true));
  d = scale_by_grad_output(d, grad_output, reduction, grad_output.dim() > 0);
  at::native::resize_output(grad_input, input.sizes());
  grad_input.copy_(d.reshape(input.sizes()));
  return grad_input;
}

Tensor multi_margin_loss_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                  const c10::Scalar& p, const c10::Scalar& margin,
                                  const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor gi = at::empty({0}, input.options());
  return multi_margin_loss_backward_out(grad_output, input, target, p, margin, weight, reduction, gi);
}

// multilabel: the target lists class indices up to the first -1. Pairs
// (j listed, d not listed) contribute max(0, 1 - x[j] + x[d]).
struct Multilabel {
  Tensor x, t, valid, is_target, pos, z;
};

Multilabel multilabel_terms(const Tensor& input, const Tensor& target, Frames f) {
  if (input.dim() <= 1) {
    TORCH_CHECK(target.dim() <= 1 && target.numel() == f.dim, "inconsistent target size: ", target.sizes(),
                " for input of size: ", input.sizes());
  } else {
    TORCH_CHECK(target.dim() == 2 && target.size(0) == f.nframe && target.size(1) == f.dim,
                "inconsistent target size: ", target.sizes(), " for input of size: ", input.sizes());
  }
  Multilabel m;
  m.x = input.reshape({f.nframe, f.dim});
  Tensor t = target.reshape({f.nframe, f.dim}).to(at::kLong);
  m.valid = (t >= 0).to(at::kLong).cumprod(1) > 0;  // entries before the first -1
  auto bad = (m.valid & (t >= f.dim)).any();
  TORCH_CHECK(!bad.item<bool>(), "multilabel_margin_loss: target index out of range");
  m.t = at::where(m.valid, t, at::zeros_like(t));
  m.is_target = at::zeros({f.nframe, f.dim}, m.x.options()).scatter_add_(1, m.t, m.valid.to(m.x.scalar_type())) > 0;
  Tensor xt = m.x.gather(1, m.t);
  m.z = (m.x.unsqueeze(1) - xt.unsqueeze(2)) + 1.0;  // [N, listed j, class d]
  m.pos = (m.z > 0) & m.valid.unsqueeze(2) & m.is_target.logical_not().unsqueeze(1);
  return m;
}

std::tuple<Tensor&, Tensor&> multilabel_margin_loss_forward_out(const Tensor& input, const Tensor& target,
                                                                 int64_t reduction, Tensor& out, Tensor& is_target) {
  Frames f = margin_frames(input, "multilabel_margin_loss");
  Multilabel m = multilabel_terms(input, target, f);
  Tensor per = at::where(m.pos, m.z, at::zeros_like(m.z)).sum({1, 2}) / static_cast<double>(f.dim);
  Tensor r = reduction == at::Reduction::None
                 ? (target.dim() > 1 ? per : per.reshape({}))
                 : (reduction == at::Reduction::Mean ? per.sum() / static_cast<double>(f.nframe) : per.sum());
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  at::native::resize_output(is_target, target.sizes());
  is_target.copy_(m.is_target.reshape(target.sizes()));
  return std::forward_as_tuple(out, is_target);
}

std::tuple<Tensor, Tensor> multilabel_margin_loss_forward(const Tensor& input, const Tensor& target,
                                                          int64_t reduction) {
  Tensor out = at::empty({0}, input.options()), is_target = at::empty({0}, input.options());
  multilabel_margin_loss_forward_out(input, target, reduction, out, is_target);
  return std::make_tuple(out, is_target);
}

Tensor& multilabel_margin_loss_backward_out(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                            int64_t reduction, const Tensor& /*is_target*/, Tensor& grad_input) {
  Frames f = margin_frames(input, "multilabel_margin_loss_backward");
  Multilabel m = multilabel_terms(input, target, f);
  double g = reduction == at::Reduction::Mean ? 1.0 / (f.nframe * f.dim) : 1.0 / f.dim;
  Tensor pos = m.pos.to(m.x.scalar_type());
  Tensor d = pos.sum(1) * g;
  d = d.scatter_add(1, m.t, pos.sum(2) * -g);
  d = scale_by_grad_output(d, grad_output, reduction, grad_output.dim() > 0);
  at::native::resize_output(grad_input, input.sizes());
  grad_input.copy_(d.reshape(input.sizes()));
  return grad_input;
}

Tensor multilabel_margin_loss_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                       int64_t reduction, const Tensor& is_target) {
  Tensor gi = at::empty({0}, input.options());
  return multilabel_margin_loss_backward_out(grad_output, input, target, reduction, is_target, gi);
}

// ---- distances: cdist, pdist -----------------------------------------------
// p-norms of row differences. cdist takes the matrix-product form for p = 2
// where the CPU takes it (compute_mode, or more than 25 rows), else the
// differences; the backward ops use the CPU's per-p formulas, 0 where the
// distance is 0.

// d dist / d x1 times grad, elementwise over diff = x1 - x2 (..., m).
Tensor dist_grad(const Tensor& diff, const Tensor& dist, const Tensor& grad, double p) {
  if (p == 0)
    return at::zeros_like(diff);
  Tensor zero = at::zeros_like(diff);
  Tensor d = dist.unsqueeze(-1), g = grad.unsqueeze(-1);
  Tensor r;
  if (p == 1)
    return at::sign(diff) * g;
  if (std::isinf(p))
    r = at::sign(diff) * (diff.abs() == d) * g;
  else if (p < 2)
    r = at::where((diff == 0) & (p < 1), zero, at::sign(diff) * diff.abs().pow(p - 1) * g / d.pow(p - 1));
  else if (p == 2)
    r = diff * g / d;
  else
    r = diff * diff.abs().pow(p - 2) * g / d.pow(p - 1);
  return at::where(d == 0, zero, r);
}

Tensor cdist_forward(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()), "cdist only supports floating-point dtypes, X1 got: ",
              x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()), "cdist only supports floating-point dtypes, X2 got: ",
              x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  int64_t mode = compute_mode.value_or(0);
  TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  int64_t r1 = x1.size(-2), r2 = x2.size(-2);
  auto batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  std::vector<int64_t> s1(batch.begin(), batch.end()), s2(batch.begin(), batch.end()), so(batch.begin(), batch.end());
  s1.insert(s1.end(), {r1, x1.size(-1)});
  s2.insert(s2.end(), {r2, x2.size(-1)});
  so.insert(so.end(), {r1, r2});
  Tensor a = x1.expand(s1), b = x2.expand(s2);
  if (r1 == 0 || r2 == 0)
    return at::empty(so, x1.options());
  if (x1.size(-1) == 0)
    return at::zeros(so, x1.options());
  if (p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25))))
    return at::_euclidean_dist(a, b);
  Tensor diff = a.unsqueeze(-2) - b.unsqueeze(-3);
  return at::linalg_vector_norm(diff, p, {-1});
}

Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& cdist) {
  if (x1.numel() == 0 || x2.numel() == 0 || grad.numel() == 0) {
    auto batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
    std::vector<int64_t> s(batch.begin(), batch.end());
    s.insert(s.end(), {x1.size(-2), x1.size(-1)});
    return at::zeros(s, x1.options());
  }
  Tensor diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);  // (..., r1, r2, m)
  return dist_grad(diff, cdist, grad, p).sum(-2);
}

std::tuple<Tensor, Tensor> pdist_pairs(const Tensor& self) {
  int64_t n = self.size(0);
  Tensor ij = at::triu_indices(n, n, 1, self.options().dtype(at::kLong));
  return {ij[0], ij[1]};
}

Tensor pdist_forward(const Tensor& self, double p) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_forward requires contiguous input");
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  int64_t n = self.size(0);
  if (n <= 1)
    return at::empty({0}, self.options());
  if (self.size(1) == 0)
    return at::zeros({n * (n - 1) / 2}, self.options());
  auto [i, j] = pdist_pairs(self);
  return at::linalg_vector_norm(self.index_select(0, i) - self.index_select(0, j), p, {-1});
}

Tensor pdist_backward(const Tensor& grad, const Tensor& self, double p, const Tensor& pdist) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  TORCH_CHECK(pdist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  Tensor out = at::zeros_like(self);
  if (self.size(0) <= 1 || self.size(1) == 0)
    return out;
  auto [i, j] = pdist_pairs(self);
  Tensor g = dist_grad(self.index_select(0, i) - self.index_select(0, j), pdist, grad, p);
  return out.index_add_(0, i, g).index_add_(0, j, -g);
}

// Backward of Tensor.unfold(dim, size, step): every window's gradient added
// back at its positions along dim (index_add over the windows' indices).
Tensor ocl_unfold_backward(const Tensor& grad, at::IntArrayRef input_sizes, int64_t dim, int64_t size, int64_t step) {
  if (input_sizes.empty())  // a 0-dim input unfolds to one window of one element
    return grad.reshape({});
  dim = at::maybe_wrap_dim(dim, static_cast<int64_t>(input_sizes.size()));
  Tensor gi = at::zeros(input_sizes, grad.options());
  if (grad.numel() == 0)
    return gi;
  const int64_t n = grad.size(dim);
  auto lopts = grad.options().dtype(at::kLong);
  Tensor idx = (at::arange(n, lopts) * step).unsqueeze(1) + at::arange(size, lopts);
  Tensor g = grad.movedim(-1, dim + 1).flatten(dim, dim + 1);
  return gi.index_add_(dim, idx.flatten(), g);
}

Tensor& unfold_backward_out(const Tensor& grad, at::IntArrayRef input_sizes, int64_t dim, int64_t size, int64_t step,
                            Tensor& out) {
  Tensor r = ocl_unfold_backward(grad, input_sizes, dim, size, step);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("unfold_backward", ocl_unfold_backward);
  m.impl("unfold_backward.out", unfold_backward_out);
  m.impl("_cdist_forward", cdist_forward);
  m.impl("_cdist_backward", cdist_backward);
  m.impl("_pdist_forward", pdist_forward);
  m.impl("_pdist_backward", pdist_backward);
  m.impl("multi_margin_loss", multi_margin_loss);
  m.impl("multi_margin_loss.out", multi_margin_loss_out);
  m.impl("multi_margin_loss_backward", multi_margin_loss_backward);
  m.impl("multi_margin_loss_backward.grad_input", multi_margin_loss_backward_out);
  m.impl("multilabel_margin_loss_forward", multilabel_margin_loss_forward);
  m.impl("multilabel_margin_loss_forward.output", multilabel_margin_loss_forward_out);
  m.impl("multilabel_margin_loss_backward", multilabel_margin_loss_backward);
  m.impl("multilabel_margin_loss_backward.grad_input", multilabel_margin_loss_backward_out);
  m.impl("addr_", addr_);
  m.impl("im2col", im2col);
  m.impl("col2im", col2im);
  m.impl("_weight_norm_interface", weight_norm_interface);
  m.impl("_weight_norm_interface_backward", weight_norm_interface_backward);
}

}  // namespace torch_ocl
