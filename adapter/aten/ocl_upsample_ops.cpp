// ocl_upsample_ops.cpp - nearest/linear/bicubic upsampling, forward and backward,
// on runtime/ops/upsample.c (kernels/upsample.cl). Checks and output sizes come
// from ATen's UpSample.h, so messages match the CPU's; integer nearest inputs
// take the counted CPU route (fallback.h).
#include <ATen/native/UpSample.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/upsample_nearest1d.h>
#include <ATen/ops/upsample_nearest2d.h>
#include <ATen/ops/upsample_nearest3d.h>
#include <ATen/ops/_upsample_nearest_exact1d.h>
#include <ATen/ops/_upsample_nearest_exact2d.h>
#include <ATen/ops/_upsample_nearest_exact3d.h>
#include <ATen/ops/upsample_bicubic2d.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/upsample_linear1d.h>
#include <ATen/ops/upsample_trilinear3d.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_pool_util.h"
#include "tocl/pool.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace pool_util;

// ------------------------------------------------------------------ upsample

// Full output sizes [N, C, spatial...] with the CPU's checks.
std::vector<int64_t> up_check(at::IntArrayRef input_size, at::IntArrayRef output_size, int n) {
  if (n == 1) {
    auto a = at::native::upsample_1d_common_check(input_size, output_size);
    return {a.begin(), a.end()};
  }
  if (n == 2) {
    auto a = at::native::upsample_2d_common_check(input_size, output_size);
    return {a.begin(), a.end()};
  }
  auto a = at::native::upsample_3d_common_check(input_size, output_size);
  return {a.begin(), a.end()};
}

tocl_upsample_desc up_desc(tocl_upsample_mode mode, bool align, at::IntArrayRef input_size,
                           at::IntArrayRef output_size, int n, const std::array<OptD, 3>& scales) {
  tocl_upsample_desc d{};
  d.mode = mode;
  d.align_corners = align;
  Arr3 in = spatial(input_size, n, &d.nc);
  for (int j = 0; j < 3; j++) {
    d.in[j] = in[j];
    d.out[j] = j < 3 - n ? 1 : output_size[j - (3 - n)];
    const OptD& s = j < 3 - n ? OptD() : scales[j - (3 - n)];
    d.scales[j] = s.has_value() ? *s : 0;
  }
  return d;
}

