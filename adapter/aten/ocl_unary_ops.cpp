// ocl_unary_ops.cpp - unary math, rounding and float-class predicates as rows
// over the IR engine (runtime/codegen/ir_ops.c holds every formula).
#include <ATen/native/Resize.h>
#include <cmath>
#include <limits>

#include "ocl_pointwise.h"

namespace torch_ocl {
namespace {

using I = Iter;

// round(x, decimals) as the CPU: scale by 10^|decimals|, round half to even, unscale.
void run_round_decimals(at::TensorIteratorBase& it, int64_t decimals) {
  check_dtype("round_cpu", it.common_dtype(), kDtFloat);
  EwGraph g(it);
  int x = g.input(0);
  if (decimals == 0) {
    g.output(0, g.unary(TOCL_IR_ROUND, x));
  } else {
    double p = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
    int s = g.scalar(p);
    if (decimals > 0)
      g.output(0, g.binary(TOCL_IR_DIV, g.unary(TOCL_IR_ROUND, g.binary(TOCL_IR_MUL, x, s)), s));
    else
      g.output(0, g.binary(TOCL_IR_MUL, g.unary(TOCL_IR_ROUND, g.binary(TOCL_IR_DIV, x, s)), s));
  }
  g.run();
}

at::Tensor round_dec(const at::Tensor& a, int64_t d) {
  at::Tensor out;
  auto it = make_iter(I::Unary, out, a);
  run_round_decimals(it, d);
  return it.output();
}
at::Tensor& round_dec_(at::Tensor& a, int64_t d) {
  auto it = make_iter(I::Unary, a, a);
  run_round_decimals(it, d);
  return a;
}
at::Tensor& round_dec_out(const at::Tensor& a, int64_t d, at::Tensor& o) {
  auto it = make_iter(I::Unary, o, a);
  run_round_decimals(it, d);
  return o;
}

// logit(x, eps): log(x / (1 - x)) of x clamped to [eps, 1 - eps] when eps is given.
void run_logit(at::TensorIteratorBase& it, std::optional<double> eps) {
  EwGraph g(it);
  int x = g.input(0);
  if (eps && *eps >= 0) {
    x = g.binary(TOCL_IR_MINIMUM, g.binary(TOCL_IR_MAXIMUM, x, g.scalar(*eps)), g.scalar(1.0 - *eps));
  }
  int one = g.scalar(1.0);
  g.output(0, g.unary(TOCL_IR_LOG, g.binary(TOCL_IR_DIV, x, g.binary(TOCL_IR_SUB, one, x))));
  g.run();
}
at::Tensor logit(const at::Tensor& a, std::optional<double> eps) {
  at::Tensor out;
  auto it = make_iter(I::UnaryFloat, out, a);
  run_logit(it, eps);
  return it.output();
}
at::Tensor& logit_(at::Tensor& a, std::optional<double> eps) {
  auto it = make_iter(I::UnaryFloat, a, a);
  run_logit(it, eps);
  return a;
}
at::Tensor& logit_out(const at::Tensor& a, std::optional<double> eps, at::Tensor& o) {
  auto it = make_iter(I::UnaryFloat, o, a);
  run_logit(it, eps);
  return o;
}

// Predicates with a bool result: isnan, isposinf, isneginf, signbit.
template <tocl_ir_op OP>
struct Predicate {
  static void run(at::TensorIteratorBase& it) {
    EwGraph g(it, it.input_dtype(0));
    g.output(0, g.unary(OP, g.raw_input(0)));
    g.run();
  }
  static at::Tensor fn(const at::Tensor& a) {
    at::Tensor out;
    auto it = make_iter(I::UnaryBool, out, a);
    run(it);
    return it.output();
  }
  static at::Tensor& out(const at::Tensor& a, at::Tensor& o) {
    TORCH_CHECK(o.scalar_type() == at::kBool, tocl_ir_op_name(OP), " does not support non-boolean outputs.");
    auto it = make_iter(I::UnaryBool, o, a);
    run(it);
    return o;
  }
};

// nan_to_num: NaN, +inf and -inf replaced (defaults: 0, the dtype's max and lowest).
at::Tensor& nan_to_num_out(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf, at::Tensor& result) {
  TORCH_CHECK(self.scalar_type() == result.scalar_type(), "nan_to_num: dtype of out: ", result.scalar_type(),
              " should be same as input: ", self.scalar_type());
  if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)) {
    resize_out(result, self.sizes());
    result.copy_(self);
    return result;
  }
  auto it = make_iter(I::Unary, result, self);
  double hi = 0, lo = 0;
  switch (self.scalar_type()) {
    case at::kHalf: hi = 65504.0; break;
    case at::kBFloat16: hi = static_cast<double>(std::numeric_limits<c10::BFloat16>::max()); break;
    case at::kFloat: hi = std::numeric_limits<float>::max(); break;
    default: hi = std::numeric_limits<double>::max(); break;
  }
  lo = -hi;
  EwGraph g(it);
  int x = g.input(0);
  int r = g.ternary(TOCL_IR_WHERE, g.unary(TOCL_IR_ISNEGINF, x), g.scalar(neginf.value_or(lo)), x);
  r = g.ternary(TOCL_IR_WHERE, g.unary(TOCL_IR_ISPOSINF, x), g.scalar(posinf.value_or(hi)), r);
  r = g.ternary(TOCL_IR_WHERE, g.unary(TOCL_IR_ISNAN, x), g.scalar(nan.value_or(0.0)), r);
  g.output(0, r);
  g.run();
  return result;
}

