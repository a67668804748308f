// ocl_grid_sample_ops.cpp - grid_sampler_2d/3d and their backward on
// runtime/ops/grid_sample.c. Checks come from ATen's GridSamplerUtils.h, so
// messages match the CPU's. input, grid and grad_output reach the kernels
// with their strides (no copies); outputs are made contiguous, as the CPU
// makes them. As on the CPU, the backward always computes grad_grid and
// computes grad_input only when output_mask[0] asks for it.
#include <ATen/native/GridSamplerUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "ocl_common.h"
#include "tocl/grid_sample.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

template <int N>
void check_args(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding) {
  at::native::check_grid_sampler_common(input, grid);
  if (N == 2)
    at::native::check_grid_sampler_2d(input, grid);
  else
    at::native::check_grid_sampler_3d(input, grid, mode);
  TORCH_CHECK(at::isFloatingType(input.scalar_type()), "\"grid_sampler_", N, "d\" not implemented for '",
              c10::toString(input.scalar_type()), "'");
  TORCH_CHECK(grid.scalar_type() == input.scalar_type(), "grid_sampler(): expected grid dtype ",
              input.scalar_type(), " (the input's), got ", grid.scalar_type());
  TORCH_CHECK(mode >= 0 && mode <= 2, "grid_sampler(): unknown interpolation mode ", mode);
  TORCH_CHECK(padding >= 0 && padding <= 2, "grid_sampler(): unknown padding mode ", padding);
}

tocl_grid_sample_desc desc_of(int64_t mode, int64_t padding, bool align) {
  tocl_grid_sample_desc d{};
  d.mode = static_cast<tocl_grid_sample_mode>(mode);
  d.padding = static_cast<tocl_grid_sample_padding>(padding);
  d.align_corners = align;
  return d;
}

// [N, C, grid positions...]
std::vector<int64_t> out_sizes(const at::Tensor& input, const at::Tensor& grid) {
  std::vector<int64_t> s{input.size(0), input.size(1)};
  for (int64_t i = 1; i < grid.dim() - 1; i++)
    s.push_back(grid.size(i));
  return s;
}

int dev_of(const at::Tensor& t) { return t.device().index(); }

template <int N>
at::Tensor& fwd_out(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding, bool align,
                    at::Tensor& out) {
  check_args<N>(input, grid, mode, padding);
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "grid_sampler_", N, "d: expected out dtype ",
              input.scalar_type(), ", got ", out.scalar_type());
  resize_out(out, out_sizes(input, grid));
  if (out.numel() == 0)
    return out;
  c10::DeviceGuard guard(input.device());
  tocl_grid_sample_desc d = desc_of(mode, padding, align);
  tocl_tensor tx = to_tocl_tensor(input), tg = to_tocl_tensor(grid), ty = to_tocl_tensor(out);
  int dev = dev_of(input);
  TOCL_CHECK(tocl_grid_sample_forward(dev, tocl_stream_current(dev), &d, &tx, &tg, &ty));
  return out;
}

template <int N>
at::Tensor fwd(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding, bool align) {
  check_args<N>(input, grid, mode, padding);
  at::Tensor out = at::empty(out_sizes(input, grid), input.options());
  return fwd_out<N>(input, grid, mode, padding, align, out);
}

template <int N>
std::tuple<at::Tensor&, at::Tensor&> bwd_out(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& grid,
                                             int64_t mode, int64_t padding, bool align,
                                             std::array<bool, 2> output_mask, at::Tensor& grad_input,
                                             at::Tensor& grad_grid) {
  check_args<N>(input, grid, mode, padding);
  // grad must have the forward output's shape (N, C, *grid spatial): the
  // kernel reads it by that shape. (torch 2.14 has this check in
  // GridSamplerUtils.h; 2.11 does not, so it is spelled out here.)
  c10::DimVector want = {input.size(0), input.size(1)};
  for (int64_t i = 1; i < grid.dim() - 1; i++)
    want.push_back(grid.size(i));
  TORCH_CHECK_VALUE(grad.sizes() == at::IntArrayRef(want), "grid_sampler(): expected grad_output to have sizes ", want,
                    " but got grad_output with sizes ", grad.sizes());
  TORCH_CHECK(grad.scalar_type() == input.scalar_type(), "grid_sampler_", N, "d_backward: expected grad_output dtype ",
              input.scalar_type(), ", got ", grad.scalar_type());
  for (const at::Tensor* o : {&grad_input, &grad_grid})
    TORCH_CHECK(!o->defined() || o->scalar_type() == input.scalar_type(), "grid_sampler_", N,
                "d_backward: expected output dtype ", input.scalar_type(), ", got ", o->scalar_type());
  bool want_in = output_mask[0];
  if (want_in)
    resize_out(grad_input, input.sizes());
  resize_out(grad_grid, grid.sizes());
  // grad_input is the kernels' accumulator: it must be dense
  at::Tensor gi = want_in && !grad_input.is_contiguous() ? at::empty(input.sizes(), input.options()) : grad_input;
  c10::DeviceGuard guard(input.device());
  tocl_grid_sample_desc d = desc_of(mode, padding, align);
  tocl_tensor tgo = to_tocl_tensor(grad), tx = to_tocl_tensor(input), tg = to_tocl_tensor(grid),
              tgi = want_in ? to_tocl_tensor(gi) : tocl_tensor{}, tgg = to_tocl_tensor(grad_grid);
  int dev = dev_of(input);
  TOCL_CHECK(tocl_grid_sample_backward(dev, tocl_stream_current(dev), &d, &tgo, &tx, &tg, want_in ? &tgi : nullptr,
                                       &tgg));
  if (want_in && !gi.is_same(grad_input))
    grad_input.copy_(gi);
  return {grad_input, grad_grid};
}

template <int N>
std::tuple<at::Tensor, at::Tensor> bwd(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& grid,
                                       int64_t mode, int64_t padding, bool align, std::array<bool, 2> output_mask) {
  at::Tensor gi = output_mask[0] ? at::empty(input.sizes(), input.options()) : at::Tensor();
  at::Tensor gg = at::empty(grid.sizes(), grid.options());
  bwd_out<N>(grad, input, grid, mode, padding, align, output_mask, gi, gg);
  return {gi, gg};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("grid_sampler_2d", fwd<2>);
  m.impl("grid_sampler_2d.out", fwd_out<2>);
  m.impl("grid_sampler_2d_backward", bwd<2>);
  m.impl("grid_sampler_2d_backward.out", bwd_out<2>);
  m.impl("grid_sampler_3d", fwd<3>);
  m.impl("grid_sampler_3d.out", fwd_out<3>);
  m.impl("grid_sampler_3d_backward", bwd<3>);
  m.impl("grid_sampler_3d_backward.out", bwd_out<3>);
}

}  // namespace torch_ocl
