// ocl_fractional_pool_ops.cpp - fractional max pooling in 2-D and 3-D and
// its backward, composed from ops native on ocl. The window starts come from
// the random samples by the CPU's formula, evaluated in the input's dtype as
// the CPU evaluates it (so the same samples give the same windows); each
// window is gathered and reduced, keeping the CPU's choice of index (the
// first maximum in row-major order, the last NaN); the backward scatters the
// gradient to those indices.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>
#include <vector>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

// Window starts [planes, out] for samples [planes] (the CPU's generate_intervals).
Tensor frac_intervals(const Tensor& sample, int64_t in, int64_t out, int64_t pool) {
  const int64_t planes = sample.size(0);
  Tensor last = at::full({planes, 1}, in - pool, sample.options().dtype(at::kLong));
  if (out <= 1)
    return last;
  auto opts = sample.options();
  Tensor alpha = at::full({}, static_cast<double>(in - pool), opts) / at::full({}, static_cast<double>(out - 1), opts);
  Tensor i = at::arange(out - 1, opts).unsqueeze(0);
  Tensor s = sample.unsqueeze(1);
  Tensor seq = ((i + s) * alpha).to(at::kLong) - (s * alpha).to(at::kLong);
  return at::cat({seq, last}, 1);
}

// Output and indices of fractional max pooling over the last nd dims of
// x [planes, prod(in)], windows `pool`, starts[d] [planes, out[d]].
std::tuple<Tensor, Tensor> frac_pool(const Tensor& x, at::IntArrayRef in, at::IntArrayRef out, at::IntArrayRef pool,
                                     const std::vector<Tensor>& starts) {
  const int64_t nd = static_cast<int64_t>(in.size()), planes = x.size(0);
  auto lopts = x.options().dtype(at::kLong);
  // flat input index of every (output position, window offset): [planes, out..., pool...]
  std::vector<int64_t> strides(nd);
  for (int64_t d = nd - 1, stride = 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= in[d];
  }
  std::vector<int64_t> ones(1 + 2 * nd, 1);
  ones[0] = planes;
  Tensor flat = at::zeros(ones, lopts);
  for (int64_t d = 0; d < nd; d++) {
    Tensor pos = starts[d].unsqueeze(-1) + at::arange(pool[d], lopts);  // [planes, out_d, pool_d]
    std::vector<int64_t> v(1 + 2 * nd, 1);
    v[0] = planes;
    v[1 + d] = out[d];
    v[1 + nd + d] = pool[d];
    flat = flat + pos.reshape(v) * strides[d];
  }
  std::vector<int64_t> oshape = {planes};
  int64_t k = 1, nout = 1;
  for (int64_t d = 0; d < nd; d++) {
    oshape.push_back(out[d]);
    k *= pool[d];
    nout *= out[d];
  }
  flat = flat.reshape({planes, nout, k});
  Tensor vals = x.gather(1, flat.reshape({planes, nout * k})).view({planes, nout, k});
  Tensor m = vals.amax(-1, true);
  Tensor ar = at::arange(k, lopts);
  Tensor first_max = at::where(vals == m, ar, k).amin(-1, true);
  Tensor last_nan = at::where(vals.isnan(), ar, -1).amax(-1, true);
  Tensor pos = at::where(last_nan >= 0, last_nan, first_max);
  Tensor idx = flat.gather(-1, pos).squeeze(-1).view(oshape);
  return {m.squeeze(-1).view(oshape), idx};
}

