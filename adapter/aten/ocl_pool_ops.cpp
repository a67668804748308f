// ocl_pool_ops.cpp - max/avg/adaptive pooling, forward and backward, on
// runtime/ops/pool.c. Argument checks and output shapes come from ATen's own
// helpers (Pool.h, AdaptivePooling.h), so messages match the CPU's. Operands are
// made dense here; outputs keep the input's suggested memory format
// (channels_last stays channels_last). Integer inputs, which the kernels do not
// cover, take a counted CPU route (fallback.h). max_unpool is a scatter.
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/avg_pool3d.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool3d_with_indices.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_pool_util.h"
#include "tocl/pool.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace pool_util;

// ------------------------------------------------------------------ windows

struct Win {
  Arr3 k{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1};
  Arr3 o{1, 1, 1};  // output sizes
};

const char* count_word(int n) { return n == 2 ? "two" : "three"; }

// One int[n] argument: a single int or n ints (or empty: dflt).
void expand(at::IntArrayRef v, int n, const Arr3* dflt, Arr3& out, const char* op, const char* what) {
  bool ok = v.size() == 1 || static_cast<int>(v.size()) == n || (dflt && v.empty());
  TORCH_CHECK(ok, op, ": ", what, " must either be ", dflt ? "omitted, " : "", "a single int, or a tuple of ",
              count_word(n), " ints");
  for (int i = 0; i < n; i++)
    out[3 - n + i] = v.empty() ? (*dflt)[3 - n + i] : v.size() == 1 ? v[0] : v[i];
}

