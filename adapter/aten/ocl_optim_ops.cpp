// ocl_optim_ops.cpp - fused optimizer steps (_fused_adam_, _fused_adamw_,
// _fused_sgd_, _fused_adagrad_) over the IR engine.
//
// Each parameter tensor is one generated kernel that reads param, grad and
// optimizer state once and writes them back: the formula below is an IR graph
// with several outputs. The step count, a tensor lr, grad_scale and found_inf
// stay on the device as 0-dim inputs, so a step never waits on the host
// (Adam's bias corrections come from a one-element kernel per parameter).
// The formulas follow PyTorch's fused CPU kernels: float16/bfloat16 are
// computed in float32, the stored grad is the unscaled one, and found_inf == 1
// leaves every tensor unchanged.
#include <ATen/TensorIterator.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <vector>

#include "ocl_elementwise.h"
#include "tocl/device.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;
using at::TensorList;
using OptTensor = std::optional<Tensor>;

// The operands of one parameter's update. States are read and written
// (output k is input k); reads are inputs after them. Register every operand,
// then begin() builds the iterator and the graph.
class Update {
 public:
  int state(const Tensor& t) {
    st_.push_back(t);
    return static_cast<int>(st_.size()) - 1;
  }
  int read(const Tensor& t) {
    rd_.push_back(t);
    return static_cast<int>(rd_.size()) - 1;
  }
  // A 0-dim operand: a kernel argument when it lives on the CPU (no device
  // traffic), a broadcast input when on the device (no host wait).
  void value(const Tensor& t, const Tensor& like, int* read_index, double* host) {
    TORCH_CHECK(t.numel() == 1, "torch_ocl: expected a one-element tensor, got shape ", t.sizes());
    if (t.is_cpu()) {
      *host = t.item<double>();
      *read_index = -1;
    } else {
      TORCH_CHECK(t.device() == like.device(), "Expected all tensors to be on the same device, but found ",
                  t.device(), " and ", like.device());
      *read_index = read(t.reshape({}));
    }
  }
  // The step is skipped (every state kept) where found_inf == 1.
  void skip_if(int found_inf_read) { skip_ = found_inf_read; }

  EwGraph& begin(c10::ScalarType compute) {
    at::TensorIteratorConfig cfg;
    cfg.check_all_same_dtype(false).resize_outputs(false);
    for (const auto& t : st_)
      cfg.add_output(t);
    for (const auto& t : st_)
      cfg.add_const_input(t);
    for (const auto& t : rd_)
      cfg.add_const_input(t);
    iter_.emplace(cfg.build());
    g_.emplace(*iter_, compute);
    if (skip_ >= 0)
      skip_node_ = g_->binary(TOCL_IR_EQ, in(skip_), g_->scalar(1.0));
    return *g_;
  }
  int old(int s) { return g_->input(s); }
  int in(int r) { return g_->input(static_cast<int>(st_.size()) + r); }
  // A read operand if it has one, else its host value as a kernel argument.
  int value_node(int r, double host) { return r >= 0 ? in(r) : g_->scalar(host); }
  void set(int s, int node) {
    if (skip_node_ >= 0)
      node = g_->ternary(TOCL_IR_WHERE, skip_node_, old(s), node);
    g_->output(s, node);
  }
  void run() { g_->run(); }

 private:
  std::vector<Tensor> st_, rd_;
  std::optional<at::TensorIterator> iter_;
  std::optional<EwGraph> g_;
  int skip_ = -1, skip_node_ = -1;
};

// Shared by every optimizer: grad_scale / found_inf / maximize / lr.
struct Common {
  const OptTensor& grad_scale;
  const OptTensor& found_inf;
  bool maximize;
  const Tensor* lr_tensor;  // tensor-lr overload, else nullptr
  double lr;
};

// Registered operands of the grad prologue.
struct GradOps {
  int grad_state = -1, grad_read = -1, scale = -1, lr = -1;
  double lr_host = 0;
};

GradOps register_grad(Update& u, const Common& c, const Tensor& param, const Tensor& grad) {
  GradOps o;
  o.lr_host = c.lr;
  if (c.grad_scale) {
    o.grad_state = u.state(grad);  // the unscaled grad is written back
    o.scale = u.read(c.grad_scale->reshape({}));
  } else {
    o.grad_read = u.read(grad);
  }
  if (c.found_inf)
    u.skip_if(u.read(c.found_inf->reshape({})));
  if (c.lr_tensor)
    u.value(*c.lr_tensor, param, &o.lr, &o.lr_host);
  return o;
}

