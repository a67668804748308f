// ocl_composite_ops.cpp - aten ops whose CPU/CUDA kernels are device-specific
// but which compose exactly from ops that are native on ocl, so no new kernel
// is needed:
//   im2col / col2im (nn.Unfold / nn.Fold): padding, strided window views and
//     copies; col2im adds one window offset at a time in the CPU's order;
//   _weight_norm_interface and its backward (nn.utils.weight_norm, the
//     wav2vec2 family's positional convolution): norms in float32 for
//     float16/bfloat16, as the CPU kernel;
//   addr_: the composite addr.out resizes its out, so addr_ on a self that
//     broadcasts would resize self; the CPU's in-place TensorIterator raises.
#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addr_", addr_);
  m.impl("im2col", im2col);
  m.impl("col2im", col2im);
  m.impl("_weight_norm_interface", weight_norm_interface);
  m.impl("_weight_norm_interface_backward", weight_norm_interface_backward);
}

}  // namespace torch_ocl