// Window arguments and output sizes with the CPU's checks (Pool.h).
Win pool_win(const at::Tensor& input, int n, bool max, at::IntArrayRef kernel, at::IntArrayRef stride,
             at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  const char* op = n == 2 ? (max ? "max_pool2d" : "avg_pool2d") : (max ? "max_pool3d" : "avg_pool3d");
  Win w;
  expand(kernel, n, nullptr, w.k, op, "kernel_size");
  expand(stride, n, &w.k, w.s, op, "stride");
  expand(padding, n, nullptr, w.p, op, "padding");
  if (max)
    expand(dilation, n, nullptr, w.d, op, "dilation");
  int64_t nd = input.dim();
  if (n == 2) {
    auto fmt = input.suggest_memory_format();
    if (fmt == at::MemoryFormat::ChannelsLast) {
      TORCH_CHECK(nd == 4, "non-empty 4D (batch mode) tensor expected for input with channels_last layout");
    } else {
      TORCH_CHECK(nd == 3 || nd == 4, "non-empty 3D or 4D (batch mode) tensor expected for input");
    }
  } else {
    TORCH_CHECK(nd == 4 || nd == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  }
  Arr3 in = spatial(input.sizes(), n, nullptr);
  for (int j = 3 - n; j < 3; j++)
    w.o[j] = at::native::pooling_output_shape<int64_t>(in[j], w.k[j], w.p[j], w.s[j], w.d[j], ceil_mode);
  int64_t planes = input.size(-n - 1);
  if (n == 2)
    at::native::pool2d_shape_check(input, w.k[1], w.k[2], w.s[1], w.s[2], w.p[1], w.p[2], w.d[1], w.d[2], planes,
                                   in[1], in[2], w.o[1], w.o[2], input.suggest_memory_format());
  else
    at::native::pool3d_shape_check(input, planes, w.k[0], w.k[1], w.k[2], w.s[0], w.s[1], w.s[2], w.p[0], w.p[1],
                                   w.p[2], w.d[0], w.d[1], w.d[2], in[0], in[1], in[2], w.o[0], w.o[1], w.o[2],
                                   op);
  return w;
}

tocl_pool_desc pool_desc(tocl_pool_kind kind, const at::Tensor& input, int n, const Arr3& out, const Win* w) {
  tocl_pool_desc d{};
  d.kind = kind;
  Arr3 in = spatial(input.sizes(), n, &d.nc);
  for (int j = 0; j < 3; j++) {
    d.in[j] = in[j];
    d.out[j] = out[j];
    if (w) {
      d.kernel[j] = w->k[j];
      d.stride[j] = w->s[j];
      d.pad[j] = w->p[j];
      d.dilation[j] = w->d[j];
    }
  }
  return d;
}

// Forward into out (and indices for the max kinds), both already sized.
void pool_forward(const tocl_pool_desc& d, const at::Tensor& input, at::Tensor& out, at::Tensor* indices) {
  if (out.numel() == 0)
    return;
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous();
  Dense y(out);
  tocl_tensor tx = to_tocl_tensor(x), ty = y.tt();
  if (indices) {
    Dense ix(*indices);
    tocl_tensor ti = ix.tt();
    TOCL_CHECK(tocl_pool_forward(dev_of(x), stream_of(x), &d, &tx, &ty, &ti));
    ix.done();
  } else {
    TOCL_CHECK(tocl_pool_forward(dev_of(x), stream_of(x), &d, &tx, &ty, nullptr));
  }
  y.done();
}

void pool_backward(const tocl_pool_desc& d, const at::Tensor& grad, const at::Tensor* indices,
                   at::Tensor& grad_input) {
  if (grad_input.numel() == 0)
    return;
  c10::DeviceGuard guard(grad.device());
  at::Tensor g = grad.contiguous(), ind = indices ? indices->contiguous() : at::Tensor();
  Dense z(grad_input);
  tocl_tensor tg = to_tocl_tensor(g), tz = z.tt(), ti{};
  if (indices)
    ti = to_tocl_tensor(ind);
  TOCL_CHECK(tocl_pool_backward(dev_of(g), stream_of(g), &d, &tg, indices ? &ti : nullptr, &tz));
  z.done();
}

// ------------------------------------------------------------------ max pool

template <int N>
std::tuple<at::Tensor&, at::Tensor&> max_pool_out(const at::Tensor& self, at::IntArrayRef kernel,
                                                  at::IntArrayRef stride, at::IntArrayRef padding,
                                                  at::IntArrayRef dilation, bool ceil_mode, at::Tensor& out,
                                                  at::Tensor& indices) {
  const char* name = N == 2 ? "max_pool2d_with_indices" : "max_pool3d_with_indices";
  if (cpu_route(name, self, {&out, &indices}, [&](const at::Tensor& c) {
        return N == 2 ? at::max_pool2d_with_indices(c, kernel, stride, padding, dilation, ceil_mode)
                      : at::max_pool3d_with_indices(c, kernel, stride, padding, dilation, ceil_mode);
      }))
    return {out, indices};
  Win w = pool_win(self, N, true, kernel, stride, padding, dilation, ceil_mode);
  auto sizes = with_spatial(self.sizes(), N, at::IntArrayRef(w.o).slice(3 - N));
  auto fmt = fmt_of(self);
  resize_fmt(out, sizes, fmt);
  resize_fmt(indices, sizes, fmt);
  TORCH_CHECK(indices.scalar_type() == at::kLong, name, ": indices must be int64, got ", indices.scalar_type());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), name, ": expected out dtype ", self.scalar_type(), ", got ",
              out.scalar_type());
  pool_forward(pool_desc(TOCL_POOL_MAX, self, N, w.o, &w), self, out, &indices);
  return {out, indices};
}

template <int N>
std::tuple<at::Tensor, at::Tensor> max_pool(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  at::Tensor out = at::empty({0}, self.options()), ind = at::empty({0}, self.options().dtype(at::kLong));
  max_pool_out<N>(self, kernel, stride, padding, dilation, ceil_mode, out, ind);
  return {out, ind};
}

