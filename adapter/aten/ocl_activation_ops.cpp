// ocl_activation_ops.cpp - activations and the backward kernels autograd
// calls for them, over the IR engine; each op is one out-form
// implementation whose overloads Forms (ocl_forms.h) generates. Formulas follow PyTorch's CPU kernels
// (aten/src/ATen/native/cpu/Activation.cpp); long ones are rows of the op
// table, short ones are composed here from table ops.
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <cmath>

#include "ocl_pointwise.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

// An activation with scalar parameters: the formula gets the graph, the
// input node and the parameters.
struct Act {
  template <typename F>
  static at::Tensor run(const at::Tensor& out_arg, const at::Tensor& x, const char* name, unsigned dt, F f) {
    at::Tensor out = out_arg;
    auto it = make_iter(Iter::Unary, out, x);
    check_dtype(name, it.common_dtype(), dt);
    EwGraph g(it);
    g.output(0, f(g, g.input(0)));
    g.run();
    return it.output();
  }
  // backward: (grad, x_or_y) -> grad_input
  template <typename F>
  static at::Tensor run2(const at::Tensor& out_arg, const at::Tensor& grad, const at::Tensor& x, const char* name,
                         unsigned dt, F f) {
    at::Tensor out = out_arg;
    auto it = make_iter(Iter::Binary, out, grad, x);
    check_dtype(name, it.common_dtype(), dt);
    EwGraph g(it);
    g.output(0, f(g, g.input(0), g.input(1)));
    g.run();
    return it.output();
  }
};

// ------------------------------------------------------------------ forward

int f_gelu(EwGraph& g, int x, c10::string_view approx) {
  TORCH_CHECK(approx == "none" || approx == "tanh", "approximate argument must be either none or tanh.");
  return g.unary(approx == "tanh" ? TOCL_IR_GELU_TANH : TOCL_IR_GELU, x);
}
at::Tensor gelu(const at::Tensor& o, const at::Tensor& x, c10::string_view a) {
  return Act::run(o, x, "GeluKernelImpl", kDtFloat, [&](EwGraph& g, int v) { return f_gelu(g, v, a); });
}

// silu and mish are rows of ocl_pointwise_table.cpp.

at::Tensor relu(const at::Tensor& o, const at::Tensor& x) {
  TORCH_CHECK_NOT_IMPLEMENTED(x.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return Act::run(o, x, "clamp_min_scalar_cpu", kDtNoBool,
                  [](EwGraph& g, int v) { return g.binary(TOCL_IR_MAXIMUM, v, g.scalar(0)); });
}

int f_leaky(EwGraph& g, int x, const c10::Scalar& slope) {
  return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_GT, x, g.scalar(0)), x, g.binary(TOCL_IR_MUL, x, g.scalar(slope)));
}
at::Tensor leaky_relu(const at::Tensor& o, const at::Tensor& x, const c10::Scalar& s) {
  return Act::run(o, x, "leaky_relu_cpu", kDtFloat, [&](EwGraph& g, int v) { return f_leaky(g, v, s); });
}

// elu: x > 0 ? x * scale : expm1(x * input_scale) * alpha * scale
int f_elu(EwGraph& g, int x, const c10::Scalar& alpha, const c10::Scalar& scale, const c10::Scalar& iscale) {
  int neg = g.binary(TOCL_IR_MUL, g.unary(TOCL_IR_EXPM1, g.binary(TOCL_IR_MUL, x, g.scalar(iscale))),
                     g.scalar(alpha.toDouble() * scale.toDouble()));
  return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_LE, x, g.scalar(0)), neg, g.binary(TOCL_IR_MUL, x, g.scalar(scale)));
}
at::Tensor elu(const at::Tensor& o, const at::Tensor& x, const c10::Scalar& a, const c10::Scalar& s,
               const c10::Scalar& i) {
  return Act::run(o, x, "elu_cpu", kDtFloat, [&](EwGraph& g, int v) { return f_elu(g, v, a, s, i); });
}

void check_hardtanh(const at::Tensor& x, const c10::Scalar& lo, const c10::Scalar& hi) {
  TORCH_CHECK_NOT_IMPLEMENTED(x.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  if (x.scalar_type() == at::kByte)
    TORCH_CHECK(lo.to<double>() >= 0 && hi.to<double>() >= 0,
                "cannot do hardtanh on an unsigned type with negative limits");
}

// A parameter the CPU converts to the tensor's dtype before comparing (so a
// float16 threshold of 0.7 is 0.7002); out-of-range values raise like it.
c10::Scalar as_dtype(const c10::Scalar& v, c10::ScalarType t) {
  c10::Scalar r = v;
  AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, t, "as_dtype",
                             [&] { r = c10::Scalar(v.to<scalar_t>()); });
  return r;
}

