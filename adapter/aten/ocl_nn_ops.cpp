// ocl_nn_ops.cpp - softmax/log_softmax, layer/group/batch norm and losses
// (nll, mse, smooth-l1, huber, binary cross entropy), forward and backward,
// on the row kernels of runtime/ops/{softmax,norm,loss}.c. Operands are made
// dense here; argument checks follow the CPU's messages.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_common.h"
#include "tocl/nn.h"

namespace torch_ocl {
namespace {

using OptT = std::optional<at::Tensor>;

int dev_of(const at::Tensor& t) { return t.device().index(); }
int stream_of(const at::Tensor& t) { return tocl_stream_current(dev_of(t)); }
at::Tensor opt(const OptT& t) { return t.has_value() ? *t : at::Tensor(); }
at::Tensor dense(const at::Tensor& t) { return t.defined() ? t.contiguous() : t; }

// tocl_tensor pointer of a defined tensor, or NULL.
struct TT {
  tocl_tensor t{};
  bool def = false;
  explicit TT(const at::Tensor& x) : def(x.defined()) {
    if (def)
      t = to_tocl_tensor(x);
  }
  const tocl_tensor* p() const { return def ? &t : nullptr; }
};

void check_float(const at::Tensor& t, const char* op) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), "\"", op, "\" not implemented for '",
              c10::toString(t.scalar_type()), "'");
}

// Write `res` into `out` (resized as needed) unless they are the same tensor.
at::Tensor& deliver(const at::Tensor& res, at::Tensor& out) {
  if (out.is_same(res))
    return out;
  resize_out(out, res.sizes());
  out.copy_(res);
  return out;
}

// Dense destination for `out` of shape/dtype: out itself when it already is.
at::Tensor dest_for(at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dt) {
  if (out.defined() && out.scalar_type() == dt && out.sizes().equals(sizes) && out.is_contiguous())
    return out;
  return at::empty(sizes, out.options().dtype(dt));
}

// ------------------------------------------------------------------ softmax

void softmax_run(const at::Tensor& input, int64_t dim, at::Tensor& out, bool log) {
  c10::DeviceGuard guard(input.device());
  at::Tensor x = input.contiguous();
  int d = input.dim() == 0 ? 0 : static_cast<int>(dim);
  at::Tensor y = dest_for(out, x.sizes(), out.scalar_type());
  TT tx(x), ty(y);
  TOCL_CHECK(tocl_nn_softmax(dev_of(x), stream_of(x), ty.p(), tx.p(), d, log));
  deliver(y, out);
}

at::ScalarType softmax_out_dtype(const at::Tensor& input, bool half_to_float, const char* op) {
  check_float(input, op);
  if (half_to_float)
    TORCH_CHECK(input.scalar_type() == at::kHalf, "conversion is supported for Half type only");
  return half_to_float ? at::kFloat : input.scalar_type();
}

template <bool LOG>
at::Tensor& softmax_out(const at::Tensor& input, int64_t dim, bool half_to_float, at::Tensor& out) {
  auto dt = softmax_out_dtype(input, half_to_float, LOG ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  int64_t d = at::maybe_wrap_dim(dim, input.dim());
  TORCH_CHECK(out.scalar_type() == dt, "Expected out tensor to have dtype ", dt, ", but got ", out.scalar_type(),
              " instead");
  resize_out(out, input.sizes());
  if (input.numel() == 0)
    return out;
  softmax_run(input, d, out, LOG);
  return out;
}

template <bool LOG>
at::Tensor softmax(const at::Tensor& input, int64_t dim, bool half_to_float) {
  auto dt = softmax_out_dtype(input, half_to_float, LOG ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  at::Tensor out = at::empty(input.sizes(), input.options().dtype(dt));
  return softmax_out<LOG>(input, dim, half_to_float, out);
}

template <bool LOG>
at::Tensor& softmax_backward_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                 at::ScalarType input_dtype, at::Tensor& grad_input) {
  TORCH_CHECK(grad.sizes().equals(output.sizes()), "grad_output and output must have the same size, got ",
              grad.sizes(), " and ", output.sizes());
  check_float(grad, LOG ? "log_softmax_backward_lastdim_kernel_impl" : "softmax_backward_lastdim_kernel_impl");
  int64_t d = at::maybe_wrap_dim(dim, grad.dim());
  resize_out(grad_input, grad.sizes());
  if (grad.numel() == 0)
    return grad_input;
  c10::DeviceGuard guard(grad.device());
  at::Tensor g = grad.contiguous(), y = output.contiguous();
  at::Tensor z = dest_for(grad_input, g.sizes(), grad_input.scalar_type());
  TT tg(g), ty(y), tz(z);
  TOCL_CHECK(tocl_nn_softmax_backward(dev_of(g), stream_of(g), tz.p(), tg.p(), ty.p(),
                                      g.dim() == 0 ? 0 : static_cast<int>(d), LOG));
  return deliver(z, grad_input);
}

template <bool LOG>
at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  at::Tensor gi = at::empty(grad.sizes(), grad.options().dtype(input_dtype));
  return softmax_backward_out<LOG>(grad, output, dim, input_dtype, gi);
}

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

