// ocl_complex_ops.cpp - complex arithmetic on the ocl device.
//
// A complex value is a pair in the IR: every complex operand of a
// TensorIterator is loaded as two strided real operands (its real and
// imaginary parts, complex_part's layout), the formula is written over
// pairs of IR nodes (CxGraph below), and a complex output is stored as two
// real outputs of the same kernel. So the elementwise engine, its renderer,
// program cache and fused eager serve complex ops unchanged: one kernel per
// op, no temporaries. Formulas follow c10::complex (division by Smith's
// scaling, as c10::complex::operator/).
//
// Ops whose ocl kernel is real-only reach these kernels through the complex
// registry (ocl_complex_route.h): a routed call with a complex argument runs
// the kernel registered here under its name. Ops with no real ocl kernel
// (complex, polar, conj_physical) are registered directly.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <vector>

#include "ocl_alpha_iter.h"
#include "ocl_common.h"
#include "ocl_complex_route.h"
#include "ocl_forms.h"

namespace torch_ocl {
namespace {

// A complex value as two IR nodes; a real operand's imaginary part is the
// constant 0.
struct Z {
  int re, im;
};

class CxGraph {
 public:
  // `value`: the complex (or real) dtype the op computes in; its real
  // dtype's compute type is the kernel's (float for complex32).
  CxGraph(at::TensorIteratorBase& iter, c10::ScalarType value) : iter_(iter) {
    tocl_ir_init(&g_);
    compute_ = tocl_dtype_compute(to_tocl_dtype(c10::toRealValueType(value)));
  }

  Z in(int k) {
    int arg = iter_.noutputs() + k;
    if (iter_.is_cpu_scalar(arg)) {
      c10::complex<double> z = iter_.tensor(arg).item().toComplexDouble();
      return {constant(z.real()), constant(z.imag())};
    }
    if (c10::isComplexType(iter_.dtype(arg)))
      return {load(arg, 0), load(arg, 1)};
    return {load(arg, -1), zero()};
  }
  int constant(double v) {
    tocl_scalar s{};
    s.is_float = 1;
    s.f = v;
    scalars_.push_back(s);
    return check(tocl_ir_scalar(&g_, compute_));
  }
  int zero() {
    if (zero_ < 0)
      zero_ = constant(0.0);
    return zero_;
  }
  int un(tocl_ir_op op, int a) { return check(tocl_ir_unary(&g_, op, compute_, a)); }
  int bin(tocl_ir_op op, int a, int b) { return check(tocl_ir_binary(&g_, op, compute_, a, b)); }
  // A comparison (or logical op) of two nodes, in the operands' own dtype
  // (the IR casts a comparison's operands to the dtype it is given).
  int pred(tocl_ir_op op, int a, int b) { return check(tocl_ir_binary(&g_, op, g_.nodes[a].dtype, a, b)); }
  int upred(tocl_ir_op op, int a) { return check(tocl_ir_unary(&g_, op, g_.nodes[a].dtype, a)); }
  int where(int c, int a, int b) { return check(tocl_ir_ternary(&g_, TOCL_IR_WHERE, compute_, c, a, b)); }

  Z add(Z a, Z b) { return {bin(TOCL_IR_ADD, a.re, b.re), bin(TOCL_IR_ADD, a.im, b.im)}; }
  Z sub(Z a, Z b) { return {bin(TOCL_IR_SUB, a.re, b.re), bin(TOCL_IR_SUB, a.im, b.im)}; }
  Z mul(Z a, Z b) {
    return {bin(TOCL_IR_SUB, bin(TOCL_IR_MUL, a.re, b.re), bin(TOCL_IR_MUL, a.im, b.im)),
            bin(TOCL_IR_ADD, bin(TOCL_IR_MUL, a.re, b.im), bin(TOCL_IR_MUL, a.im, b.re))};
  }
  // c10::complex::operator/: scale by the larger part of the divisor.
  Z div(Z x, Z y) {
    int a = x.re, b = x.im, c = y.re, d = y.im;
    int ac = un(TOCL_IR_ABS, c), ad = un(TOCL_IR_ABS, d);
    int one = constant(1.0);
    // |c| >= |d|: rat = d / c, scl = 1 / (c + d rat)
    int r1 = bin(TOCL_IR_DIV, d, c);
    int s1 = bin(TOCL_IR_DIV, one, bin(TOCL_IR_ADD, c, bin(TOCL_IR_MUL, d, r1)));
    int re1 = bin(TOCL_IR_MUL, bin(TOCL_IR_ADD, a, bin(TOCL_IR_MUL, b, r1)), s1);
    int im1 = bin(TOCL_IR_MUL, bin(TOCL_IR_SUB, b, bin(TOCL_IR_MUL, a, r1)), s1);
    // otherwise: rat = c / d, scl = 1 / (d + c rat)
    int r2 = bin(TOCL_IR_DIV, c, d);
    int s2 = bin(TOCL_IR_DIV, one, bin(TOCL_IR_ADD, d, bin(TOCL_IR_MUL, c, r2)));
    int re2 = bin(TOCL_IR_MUL, bin(TOCL_IR_ADD, bin(TOCL_IR_MUL, a, r2), b), s2);
    int im2 = bin(TOCL_IR_MUL, bin(TOCL_IR_SUB, bin(TOCL_IR_MUL, b, r2), a), s2);
    // a zero divisor: a / |c| and b / |d|, inf or NaN as c10::complex gives
    int z = pred(TOCL_IR_LOGICAL_AND, pred(TOCL_IR_EQ, ac, zero()), pred(TOCL_IR_EQ, ad, zero()));
    int ge = pred(TOCL_IR_GE, ac, ad);
    return {where(z, bin(TOCL_IR_DIV, a, ac), where(ge, re1, re2)),
            where(z, bin(TOCL_IR_DIV, b, ad), where(ge, im1, im2))};
  }