using Neg = Unary<TOCL_IR_NEG, I::Unary, kDtNoBool>;
at::Tensor neg(const at::Tensor& a) {
  TORCH_CHECK_NOT_IMPLEMENTED(a.scalar_type() != at::kBool, "Negation, the `-` operator, on a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return Neg::fn(a);
}
at::Tensor& neg_(at::Tensor& a) {
  TORCH_CHECK_NOT_IMPLEMENTED(a.scalar_type() != at::kBool, "Negation, the `-` operator, on a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return Neg::inplace(a);
}
at::Tensor& neg_out(const at::Tensor& a, at::Tensor& o) {
  TORCH_CHECK_NOT_IMPLEMENTED(a.scalar_type() != at::kBool, "Negation, the `-` operator, on a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return Neg::out(a, o);
}

using BitNot = Unary<TOCL_IR_BITWISE_NOT, I::Unary, kDtInt | kDtBool>;
using Abs = Unary<TOCL_IR_ABS, I::Unary, kDtNoBool>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("neg", neg);
  m.impl("neg_", neg_);
  TOCL_ITER_OUT(m, "neg.out", neg_out);
  TOCL_ITER_OUT(m, "abs.out", Abs::out);  // abs / abs_ decompose into abs.out
  TOCL_UNARY_ROW(m, sign, Unary<TOCL_IR_SIGN, I::Unary>);
  TOCL_UNARY_ROW(m, sgn, Unary<TOCL_IR_SIGN, I::Unary>);
  TOCL_UNARY_ROW(m, reciprocal, Unary<TOCL_IR_RECIPROCAL, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, sqrt, Unary<TOCL_IR_SQRT, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, rsqrt, Unary<TOCL_IR_RSQRT, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, exp, Unary<TOCL_IR_EXP, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, exp2, Unary<TOCL_IR_EXP2, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, expm1, Unary<TOCL_IR_EXPM1, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, log, Unary<TOCL_IR_LOG, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, log2, Unary<TOCL_IR_LOG2, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, log10, Unary<TOCL_IR_LOG10, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, log1p, Unary<TOCL_IR_LOG1P, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, sin, Unary<TOCL_IR_SIN, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, cos, Unary<TOCL_IR_COS, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, tan, Unary<TOCL_IR_TAN, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, asin, Unary<TOCL_IR_ASIN, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, acos, Unary<TOCL_IR_ACOS, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, atan, Unary<TOCL_IR_ATAN, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, sinh, Unary<TOCL_IR_SINH, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, cosh, Unary<TOCL_IR_COSH, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, tanh, Unary<TOCL_IR_TANH, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, asinh, Unary<TOCL_IR_ASINH, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, acosh, Unary<TOCL_IR_ACOSH, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, atanh, Unary<TOCL_IR_ATANH, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, erf, Unary<TOCL_IR_ERF, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, erfc, Unary<TOCL_IR_ERFC, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, erfinv, Unary<TOCL_IR_ERFINV, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, lgamma, Unary<TOCL_IR_LGAMMA, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, digamma, Unary<TOCL_IR_DIGAMMA, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, sigmoid, Unary<TOCL_IR_SIGMOID, I::UnaryFloat>);
  TOCL_UNARY_ROW(m, floor, Unary<TOCL_IR_FLOOR, I::Unary, kDtNoBool>);
  TOCL_UNARY_ROW(m, ceil, Unary<TOCL_IR_CEIL, I::Unary, kDtNoBool>);
  TOCL_UNARY_ROW(m, round, Unary<TOCL_IR_ROUND, I::Unary, kDtNoBool>);
  TOCL_UNARY_ROW(m, trunc, Unary<TOCL_IR_TRUNC, I::Unary, kDtNoBool>);
  TOCL_UNARY_ROW(m, frac, Unary<TOCL_IR_FRAC, I::Unary, kDtFloat>);
  TOCL_UNARY_ROW(m, bitwise_not, BitNot);
  m.impl("round.decimals", round_dec);
  m.impl("round_.decimals", round_dec_);
  TOCL_ITER_OUT(m, "round.decimals_out", round_dec_out);
  m.impl("logit", logit);
  m.impl("logit_", logit_);
  TOCL_ITER_OUT(m, "logit.out", logit_out);
  m.impl("isnan", Predicate<TOCL_IR_ISNAN>::fn);
  m.impl("isposinf", Predicate<TOCL_IR_ISPOSINF>::fn);
  TOCL_ITER_OUT(m, "isposinf.out", Predicate<TOCL_IR_ISPOSINF>::out);
  m.impl("isneginf", Predicate<TOCL_IR_ISNEGINF>::fn);
  TOCL_ITER_OUT(m, "isneginf.out", Predicate<TOCL_IR_ISNEGINF>::out);
  m.impl("signbit", Predicate<TOCL_IR_SIGNBIT>::fn);
  TOCL_ITER_OUT(m, "signbit.out", Predicate<TOCL_IR_SIGNBIT>::out);
  m.impl("nan_to_num.out", nan_to_num_out);
}

}  // namespace torch_ocl