// ------------------------------------------------------------------ pointwise losses

tocl_reduction to_red(int64_t r) {
  TORCH_CHECK(r >= 0 && r <= 2, r, " is not a valid value for reduction");
  return static_cast<tocl_reduction>(r);
}

// Forward of a pointwise loss: input and target broadcast (as the CPU's
// TensorIterator), weight broadcast to them.
at::Tensor loss_fwd(tocl_loss_kind kind, const char* name, const at::Tensor& self, const at::Tensor& target,
                    const at::Tensor& weight, int64_t reduction, double param) {
  auto red = to_red(reduction);
  auto dt = at::result_type(self, target);
  TORCH_CHECK(at::isFloatingType(dt), "\"", name, "\" not implemented for '", c10::toString(dt), "'");
  c10::DeviceGuard guard(self.device());
  auto shape = at::infer_size(self.sizes(), target.sizes());
  at::Tensor x = self.to(dt).expand(shape).contiguous(), t = target.to(dt).expand(shape).contiguous();
  at::Tensor w = weight.defined() ? weight.expand(shape).contiguous() : at::Tensor();
  at::Tensor out = red == TOCL_REDUCE_NONE ? at::empty(shape, x.options()) : at::empty({}, x.options());
  at::Tensor flag;
  if (kind == TOCL_LOSS_BCE)
    flag = at::zeros({2}, x.options().dtype(at::kLong));
  TT tx(x), tt(t), tw(w), to(out), tf(flag);
  TOCL_CHECK(tocl_nn_loss_forward(dev_of(x), stream_of(x), kind, red, param, tx.p(), tt.p(), tw.p(), to.p(),
                                  tf.p()));
  if (kind == TOCL_LOSS_BCE && x.numel() > 0)
    TORCH_CHECK(flag.cpu().data_ptr<int64_t>()[0] == 0, "all elements of input should be between 0 and 1");
  return out;
}

at::Tensor loss_bwd(tocl_loss_kind kind, const char* name, const at::Tensor& grad, const at::Tensor& self,
                    const at::Tensor& target, const at::Tensor& weight, int64_t reduction, double param) {
  auto red = to_red(reduction);
  check_float(self, name);
  c10::DeviceGuard guard(self.device());
  at::Tensor x = self.contiguous(), t = target.to(self.scalar_type()).expand(self.sizes()).contiguous();
  at::Tensor w = weight.defined() ? weight.expand(self.sizes()).contiguous() : at::Tensor();
  at::Tensor g = grad.numel() == 1 && red != TOCL_REDUCE_NONE ? grad.contiguous()
                                                               : grad.expand(self.sizes()).contiguous();
  at::Tensor gi = at::empty(x.sizes(), x.options());
  TT tx(x), tt(t), tw(w), tg(g), tgi(gi);
  TOCL_CHECK(tocl_nn_loss_backward(dev_of(x), stream_of(x), kind, red, param, tx.p(), tt.p(), tw.p(), tg.p(),
                                   tgi.p()));
  return gi;
}

at::Tensor ocl_mse_loss(const at::Tensor& s, const at::Tensor& t, int64_t r) {
  return loss_fwd(TOCL_LOSS_MSE, "mse_cpu", s, t, at::Tensor(), r, 0);
}
at::Tensor& ocl_mse_loss_out(const at::Tensor& s, const at::Tensor& t, int64_t r, at::Tensor& out) {
  return deliver(ocl_mse_loss(s, t, r), out);
}
at::Tensor ocl_mse_loss_backward(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t, int64_t r) {
  return loss_bwd(TOCL_LOSS_MSE, "mse_backward_cpu_out", g, s, t, at::Tensor(), r, 0);
}
at::Tensor& ocl_mse_loss_backward_out(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t, int64_t r,
                                  at::Tensor& gi) {
  return deliver(ocl_mse_loss_backward(g, s, t, r), gi);
}