// grad / grad_scale (stored back), negated for maximize.
int grad_node(Update& u, EwGraph& g, const Common& c, const GradOps& o) {
  if (!c.grad_scale)
    return c.maximize ? g.unary(TOCL_IR_NEG, u.in(o.grad_read)) : u.in(o.grad_read);
  int gr = g.binary(TOCL_IR_DIV, u.old(o.grad_state), u.in(o.scale));
  u.set(o.grad_state, gr);
  return c.maximize ? g.unary(TOCL_IR_NEG, gr) : gr;
}

void check_lists(const char* op, TensorList params, std::initializer_list<std::pair<const char*, TensorList>> lists) {
  for (const auto& [name, l] : lists)
    TORCH_CHECK(l.size() == params.size(), op, ": expected ", name, " to have ", params.size(),
                " tensors (one per param), but got ", l.size());
}

void check_like(const char* op, const Tensor& p, const Tensor& t, const char* name) {
  TORCH_CHECK(t.device() == p.device(), op, ": expected ", name, " on ", p.device(), " but got ", t.device());
  TORCH_CHECK(t.scalar_type() == p.scalar_type(), op, ": expected ", name, " of dtype ", p.scalar_type(),
              " (the param's), but got ", t.scalar_type());
  TORCH_CHECK(t.sizes() == p.sizes(), op, ": expected ", name, " of shape ", p.sizes(), " (the param's), but got ",
              t.sizes());
}

void check_scalars(const char* op, const Tensor& p, const Common& c) {
  for (const OptTensor* t : {&c.grad_scale, &c.found_inf})
    if (*t) {
      TORCH_CHECK((*t)->numel() == 1 && (*t)->scalar_type() == at::kFloat, op,
                  ": grad_scale and found_inf must be one-element float32 tensors");
      TORCH_CHECK((*t)->device() == p.device(), op, ": grad_scale and found_inf must be on ", p.device(),
                  " but got ", (*t)->device());
    }
  TORCH_CHECK(at::isFloatingType(p.scalar_type()), op, ": params must be floating point, got ", p.scalar_type());
}

// Adam's per-step coefficients step_size = lr / (1 - beta1^step) and
// sqrt(1 - beta2^step). They are the same for every element, so they are
// computed once per parameter: on the host when the step is a CPU tensor,
// else by a one-element kernel into `out` (two elements), in float64 like the
// CPU kernel where the device has it. (Evaluated per element, the
// transcendentals cost more than the whole update on a CPU device.)
struct AdamCoef {
  int step_size = -1, bc2_sqrt = -1;  // read operands, or -1 with host values
  double step_size_host = 0, bc2_sqrt_host = 0;
};

void adam_coefficients(const Tensor& step, const Tensor* lr_dev, double lr_host, double beta1, double beta2,
                       bool fp64, const Tensor& out) {
  Tensor o0 = out.select(0, 0), o1 = out.select(0, 1), s = step.reshape({});
  std::optional<Tensor> lr;
  at::TensorIteratorConfig cfg;
  cfg.check_all_same_dtype(false).resize_outputs(false).add_output(o0).add_output(o1).add_const_input(s);
  if (lr_dev) {
    lr = lr_dev->reshape({});
    cfg.add_const_input(*lr);
  }
  auto iter = cfg.build();
  EwGraph g(iter, fp64 ? at::kDouble : at::kFloat);
  int st = g.input(0), one = g.scalar(1.0);
  // 1 - beta^step; without fp64 as -expm1(step * log(beta)), exact to a
  // rounding in float32 even when beta^step is close to 1 (beta2 = 0.999).
  auto bias_correction = [&](double beta) {
    if (fp64)
      return g.binary(TOCL_IR_SUB, one, g.binary(TOCL_IR_POW, g.scalar(beta), st));
    return g.unary(TOCL_IR_NEG, g.unary(TOCL_IR_EXPM1, g.binary(TOCL_IR_MUL, st, g.scalar(std::log(beta)))));
  };
  int lr_node = lr_dev ? g.input(1) : g.scalar(lr_host);
  g.output(0, g.binary(TOCL_IR_DIV, lr_node, bias_correction(beta1)));
  g.output(1, g.unary(TOCL_IR_SQRT, bias_correction(beta2)));
  g.run();
}

enum class AdamMode { Adam, AdamW };

struct AdamHyper {
  double beta1, beta2, weight_decay, eps;
  bool amsgrad;
  AdamMode mode;
  bool fp64 = false;  // the device computes float64 (set per call)
};

