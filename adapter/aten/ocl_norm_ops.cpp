// ocl_norm_ops.cpp - layer, group and batch norm, forward and backward, on
// runtime/ops/norm.c (kernels/norm.cl). Argument checks follow the CPU's messages.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_nn_util.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace nn_util;

// ------------------------------------------------------------------ normalisation

// Statistics dtype: float for a float16/bfloat16 input with float32
// parameters (as the CPU's mixed type), else the input's dtype.
at::ScalarType stats_dtype(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  bool reduced = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
  const at::Tensor& p = w.defined() ? w : b;
  if (reduced && p.defined() && p.scalar_type() == at::kFloat)
    return at::kFloat;
  return x.scalar_type();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_native_layer_norm(const at::Tensor& input,
                                                                 c10::IntArrayRef normalized_shape,
                                                                 const OptT& weight_opt, const OptT& bias_opt,
                                                                 double eps) {
  at::Tensor w = dense(opt(weight_opt)), b = dense(opt(bias_opt));
  auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, w, b);
  check_float(input, "LayerNormKernelImpl");
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  const int axis = input.dim() - static_cast<int>(normalized_shape.size());
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.resize(input.dim(), 1);
  auto sdt = stats_dtype(input, w, b);
  at::Tensor mean = at::empty(stat_shape, x.options().dtype(sdt)), rstd = at::empty(stat_shape, x.options().dtype(sdt));
  if (M > 0) {
    tocl_norm_desc d{TOCL_NORM_LAYER, M, N, 1, 0, eps, 0};
    TT tx(x), ty(y), tw(w), tb(b), tm(mean), tr(rstd);
    TOCL_CHECK(tocl_nn_norm_forward(dev_of(x), stream_of(x), &d, 1, tx.p(), ty.p(), tw.p(), tb.p(), tm.p(), tr.p(),
                                    nullptr, nullptr));
  }
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::IntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const OptT& weight_opt, const OptT& bias_opt, std::array<bool, 3> mask) {
  at::Tensor w = dense(opt(weight_opt)), b = dense(opt(bias_opt));
  auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, w, b);
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous(), g = grad_out.contiguous();
  at::Tensor dx, dw, db;
  if (mask[0])
    dx = at::empty(x.sizes(), x.options());
  if (mask[1] && w.defined())
    dw = M > 0 ? at::empty(w.sizes(), w.options()) : at::zeros(w.sizes(), w.options());
  if (mask[2] && b.defined())
    db = M > 0 ? at::empty(b.sizes(), b.options()) : at::zeros(b.sizes(), b.options());
  if (M > 0 && (dx.defined() || dw.defined() || db.defined())) {
    tocl_norm_desc d{TOCL_NORM_LAYER, M, N, 1, 0, 0, 0};
    at::Tensor m = mean.contiguous(), r = rstd.contiguous();
    TT tx(x), tg(g), tdx(dx), tw(w), tm(m), tr(r), tdw(dw), tdb(db);
    TOCL_CHECK(tocl_nn_norm_backward(dev_of(x), stream_of(x), &d, 1, tx.p(), tg.p(), tdx.p(), tw.p(), tm.p(), tr.p(),
                                     nullptr, nullptr, tdw.p(), tdb.p()));
  }
  return {dx, dw, db};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_native_group_norm(const at::Tensor& input, const OptT& weight_opt,
                                                                 const OptT& bias_opt, int64_t N, int64_t C,
                                                                 int64_t HxW, int64_t group, double eps) {
  at::Tensor w = dense(opt(weight_opt)), b = dense(opt(bias_opt));
  check_float(input, "GroupNormKernelImpl");
  TORCH_CHECK(group > 0 && C % group == 0, "Expected number of channels in input to be divisible by num_groups, ",
              "but got input of shape ", input.sizes(), " and num_groups=", group);
  TORCH_CHECK(!w.defined() || (w.dim() == 1 && w.numel() == C), "Expected weight to be a vector of size equal to ",
              "the number of channels in input, but got weight of shape ", w.sizes(), " and input of shape ",
              input.sizes());
  TORCH_CHECK(!b.defined() || (b.dim() == 1 && b.numel() == C), "Expected bias to be a vector of size equal to ",
              "the number of channels in input, but got bias of shape ", b.sizes(), " and input of shape ",
              input.sizes());
  TORCH_CHECK(input.numel() == N * C * HxW, "Expected the input to have N * C * HxW = ", N * C * HxW,
              " elements, got ", input.numel());
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  auto sdt = stats_dtype(input, w, b);
  at::Tensor mean = at::empty({N, group}, x.options().dtype(sdt)), rstd = at::empty({N, group}, x.options().dtype(sdt));
  if (N > 0) {
    tocl_norm_desc d{TOCL_NORM_GROUP, N, C, HxW, group, eps, 0};
    TT tx(x), ty(y), tw(w), tb(b), tm(mean), tr(rstd);
    TOCL_CHECK(tocl_nn_norm_forward(dev_of(x), stream_of(x), &d, 1, tx.p(), ty.p(), tw.p(), tb.p(), tm.p(), tr.p(),
                                    nullptr, nullptr));
  }
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const OptT& weight_opt, int64_t N, int64_t C, int64_t HxW, int64_t group, std::array<bool, 3> mask) {
  at::Tensor w = dense(opt(weight_opt));
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous(), g = grad_out.contiguous();
  auto pdt = w.defined() ? w.scalar_type() : x.scalar_type();
  at::Tensor dx, dw, db;
  if (mask[0])
    dx = at::empty(x.sizes(), x.options());
  if (mask[1])
    dw = N > 0 ? at::empty({C}, x.options().dtype(pdt)) : at::zeros({C}, x.options().dtype(pdt));
  if (mask[2])
    db = N > 0 ? at::empty({C}, x.options().dtype(pdt)) : at::zeros({C}, x.options().dtype(pdt));
  if (N > 0 && (dx.defined() || dw.defined() || db.defined())) {
    tocl_norm_desc d{TOCL_NORM_GROUP, N, C, HxW, group, 0, 0};
    at::Tensor m = mean.contiguous(), r = rstd.contiguous();
    TT tx(x), tg(g), tdx(dx), tw(w), tm(m), tr(r), tdw(dw), tdb(db);
    TOCL_CHECK(tocl_nn_norm_backward(dev_of(x), stream_of(x), &d, 1, tx.p(), tg.p(), tdx.p(), tw.p(), tm.p(), tr.p(),
                                     nullptr, nullptr, tdw.p(), tdb.p()));
  }
  return {dx, dw, db};
}