at::Tensor ocl_smooth_l1_loss(const at::Tensor& s, const at::Tensor& t, int64_t r, double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return loss_fwd(beta == 0 ? TOCL_LOSS_L1 : TOCL_LOSS_SMOOTH_L1, "smooth_l1_cpu", s, t, at::Tensor(), r, beta);
}
at::Tensor& ocl_smooth_l1_loss_out(const at::Tensor& s, const at::Tensor& t, int64_t r, double beta, at::Tensor& out) {
  return deliver(ocl_smooth_l1_loss(s, t, r, beta), out);
}
at::Tensor& ocl_smooth_l1_loss_backward_out(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t, int64_t r,
                                        double beta, at::Tensor& gi) {
  return deliver(loss_bwd(TOCL_LOSS_SMOOTH_L1, "smooth_l1_backward_cpu_out", g, s, t, at::Tensor(), r, beta), gi);
}
at::Tensor ocl_smooth_l1_loss_backward(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t, int64_t r,
                                   double beta) {
  return loss_bwd(TOCL_LOSS_SMOOTH_L1, "smooth_l1_backward_cpu_out", g, s, t, at::Tensor(), r, beta);
}

at::Tensor ocl_huber_loss(const at::Tensor& s, const at::Tensor& t, int64_t r, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return loss_fwd(TOCL_LOSS_HUBER, "huber_cpu", s, t, at::Tensor(), r, delta);
}
at::Tensor& ocl_huber_loss_out(const at::Tensor& s, const at::Tensor& t, int64_t r, double delta, at::Tensor& out) {
  return deliver(ocl_huber_loss(s, t, r, delta), out);
}
at::Tensor& ocl_huber_loss_backward_out(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t, int64_t r,
                                    double delta, at::Tensor& gi) {
  return deliver(loss_bwd(TOCL_LOSS_HUBER, "huber_backward_cpu_out", g, s, t, at::Tensor(), r, delta), gi);
}
at::Tensor ocl_huber_loss_backward(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t, int64_t r,
                               double delta) {
  return loss_bwd(TOCL_LOSS_HUBER, "huber_backward_cpu_out", g, s, t, at::Tensor(), r, delta);
}

void check_bce_sizes(const at::Tensor& s, const at::Tensor& t, const at::Tensor& w) {
  TORCH_CHECK(s.sizes().equals(t.sizes()), "Using a target size (", t.sizes(),
              ") that is different to the input size (", s.sizes(), ") is deprecated. ",
              "Please ensure they have the same size.");
  if (w.defined())
    at::infer_size(w.sizes(), s.sizes());
}
at::Tensor ocl_binary_cross_entropy(const at::Tensor& s, const at::Tensor& t, const OptT& w, int64_t r) {
  check_bce_sizes(s, t, opt(w));
  return loss_fwd(TOCL_LOSS_BCE, "binary_cross_entropy", s, t, opt(w), r, 0);
}
at::Tensor& ocl_binary_cross_entropy_out(const at::Tensor& s, const at::Tensor& t, const OptT& w, int64_t r,
                                     at::Tensor& out) {
  return deliver(ocl_binary_cross_entropy(s, t, w, r), out);
}
at::Tensor ocl_binary_cross_entropy_backward(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t,
                                         const OptT& w, int64_t r) {
  check_bce_sizes(s, t, opt(w));
  return loss_bwd(TOCL_LOSS_BCE, "binary_cross_entropy_backward", g, s, t, opt(w), r, 0);
}
at::Tensor& ocl_binary_cross_entropy_backward_out(const at::Tensor& g, const at::Tensor& s, const at::Tensor& t,
                                              const OptT& w, int64_t r, at::Tensor& gi) {
  return deliver(ocl_binary_cross_entropy_backward(g, s, t, w, r), gi);
}

// ------------------------------------------------------------------ nll