void adam_one(const Tensor& p, const Tensor& grad, const Tensor& m, const Tensor& v, const Tensor* vmax,
              const Tensor& step, const AdamHyper& h, const Common& c) {
  Update u;
  int P = u.state(p), M = u.state(m), V = u.state(v);
  int VM = h.amsgrad ? u.state(*vmax) : -1;
  GradOps go = register_grad(u, c, p, grad);
  AdamCoef co;
  Tensor coef;
  if (step.is_cpu() && go.lr < 0) {
    double st = step.item<double>();
    co.step_size_host = go.lr_host / (1 - std::pow(h.beta1, st));
    co.bc2_sqrt_host = std::sqrt(1 - std::pow(h.beta2, st));
  } else {
    TORCH_CHECK(step.numel() == 1, "_fused_adam_: expected each state_step to be a one-element tensor, got shape ",
                step.sizes());
    Tensor st = step.is_cpu() ? step.to(p.device()) : step;
    coef = at::empty({2}, p.options().dtype(p.scalar_type() == at::kDouble ? at::kDouble : at::kFloat));
    adam_coefficients(st, go.lr >= 0 ? c.lr_tensor : nullptr, go.lr_host, h.beta1, h.beta2, h.fp64, coef);
    co.step_size = u.read(coef.select(0, 0));
    co.bc2_sqrt = u.read(coef.select(0, 1));
  }

  EwGraph& g = u.begin(p.scalar_type());
  auto k = [&](double x) { return g.scalar(x); };
  int gr = grad_node(u, g, c, go);
  int param = u.old(P);
  int lr = u.value_node(go.lr, go.lr_host);
  if (h.weight_decay != 0) {
    if (h.mode == AdamMode::Adam) {
      gr = g.binary(TOCL_IR_ADD, gr, g.binary(TOCL_IR_MUL, param, k(h.weight_decay)));
    } else {
      int decay = go.lr >= 0 ? g.binary(TOCL_IR_SUB, k(1.0), g.binary(TOCL_IR_MUL, lr, k(h.weight_decay)))
                             : k(1.0 - go.lr_host * h.weight_decay);
      param = g.binary(TOCL_IR_MUL, param, decay);
    }
  }
  // exp_avg.lerp_(grad, 1 - beta1), with lerp's two-sided formula.
  double w = 1.0 - h.beta1;
  int mo = u.old(M), diff = g.binary(TOCL_IR_SUB, gr, mo);
  int mn = std::abs(w) < 0.5 ? g.binary(TOCL_IR_ADD, mo, g.binary(TOCL_IR_MUL, k(w), diff))
                             : g.binary(TOCL_IR_SUB, gr, g.binary(TOCL_IR_MUL, diff, k(1.0 - w)));
  // exp_avg_sq * beta2 + (1 - beta2) * grad * grad
  int vn = g.binary(TOCL_IR_ADD, g.binary(TOCL_IR_MUL, u.old(V), k(h.beta2)),
                    g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, k(1.0 - h.beta2), gr), gr));
  int vd = vn;
  if (h.amsgrad) {
    vd = g.binary(TOCL_IR_MAXIMUM, u.old(VM), vn);
    u.set(VM, vd);
  }
  int step_size = u.value_node(co.step_size, co.step_size_host);
  int bc2_sqrt = u.value_node(co.bc2_sqrt, co.bc2_sqrt_host);
  int denom = g.binary(TOCL_IR_ADD, g.binary(TOCL_IR_DIV, g.unary(TOCL_IR_SQRT, vd), bc2_sqrt), k(h.eps));
  param = g.binary(TOCL_IR_SUB, param, g.binary(TOCL_IR_DIV, g.binary(TOCL_IR_MUL, step_size, mn), denom));
  u.set(P, param);
  u.set(M, mn);
  u.set(V, vn);
  u.run();
}

void fused_adam(const char* op, TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                TensorList max_exp_avg_sqs, TensorList state_steps, const AdamHyper& h, const Common& c) {
  check_lists(op, params, {{"grads", grads}, {"exp_avgs", exp_avgs}, {"exp_avg_sqs", exp_avg_sqs},
                           {"state_steps", state_steps}});
  if (h.amsgrad)
    check_lists(op, params, {{"max_exp_avg_sqs", max_exp_avg_sqs}});
  AdamHyper hd = h;
  if (!params.empty() && !params[0].is_cpu()) {
    tocl_device_props props;
    TOCL_CHECK(tocl_device_props_get(params[0].device().index(), &props));
    hd.fp64 = props.has_fp64 != 0;
  }
  for (size_t i = 0; i < params.size(); i++) {
    const Tensor& p = params[i];
    check_scalars(op, p, c);
    check_like(op, p, grads[i], "grads");
    check_like(op, p, exp_avgs[i], "exp_avgs");
    check_like(op, p, exp_avg_sqs[i], "exp_avg_sqs");
    if (h.amsgrad)
      check_like(op, p, max_exp_avg_sqs[i], "max_exp_avg_sqs");
    c10::DeviceGuard guard(p.device());
    adam_one(p, grads[i], exp_avgs[i], exp_avg_sqs[i], h.amsgrad ? &max_exp_avg_sqs[i] : nullptr, state_steps[i],
             hd, c);
  }
}