int f_hardtanh(EwGraph& g, int x, const c10::Scalar& lo, const c10::Scalar& hi) {
  return g.binary(TOCL_IR_MINIMUM, g.binary(TOCL_IR_MAXIMUM, x, g.scalar(lo)), g.scalar(hi));
}
at::Tensor hardtanh(const at::Tensor& o, const at::Tensor& x, const c10::Scalar& lo, const c10::Scalar& hi) {
  check_hardtanh(x, lo, hi);
  return Act::run(o, x, "clamp_scalar_cpu", kDtNoBool, [&](EwGraph& g, int v) { return f_hardtanh(g, v, lo, hi); });
}

// hardsigmoid: min(max(x + 3, 0), 6) / 6; hardswish: x * that.
int f_hsig(EwGraph& g, int x) {
  int t = g.binary(TOCL_IR_ADD, x, g.scalar(3));
  t = g.binary(TOCL_IR_MINIMUM, g.binary(TOCL_IR_MAXIMUM, t, g.scalar(0)), g.scalar(6));
  return g.binary(TOCL_IR_DIV, t, g.scalar(6));
}
int f_hswish(EwGraph& g, int x) {
  int t = g.binary(TOCL_IR_ADD, x, g.scalar(3));
  t = g.binary(TOCL_IR_MINIMUM, g.binary(TOCL_IR_MAXIMUM, t, g.scalar(0)), g.scalar(6));
  return g.binary(TOCL_IR_DIV, g.binary(TOCL_IR_MUL, x, t), g.scalar(6));
}
template <int (*F)(EwGraph&, int)>
at::Tensor composed(const at::Tensor& o, const at::Tensor& x) {
  return Act::run(o, x, "hardsigmoid_cpu", kDtFloat, F);
}

int f_softplus(EwGraph& g, int x, const c10::Scalar& beta, const c10::Scalar& th) {
  return g.ternary(TOCL_IR_SOFTPLUS, x, g.scalar(beta), g.scalar(th));
}
at::Tensor softplus(const at::Tensor& o, const at::Tensor& x, const c10::Scalar& b, const c10::Scalar& t) {
  return Act::run(o, x, "softplus_cpu", kDtFloat, [&](EwGraph& g, int v) { return f_softplus(g, v, b, t); });
}

template <tocl_ir_op OP>
struct Shrink {
  static void check(const c10::Scalar& l) {
    if (OP == TOCL_IR_SOFTSHRINK)
      TORCH_CHECK(l.toDouble() >= 0, "lambda must be greater or equal to 0, but found to be ", l.toDouble(), ".");
  }
  static at::Tensor fwd(const at::Tensor& o, const at::Tensor& x, const c10::Scalar& l) {
    check(l);
    c10::Scalar lt = as_dtype(l, x.scalar_type());
    return Act::run(o, x, tocl_ir_op_name(OP), kDtFloat, [&](EwGraph& g, int v) { return g.binary(OP, v, g.scalar(lt)); });
  }
  static at::Tensor bwd(const at::Tensor& o, const at::Tensor& gr, const at::Tensor& x, const c10::Scalar& l) {
    return Act::run2(o, gr, x, "shrink_backward_cpu", kDtFloat,
                     [&](EwGraph& g, int a, int b) { return g.ternary(TOCL_IR_SHRINK_BACKWARD, a, b, g.scalar(l)); });
  }
  using F = Forms<fwd>;
  using B = Forms<bwd>;
};

// threshold(x, th, value) = x <= th ? value : x (also threshold_backward with x := grad).
at::Tensor threshold_impl(const at::Tensor& out, const at::Tensor& x, const at::Tensor& other, const c10::Scalar& th,
                          const c10::Scalar& value) {
  c10::Scalar tt = as_dtype(th, x.scalar_type()), vt = as_dtype(value, other.scalar_type());
  return Act::run2(out, x, other, "threshold_cpu", kDtNoBool, [&](EwGraph& g, int a, int b) {
    return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_LE, a, g.scalar(tt)), g.scalar(vt), b);
  });
}
at::Tensor threshold(const at::Tensor& o, const at::Tensor& x, const c10::Scalar& th, const c10::Scalar& v) {
  return threshold_impl(o, x, x, th, v);
}
at::Tensor threshold_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& self,
                              const c10::Scalar& th) {
  return threshold_impl(o, self, grad, th, 0);
}