const char* up_op(tocl_upsample_mode m, int n) {
  static const char* names[4][3] = {
      {"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
      {"_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"},
      {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
      {"upsample_bicubic2d", "upsample_bicubic2d", "upsample_bicubic2d"}};
  return names[m][n - 1];
}

// The CPU's forward of mode M in N dims (its error where it has no kernel).
template <tocl_upsample_mode M, int N>
at::Tensor up_cpu(const at::Tensor& c, at::IntArrayRef osize, bool align, const std::array<OptD, 3>& sc) {
  if constexpr (M == TOCL_UPSAMPLE_NEAREST)
    return N == 1 ? at::upsample_nearest1d(c, osize, sc[0])
           : N == 2 ? at::upsample_nearest2d(c, osize, sc[0], sc[1])
                    : at::upsample_nearest3d(c, osize, sc[0], sc[1], sc[2]);
  else if constexpr (M == TOCL_UPSAMPLE_NEAREST_EXACT)
    return N == 1 ? at::_upsample_nearest_exact1d(c, osize, sc[0])
           : N == 2 ? at::_upsample_nearest_exact2d(c, osize, sc[0], sc[1])
                    : at::_upsample_nearest_exact3d(c, osize, sc[0], sc[1], sc[2]);
  else if constexpr (M == TOCL_UPSAMPLE_LINEAR)
    return N == 1 ? at::upsample_linear1d(c, osize, align, sc[0])
           : N == 2 ? at::upsample_bilinear2d(c, osize, align, sc[0], sc[1])
                    : at::upsample_trilinear3d(c, osize, align, sc[0], sc[1], sc[2]);
  else
    return at::upsample_bicubic2d(c, osize, align, sc[0], sc[1]);
}

template <tocl_upsample_mode M, int N>
at::Tensor& up_forward(const at::Tensor& self, at::IntArrayRef output_size, bool align,
                       const std::array<OptD, 3>& scales, at::Tensor& out) {
  const char* op = up_op(M, N);
  auto full = up_check(self.sizes(), output_size, N);
  TORCH_CHECK(self.numel() != 0 || c10::multiply_integers(self.sizes().begin() + 1, self.sizes().end()),
              "Non-empty ", N + 2, "D data tensor expected but got a tensor with sizes ", self.sizes());
  // integer inputs (uint8 images) run on the CPU, which has kernels for them
  if (cpu_route(op, self, {&out}, [&](const at::Tensor& c) {
        at::Tensor r = up_cpu<M, N>(c, output_size, align, scales);
        return std::make_tuple(r, r);
      }))
    return out;
  check_float(self, op);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), op, ": expected out dtype ", self.scalar_type(), ", got ",
              out.scalar_type());
  resize_fmt(out, full, self.suggest_memory_format());
  if (out.numel() == 0)
    return out;
  tocl_upsample_desc d = up_desc(M, align, self.sizes(), output_size, N, scales);
  c10::DeviceGuard guard(self.device());
  at::Tensor x = self.contiguous();
  Dense y(out);
  tocl_tensor tx = to_tocl_tensor(x), ty = y.tt();
  TOCL_CHECK(tocl_upsample_forward(dev_of(x), stream_of(x), &d, &tx, &ty));
  y.done();
  return out;
}

template <tocl_upsample_mode M, int N>
at::Tensor& up_backward(const at::Tensor& grad, at::IntArrayRef output_size, at::IntArrayRef input_size, bool align,
                        const std::array<OptD, 3>& scales, at::Tensor& grad_input) {
  const char* op = up_op(M, N);
  auto full = up_check(input_size, output_size, N);
  TORCH_CHECK(grad.dim() == N + 2, "Expected grad_output to be a tensor of dimension ", N + 2,
              " but got: dimension ", grad.dim());
  for (int i = 0; i < N + 2; i++)
    TORCH_CHECK(grad.size(i) == full[i], "Expected grad_output to have the same shape as output;", " output.size(",
                i, ") = ", full[i], " but got grad_output.size(", i, ") = ", grad.size(i));
  check_float(grad, op);
  TORCH_CHECK(grad_input.scalar_type() == grad.scalar_type(), op, ": expected grad_input dtype ",
              grad.scalar_type(), ", got ", grad_input.scalar_type());
  resize_out(grad_input, input_size);
  if (grad_input.numel() == 0)
    return grad_input;
  tocl_upsample_desc d = up_desc(M, align, input_size, output_size, N, scales);
  c10::DeviceGuard guard(grad.device());
  at::Tensor g = grad.contiguous();
  Dense z(grad_input);
  tocl_tensor tg = to_tocl_tensor(g), tz = z.tt();
  TOCL_CHECK(tocl_upsample_backward(dev_of(g), stream_of(g), &d, &tg, &tz));
  z.done();
  return grad_input;
}