  // Output k: both parts of a complex output, the real part of a real one.
  void out(int k, Z z) {
    if (c10::isComplexType(iter_.dtype(k))) {
      outs_.push_back(part(k, 0));
      nodes_.push_back(z.re);
      outs_.push_back(part(k, 1));
      nodes_.push_back(z.im);
    } else {
      outs_.push_back(part(k, -1));
      nodes_.push_back(z.re);
    }
  }

  void run() {
    if (iter_.numel() == 0)
      return;
    for (size_t i = 0; i < outs_.size(); i++)
      check(tocl_ir_output(&g_, nodes_[i], outs_[i].dtype));
    int dev = iter_.device(0).index();
    TOCL_CHECK(tocl_ew_run(dev, tocl_stream_current(dev), &g_, outs_.data(), inputs_.data(), scalars_.data()));
  }

 private:
  int check(int node) const {
    TORCH_CHECK(node >= 0 && !g_.overflow, "torch_ocl: internal error: a complex elementwise graph could not be built");
    return node;
  }
  // Operand arg of the iterator as a real strided tensor: part 0 / 1 of a
  // complex operand, or (part -1) a real operand itself.
  tocl_tensor part(int arg, int p) const {
    c10::ScalarType st = iter_.dtype(arg);
    c10::ScalarType el = p >= 0 ? c10::toRealValueType(st) : st;
    int64_t es = static_cast<int64_t>(c10::elementSize(el));
    tocl_tensor t{};
    t.data = reinterpret_cast<tocl_addr>(iter_.data_ptr(arg)) + static_cast<tocl_addr>(p > 0 ? es : 0);
    t.dtype = to_tocl_dtype(el);
    t.ndim = static_cast<int>(iter_.ndim());
    TORCH_CHECK(t.ndim <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: too many dimensions: ", t.ndim);
    for (int i = 0; i < t.ndim; i++) {
      t.sizes[i] = iter_.shape()[i];
      t.strides[i] = iter_.strides(arg)[i] / es;
    }
    return t;
  }
  int load(int arg, int p) {
    inputs_.push_back(part(arg, p));
    return check(tocl_ir_cast(&g_, check(tocl_ir_input(&g_, inputs_.back().dtype)), compute_));
  }

  at::TensorIteratorBase& iter_;
  tocl_ir_graph g_;
  tocl_dtype compute_;
  int zero_ = -1;
  std::vector<tocl_tensor> inputs_, outs_;
  std::vector<tocl_scalar> scalars_;
  std::vector<int> nodes_;
};

enum class Op { Add, Sub, Mul, Div };

void run_binary(at::TensorIteratorBase& it, Op op, const std::optional<c10::Scalar>& alpha) {
  CxGraph g(it, it.common_dtype());
  Z a = g.in(0), b = g.in(1);
  if (alpha && !alpha->equal(1)) {
    c10::complex<double> s = alpha->toComplexDouble();
    b = g.mul(Z{g.constant(s.real()), g.constant(s.imag())}, b);
  }
  Z r = op == Op::Add ? g.add(a, b) : op == Op::Sub ? g.sub(a, b) : op == Op::Mul ? g.mul(a, b) : g.div(a, b);
  g.out(0, r);
  g.run();
}

template <Op OP>
at::Tensor alpha_binary(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b,
                        const c10::Scalar& alpha) {
  at::Tensor out = out_arg;
  auto iter = alpha_binary_iter(out, a, b, alpha, OP == Op::Sub);
  run_binary(iter, OP, alpha);
  return iter.output();
}

template <Op OP>
at::Tensor simple_binary(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = out_arg;
  auto iter = OP == Op::Div ? at::TensorIterator::binary_float_op(out, a, b) : at::TensorIterator::binary_op(out, a, b);
  run_binary(iter, OP, std::nullopt);
  return iter.output();
}

at::Tensor neg(const at::Tensor& out_arg, const at::Tensor& a) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::unary_op(out, a);
  CxGraph g(iter, iter.common_dtype());
  Z x = g.in(0);
  g.out(0, Z{g.un(TOCL_IR_NEG, x.re), g.un(TOCL_IR_NEG, x.im)});
  g.run();
  return iter.output();
}

// A real result of a complex input (abs, angle): out has the input's real
// dtype (or a complex one, whose imaginary part is then 0).
template <class F>
at::Tensor& to_real(const at::Tensor& self, at::Tensor& out, F&& f) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(self)
                  .check_all_same_dtype(false)
                  .resize_outputs(true)
                  .build();
  CxGraph g(iter, self.scalar_type());
  Z x = g.in(0);
  g.out(0, Z{f(g, x), g.zero()});
  g.run();
  return out;
}

at::Tensor& abs_out(const at::Tensor& self, at::Tensor& out) {
  return to_real(self, out, [](CxGraph& g, Z x) { return g.bin(TOCL_IR_HYPOT, x.re, x.im); });
}
at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out) {
  return to_real(self, out, [](CxGraph& g, Z x) { return g.bin(TOCL_IR_ATAN2, x.im, x.re); });
}
at::Tensor angle(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return angle_out(self, out);
}

at::Tensor& conj_out(const at::Tensor& self, at::Tensor& out) {
  if (!self.is_complex()) {
    // The CPU's unary iterator: one dtype for input and out.
    TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Found dtype ", out.scalar_type(), " but expected ",
                self.scalar_type());
    resize_out(out, self.sizes());
    return out.copy_(self);
  }
  auto iter = at::TensorIterator::unary_op(out, self);
  CxGraph g(iter, iter.common_dtype());
  Z x = g.in(0);
  g.out(0, Z{x.re, g.un(TOCL_IR_NEG, x.im)});
  g.run();
  return out;
}