template <int N>
at::Tensor& max_pool_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel,
                                  at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                  bool ceil_mode, const at::Tensor& indices, at::Tensor& grad_input) {
  check_float(self, N == 2 ? "max_pool2d_with_indices_backward" : "max_pool3d_with_indices_backward");
  Win w = pool_win(self, N, true, kernel, stride, padding, dilation, ceil_mode);
  Arr3 in = spatial(self.sizes(), N, nullptr);
  int64_t planes = self.size(-N - 1);
  if (N == 2)
    at::native::max_pool2d_backward_shape_check(self, grad, indices, w.k[1], w.k[2], w.s[1], w.s[2], w.p[1], w.p[2],
                                                w.d[1], w.d[2], planes, in[1], in[2], w.o[1], w.o[2],
                                                self.suggest_memory_format());
  else
    at::native::max_pool3d_backward_shape_check(self, grad, indices, planes, w.k[0], w.k[1], w.k[2], w.s[0], w.s[1],
                                                w.s[2], w.p[0], w.p[1], w.p[2], w.d[0], w.d[1], w.d[2], in[0],
                                                in[1], in[2], w.o[0], w.o[1], w.o[2],
                                                "max_pool3d_with_indices_backward");
  TORCH_CHECK(grad.scalar_type() == self.scalar_type(), "expected grad_output dtype ", self.scalar_type(), ", got ",
              grad.scalar_type());
  TORCH_CHECK(indices.scalar_type() == at::kLong, "indices must be int64, got ", indices.scalar_type());
  resize_fmt(grad_input, self.sizes(), fmt_of(self));
  pool_backward(pool_desc(TOCL_POOL_MAX, self, N, w.o, &w), grad, &indices, grad_input);
  return grad_input;
}

template <int N>
at::Tensor max_pool_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                             bool ceil_mode, const at::Tensor& indices) {
  at::Tensor gi = at::empty({0}, self.options());
  return max_pool_backward_out<N>(grad, self, kernel, stride, padding, dilation, ceil_mode, indices, gi);
}

// ------------------------------------------------------------------ avg pool

tocl_pool_desc avg_desc(const at::Tensor& self, int n, const Win& w, bool count_include_pad, OptI divisor) {
  TORCH_CHECK(!divisor.has_value() || *divisor != 0, "divisor must be not zero");
  tocl_pool_desc d = pool_desc(TOCL_POOL_AVG, self, n, w.o, &w);
  d.count_include_pad = count_include_pad;
  d.divisor_override = divisor.value_or(0);
  return d;
}

template <int N>
at::Tensor& avg_pool_out(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride,
                         at::IntArrayRef padding, bool ceil_mode, bool count_include_pad, OptI divisor,
                         at::Tensor& out) {
  auto cpu = [&](const at::Tensor& c) {
    at::Tensor r = N == 2 ? at::avg_pool2d(c, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
                          : at::avg_pool3d(c, kernel, stride, padding, ceil_mode, count_include_pad, divisor);
    return std::make_tuple(r, r);
  };
  if (cpu_route(N == 2 ? "avg_pool2d" : "avg_pool3d", self, {&out}, cpu))
    return out;
  Win w = pool_win(self, N, false, kernel, stride, padding, {}, ceil_mode);
  tocl_pool_desc d = avg_desc(self, N, w, count_include_pad, divisor);
  resize_fmt(out, with_spatial(self.sizes(), N, at::IntArrayRef(w.o).slice(3 - N)), fmt_of(self));
  pool_forward(d, self, out, nullptr);
  return out;
}

template <int N>
at::Tensor avg_pool(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                    bool ceil_mode, bool count_include_pad, OptI divisor) {
  at::Tensor out = at::empty({0}, self.options());
  return avg_pool_out<N>(self, kernel, stride, padding, ceil_mode, count_include_pad, divisor, out);
}

template <int N>
at::Tensor& avg_pool_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel,
                                  at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                                  bool count_include_pad, OptI divisor, at::Tensor& grad_input) {
  check_float(self, N == 2 ? "avg_pool2d_backward" : "avg_pool3d_backward");
  Win w = pool_win(self, N, false, kernel, stride, padding, {}, ceil_mode);
  Arr3 in = spatial(self.sizes(), N, nullptr);
  int64_t planes = self.size(-N - 1);
  if (N == 2)
    at::native::avg_pool2d_backward_shape_check(self, grad, 0, w.k[1], w.k[2], w.s[1], w.s[2], w.p[1], w.p[2],
                                                planes, in[1], in[2], w.o[1], w.o[2], self.suggest_memory_format());
  else
    at::native::avg_pool3d_backward_shape_check(self, grad, planes, w.k[0], w.k[1], w.k[2], w.s[0], w.s[1], w.s[2],
                                                w.p[0], w.p[1], w.p[2], in[0], in[1], in[2], w.o[0], w.o[1], w.o[2],
                                                "avg_pool3d_backward");
  TORCH_CHECK(grad.scalar_type() == self.scalar_type(), "expected grad_output dtype ", self.scalar_type(), ", got ",
              grad.scalar_type());
  tocl_pool_desc d = avg_desc(self, N, w, count_include_pad, divisor);
  resize_fmt(grad_input, self.sizes(), fmt_of(self));
  pool_backward(d, grad, nullptr, grad_input);
  return grad_input;
}