// Shapes as (n, c, s) with the CPU's checks; spatial: the 2d variant.
void nll_check(const at::Tensor& self, const at::Tensor& target, const at::Tensor& w, bool spatial, int64_t& n,
               int64_t& c, int64_t& s) {
  if (!spatial) {
    TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
    TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    auto no_batch_dim = self.dim() == 1 && target.dim() == 0;
    TORCH_CHECK(no_batch_dim || (self.size(0) == target.size(0)), "size mismatch (got input: ", self.sizes(),
                ", target: ", target.sizes(), ")");
    n = self.dim() == 1 ? 1 : self.size(0);
    c = self.size(-1);
    s = 1;
  } else {
    TORCH_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got targets of "
                "dimension: ", target.dim());
    TORCH_CHECK(self.dim() == 4, "only batches of spatial inputs supported (4D tensors), but got input of "
                "dimension: ", self.dim());
    TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
                "input and target batch or spatial sizes don't match: target ", target.sizes(), ", input ",
                self.sizes());
    n = self.size(0);
    c = self.size(1);
    s = self.size(2) * self.size(3);
  }
  TORCH_CHECK(!w.defined() || w.numel() == c, "weight tensor should be defined either for all ", c,
              " classes or no classes but got weight tensor of shape: ", w.sizes());
  check_float(self, spatial ? "nll_loss2d_forward_out_frame" : "nll_loss_forward_out_frame");
  TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte,
              "expected scalar type Long but found ", target.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> nll_fwd(const at::Tensor& self, const at::Tensor& target, const OptT& w_opt,
                                           int64_t reduction, int64_t ignore_index, bool spatial) {
  auto red = to_red(reduction);
  at::Tensor w = dense(opt(w_opt));
  int64_t n, c, s;
  nll_check(self, target, w, spatial, n, c, s);
  c10::DeviceGuard guard(self.device());
  at::Tensor x = self.contiguous(), t = target.to(at::kLong).contiguous();
  at::Tensor out;
  if (red == TOCL_REDUCE_NONE && (spatial || self.dim() == 2))
    out = spatial ? at::empty({n, self.size(2), self.size(3)}, x.options()) : at::empty({n}, x.options());
  else if (red == TOCL_REDUCE_NONE)
    out = at::empty({}, x.options());
  else
    out = at::empty({}, x.options());
  at::Tensor tw = at::zeros({}, x.options());
  at::Tensor flag = at::zeros({2}, x.options().dtype(at::kLong));
  TT tx(x), tt(t), tw_(w), to(out), ttw(tw), tf(flag);
  TOCL_CHECK(tocl_nn_nll_forward(dev_of(x), stream_of(x), red, ignore_index, n, c, s, tx.p(), tt.p(), tw_.p(), to.p(),
                                 ttw.p(), tf.p()));
  if (n * s > 0) {  // the CPU raises on a bad target: the flag comes to the host
    at::Tensor f = flag.cpu();
    TORCH_CHECK_INDEX(f.data_ptr<int64_t>()[0] == 0, "Target ", f.data_ptr<int64_t>()[1], " is out of bounds.");
  }
  return {out, tw};
}

at::Tensor nll_bwd(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target, const OptT& w_opt,
                   int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight, bool spatial) {
  auto red = to_red(reduction);
  at::Tensor w = dense(opt(w_opt));
  int64_t n, c, s;
  nll_check(self, target, w, spatial, n, c, s);
  c10::DeviceGuard guard(self.device());
  at::Tensor t = target.to(at::kLong).contiguous();
  at::Tensor g = red == TOCL_REDUCE_NONE ? grad.contiguous() : grad.reshape({}).contiguous();
  TORCH_CHECK(red != TOCL_REDUCE_NONE || g.numel() == n * s, "grad_output has ", g.numel(), " elements, expected ",
              n * s);
  at::Tensor gi = at::zeros(self.sizes(), self.options());
  at::Tensor tw = total_weight.to(self.scalar_type()).contiguous();
  TT tt(t), tw_(w), tg(g), ttw(tw), tgi(gi);
  TOCL_CHECK(tocl_nn_nll_backward(dev_of(gi), stream_of(gi), red, ignore_index, n, c, s, tt.p(), tw_.p(), tg.p(),
                                  ttw.p(), tgi.p()));
  return gi;
}