// PyTorch's conj_physical_ calls its DispatchStub directly.
at::Tensor& conj_physical_inplace(at::Tensor& self) {
  if (self.is_complex())
    conj_out(self, self);
  return self;
}

// complex() and polar(): two real tensors of one floating dtype in, the
// matching complex dtype out, with the CPU's checks and messages.
void check_parts(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  auto ok = [](c10::ScalarType t) { return t == at::kFloat || t == at::kDouble || t == at::kHalf; };
  TORCH_CHECK(ok(a.scalar_type()) && ok(b.scalar_type()), "Expected both inputs to be Half, Float or Double tensors but got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "Expected object of scalar type ", a.scalar_type(),
              " but got scalar type ", b.scalar_type(), " for second argument");
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(a.scalar_type()), "Expected object of scalar type ",
              c10::toComplexType(a.scalar_type()), " but got scalar type ", out.scalar_type(),
              " for argument 'out'");
}

template <class F>
at::Tensor& from_parts(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, F&& f) {
  check_parts(out, a, b);
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(a)
                  .add_const_input(b)
                  .check_all_same_dtype(false)
                  .build();
  CxGraph g(iter, out.scalar_type());
  g.out(0, f(g, g.in(0).re, g.in(1).re));
  g.run();
  return out;
}

at::Tensor& complex_out(const at::Tensor& re, const at::Tensor& im, at::Tensor& out) {
  return from_parts(re, im, out, [](CxGraph&, int r, int i) { return Z{r, i}; });
}
at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  return from_parts(abs, angle, out, [](CxGraph& g, int r, int t) {
    return Z{g.bin(TOCL_IR_MUL, r, g.un(TOCL_IR_COS, t)), g.bin(TOCL_IR_MUL, r, g.un(TOCL_IR_SIN, t))};
  });
}

// ---- transcendental and other unary ops over pairs -----------------------
// Formulas over real IR ops, written to agree with the CPU's std::complex
// (glibc) results on ordinary arguments: hypot for |z|, Kahan's forms for
// tanh and atanh, log1p/expm1 where cancellation would cost digits.

struct Cx {
  CxGraph& g;
  int k(double v) { return g.constant(v); }
  int add(int a, int b) { return g.bin(TOCL_IR_ADD, a, b); }
  int sub(int a, int b) { return g.bin(TOCL_IR_SUB, a, b); }
  int mul(int a, int b) { return g.bin(TOCL_IR_MUL, a, b); }
  int div(int a, int b) { return g.bin(TOCL_IR_DIV, a, b); }
  int un(tocl_ir_op op, int a) { return g.un(op, a); }
  int where(int c, int a, int b) { return g.where(c, a, b); }

  Z i_times(Z z) { return {un(TOCL_IR_NEG, z.im), z.re}; }      // i z
  Z neg_i_times(Z z) { return {z.im, un(TOCL_IR_NEG, z.re)}; }  // -i z
  int abs(Z z) { return g.bin(TOCL_IR_HYPOT, z.re, z.im); }
  Z scale(Z z, int s) { return {mul(z.re, s), mul(z.im, s)}; }