template <AdamMode MODE>
void adam_lr(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
             TensorList max_exp_avg_sqs, TensorList state_steps, double lr, double beta1, double beta2,
             double weight_decay, double eps, bool amsgrad, bool maximize, const OptTensor& grad_scale,
             const OptTensor& found_inf) {
  Common c{grad_scale, found_inf, maximize, nullptr, lr};
  fused_adam(MODE == AdamMode::Adam ? "_fused_adam_" : "_fused_adamw_", self, grads, exp_avgs, exp_avg_sqs,
             max_exp_avg_sqs, state_steps, {beta1, beta2, weight_decay, eps, amsgrad, MODE}, c);
}

template <AdamMode MODE>
void adam_tensor_lr(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                    TensorList max_exp_avg_sqs, TensorList state_steps, const Tensor& lr, double beta1, double beta2,
                    double weight_decay, double eps, bool amsgrad, bool maximize, const OptTensor& grad_scale,
                    const OptTensor& found_inf) {
  Common c{grad_scale, found_inf, maximize, &lr, 0.0};
  fused_adam(MODE == AdamMode::Adam ? "_fused_adam_" : "_fused_adamw_", self, grads, exp_avgs, exp_avg_sqs,
             max_exp_avg_sqs, state_steps, {beta1, beta2, weight_decay, eps, amsgrad, MODE}, c);
}

struct SgdHyper {
  double weight_decay, momentum, dampening;
  bool nesterov, is_first_step;
};

void sgd_one(const Tensor& p, const Tensor& grad, const Tensor* buf, const SgdHyper& h, const Common& c) {
  Update u;
  int P = u.state(p);
  int B = buf ? u.state(*buf) : -1;
  GradOps go = register_grad(u, c, p, grad);
  EwGraph& g = u.begin(p.scalar_type());
  auto k = [&](double x) { return g.scalar(x); };
  int gr = grad_node(u, g, c, go);
  int param = u.old(P);
  if (h.weight_decay != 0)
    gr = g.binary(TOCL_IR_ADD, gr, g.binary(TOCL_IR_MUL, param, k(h.weight_decay)));
  if (buf) {
    int b = h.is_first_step ? gr
                            : g.binary(TOCL_IR_ADD, g.binary(TOCL_IR_MUL, u.old(B), k(h.momentum)),
                                       g.binary(TOCL_IR_MUL, gr, k(1.0 - h.dampening)));
    u.set(B, b);
    gr = h.nesterov ? g.binary(TOCL_IR_ADD, gr, g.binary(TOCL_IR_MUL, b, k(h.momentum))) : b;
  }
  int lr = u.value_node(go.lr, go.lr_host);
  u.set(P, g.binary(TOCL_IR_SUB, param, g.binary(TOCL_IR_MUL, gr, lr)));
  u.run();
}

void fused_sgd(TensorList params, TensorList grads, TensorList bufs, const SgdHyper& h, const Common& c) {
  const char* op = "_fused_sgd_";
  check_lists(op, params, {{"grads", grads}});
  bool use_buf = h.momentum != 0.0;
  if (use_buf)
    check_lists(op, params, {{"momentum_buffer_list", bufs}});
  else
    TORCH_CHECK(bufs.empty(), op, ": momentum_buffer_list must be empty when momentum is 0");
  for (size_t i = 0; i < params.size(); i++) {
    const Tensor& p = params[i];
    check_scalars(op, p, c);
    check_like(op, p, grads[i], "grads");
    if (use_buf)
      check_like(op, p, bufs[i], "momentum_buffer_list");
    c10::DeviceGuard guard(p.device());
    sgd_one(p, grads[i], use_buf ? &bufs[i] : nullptr, h, c);
  }
}