std::tuple<Tensor, Tensor> frac_forward(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef osize,
                                        const Tensor& samples, int64_t nd) {
  const char* name = nd == 2 ? "fractional_max_pool2d()" : "fractional_max_pool3d()";
  TORCH_CHECK(static_cast<int64_t>(kernel.size()) == nd, name, ": kernel_size must either be a single Int or tuple "
              "of Ints");
  TORCH_CHECK(static_cast<int64_t>(osize.size()) == nd, name, ": output_size must either be a single Int or tuple "
              "of Ints");
  TORCH_CHECK(self.dim() == nd + 1 || self.dim() == nd + 2, name, ": Expected ", nd + 1, "D or ", nd + 2,
              "D tensor, but got: ", self.sizes());
  for (int64_t i = 1; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0, name, ": Expected input to have non-zero size for non-batch dimensions, but got",
                self.sizes(), " with dimension ", i, " being empty.");
  const bool batched = self.dim() == nd + 2;
  Tensor x = batched ? self : self.unsqueeze(0);
  const int64_t N = x.size(0), C = x.size(1);
  std::vector<int64_t> in(x.sizes().begin() + 2, x.sizes().end());
  static const char* dim_names[3] = {"time", "height", "width"};
  for (int64_t d = 0; d < nd; d++)
    TORCH_CHECK(osize[d] + kernel[d] - 1 <= in[d], name, ": pool ", dim_names[3 - nd + d], " ", kernel[d],
                " too large relative to input ", dim_names[3 - nd + d], " ", in[d]);
  TORCH_CHECK(samples.dim() == 3 && samples.size(0) >= N && samples.size(1) >= C && samples.size(2) == nd,
              name, ": expected random_samples of shape [", N, ", ", C, ", ", nd, "], got ", samples.sizes());
  Tensor s = samples.narrow(0, 0, N).narrow(1, 0, C).to(self.scalar_type()).reshape({N * C, nd});
  // the CPU's sample order: (w, h) in 2-D, (t, h, w) in 3-D
  std::vector<Tensor> starts(nd);
  for (int64_t d = 0; d < nd; d++) {
    const int64_t col = nd == 2 ? 1 - d : d;
    starts[d] = frac_intervals(s.select(1, col).contiguous(), in[d], osize[d], kernel[d]);
  }
  int64_t prod_in = 1;
  for (int64_t v : in)
    prod_in *= v;
  auto r = frac_pool(x.reshape({N * C, prod_in}), in, osize, kernel, starts);
  std::vector<int64_t> oshape = {N, C};
  for (int64_t d = 0; d < nd; d++)
    oshape.push_back(osize[d]);
  Tensor out = std::get<0>(r).reshape(oshape), idx = std::get<1>(r).reshape(oshape);
  if (!batched) {
    out = out.squeeze(0);
    idx = idx.squeeze(0);
  }
  return {out.contiguous(), idx.contiguous()};
}

Tensor frac_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t nd) {
  TORCH_CHECK(grad.sizes() == indices.sizes(), "fractional_max_pool: grad_output of shape ", grad.sizes(),
              " does not match indices of shape ", indices.sizes());
  // one plane per (batch, channel): the dims before the pooled ones
  int64_t P = 1;
  for (int64_t i = 0; i < self.dim() - nd; i++)
    P *= self.size(i);
  Tensor gi = at::zeros({P, P ? self.numel() / P : 0}, grad.options());
  if (self.numel() == 0)
    return gi.view(self.sizes());
  gi.scatter_add_(1, indices.reshape({P, -1}), grad.reshape({P, -1}));
  return gi.view(self.sizes());
}

std::tuple<Tensor, Tensor> frac2d(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef osize,
                                  const Tensor& samples) {
  return frac_forward(self, kernel, osize, samples, 2);
}
std::tuple<Tensor, Tensor> frac3d(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef osize,
                                  const Tensor& samples) {
  return frac_forward(self, kernel, osize, samples, 3);
}

template <int ND>
std::tuple<Tensor&, Tensor&> frac_out(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef osize,
                                      const Tensor& samples, Tensor& out, Tensor& indices) {
  auto r = frac_forward(self, kernel, osize, samples, ND);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "Expected out tensor to have dtype long int, but got ",
              indices.scalar_type(), " instead");
  at::native::resize_output(out, std::get<0>(r).sizes());
  out.copy_(std::get<0>(r));
  at::native::resize_output(indices, std::get<1>(r).sizes());
  indices.copy_(std::get<1>(r));
  return {out, indices};
}

template <int ND>
Tensor frac_bwd(const Tensor& grad, const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef osize,
                const Tensor& indices) {
  return frac_backward(grad, self, indices, ND);
}

template <int ND>
Tensor& frac_bwd_out(const Tensor& grad, const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef osize,
                     const Tensor& indices, Tensor& gi) {
  Tensor r = frac_backward(grad, self, indices, ND);
  at::native::resize_output(gi, r.sizes());
  gi.copy_(r);
  return gi;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("fractional_max_pool2d", frac2d);
  m.impl("fractional_max_pool2d.output", frac_out<2>);
  m.impl("fractional_max_pool2d_backward", frac_bwd<2>);
  m.impl("fractional_max_pool2d_backward.grad_input", frac_bwd_out<2>);
  m.impl("fractional_max_pool3d", frac3d);
  m.impl("fractional_max_pool3d.output", frac_out<3>);
  m.impl("fractional_max_pool3d_backward", frac_bwd<3>);
  m.impl("fractional_max_pool3d_backward.grad_input", frac_bwd_out<3>);
}

}  // namespace
}  // namespace torch_ocl