  Z exp(Z z) {
    int e = un(TOCL_IR_EXP, z.re);
    return {mul(e, un(TOCL_IR_COS, z.im)), mul(e, un(TOCL_IR_SIN, z.im))};
  }
  Z log(Z z) { return {un(TOCL_IR_LOG, abs(z)), g.bin(TOCL_IR_ATAN2, z.im, z.re)}; }
  // log(1 + z): re = log1p(x (2 + x) + y^2) / 2, im = atan2(y, 1 + x)
  Z log1p(Z z) {
    int t = add(mul(z.re, add(k(2.0), z.re)), mul(z.im, z.im));
    return {mul(k(0.5), un(TOCL_IR_LOG1P, t)), g.bin(TOCL_IR_ATAN2, z.im, add(k(1.0), z.re))};
  }
  // exp(z) - 1: re = expm1(x) cos y - 2 sin^2(y / 2), im = exp(x) sin y
  Z expm1(Z z) {
    int s = un(TOCL_IR_SIN, mul(k(0.5), z.im));
    return {sub(mul(un(TOCL_IR_EXPM1, z.re), un(TOCL_IR_COS, z.im)), mul(k(2.0), mul(s, s))),
            mul(un(TOCL_IR_EXP, z.re), un(TOCL_IR_SIN, z.im))};
  }
  // Principal root: t = sqrt(|z| / 2 + |x| / 2); x >= 0: (t, y / 2t), else
  // (|y| / 2t, copysign(t, y)); z = 0 gives (0, y).
  Z sqrt(Z z) {
    int ax = un(TOCL_IR_ABS, z.re);
    int t = un(TOCL_IR_SQRT, add(mul(k(0.5), abs(z)), mul(k(0.5), ax)));
    int q = div(z.im, mul(k(2.0), t));
    int zero_t = g.pred(TOCL_IR_EQ, t, g.zero());
    q = where(zero_t, g.zero(), q);
    int pos = g.pred(TOCL_IR_GE, z.re, g.zero());
    int re = where(pos, t, un(TOCL_IR_ABS, q));
    int im = where(pos, q, g.bin(TOCL_IR_COPYSIGN, t, z.im));
    return {re, where(zero_t, z.im, im)};
  }
  Z sinh(Z z) {
    return {mul(un(TOCL_IR_SINH, z.re), un(TOCL_IR_COS, z.im)), mul(un(TOCL_IR_COSH, z.re), un(TOCL_IR_SIN, z.im))};
  }
  Z cosh(Z z) {
    return {mul(un(TOCL_IR_COSH, z.re), un(TOCL_IR_COS, z.im)), mul(un(TOCL_IR_SINH, z.re), un(TOCL_IR_SIN, z.im))};
  }
  // Kahan: t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2),
  // tanh z = (b r s + i t) / (1 + b s^2); |x| > 22: (sign x, 0).
  Z tanh(Z z) {
    int t = un(TOCL_IR_TAN, z.im);
    int b = add(k(1.0), mul(t, t));
    int s = un(TOCL_IR_SINH, z.re);
    int r = un(TOCL_IR_SQRT, add(k(1.0), mul(s, s)));
    int d = add(k(1.0), mul(b, mul(s, s)));
    int big = g.pred(TOCL_IR_GT, un(TOCL_IR_ABS, z.re), k(22.0));
    return {where(big, g.bin(TOCL_IR_COPYSIGN, k(1.0), z.re), div(mul(b, mul(r, s)), d)),
            where(big, g.zero(), div(t, d))};
  }
  // atanh z: re = log1p(4x / ((1 - x)^2 + y^2)) / 4,
  //          im = atan2(2y, (1 - x)(1 + x) - y^2) / 2
  Z atanh(Z z) {
    int omx = sub(k(1.0), z.re);
    int y2 = mul(z.im, z.im);
    int re = mul(k(0.25), un(TOCL_IR_LOG1P, div(mul(k(4.0), z.re), add(mul(omx, omx), y2))));
    int im = mul(k(0.5), g.bin(TOCL_IR_ATAN2, mul(k(2.0), z.im), sub(mul(omx, add(k(1.0), z.re)), y2)));
    return {re, im};
  }
  // asinh z = log(z + sqrt(z^2 + 1)), on the half plane x >= 0 (odd).
  Z asinh(Z z) {
    int neg = g.pred(TOCL_IR_LT, z.re, g.zero());
    Z w{where(neg, un(TOCL_IR_NEG, z.re), z.re), where(neg, un(TOCL_IR_NEG, z.im), z.im)};
    Z w2 = g.mul(w, w);
    Z r = log(g.add(w, sqrt({add(w2.re, k(1.0)), w2.im})));
    return {where(neg, un(TOCL_IR_NEG, r.re), r.re), where(neg, un(TOCL_IR_NEG, r.im), r.im)};
  }
  // acosh z = log(z + sqrt(z + 1) sqrt(z - 1))
  Z acosh(Z z) {
    Z p = sqrt({add(z.re, k(1.0)), z.im}), m = sqrt({sub(z.re, k(1.0)), z.im});
    return log(g.add(z, g.mul(p, m)));
  }
  Z reciprocal(Z z) { return g.div({k(1.0), g.zero()}, z); }
};

enum class Un {
  Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tan, Sinh, Cosh, Tanh,
  Asin, Acos, Atan, Asinh, Acosh, Atanh, Sigmoid, Sgn, Silu, Sinc
};

template <Un OP>
at::Tensor cx_unary(const at::Tensor& out_arg, const at::Tensor& a) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::unary_op(out, a);
  CxGraph g(iter, iter.common_dtype());
  Cx c{g};
  Z z = g.in(0), r;
  constexpr double kLn2 = 0.693147180559945309417, kLn10 = 2.30258509299404568402, kPi = 3.14159265358979323846;
  switch (OP) {
    case Un::Exp: r = c.exp(z); break;
    case Un::Exp2: r = c.exp(c.scale(z, c.k(kLn2))); break;
    case Un::Expm1: r = c.expm1(z); break;
    case Un::Log: r = c.log(z); break;
    case Un::Log2: r = c.scale(c.log(z), c.k(1.0 / kLn2)); break;
    case Un::Log10: r = c.scale(c.log(z), c.k(1.0 / kLn10)); break;
    case Un::Log1p: r = c.log1p(z); break;
    case Un::Sqrt: r = c.sqrt(z); break;
    case Un::Rsqrt: r = c.reciprocal(c.sqrt(z)); break;
    case Un::Reciprocal: r = c.reciprocal(z); break;
    case Un::Sin: r = c.neg_i_times(c.sinh(c.i_times(z))); break;   // sin z = -i sinh(iz)
    case Un::Cos: r = c.cosh(c.i_times(z)); break;                   // cos z = cosh(iz)
    case Un::Tan: r = c.neg_i_times(c.tanh(c.i_times(z))); break;   // tan z = -i tanh(iz)
    case Un::Sinh: r = c.sinh(z); break;
    case Un::Cosh: r = c.cosh(z); break;
    case Un::Tanh: r = c.tanh(z); break;
    case Un::Asin: r = c.neg_i_times(c.asinh(c.i_times(z))); break;  // asin z = -i asinh(iz)
    case Un::Acos: {  // acos z = pi/2 - asin z
      Z s = c.neg_i_times(c.asinh(c.i_times(z)));
      r = {c.sub(c.k(kPi / 2), s.re), c.un(TOCL_IR_NEG, s.im)};
      break;
    }
    case Un::Atan: r = c.neg_i_times(c.atanh(c.i_times(z))); break;  // atan z = -i atanh(iz)
    case Un::Asinh: r = c.asinh(z); break;
    case Un::Acosh: r = c.acosh(z); break;
    case Un::Atanh: r = c.atanh(z); break;
    case Un::Sigmoid: {  // 1 / (1 + exp(-z))
      Z e = c.exp({c.un(TOCL_IR_NEG, z.re), c.un(TOCL_IR_NEG, z.im)});
      r = c.reciprocal({c.add(c.k(1.0), e.re), e.im});
      break;
    }
    case Un::Silu: {  // z / (1 + exp(-z))
      Z e = c.exp({c.un(TOCL_IR_NEG, z.re), c.un(TOCL_IR_NEG, z.im)});
      r = g.div(z, {c.add(c.k(1.0), e.re), e.im});
      break;
    }
    case Un::Sgn: {  // z / |z|, 0 at 0
      int m = c.abs(z);
      int zero = g.pred(TOCL_IR_EQ, m, g.zero());
      r = {c.where(zero, g.zero(), c.div(z.re, m)), c.where(zero, g.zero(), c.div(z.im, m))};
      break;
    }
    case Un::Sinc: {  // sin(pi z) / (pi z), 1 at 0
      Z w = c.scale(z, c.k(kPi));
      Z s = c.neg_i_times(c.sinh(c.i_times(w)));
      Z q = g.div(s, w);
      int zero = g.pred(TOCL_IR_LOGICAL_AND, g.pred(TOCL_IR_EQ, z.re, g.zero()), g.pred(TOCL_IR_EQ, z.im, g.zero()));
      r = {c.where(zero, c.k(1.0), q.re), c.where(zero, g.zero(), q.im)};
      break;
    }
  }
  g.out(0, r);
  g.run();
  return iter.output();
}