// log_sigmoid_forward returns (output, buffer); the CPU's backward recomputes
// from the input, so the buffer is left empty there too when unused.
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& x, at::Tensor& out, at::Tensor& buffer) {
  Act::run(out, x, "log_sigmoid_cpu", kDtFloat, [](EwGraph& g, int v) { return g.unary(TOCL_IR_LOGSIGMOID, v); });
  resize_out(buffer, x.sizes());
  Act::run(buffer, x, "log_sigmoid_cpu", kDtFloat, [](EwGraph& g, int v) {
    return g.unary(TOCL_IR_EXP, g.unary(TOCL_IR_NEG, g.unary(TOCL_IR_ABS, v)));
  });
  return std::tuple<at::Tensor&, at::Tensor&>(out, buffer);
}
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& x) {
  at::Tensor out = at::empty_like(x), buffer = at::empty_like(x);
  log_sigmoid_forward_out(x, out, buffer);
  return std::make_tuple(out, buffer);
}

// ------------------------------------------------------------------ backward

// The out form of a backward op (grad, x_or_y) -> grad_input with one
// formula; Forms<NAME> gives its functional and .grad_input overloads.
#define TOCL_BW(NAME, CPU_NAME, BODY)                                                               \
  at::Tensor NAME(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x) {               \
    return Act::run2(o, grad, x, CPU_NAME, kDtFloat, [](EwGraph& g, int dy, int v) { BODY; });      \
  }

// tanh_backward(g, y) = g * (1 - y * y); sigmoid_backward(g, y) = g * (1 - y) * y
TOCL_BW(tanh_backward, "tanh_backward_cpu",
        return g.binary(TOCL_IR_MUL, dy, g.binary(TOCL_IR_SUB, g.scalar(1), g.binary(TOCL_IR_MUL, v, v))))
TOCL_BW(sigmoid_backward, "sigmoid_backward_cpu",
        return g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, dy, g.binary(TOCL_IR_SUB, g.scalar(1), v)), v))
TOCL_BW(silu_backward, "silu_backward_cpu", return g.binary(TOCL_IR_SILU_BACKWARD, dy, v))
// hardsigmoid_backward: g / 6 inside (-3, 3), else 0
TOCL_BW(hardsigmoid_backward, "hardsigmoid_backward",
        int in = g.binary(TOCL_IR_LOGICAL_AND, g.binary(TOCL_IR_GT, v, g.scalar(-3)), g.binary(TOCL_IR_LT, v, g.scalar(3)));
        return g.ternary(TOCL_IR_WHERE, in, g.binary(TOCL_IR_DIV, dy, g.scalar(6)), g.scalar(0)))
// hardswish_backward: 0 up to -3, g * (x / 3 + 0.5) below 3, g from 3 on
TOCL_BW(hardswish_backward, "hardswish_backward",
        int mid = g.binary(TOCL_IR_MUL, dy, g.binary(TOCL_IR_ADD, g.binary(TOCL_IR_DIV, v, g.scalar(3)), g.scalar(0.5)));
        int r = g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_LT, v, g.scalar(3)), mid, dy);
        return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_LE, v, g.scalar(-3)), g.scalar(0), r))
TOCL_BW(log_sigmoid_bw2, "log_sigmoid_backward_cpu", return g.binary(TOCL_IR_LOGSIGMOID_BACKWARD, dy, v))

// The buffer argument is unused: the formula recomputes from x.
at::Tensor log_sigmoid_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x, const at::Tensor&) {
  return log_sigmoid_bw2(o, grad, x);
}

at::Tensor gelu_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x, c10::string_view a) {
  TORCH_CHECK(a == "none" || a == "tanh", "approximate argument must be either none or tanh.");
  tocl_ir_op op = a == "tanh" ? TOCL_IR_GELU_TANH_BACKWARD : TOCL_IR_GELU_BACKWARD;
  return Act::run2(o, grad, x, "GeluBackwardKernelImpl", kDtFloat,
                   [&](EwGraph& g, int dy, int v) { return g.binary(op, dy, v); });
}