// Schema adapters: nearest ops take (..., scales...), linear/cubic ops
// (..., align_corners, scales...); each has a functional and an out form.
template <tocl_upsample_mode M, int N, class... S>
at::Tensor near_fwd(const at::Tensor& self, at::IntArrayRef osz, S... s) {
  at::Tensor out = at::empty({0}, self.options());
  return up_forward<M, N>(self, osz, false, {s...}, out);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor& near_fwd_out(const at::Tensor& self, at::IntArrayRef osz, S... s, at::Tensor& out) {
  return up_forward<M, N>(self, osz, false, {s...}, out);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor near_bwd(const at::Tensor& g, at::IntArrayRef osz, at::IntArrayRef isz, S... s) {
  at::Tensor gi = at::empty({0}, g.options());
  return up_backward<M, N>(g, osz, isz, false, {s...}, gi);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor& near_bwd_out(const at::Tensor& g, at::IntArrayRef osz, at::IntArrayRef isz, S... s, at::Tensor& gi) {
  return up_backward<M, N>(g, osz, isz, false, {s...}, gi);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor interp_fwd(const at::Tensor& self, at::IntArrayRef osz, bool align, S... s) {
  at::Tensor out = at::empty({0}, self.options());
  return up_forward<M, N>(self, osz, align, {s...}, out);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor& interp_fwd_out(const at::Tensor& self, at::IntArrayRef osz, bool align, S... s, at::Tensor& out) {
  return up_forward<M, N>(self, osz, align, {s...}, out);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor interp_bwd(const at::Tensor& g, at::IntArrayRef osz, at::IntArrayRef isz, bool align, S... s) {
  at::Tensor gi = at::empty({0}, g.options());
  return up_backward<M, N>(g, osz, isz, align, {s...}, gi);
}
template <tocl_upsample_mode M, int N, class... S>
at::Tensor& interp_bwd_out(const at::Tensor& g, at::IntArrayRef osz, at::IntArrayRef isz, bool align, S... s,
                           at::Tensor& gi) {
  return up_backward<M, N>(g, osz, isz, align, {s...}, gi);
}

constexpr auto NEAR = TOCL_UPSAMPLE_NEAREST;
constexpr auto EXACT = TOCL_UPSAMPLE_NEAREST_EXACT;
constexpr auto LIN = TOCL_UPSAMPLE_LINEAR;
constexpr auto CUB = TOCL_UPSAMPLE_CUBIC;

}  // namespace

// Register a nearest/linear op family (functional, out, backward, grad_input)
// whose scales are S... (one optional<double> per spatial dim).
#define TOCL_UP_NEAR(m, name, M, N, ...)                                  \
  m.impl(name, near_fwd<M, N, __VA_ARGS__>);                              \
  m.impl(name ".out", near_fwd_out<M, N, __VA_ARGS__>);                   \
  m.impl(name "_backward", near_bwd<M, N, __VA_ARGS__>);                  \
  m.impl(name "_backward.grad_input", near_bwd_out<M, N, __VA_ARGS__>)
#define TOCL_UP_INTERP(m, name, M, N, ...)                                \
  m.impl(name, interp_fwd<M, N, __VA_ARGS__>);                            \
  m.impl(name ".out", interp_fwd_out<M, N, __VA_ARGS__>);                 \
  m.impl(name "_backward", interp_bwd<M, N, __VA_ARGS__>);                \
  m.impl(name "_backward.grad_input", interp_bwd_out<M, N, __VA_ARGS__>)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  TOCL_UP_NEAR(m, "upsample_nearest1d", NEAR, 1, OptD);
  TOCL_UP_NEAR(m, "upsample_nearest2d", NEAR, 2, OptD, OptD);
  TOCL_UP_NEAR(m, "upsample_nearest3d", NEAR, 3, OptD, OptD, OptD);
  TOCL_UP_NEAR(m, "_upsample_nearest_exact1d", EXACT, 1, OptD);
  TOCL_UP_NEAR(m, "_upsample_nearest_exact2d", EXACT, 2, OptD, OptD);
  TOCL_UP_NEAR(m, "_upsample_nearest_exact3d", EXACT, 3, OptD, OptD, OptD);
  TOCL_UP_INTERP(m, "upsample_linear1d", LIN, 1, OptD);
  TOCL_UP_INTERP(m, "upsample_bilinear2d", LIN, 2, OptD, OptD);
  TOCL_UP_INTERP(m, "upsample_bicubic2d", CUB, 2, OptD, OptD);
  TOCL_UP_INTERP(m, "upsample_trilinear3d", LIN, 3, OptD, OptD, OptD);
}

}  // namespace torch_ocl