// pow: the CPU's special exponents (Pow.cpp, PowKernel.cpp), else
// exp(w log z), with 0^w = 0.
Z cx_pow_general(CxGraph& g, Z z, Z w) {
  Cx c{g};
  Z r = c.exp(g.mul(w, c.log(z)));
  int zero = g.pred(TOCL_IR_LOGICAL_AND, g.pred(TOCL_IR_EQ, z.re, g.zero()), g.pred(TOCL_IR_EQ, z.im, g.zero()));
  return {c.where(zero, g.zero(), r.re), c.where(zero, g.zero(), r.im)};
}

at::Tensor cx_pow_tt(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::binary_op(out, a, b);
  CxGraph g(iter, iter.common_dtype());
  g.out(0, cx_pow_general(g, g.in(0), g.in(1)));
  g.run();
  return iter.output();
}

at::Tensor cx_pow_ts(const at::Tensor& out_arg, const at::Tensor& a, const c10::Scalar& e) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::unary_op(out, a);
  CxGraph g(iter, iter.common_dtype());
  Cx c{g};
  Z z = g.in(0), r;
  if (e.equal(0.0))
    r = {c.k(1.0), g.zero()};
  else if (e.equal(1.0))
    r = z;
  else if (e.equal(0.5))
    r = c.sqrt(z);
  else if (e.equal(2.0))
    r = g.mul(z, z);
  else if (e.equal(3.0))
    r = g.mul(g.mul(z, z), z);
  else if (e.equal(-0.5))
    r = c.reciprocal(c.sqrt(z));
  else if (e.equal(-1.0))
    r = c.reciprocal(z);
  else if (e.equal(-2.0))
    r = c.reciprocal(g.mul(z, z));
  else {
    c10::complex<double> w = e.toComplexDouble();
    r = cx_pow_general(g, z, {c.k(w.real()), c.k(w.imag())});
  }
  g.out(0, r);
  g.run();
  return iter.output();
}
// A Python number as a TensorIterator operand: a CPU wrapped number, which
// takes part in type promotion as a Python scalar does.
at::Tensor wrapped(const c10::Scalar& s) {
  at::Tensor t = at::scalar_tensor(s, at::TensorOptions().dtype(s.isComplex() ? at::kComplexDouble : at::kDouble));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}
at::Tensor cx_pow_st(const c10::Scalar& base, const at::Tensor& e) { return Forms<cx_pow_tt>::fn(wrapped(base), e); }
at::Tensor& cx_pow_st_out(const c10::Scalar& base, const at::Tensor& e, at::Tensor& out) {
  return Forms<cx_pow_tt>::out(wrapped(base), e, out);
}

// lerp as the CPU computes it: |w| < 0.5 ? a + w (b - a) : b - (b - a)(1 - w)
Z cx_lerp(CxGraph& g, Z a, Z b, Z w) {
  Cx c{g};
  Z d = g.sub(b, a);
  Z lo = g.add(a, g.mul(w, d));
  Z hi = g.sub(b, g.mul(d, {c.sub(c.k(1.0), w.re), c.un(TOCL_IR_NEG, w.im)}));
  int small = g.pred(TOCL_IR_LT, c.abs(w), c.k(0.5));
  return {c.where(small, lo.re, hi.re), c.where(small, lo.im, hi.im)};
}
at::Tensor cx_lerp_s(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& w) {
  at::Tensor out = out_arg;
  TORCH_CHECK(a.dtype() == b.dtype(), "expected dtype ", a.dtype(), " for `end` but got dtype ", b.dtype());
  auto iter = at::TensorIterator::binary_op(out, a, b);
  CxGraph g(iter, iter.common_dtype());
  c10::complex<double> wz = w.toComplexDouble();
  g.out(0, cx_lerp(g, g.in(0), g.in(1), {g.constant(wz.real()), g.constant(wz.imag())}));
  g.run();
  return iter.output();
}
at::Tensor cx_lerp_t(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  at::Tensor out = out_arg;
  TORCH_CHECK(a.dtype() == b.dtype(), "expected dtype ", a.dtype(), " for `end` but got dtype ", b.dtype());
  TORCH_CHECK(a.dtype() == w.dtype(), "expected dtype ", a.dtype(), " for `weight` but got dtype ", w.dtype());
  auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(a).add_const_input(b).add_const_input(w).build();
  CxGraph g(iter, iter.common_dtype());
  g.out(0, cx_lerp(g, g.in(0), g.in(1), g.in(2)));
  g.run();
  return iter.output();
}