at::Tensor elu_backward(const at::Tensor& o, const at::Tensor& grad, const c10::Scalar& alpha, const c10::Scalar& scale,
                        const c10::Scalar& iscale, bool is_result, const at::Tensor& xy) {
  if (is_result)
    TORCH_CHECK(alpha.toDouble() >= 0, "In-place elu backward calculation is triggered with a negative slope which is "
                "not supported. This is caused by calling in-place forward function with a negative slope, please "
                "call out-of-place version instead.");
  double negcoef = alpha.toDouble() * scale.toDouble();
  return Act::run2(o, grad, xy, "elu_backward_cpu", kDtFloat, [&](EwGraph& g, int dy, int v) {
    int neg;
    if (is_result)
      neg = g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, dy, g.scalar(iscale)), g.binary(TOCL_IR_ADD, v, g.scalar(negcoef)));
    else
      neg = g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, dy, g.scalar(iscale)), g.scalar(negcoef)),
                     g.unary(TOCL_IR_EXP, g.binary(TOCL_IR_MUL, v, g.scalar(iscale))));
    return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_LE, v, g.scalar(0)), neg, g.binary(TOCL_IR_MUL, dy, g.scalar(scale)));
  });
}

at::Tensor hardtanh_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x, const c10::Scalar& lo,
                             const c10::Scalar& hi) {
  return Act::run2(o, grad, x, "hardtanh_backward_cpu", kDtFloat, [&](EwGraph& g, int dy, int v) {
    int out = g.binary(TOCL_IR_LOGICAL_OR, g.binary(TOCL_IR_LE, v, g.scalar(lo)), g.binary(TOCL_IR_GE, v, g.scalar(hi)));
    return g.ternary(TOCL_IR_WHERE, out, g.scalar(0), dy);
  });
}

at::Tensor softplus_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x, const c10::Scalar& beta,
                             const c10::Scalar& th) {
  return Act::run2(o, grad, x, "softplus_backward_cpu", kDtFloat, [&](EwGraph& g, int dy, int v) {
    int xb = g.binary(TOCL_IR_MUL, v, g.scalar(beta));
    int z = g.unary(TOCL_IR_EXP, xb);
    int d = g.binary(TOCL_IR_DIV, g.binary(TOCL_IR_MUL, dy, z), g.binary(TOCL_IR_ADD, z, g.scalar(1)));
    return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_GT, xb, g.scalar(th)), dy, d);
  });
}

at::Tensor leaky_relu_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x, const c10::Scalar& slope,
                               bool is_result) {
  TORCH_CHECK(!is_result || slope.to<double>() >= 0.0, "In-place leakyReLu backward calculation is triggered with a "
              "negative slope which is not supported. This is caused by calling in-place forward function with a "
              "negative slope, please call out-of-place version instead. File an issue at "
              "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward calculation "
              "with negative slope");
  return Act::run2(o, grad, x, "leaky_relu_backward_cpu", kDtFloat, [&](EwGraph& g, int dy, int v) {
    return g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_GT, v, g.scalar(0)), dy, g.binary(TOCL_IR_MUL, dy, g.scalar(slope)));
  });
}

// logit_backward: eps < 0 (None): NaN outside [0, 1]; else 0 outside [eps, 1 - eps].
at::Tensor logit_backward(const at::Tensor& o, const at::Tensor& grad, const at::Tensor& x, std::optional<double> eps) {
  double e = eps.value_or(-1.0);
  return Act::run2(o, grad, x, "logit_backward_cpu", kDtFloat, [&](EwGraph& g, int dy, int v) {
    int d = g.binary(TOCL_IR_DIV, dy, g.binary(TOCL_IR_MUL, v, g.binary(TOCL_IR_SUB, g.scalar(1), v)));
    double lo = e < 0 ? 0.0 : e, hi = e < 0 ? 1.0 : 1.0 - e;
    int outside = g.binary(TOCL_IR_LOGICAL_OR, g.binary(TOCL_IR_LT, v, g.scalar(lo)), g.binary(TOCL_IR_GT, v, g.scalar(hi)));
    return g.ternary(TOCL_IR_WHERE, outside, g.scalar(e < 0 ? std::nan("") : 0.0), d);
  });
}

// ------------------------------------------------------------------ glu

