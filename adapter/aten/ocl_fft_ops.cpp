// ocl_fft_ops.cpp - torch.fft on the ocl device: the three aten primitives
// every torch.fft function and stft/istft reduce to (_fft_r2c, _fft_c2r,
// _fft_c2c), over the runtime's one-dimensional transforms (tocl/fft.h).
//
// A transform over several dims is one runtime transform per dim, each into
// a fresh buffer: the DFT is separable, so the order does not change the
// result. Real-to-complex transforms the last listed dim first (as pocketfft
// does) and, for a two-sided result, writes the Hermitian completion along
// that dim; the complex transforms of the other dims then complete the rest,
// since they are linear. Normalisation is split across the dims (1/n_d or
// 1/sqrt(n_d) each), which multiplies out to PyTorch's scale over the
// signal size.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SpectralOpsUtils.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <vector>

#include "ocl_common.h"
#include "ocl_complex_route.h"
#include "tocl/fft.h"

namespace torch_ocl {
namespace {

using at::native::fft_norm_mode;

double dim_scale(int64_t normalization, int64_t n) {
  switch (static_cast<fft_norm_mode>(normalization)) {
    case fft_norm_mode::none: return 1.0;
    case fft_norm_mode::by_root_n: return 1.0 / std::sqrt(static_cast<double>(n));
    case fft_norm_mode::by_n: return 1.0 / static_cast<double>(n);
  }
  TORCH_CHECK(false, "Unsupported normalization type: ", normalization);
}

// The CPU's dtype rule (pocketfft: float and double only), with its message.
void check_fft_dtype(const at::Tensor& t) {
  c10::ScalarType real = c10::toRealValueType(t.scalar_type());
  TORCH_CHECK(real == at::kFloat || real == at::kDouble, "Unsupported dtype ", t.scalar_type());
}

std::vector<int64_t> wrapped_dims(at::IntArrayRef dim, int64_t ndim) {
  std::vector<int64_t> d;
  for (int64_t x : dim)
    d.push_back(c10::maybe_wrap_dim(x, ndim));
  return d;
}

// A complex tensor without conj/neg bits (the runtime reads physical values).
at::Tensor plain(const at::Tensor& t) { return t.resolve_conj().resolve_neg(); }

// One complex-to-complex transform of `cur` along d into a fresh tensor.
at::Tensor c2c_dim(const at::Tensor& cur, int64_t d, bool forward, double scale) {
  at::Tensor out = at::empty(cur.sizes(), cur.options());
  if (out.numel() == 0)
    return out;
  int dev = cur.device().index();
  tocl_tensor o = to_tocl_pairs(out), i = to_tocl_pairs(cur);
  TOCL_CHECK(tocl_fft_c2c(dev, tocl_stream_current(dev), &o, &i, static_cast<int>(d), forward ? 0 : 1, scale));
  return out;
}

at::Tensor fft_c2c(const at::Tensor& self, c10::SymIntArrayRef dim_sym, int64_t normalization, bool forward) {
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input tensor, but got ", self.scalar_type());
  check_fft_dtype(self);
  c10::DeviceGuard guard(self.device());
  at::Tensor cur = plain(self);
  auto dims = wrapped_dims(C10_AS_INTARRAYREF_SLOW(dim_sym), self.dim());
  if (dims.empty())
    return cur.clone(at::MemoryFormat::Contiguous);
  for (int64_t d : dims)
    cur = c2c_dim(cur, d, forward, dim_scale(normalization, self.size(d)));
  return cur;
}

at::Tensor fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "_fft_r2c expects a floating point input tensor, but got ",
              self.scalar_type());
  check_fft_dtype(self);
  c10::DeviceGuard guard(self.device());
  auto dims = wrapped_dims(dim, self.dim());
  TORCH_CHECK(!dims.empty(), "_fft_r2c must transform at least one axis");
  int64_t last = dims.back();
  int64_t n = self.size(last);
  std::vector<int64_t> osize(self.sizes().begin(), self.sizes().end());
  osize[last] = onesided ? n / 2 + 1 : n;
  at::Tensor out = at::empty(osize, self.options().dtype(c10::toComplexType(self.scalar_type())));
  if (out.numel() == 0)
    return out;
  int dev = self.device().index();
  tocl_tensor o = to_tocl_pairs(out), i = to_tocl_tensor(plain(self));
  TOCL_CHECK(tocl_fft_r2c(dev, tocl_stream_current(dev), &o, &i, static_cast<int>(last),
                          dim_scale(normalization, n)));
  for (size_t k = 0; k + 1 < dims.size(); k++)
    out = c2c_dim(out, dims[k], true, dim_scale(normalization, self.size(dims[k])));
  return out;
}

at::Tensor fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input tensor, but got ", self.scalar_type());
  check_fft_dtype(self);
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  c10::DeviceGuard guard(self.device());
  auto dims = wrapped_dims(dim, self.dim());
  TORCH_CHECK(!dims.empty(), "_fft_c2r must transform at least one axis");
  int64_t last = dims.back();
  TORCH_CHECK(self.size(last) >= last_dim_size / 2 + 1, "_fft_c2r: the input has ", self.size(last),
              " entries along dim ", last, ", fewer than the ", last_dim_size / 2 + 1, " that ", last_dim_size,
              " output points need");
  at::Tensor cur = plain(self);
  for (size_t k = 0; k + 1 < dims.size(); k++)
    cur = c2c_dim(cur, dims[k], false, dim_scale(normalization, self.size(dims[k])));
  std::vector<int64_t> osize(self.sizes().begin(), self.sizes().end());
  osize[last] = last_dim_size;
  at::Tensor out = at::empty(osize, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  if (out.numel() == 0)
    return out;
  int dev = self.device().index();
  tocl_tensor o = to_tocl_tensor(out), i = to_tocl_pairs(cur);
  TOCL_CHECK(tocl_fft_c2r(dev, tocl_stream_current(dev), &o, &i, static_cast<int>(last),
                          dim_scale(normalization, last_dim_size)));
  return out;
}

// out= forms: compute, then deliver as the CPU's out kernels do.
at::Tensor& deliver(const at::Tensor& r, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == r.scalar_type(), "Expected out tensor to have dtype ", r.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  resize_out(out, r.sizes());
  out.copy_(r);
  return out;
}
at::Tensor& fft_c2c_out(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward,
                        at::Tensor& out) {
  return deliver(fft_c2c(self, dim, normalization, forward), out);
}
at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                        at::Tensor& out) {
  return deliver(fft_r2c(self, dim, normalization, onesided), out);
}
at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, int64_t last_dim_size,
                        at::Tensor& out) {
  return deliver(fft_c2r(self, dim, normalization, last_dim_size), out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl_complex("_fft_c2c", fft_c2c);
  m.impl_complex("_fft_c2c.out", fft_c2c_out);
  m.impl_complex("_fft_r2c", fft_r2c);
  m.impl_complex("_fft_r2c.out", fft_r2c_out);
  m.impl_complex("_fft_c2r", fft_c2r);
  m.impl_complex("_fft_c2r.out", fft_c2r_out);
}

}  // namespace torch_ocl