template <int N>
at::Tensor avg_pool_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel,
                             at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                             OptI divisor) {
  at::Tensor gi = at::empty({0}, self.options());
  return avg_pool_backward_out<N>(grad, self, kernel, stride, padding, ceil_mode, count_include_pad, divisor, gi);
}

// ------------------------------------------------------------------ adaptive pools

// The CPU's checks of adaptive_{avg,max}_pool{2,3}d inputs; output sizes.
Arr3 adaptive_check(const at::Tensor& self, int n, at::IntArrayRef output_size, const char* op) {
  TORCH_CHECK(static_cast<int>(output_size.size()) == n, op, ": output_size must be ", n);
  int64_t nd = self.dim();
  TORCH_CHECK(nd == n + 1 || nd == n + 2, op, "(): Expected ", n + 1, "D or ", n + 2, "D tensor, but got ",
              self.sizes());
  for (int64_t i = nd - n - 1; i < nd; i++)
    TORCH_CHECK(self.size(i) > 0, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                self.sizes(), " with dimension ", i, " being empty");
  Arr3 o{1, 1, 1};
  for (int i = 0; i < n; i++) {
    TORCH_CHECK(output_size[i] >= 0, op, ": elements of output_size must be greater than or equal to 0 but received {",
                output_size, "}");
    o[3 - n + i] = output_size[i];
  }
  return o;
}

template <int N>
at::Tensor& adaptive_avg_out(const at::Tensor& self, at::IntArrayRef output_size, at::Tensor& out) {
  const char* op = N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  Arr3 o = adaptive_check(self, N, output_size, op);
  check_float(self, op);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), op, ": expected out dtype ", self.scalar_type(), ", got ",
              out.scalar_type());
  resize_fmt(out, with_spatial(self.sizes(), N, output_size), fmt_of(self));
  pool_forward(pool_desc(TOCL_POOL_ADAPTIVE_AVG, self, N, o, nullptr), self, out, nullptr);
  return out;
}

template <int N>
at::Tensor adaptive_avg(const at::Tensor& self, at::IntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options());
  return adaptive_avg_out<N>(self, output_size, out);
}

template <int N>
at::Tensor& adaptive_avg_backward_out(const at::Tensor& grad, const at::Tensor& self, at::Tensor& grad_input) {
  const char* op = N == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward";
  at::native::adaptive_pool_empty_output_check(grad, op);
  check_float(self, op);
  TORCH_CHECK(self.dim() == grad.dim() && self.dim() >= N + 1, op, ": grad_output and input ranks differ");
  for (int64_t i = 0; i < self.dim() - N; i++)
    TORCH_CHECK(grad.size(i) == self.size(i), op, ": grad_output has sizes ", grad.sizes(), ", input ", self.sizes());
  TORCH_CHECK(self.scalar_type() == grad.scalar_type(), "expected dtype ", self.scalar_type(),
              " for `gradOutput` but got dtype ", grad.scalar_type());
  Arr3 o = spatial(grad.sizes(), N, nullptr);
  resize_fmt(grad_input, self.sizes(), fmt_of(self));
  pool_backward(pool_desc(TOCL_POOL_ADAPTIVE_AVG, self, N, o, nullptr), grad, nullptr, grad_input);
  return grad_input;
}