at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t wd = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(wd);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", wd, " is size ", n);
  auto a = self.narrow(wd, 0, n / 2), b = self.narrow(wd, n / 2, n / 2);
  auto it = make_iter(Iter::Binary, out, a, b);
  check_dtype("glu_cpu", it.common_dtype(), kDtFloat);
  EwGraph g(it);
  g.output(0, g.binary(TOCL_IR_MUL, g.input(0), g.unary(TOCL_IR_SIGMOID, g.input(1))));
  g.run();
  return out;
}
at::Tensor glu(const at::Tensor& self, int64_t dim) {
  at::Tensor out = at::empty({0}, self.options());
  return glu_out(self, dim, out);
}
at::Tensor& glu_backward_out(const at::Tensor& grad, const at::Tensor& self, int64_t dim, at::Tensor& gi) {
  TORCH_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  const int64_t wd = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(wd);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", wd, " is size ", n);
  resize_out(gi, self.sizes());
  auto a = self.narrow(wd, 0, n / 2), b = self.narrow(wd, n / 2, n / 2);
  auto ga = gi.narrow(wd, 0, n / 2), gb = gi.narrow(wd, n / 2, n / 2);
  auto it = at::TensorIteratorConfig()
                .add_output(ga)
                .add_output(gb)
                .add_const_input(a)
                .add_const_input(b)
                .add_const_input(grad)
                .build();
  EwGraph g(it);
  int s = g.unary(TOCL_IR_SIGMOID, g.input(1)), dy = g.input(2);
  g.output(0, g.binary(TOCL_IR_MUL, s, dy));
  int one_minus = g.binary(TOCL_IR_SUB, g.scalar(1), s);
  g.output(1, g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, one_minus, s), g.input(0)), dy));
  g.run();
  return gi;
}
at::Tensor glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  at::Tensor gi = at::empty_like(self, at::MemoryFormat::Contiguous);
  return glu_backward_out(grad, self, dim, gi);
}

// ------------------------------------------------------------------ prelu, rrelu

at::Tensor prelu_kernel(const at::Tensor& self, const at::Tensor& w) {
  at::Tensor out;
  auto it = make_iter(Iter::Binary, out, self, w);
  check_dtype("prelu_cpu", it.common_dtype(), kDtFloat);
  EwGraph g(it);
  int x = g.input(0);
  g.output(0, g.ternary(TOCL_IR_WHERE, g.binary(TOCL_IR_GT, x, g.scalar(0)), x, g.binary(TOCL_IR_MUL, g.input(1), x)));
  g.run();
  return it.output();
}
std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(const at::Tensor& grad, const at::Tensor& self,
                                                         const at::Tensor& w) {
  at::Tensor gi, gw;
  auto it = at::TensorIteratorConfig().add_output(gi).add_output(gw).add_const_input(self).add_const_input(w)
                .add_const_input(grad).build();
  EwGraph g(it);
  int x = g.input(0), wt = g.input(1), dy = g.input(2);
  int pos = g.binary(TOCL_IR_GT, x, g.scalar(0));
  g.output(0, g.ternary(TOCL_IR_WHERE, pos, dy, g.binary(TOCL_IR_MUL, wt, dy)));
  g.output(1, g.ternary(TOCL_IR_WHERE, pos, g.scalar(0), g.binary(TOCL_IR_MUL, x, dy)));
  g.run();
  return std::make_tuple(it.output(0), it.output(1));
}

// rrelu_with_noise: eval is leaky_relu with slope (lower + upper) / 2;
// training draws each negative element's slope from U(lower, upper) into noise.
at::Tensor& rrelu_with_noise_out(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                                 const c10::Scalar& upper, bool training, std::optional<at::Generator> gen,
                                 at::Tensor& out) {
  if (!training) {
    double slope = (lower.toDouble() + upper.toDouble()) / 2;
    resize_out(out, self.sizes());
    return Forms<leaky_relu>::out(self, slope, out);
  }
  TORCH_CHECK(self.sizes() == noise.sizes(), "noise tensor shape must match self tensor shape. Got self.shape = ",
              self.sizes(), " noise.shape = ", noise.sizes());
  at::Tensor r = at::empty_like(self).uniform_(lower.toDouble(), upper.toDouble(), gen);
  resize_out(out, self.sizes());
  auto it = at::TensorIteratorConfig().add_output(out).add_output(noise).add_const_input(self).add_const_input(r)
                .build();
  EwGraph g(it);
  int x = g.input(0), rv = g.input(1);
  int pos = g.binary(TOCL_IR_GE, x, g.scalar(0));
  g.output(0, g.ternary(TOCL_IR_WHERE, pos, x, g.binary(TOCL_IR_MUL, x, rv)));
  g.output(1, g.ternary(TOCL_IR_WHERE, pos, g.scalar(1), rv));
  g.run();
  return out;
}
at::Tensor rrelu_with_noise(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                            const c10::Scalar& upper, bool training, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(self);
  return rrelu_with_noise_out(self, noise, lower, upper, training, gen, out);
}
at::Tensor& rrelu_with_noise_(at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower, const c10::Scalar& upper,
                              bool training, std::optional<at::Generator> gen) {
  return rrelu_with_noise_out(self, noise, lower, upper, training, gen, self);
}

}  // namespace

