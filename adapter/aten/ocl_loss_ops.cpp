// ocl_loss_ops.cpp - losses (mse, smooth-l1, huber, binary cross entropy, nll
// and nll2d), forward and backward, on runtime/ops/loss.c (kernels/loss.cl).
// Argument checks follow the CPU's messages.
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
#include "tocl/graph.h"
#include "ocl_complex_route.h"
#include "ocl_value_range.h"

namespace torch_ocl {
namespace {

using namespace nn_util;

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
  if (n * s == 0)
    return {out, tw};
  // The CPU raises on a bad target: the flag comes to the host, which waits
  // for everything queued before (a training step's forward). Targets whose
  // values the host knows to be in range (copied from the host, randint)
  // skip that wait; their flag is still read back, without waiting, so a
  // write the host did not see fails a later synchronization instead
  // (ocl_value_range.h). Not under capture: a replay reads new targets.
  if (!tocl_graph_capturing() && values_known_within(target, 0, c - 1)) {
    TOCL_CHECK(tocl_copy_flag_later(dev_of(flag), stream_of(flag), tf.t.data));
    count_check(CheckKind::target, true);
    return {out, tw};
  }
  count_check(CheckKind::target, false);
  tocl_graph_next_read_is_flag();  // a captured graph repeats the check (tocl/graph.h)
  at::Tensor f = flag.cpu();
  TORCH_CHECK_INDEX(f.data_ptr<int64_t>()[0] == 0, "Target ", f.data_ptr<int64_t>()[1], " is out of bounds.");
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
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