template <int N>
at::Tensor adaptive_avg_backward(const at::Tensor& grad, const at::Tensor& self) {
  at::Tensor gi = at::empty({0}, self.options());
  return adaptive_avg_backward_out<N>(grad, self, gi);
}

template <int N>
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_out(const at::Tensor& self, at::IntArrayRef output_size,
                                                      at::Tensor& out, at::Tensor& indices) {
  const char* op = N == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d";
  Arr3 o = adaptive_check(self, N, output_size, op);
  check_float(self, op);
  auto sizes = with_spatial(self.sizes(), N, output_size);
  resize_fmt(out, sizes, fmt_of(self));
  resize_fmt(indices, sizes, fmt_of(self));
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": indices must be int64, got ", indices.scalar_type());
  pool_forward(pool_desc(TOCL_POOL_ADAPTIVE_MAX, self, N, o, nullptr), self, out, &indices);
  return {out, indices};
}

template <int N>
std::tuple<at::Tensor, at::Tensor> adaptive_max(const at::Tensor& self, at::IntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options()), ind = at::empty({0}, self.options().dtype(at::kLong));
  adaptive_max_out<N>(self, output_size, out, ind);
  return {out, ind};
}

template <int N>
at::Tensor& adaptive_max_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& indices,
                                      at::Tensor& grad_input) {
  const char* op = N == 2 ? "adaptive_max_pool2d_backward" : "adaptive_max_pool3d_backward";
  at::native::adaptive_pool_empty_output_check(grad, op);
  check_float(self, op);
  TORCH_CHECK(self.dim() == grad.dim() && grad.sizes().equals(indices.sizes()), op,
              ": grad_output ", grad.sizes(), " and indices ", indices.sizes(), " must match input ", self.sizes());
  TORCH_CHECK(self.scalar_type() == grad.scalar_type(), "expected dtype ", self.scalar_type(),
              " for `gradOutput` but got dtype ", grad.scalar_type());
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": indices must be int64, got ", indices.scalar_type());
  Arr3 o = spatial(grad.sizes(), N, nullptr);
  resize_fmt(grad_input, self.sizes(), fmt_of(self));
  pool_backward(pool_desc(TOCL_POOL_ADAPTIVE_MAX, self, N, o, nullptr), grad, &indices, grad_input);
  return grad_input;
}

template <int N>
at::Tensor adaptive_max_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& indices) {
  at::Tensor gi = at::empty({0}, self.options());
  return adaptive_max_backward_out<N>(grad, self, indices, gi);
}

// ------------------------------------------------------------------ max_unpool

// max_unpool2d / 3d: each input element written at its flat index into a
// zeroed output plane, a scatter along the flattened spatial dims (the
// scatter checks every index against the plane). Indices that repeat (from
// overlapping pooling windows) carry equal values, so the order of writes
// does not matter. Checks and messages are the CPU's.
template <int N>
at::Tensor& max_unpool_out(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                           at::Tensor& out) {
  const char* name = N == 2 ? "max_unpooling2d" : "max_unpooling3d";
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64 but got: ",
              indices.scalar_type());
  TORCH_CHECK(static_cast<int>(output_size.size()) == N, "There should be exactly ", N,
              N == 2 ? " elements (height, width)" : " elements (depth, height, width)",
              " in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == N + 1 || self.dim() == N + 2, "Input to ", name, " should be a ", N + 1, "d or ", N + 2,
              "d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0, name, "_forward_out(): Expected input to have non-zero size for non-batch "
                "dimensions, but got ", self.sizes(), " with dimension ", i, " being empty.");
  bool batched = self.dim() == N + 2;
  at::Tensor in = batched ? self : self.unsqueeze(0), ind = batched ? indices : indices.unsqueeze(0);
  int64_t plane = 1;
  std::vector<int64_t> shape{in.size(0), in.size(1)};
  for (int64_t o : output_size) {
    plane *= o;
    shape.push_back(o);
  }
  at::Tensor flat = at::zeros({in.size(0), in.size(1), plane}, self.options());
  if (in.numel() > 0)
    flat.scatter_(2, ind.reshape({in.size(0), in.size(1), -1}), in.reshape({in.size(0), in.size(1), -1}));
  at::Tensor res = flat.view(shape);
  if (!batched)
    res = res.squeeze(0);
  at::native::resize_output(out, res.sizes());
  out.copy_(res);
  return out;
}