// Backward ops: NAME (functional) and NAME.grad_input (out) of Forms<NAME>.
#define TOCL_BW_ROW(m, name)            \
  m.impl(#name, Forms<name>::fn); \
  TOCL_ITER_OUT(m, #name ".grad_input", Forms<name>::out)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("relu", Forms<relu>::fn);
  m.impl("relu_", Forms<relu>::inplace);
  TOCL_UNARY_ROW(m, gelu, Forms<gelu>);
  TOCL_UNARY_ROW(m, leaky_relu, Forms<leaky_relu>);
  TOCL_UNARY_ROW(m, elu, Forms<elu>);
  TOCL_UNARY_ROW(m, hardtanh, Forms<hardtanh>);
  TOCL_UNARY_ROW(m, hardsigmoid, Forms<composed<f_hsig>>);
  TOCL_UNARY_ROW(m, hardswish, Forms<composed<f_hswish>>);
  m.impl("softplus", Forms<softplus>::fn);
  TOCL_ITER_OUT(m, "softplus.out", Forms<softplus>::out);
  m.impl("softshrink", Shrink<TOCL_IR_SOFTSHRINK>::F::fn);
  TOCL_ITER_OUT(m, "softshrink.out", Shrink<TOCL_IR_SOFTSHRINK>::F::out);
  m.impl("hardshrink", Shrink<TOCL_IR_HARDSHRINK>::F::fn);
  TOCL_ITER_OUT(m, "hardshrink.out", Shrink<TOCL_IR_HARDSHRINK>::F::out);
  m.impl("softshrink_backward", Shrink<TOCL_IR_SOFTSHRINK>::B::fn);
  TOCL_ITER_OUT(m, "softshrink_backward.grad_input", Shrink<TOCL_IR_SOFTSHRINK>::B::out);
  m.impl("hardshrink_backward", Shrink<TOCL_IR_HARDSHRINK>::B::fn);
  TOCL_ITER_OUT(m, "hardshrink_backward.grad_input", Shrink<TOCL_IR_HARDSHRINK>::B::out);
  TOCL_UNARY_ROW(m, threshold, Forms<threshold>);
  TOCL_BW_ROW(m, threshold_backward);
  m.impl("glu", glu);
  m.impl("glu.out", glu_out);
  m.impl("glu_backward", glu_backward);
  m.impl("glu_backward.grad_input", glu_backward_out);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", log_sigmoid_forward_out);
  TOCL_BW_ROW(m, log_sigmoid_backward);
  TOCL_BW_ROW(m, tanh_backward);
  TOCL_BW_ROW(m, sigmoid_backward);
  // The functional form too: without it the CompositeImplicitAutograd
  // decomposition runs, rounding to float16/bfloat16 between its steps.
  TOCL_BW_ROW(m, silu_backward);
  TOCL_BW_ROW(m, hardsigmoid_backward);
  m.impl("hardswish_backward", Forms<hardswish_backward>::fn);
  TOCL_BW_ROW(m, gelu_backward);
  TOCL_BW_ROW(m, elu_backward);
  TOCL_BW_ROW(m, hardtanh_backward);
  TOCL_BW_ROW(m, softplus_backward);
  TOCL_BW_ROW(m, leaky_relu_backward);
  TOCL_BW_ROW(m, logit_backward);
  m.impl("_prelu_kernel", prelu_kernel);
  m.impl("_prelu_kernel_backward", prelu_kernel_backward);
  m.impl("rrelu_with_noise", rrelu_with_noise);
  m.impl("rrelu_with_noise_", rrelu_with_noise_);
  m.impl("rrelu_with_noise.out", rrelu_with_noise_out);
}

}  // namespace torch_ocl