// addcmul / addcdiv: self + (value t1) * t2, self + (value t1) / t2
template <bool DIV>
at::Tensor cx_addc(const at::Tensor& out_arg, const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                   const c10::Scalar& value) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(self)
                  .add_const_input(t1)
                  .add_const_input(t2)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .enforce_safe_casting_to_output(true)
                  .build();
  CxGraph g(iter, iter.common_dtype());
  c10::complex<double> v = value.toComplexDouble();
  Z vt = g.mul({g.constant(v.real()), g.constant(v.imag())}, g.in(1));
  Z t = DIV ? g.div(vt, g.in(2)) : g.mul(vt, g.in(2));
  g.out(0, g.add(g.in(0), t));
  g.run();
  return iter.output();
}

// Comparisons and predicates: bool results of complex operands.
template <bool NE>
at::Tensor cx_eq_t(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::comparison_op(out, a, b);
  CxGraph g(iter, iter.common_dtype());
  Z x = g.in(0), y = g.in(1);
  // ne is !(a == b): a NaN part makes it true, as on the CPU
  int r = NE ? g.pred(TOCL_IR_LOGICAL_OR, g.pred(TOCL_IR_NE, x.re, y.re), g.pred(TOCL_IR_NE, x.im, y.im))
             : g.pred(TOCL_IR_LOGICAL_AND, g.pred(TOCL_IR_EQ, x.re, y.re), g.pred(TOCL_IR_EQ, x.im, y.im));
  g.out(0, Z{r, g.zero()});
  g.run();
  return iter.output();
}
template <bool NE>
at::Tensor cx_eq_s(const at::Tensor& out_arg, const at::Tensor& a, const c10::Scalar& b) {
  return cx_eq_t<NE>(out_arg, a, wrapped(b));
}

at::Tensor cx_isnan(const at::Tensor& self) {
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(at::kBool));
  auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(self).check_all_same_dtype(false).build();
  CxGraph g(iter, self.scalar_type());
  Z x = g.in(0);
  g.out(0, Z{g.pred(TOCL_IR_LOGICAL_OR, g.upred(TOCL_IR_ISNAN, x.re), g.upred(TOCL_IR_ISNAN, x.im)), g.zero()});
  g.run();
  return out;
}

// logical ops: a complex operand is true where re != 0 || im != 0.
int truth(CxGraph& g, Z z) {
  return g.pred(TOCL_IR_LOGICAL_OR, g.pred(TOCL_IR_NE, z.re, g.zero()), g.pred(TOCL_IR_NE, z.im, g.zero()));
}
template <tocl_ir_op OP>
at::Tensor& cx_logical_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(a)
                  .add_const_input(b)
                  .check_all_same_dtype(false)
                  .build();
  c10::ScalarType ct = c10::isComplexType(a.scalar_type()) ? a.scalar_type() : b.scalar_type();
  CxGraph g(iter, ct);
  g.out(0, Z{g.pred(OP, truth(g, g.in(0)), truth(g, g.in(1))), g.zero()});
  g.run();
  return out;
}
at::Tensor& cx_logical_not_out(const at::Tensor& a, at::Tensor& out) {
  auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(a).check_all_same_dtype(false).build();
  CxGraph g(iter, a.scalar_type());
  Z z = g.in(0);
  g.out(0, Z{g.pred(TOCL_IR_LOGICAL_AND, g.pred(TOCL_IR_EQ, z.re, g.zero()), g.pred(TOCL_IR_EQ, z.im, g.zero())),
             g.zero()});
  g.run();
  return out;
}

// logaddexp as the CPU's _log_add_exp_helper: with min/max by real part,
// log1p(exp(min - max)) + max; a NaN part of min gives NaN; equal infinite
// real parts give min (-inf) or log(exp(min) + exp(max)) (+inf).
Z cx_logaddexp_z(CxGraph& g, Z x, Z y) {
  Cx c{g};
  int xlt = g.pred(TOCL_IR_LT, x.re, y.re);
  Z mn{c.where(xlt, x.re, y.re), c.where(xlt, x.im, y.im)}, mx{c.where(xlt, y.re, x.re), c.where(xlt, y.im, x.im)};
  Z r = g.add(c.log1p(c.exp(g.sub(mn, mx))), mx);
  Z inf = c.log(g.add(c.exp(mn), c.exp(mx)));
  int both_inf = g.pred(TOCL_IR_LOGICAL_AND, g.upred(TOCL_IR_ISINF, mn.re), g.pred(TOCL_IR_EQ, mn.re, mx.re));
  int nan = g.pred(TOCL_IR_LOGICAL_OR, g.upred(TOCL_IR_ISNAN, mn.re), g.upred(TOCL_IR_ISNAN, mn.im));
  int qnan = c.k(std::numeric_limits<double>::quiet_NaN());
  int neg = g.pred(TOCL_IR_LT, mn.re, g.zero());  // both -inf: min itself
  inf = {c.where(neg, mn.re, inf.re), c.where(neg, mn.im, inf.im)};
  return {c.where(nan, qnan, c.where(both_inf, inf.re, r.re)), c.where(nan, qnan, c.where(both_inf, inf.im, r.im))};
}
at::Tensor cx_logaddexp(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::binary_op(out, a, b);
  CxGraph g(iter, iter.common_dtype());
  g.out(0, cx_logaddexp_z(g, g.in(0), g.in(1)));
  g.run();
  return iter.output();
}

at::Tensor cx_rsub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return at::sub(other, self, alpha);
}

template <auto F>
void reg(const char* name) {
  register_complex_kernel(name, c10::KernelFunction::makeFromUnboxedFunction(c10::CompileTimeFunctionPointer<
                                                                             std::remove_pointer_t<decltype(F)>, F>()));
}