template <int N>
at::Tensor max_unpool(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options());
  return max_unpool_out<N>(self, indices, output_size, out);
}

at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(stride.size() == 3, "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3, "There should be exactly three elements (depth, height, width) in padding, but "
              "got: ", padding.size(), " elements.");
  return max_unpool_out<3>(self, indices, output_size, out);
}

at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                        at::IntArrayRef stride, at::IntArrayRef padding) {
  at::Tensor out = at::empty({0}, self.options());
  return max_unpool3d_out(self, indices, output_size, stride, padding, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("max_unpool2d", max_unpool<2>);
  m.impl("max_unpool2d.out", max_unpool_out<2>);
  m.impl("max_unpool3d", max_unpool3d);
  m.impl("max_unpool3d.out", max_unpool3d_out);
  m.impl("max_pool2d_with_indices", max_pool<2>);
  m.impl("max_pool2d_with_indices.out", max_pool_out<2>);
  m.impl("max_pool2d_with_indices_backward", max_pool_backward<2>);
  m.impl("max_pool2d_with_indices_backward.grad_input", max_pool_backward_out<2>);
  m.impl("max_pool3d_with_indices", max_pool<3>);
  m.impl("max_pool3d_with_indices.out", max_pool_out<3>);
  m.impl("max_pool3d_with_indices_backward", max_pool_backward<3>);
  m.impl("max_pool3d_with_indices_backward.grad_input", max_pool_backward_out<3>);
  m.impl("avg_pool2d", avg_pool<2>);
  m.impl("avg_pool2d.out", avg_pool_out<2>);
  m.impl("avg_pool2d_backward", avg_pool_backward<2>);
  m.impl("avg_pool2d_backward.grad_input", avg_pool_backward_out<2>);
  m.impl("avg_pool3d", avg_pool<3>);
  m.impl("avg_pool3d.out", avg_pool_out<3>);
  m.impl("avg_pool3d_backward", avg_pool_backward<3>);
  m.impl("avg_pool3d_backward.grad_input", avg_pool_backward_out<3>);
  m.impl("_adaptive_avg_pool2d", adaptive_avg<2>);
  m.impl("adaptive_avg_pool2d.out", adaptive_avg_out<2>);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_backward<2>);
  m.impl("_adaptive_avg_pool3d", adaptive_avg<3>);
  m.impl("adaptive_avg_pool3d.out", adaptive_avg_out<3>);
  m.impl("_adaptive_avg_pool3d_backward", adaptive_avg_backward<3>);
  m.impl("adaptive_avg_pool3d_backward.grad_input", adaptive_avg_backward_out<3>);
  m.impl("adaptive_max_pool2d", adaptive_max<2>);
  m.impl("adaptive_max_pool2d.out", adaptive_max_out<2>);
  m.impl("adaptive_max_pool2d_backward", adaptive_max_backward<2>);
  m.impl("adaptive_max_pool2d_backward.grad_input", adaptive_max_backward_out<2>);
  m.impl("adaptive_max_pool3d", adaptive_max<3>);
  m.impl("adaptive_max_pool3d.out", adaptive_max_out<3>);
  m.impl("adaptive_max_pool3d_backward", adaptive_max_backward<3>);
  m.impl("adaptive_max_pool3d_backward.grad_input", adaptive_max_backward_out<3>);
}

}  // namespace torch_ocl