std::tuple<at::Tensor, at::Tensor> ocl_nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                    const OptT& w, int64_t r, int64_t ii) {
  return nll_fwd(self, target, w, r, ii, false);
}
std::tuple<at::Tensor&, at::Tensor&> ocl_nll_loss_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                          const OptT& w, int64_t r, int64_t ii, at::Tensor& out,
                                                          at::Tensor& tw) {
  auto [o, t] = nll_fwd(self, target, w, r, ii, false);
  deliver(o, out);
  deliver(t, tw);
  return {out, tw};
}
at::Tensor ocl_nll_loss_backward(const at::Tensor& g, const at::Tensor& self, const at::Tensor& target, const OptT& w,
                             int64_t r, int64_t ii, const at::Tensor& tw) {
  return nll_bwd(g, self, target, w, r, ii, tw, false);
}
at::Tensor& ocl_nll_loss_backward_out(const at::Tensor& g, const at::Tensor& self, const at::Tensor& target,
                                  const OptT& w, int64_t r, int64_t ii, const at::Tensor& tw, at::Tensor& gi) {
  return deliver(nll_bwd(g, self, target, w, r, ii, tw, false), gi);
}
std::tuple<at::Tensor, at::Tensor> ocl_nll_loss2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                      const OptT& w, int64_t r, int64_t ii) {
  return nll_fwd(self, target, w, r, ii, true);
}
std::tuple<at::Tensor&, at::Tensor&> ocl_nll_loss2d_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                            const OptT& w, int64_t r, int64_t ii, at::Tensor& out,
                                                            at::Tensor& tw) {
  auto [o, t] = nll_fwd(self, target, w, r, ii, true);
  deliver(o, out);
  deliver(t, tw);
  return {out, tw};
}
at::Tensor ocl_nll_loss2d_backward(const at::Tensor& g, const at::Tensor& self, const at::Tensor& target, const OptT& w,
                               int64_t r, int64_t ii, const at::Tensor& tw) {
  return nll_bwd(g, self, target, w, r, ii, tw, true);
}
at::Tensor& ocl_nll_loss2d_backward_out(const at::Tensor& g, const at::Tensor& self, const at::Tensor& target,
                                    const OptT& w, int64_t r, int64_t ii, const at::Tensor& tw, at::Tensor& gi) {
  return deliver(nll_bwd(g, self, target, w, r, ii, tw, true), gi);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_softmax", softmax<false>);
  m.impl("_softmax.out", softmax_out<false>);
  m.impl("_log_softmax", softmax<true>);
  m.impl("_log_softmax.out", softmax_out<true>);
  m.impl("_softmax_backward_data", softmax_backward<false>);
  m.impl("_softmax_backward_data.out", softmax_backward_out<false>);
  m.impl("_log_softmax_backward_data", softmax_backward<true>);
  m.impl("_log_softmax_backward_data.out", softmax_backward_out<true>);
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
  m.impl("mse_loss", ocl_mse_loss);
  m.impl("mse_loss.out", ocl_mse_loss_out);
  m.impl("mse_loss_backward", ocl_mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", ocl_mse_loss_backward_out);
  m.impl("smooth_l1_loss", ocl_smooth_l1_loss);
  m.impl("smooth_l1_loss.out", ocl_smooth_l1_loss_out);
  m.impl("smooth_l1_loss_backward", ocl_smooth_l1_loss_backward);
  m.impl("smooth_l1_loss_backward.grad_input", ocl_smooth_l1_loss_backward_out);
  m.impl("huber_loss", ocl_huber_loss);
  m.impl("huber_loss.out", ocl_huber_loss_out);
  m.impl("huber_loss_backward", ocl_huber_loss_backward);
  m.impl("huber_loss_backward.out", ocl_huber_loss_backward_out);
  m.impl("binary_cross_entropy", ocl_binary_cross_entropy);
  m.impl("binary_cross_entropy.out", ocl_binary_cross_entropy_out);
  m.impl("binary_cross_entropy_backward", ocl_binary_cross_entropy_backward);
  m.impl("binary_cross_entropy_backward.grad_input", ocl_binary_cross_entropy_backward_out);
  m.impl("nll_loss_forward", ocl_nll_loss_forward);
  m.impl("nll_loss_forward.output", ocl_nll_loss_forward_out);
  m.impl("nll_loss_backward", ocl_nll_loss_backward);
  m.impl("nll_loss_backward.grad_input", ocl_nll_loss_backward_out);
  m.impl("nll_loss2d_forward", ocl_nll_loss2d_forward);
  m.impl("nll_loss2d_forward.output", ocl_nll_loss2d_forward_out);
  m.impl("nll_loss2d_backward", ocl_nll_loss2d_backward);
  m.impl("nll_loss2d_backward.grad_input", ocl_nll_loss2d_backward_out);
}

}  // namespace torch_ocl