// Batch norm over [n, c, *]: statistics per channel.
tocl_norm_desc batch_desc(const at::Tensor& x, double momentum, double eps) {
  int64_t n = x.size(0), c = x.size(1);
  int64_t hw = n * c ? x.numel() / (n * c) : 1;
  if (n * c == 0)
    for (int64_t i = 2; i < x.dim(); i++)
      hw *= x.size(i);
  return tocl_norm_desc{TOCL_NORM_BATCH, n, c, hw, 0, eps, momentum};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_fwd(const at::Tensor& input, const at::Tensor& w0,
                                                              const at::Tensor& b0, const at::Tensor& rm,
                                                              const at::Tensor& rv, bool training, double momentum,
                                                              double eps) {
  check_float(input, "batch_norm");
  TORCH_CHECK(input.dim() >= 2, "batch_norm: expected an input with at least 2 dims (N, C, ...), got ",
              input.dim());
  int64_t C = input.size(1);
  for (const at::Tensor* t : {&w0, &b0, &rm, &rv})
    TORCH_CHECK(!t->defined() || t->numel() == C, "running_mean should contain ", C, " elements not ",
                t->defined() ? t->numel() : 0);
  TORCH_CHECK(training || (rm.defined() && rv.defined()),
              "running_mean and running_var must be defined in evaluation mode");
  c10::DeviceGuard guard(input.device());
  at::Tensor w = dense(w0), b = dense(b0), x = input.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  auto sdt = stats_dtype(input, w.defined() ? w : rm, b);
  at::Tensor mean = at::empty({training ? C : 0}, x.options().dtype(sdt));
  at::Tensor invstd = at::empty({training ? C : 0}, x.options().dtype(sdt));
  // running statistics are updated in place: work on dense copies if needed
  at::Tensor rmd = dense(rm), rvd = dense(rv);
  tocl_norm_desc d = batch_desc(x, momentum, eps);
  if (C > 0) {
    TT tx(x), ty(y), tw(w), tb(b), tm(mean), ti(invstd), trm(rmd), trv(rvd);
    TOCL_CHECK(tocl_nn_norm_forward(dev_of(x), stream_of(x), &d, training, tx.p(), ty.p(), tw.p(), tb.p(),
                                    training ? tm.p() : nullptr, training ? ti.p() : nullptr, trm.p(), trv.p()));
    if (training && rm.defined() && !rm.is_same(rmd))
      const_cast<at::Tensor&>(rm).copy_(rmd);
    if (training && rv.defined() && !rv.is_same(rvd))
      const_cast<at::Tensor&>(rv).copy_(rvd);
  }
  return {y, mean, invstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_native_batch_norm(const at::Tensor& input, const OptT& w,
                                                                 const OptT& b, const OptT& rm, const OptT& rv,
                                                                 bool training, double momentum, double eps) {
  return batch_norm_fwd(input, opt(w), opt(b), opt(rm), opt(rv), training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_legit(const at::Tensor& input, const OptT& w,
                                                                const OptT& b, at::Tensor& rm, at::Tensor& rv,
                                                                bool training, double momentum, double eps) {
  return batch_norm_fwd(input, opt(w), opt(b), rm, rv, training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_legit_no_stats(const at::Tensor& input, const OptT& w,
                                                                         const OptT& b, bool training,
                                                                         double momentum, double eps) {
  return batch_norm_fwd(input, opt(w), opt(b), at::Tensor(), at::Tensor(), training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(const at::Tensor& input,
                                                                                  const OptT& w, const OptT& b,
                                                                                  at::Tensor& rm, at::Tensor& rv,
                                                                                  double momentum, double eps) {
  auto [y, m, i] = batch_norm_fwd(input, opt(w), opt(b), rm, rv, true, momentum, eps);
  return {y, m, i, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const OptT& weight_opt, const OptT& rm_opt,
    const OptT& rv_opt, const OptT& sm_opt, const OptT& si_opt, bool train, double eps, std::array<bool, 3> mask) {
  c10::DeviceGuard guard(input.device());
  at::Tensor w = dense(opt(weight_opt)), rm = dense(opt(rm_opt)), rv = dense(opt(rv_opt));
  at::Tensor sm = dense(opt(sm_opt)), si = dense(opt(si_opt));
  at::Tensor x = input.contiguous(), g = grad_out.contiguous();
  int64_t C = x.size(1);
  auto pdt = w.defined() ? w.scalar_type() : stats_dtype(x, rm, at::Tensor());
  at::Tensor dx, dw, db;
  if (mask[0])
    dx = at::empty(x.sizes(), x.options());
  if (mask[1])
    dw = at::empty({C}, x.options().dtype(pdt));
  if (mask[2])
    db = at::empty({C}, x.options().dtype(pdt));
  TORCH_CHECK(!train || (sm.defined() && si.defined()), "batch_norm backward in training needs the saved statistics");
  TORCH_CHECK(train || (rm.defined() && rv.defined()), "batch_norm backward in eval mode needs the running statistics");
  if (C > 0 && (dx.defined() || dw.defined() || db.defined())) {
    tocl_norm_desc d = batch_desc(x, 0, eps);
    TT tx(x), tg(g), tdx(dx), tw(w), tm(sm), ti(si), trm(rm), trv(rv), tdw(dw), tdb(db);
    TOCL_CHECK(tocl_nn_norm_backward(dev_of(x), stream_of(x), &d, train, tx.p(), tg.p(), tdx.p(), tw.p(),
                                     train ? tm.p() : nullptr, train ? ti.p() : nullptr, train ? nullptr : trm.p(),
                                     train ? nullptr : trv.p(), tdw.p(), tdb.p()));
  }
  return {dx, dw, db};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ocl_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight, const OptT& rm, const OptT& rv,
    const OptT& sm, const OptT& sv, bool update, double eps, std::array<bool, 3> mask, const at::Tensor& reserve) {
  return ocl_native_batch_norm_backward(grad_out, input, weight, rm, rv, sm, sv, update, eps, mask);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("native_layer_norm", ocl_native_layer_norm);
  m.impl("native_layer_norm_backward", ocl_native_layer_norm_backward);
  m.impl("native_group_norm", ocl_native_group_norm);
  m.impl("native_group_norm_backward", ocl_native_group_norm_backward);
  m.impl("native_batch_norm", ocl_native_batch_norm);
  m.impl("_native_batch_norm_legit", batch_norm_legit);
  m.impl("_native_batch_norm_legit.no_stats", batch_norm_legit_no_stats);
  m.impl("_batch_norm_with_update", batch_norm_with_update);
  m.impl("native_batch_norm_backward", ocl_native_batch_norm_backward);
  m.impl("batch_norm_backward", ocl_batch_norm_backward);
}

}  // namespace torch_ocl