// The complex kernels of routed ops, by aten overload name.
[[maybe_unused]] const bool registered = [] {
  reg<Forms<alpha_binary<Op::Add>>::fn>("add.Tensor");
  reg<Forms<alpha_binary<Op::Add>>::inplace>("add_.Tensor");
  reg<Forms<alpha_binary<Op::Add>>::out>("add.out");
  reg<Forms<alpha_binary<Op::Sub>>::fn>("sub.Tensor");
  reg<Forms<alpha_binary<Op::Sub>>::inplace>("sub_.Tensor");
  reg<Forms<alpha_binary<Op::Sub>>::out>("sub.out");
  reg<Forms<simple_binary<Op::Mul>>::fn>("mul.Tensor");
  reg<Forms<simple_binary<Op::Mul>>::inplace>("mul_.Tensor");
  reg<Forms<simple_binary<Op::Mul>>::out>("mul.out");
  reg<Forms<simple_binary<Op::Div>>::fn>("div.Tensor");
  reg<Forms<simple_binary<Op::Div>>::inplace>("div_.Tensor");
  reg<Forms<simple_binary<Op::Div>>::out>("div.out");
  reg<Forms<neg>::fn>("neg");
  reg<Forms<neg>::inplace>("neg_");
  reg<Forms<neg>::out>("neg.out");
  reg<abs_out>("abs.out");
  reg<angle>("angle");
  reg<angle_out>("angle.out");
  reg<Forms<cx_unary<Un::Exp>>::fn>("exp");
  reg<Forms<cx_unary<Un::Exp>>::inplace>("exp_");
  reg<Forms<cx_unary<Un::Exp>>::out>("exp.out");
  reg<Forms<cx_unary<Un::Exp2>>::fn>("exp2");
  reg<Forms<cx_unary<Un::Exp2>>::inplace>("exp2_");
  reg<Forms<cx_unary<Un::Exp2>>::out>("exp2.out");
  reg<Forms<cx_unary<Un::Expm1>>::fn>("expm1");
  reg<Forms<cx_unary<Un::Expm1>>::inplace>("expm1_");
  reg<Forms<cx_unary<Un::Expm1>>::out>("expm1.out");
  reg<Forms<cx_unary<Un::Log>>::fn>("log");
  reg<Forms<cx_unary<Un::Log>>::inplace>("log_");
  reg<Forms<cx_unary<Un::Log>>::out>("log.out");
  reg<Forms<cx_unary<Un::Log2>>::fn>("log2");
  reg<Forms<cx_unary<Un::Log2>>::inplace>("log2_");
  reg<Forms<cx_unary<Un::Log2>>::out>("log2.out");
  reg<Forms<cx_unary<Un::Log10>>::fn>("log10");
  reg<Forms<cx_unary<Un::Log10>>::inplace>("log10_");
  reg<Forms<cx_unary<Un::Log10>>::out>("log10.out");
  reg<Forms<cx_unary<Un::Log1p>>::fn>("log1p");
  reg<Forms<cx_unary<Un::Log1p>>::inplace>("log1p_");
  reg<Forms<cx_unary<Un::Log1p>>::out>("log1p.out");
  reg<Forms<cx_unary<Un::Sqrt>>::fn>("sqrt");
  reg<Forms<cx_unary<Un::Sqrt>>::inplace>("sqrt_");
  reg<Forms<cx_unary<Un::Sqrt>>::out>("sqrt.out");
  reg<Forms<cx_unary<Un::Rsqrt>>::fn>("rsqrt");
  reg<Forms<cx_unary<Un::Rsqrt>>::inplace>("rsqrt_");
  reg<Forms<cx_unary<Un::Rsqrt>>::out>("rsqrt.out");
  reg<Forms<cx_unary<Un::Reciprocal>>::fn>("reciprocal");
  reg<Forms<cx_unary<Un::Reciprocal>>::inplace>("reciprocal_");
  reg<Forms<cx_unary<Un::Reciprocal>>::out>("reciprocal.out");
  reg<Forms<cx_unary<Un::Sin>>::fn>("sin");
  reg<Forms<cx_unary<Un::Sin>>::inplace>("sin_");
  reg<Forms<cx_unary<Un::Sin>>::out>("sin.out");
  reg<Forms<cx_unary<Un::Cos>>::fn>("cos");
  reg<Forms<cx_unary<Un::Cos>>::inplace>("cos_");
  reg<Forms<cx_unary<Un::Cos>>::out>("cos.out");
  reg<Forms<cx_unary<Un::Tan>>::fn>("tan");
  reg<Forms<cx_unary<Un::Tan>>::inplace>("tan_");
  reg<Forms<cx_unary<Un::Tan>>::out>("tan.out");
  reg<Forms<cx_unary<Un::Sinh>>::fn>("sinh");
  reg<Forms<cx_unary<Un::Sinh>>::inplace>("sinh_");
  reg<Forms<cx_unary<Un::Sinh>>::out>("sinh.out");
  reg<Forms<cx_unary<Un::Cosh>>::fn>("cosh");
  reg<Forms<cx_unary<Un::Cosh>>::inplace>("cosh_");
  reg<Forms<cx_unary<Un::Cosh>>::out>("cosh.out");
  reg<Forms<cx_unary<Un::Tanh>>::fn>("tanh");
  reg<Forms<cx_unary<Un::Tanh>>::inplace>("tanh_");
  reg<Forms<cx_unary<Un::Tanh>>::out>("tanh.out");
  reg<Forms<cx_unary<Un::Asin>>::fn>("asin");
  reg<Forms<cx_unary<Un::Asin>>::inplace>("asin_");
  reg<Forms<cx_unary<Un::Asin>>::out>("asin.out");
  reg<Forms<cx_unary<Un::Acos>>::fn>("acos");
  reg<Forms<cx_unary<Un::Acos>>::inplace>("acos_");
  reg<Forms<cx_unary<Un::Acos>>::out>("acos.out");
  reg<Forms<cx_unary<Un::Atan>>::fn>("atan");
  reg<Forms<cx_unary<Un::Atan>>::inplace>("atan_");
  reg<Forms<cx_unary<Un::Atan>>::out>("atan.out");
  reg<Forms<cx_unary<Un::Asinh>>::fn>("asinh");
  reg<Forms<cx_unary<Un::Asinh>>::inplace>("asinh_");
  reg<Forms<cx_unary<Un::Asinh>>::out>("asinh.out");
  reg<Forms<cx_unary<Un::Acosh>>::fn>("acosh");
  reg<Forms<cx_unary<Un::Acosh>>::inplace>("acosh_");
  reg<Forms<cx_unary<Un::Acosh>>::out>("acosh.out");
  reg<Forms<cx_unary<Un::Atanh>>::fn>("atanh");
  reg<Forms<cx_unary<Un::Atanh>>::inplace>("atanh_");
  reg<Forms<cx_unary<Un::Atanh>>::out>("atanh.out");
  reg<Forms<cx_unary<Un::Sigmoid>>::fn>("sigmoid");
  reg<Forms<cx_unary<Un::Sigmoid>>::inplace>("sigmoid_");
  reg<Forms<cx_unary<Un::Sigmoid>>::out>("sigmoid.out");
  reg<Forms<cx_unary<Un::Sgn>>::fn>("sgn");
  reg<Forms<cx_unary<Un::Sgn>>::inplace>("sgn_");
  reg<Forms<cx_unary<Un::Sgn>>::out>("sgn.out");
  reg<Forms<cx_unary<Un::Silu>>::fn>("silu");
  reg<Forms<cx_unary<Un::Silu>>::inplace>("silu_");
  reg<Forms<cx_unary<Un::Silu>>::out>("silu.out");
  reg<Forms<cx_unary<Un::Sinc>>::fn>("sinc");
  reg<Forms<cx_unary<Un::Sinc>>::inplace>("sinc_");
  reg<Forms<cx_unary<Un::Sinc>>::out>("sinc.out");
  reg<Forms<cx_pow_tt>::fn>("pow.Tensor_Tensor");
  reg<Forms<cx_pow_tt>::inplace>("pow_.Tensor");
  reg<Forms<cx_pow_tt>::out>("pow.Tensor_Tensor_out");
  reg<Forms<cx_pow_ts>::fn>("pow.Tensor_Scalar");
  reg<Forms<cx_pow_ts>::inplace>("pow_.Scalar");
  reg<Forms<cx_pow_ts>::out>("pow.Tensor_Scalar_out");
  reg<cx_pow_st>("pow.Scalar");
  reg<cx_pow_st_out>("pow.Scalar_out");
  reg<Forms<cx_lerp_s>::fn>("lerp.Scalar");
  reg<Forms<cx_lerp_s>::inplace>("lerp_.Scalar");
  reg<Forms<cx_lerp_s>::out>("lerp.Scalar_out");
  reg<Forms<cx_lerp_t>::fn>("lerp.Tensor");
  reg<Forms<cx_lerp_t>::inplace>("lerp_.Tensor");
  reg<Forms<cx_lerp_t>::out>("lerp.Tensor_out");
  reg<Forms<cx_addc<false>>::fn>("addcmul");
  reg<Forms<cx_addc<false>>::inplace>("addcmul_");
  reg<Forms<cx_addc<false>>::out>("addcmul.out");
  reg<Forms<cx_addc<true>>::fn>("addcdiv");
  reg<Forms<cx_addc<true>>::inplace>("addcdiv_");
  reg<Forms<cx_addc<true>>::out>("addcdiv.out");
  reg<Forms<cx_eq_t<false>>::fn>("eq.Tensor");
  reg<Forms<cx_eq_t<false>>::inplace>("eq_.Tensor");
  reg<Forms<cx_eq_t<false>>::out>("eq.Tensor_out");
  reg<Forms<cx_eq_t<true>>::fn>("ne.Tensor");
  reg<Forms<cx_eq_t<true>>::inplace>("ne_.Tensor");
  reg<Forms<cx_eq_t<true>>::out>("ne.Tensor_out");
  reg<Forms<cx_eq_s<false>>::fn>("eq.Scalar");
  reg<Forms<cx_eq_s<false>>::inplace>("eq_.Scalar");
  reg<Forms<cx_eq_s<false>>::out>("eq.Scalar_out");
  reg<Forms<cx_eq_s<true>>::fn>("ne.Scalar");
  reg<Forms<cx_eq_s<true>>::inplace>("ne_.Scalar");
  reg<Forms<cx_eq_s<true>>::out>("ne.Scalar_out");
  reg<cx_isnan>("isnan");
  reg<cx_logical_out<TOCL_IR_LOGICAL_AND>>("logical_and.out");
  reg<cx_logical_out<TOCL_IR_LOGICAL_OR>>("logical_or.out");
  reg<cx_logical_out<TOCL_IR_LOGICAL_XOR>>("logical_xor.out");
  reg<cx_logical_not_out>("logical_not.out");
  reg<cx_rsub>("rsub.Tensor");
  reg<Forms<cx_logaddexp>::fn>("logaddexp");
  reg<Forms<cx_logaddexp>::out>("logaddexp.out");
  return true;
}();

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl_complex("conj_physical.out", conj_out);
  m.impl_complex("conj_physical_", conj_physical_inplace);
  m.impl_complex("complex.out", complex_out);
  m.impl_complex("polar.out", polar_out);
}

}  // namespace torch_ocl