void sgd_lr(TensorList self, TensorList grads, TensorList bufs, double weight_decay, double momentum, double lr,
            double dampening, bool nesterov, bool maximize, bool is_first_step, const OptTensor& grad_scale,
            const OptTensor& found_inf) {
  Common c{grad_scale, found_inf, maximize, nullptr, lr};
  fused_sgd(self, grads, bufs, {weight_decay, momentum, dampening, nesterov, is_first_step}, c);
}

void sgd_tensor_lr(TensorList self, TensorList grads, TensorList bufs, double weight_decay, double momentum,
                   const Tensor& lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
                   const OptTensor& grad_scale, const OptTensor& found_inf) {
  Common c{grad_scale, found_inf, maximize, &lr, 0.0};
  fused_sgd(self, grads, bufs, {weight_decay, momentum, dampening, nesterov, is_first_step}, c);
}

struct AdagradHyper {
  double lr_decay, weight_decay, eps;
};

void adagrad_one(const Tensor& p, const Tensor& grad, const Tensor& sum, const Tensor& step, const AdagradHyper& h,
                 const Common& c) {
  Update u;
  int P = u.state(p), SUM = u.state(sum);
  GradOps go = register_grad(u, c, p, grad);
  int S = -1;
  double step_host = 0;
  u.value(step, p, &S, &step_host);
  EwGraph& g = u.begin(p.scalar_type());
  auto k = [&](double x) { return g.scalar(x); };
  int gr = grad_node(u, g, c, go);
  int param = u.old(P);
  if (h.weight_decay != 0)
    gr = g.binary(TOCL_IR_ADD, gr, g.binary(TOCL_IR_MUL, param, k(h.weight_decay)));
  int sn = g.binary(TOCL_IR_ADD, u.old(SUM), g.binary(TOCL_IR_MUL, gr, gr));
  int std_ = g.binary(TOCL_IR_ADD, g.unary(TOCL_IR_SQRT, sn), k(h.eps));
  // clr = lr / (1 + (step - 1) * lr_decay)
  int s = u.value_node(S, step_host);
  int clr = g.binary(TOCL_IR_DIV, u.value_node(go.lr, go.lr_host),
                     g.binary(TOCL_IR_ADD, k(1.0),
                              g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_SUB, s, k(1.0)), k(h.lr_decay))));
  u.set(P, g.binary(TOCL_IR_SUB, param, g.binary(TOCL_IR_DIV, g.binary(TOCL_IR_MUL, clr, gr), std_)));
  u.set(SUM, sn);
  u.run();
}

void fused_adagrad(TensorList params, TensorList grads, TensorList sums, TensorList steps, const AdagradHyper& h,
                   const Common& c) {
  const char* op = "_fused_adagrad_";
  check_lists(op, params, {{"grads", grads}, {"state_sums", sums}, {"state_steps", steps}});
  for (size_t i = 0; i < params.size(); i++) {
    const Tensor& p = params[i];
    check_scalars(op, p, c);
    check_like(op, p, grads[i], "grads");
    check_like(op, p, sums[i], "state_sums");
    c10::DeviceGuard guard(p.device());
    adagrad_one(p, grads[i], sums[i], steps[i], h, c);
  }
}

void adagrad_lr(TensorList self, TensorList grads, TensorList sums, TensorList steps, double lr, double lr_decay,
                double weight_decay, double eps, bool maximize, const OptTensor& grad_scale,
                const OptTensor& found_inf) {
  Common c{grad_scale, found_inf, maximize, nullptr, lr};
  fused_adagrad(self, grads, sums, steps, {lr_decay, weight_decay, eps}, c);
}

void adagrad_tensor_lr(TensorList self, TensorList grads, TensorList sums, TensorList steps, const Tensor& lr,
                       double lr_decay, double weight_decay, double eps, bool maximize, const OptTensor& grad_scale,
                       const OptTensor& found_inf) {
  Common c{grad_scale, found_inf, maximize, &lr, 0.0};
  fused_adagrad(self, grads, sums, steps, {lr_decay, weight_decay, eps}, c);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_fused_adam_", adam_lr<AdamMode::Adam>);
  m.impl("_fused_adam_.tensor_lr", adam_tensor_lr<AdamMode::Adam>);
  m.impl("_fused_adamw_", adam_lr<AdamMode::AdamW>);
  m.impl("_fused_adamw_.tensor_lr", adam_tensor_lr<AdamMode::AdamW>);
  m.impl("_fused_sgd_", sgd_lr);
  m.impl("_fused_sgd_.tensor_lr", sgd_tensor_lr);
  m.impl("_fused_adagrad_", adagrad_lr);
  m.impl("_fused_adagrad_.tensor_lr", adagrad_tensor_lr);
}

}  // namespace torch_ocl
