// ocl_unary_ops.cpp - the unary ops that are more than one IR op (neg with
// its bool check, round with decimals, logit, float-class predicates,
// logical_not, nan_to_num, polygamma, frexp) over the IR engine; the one-IR-op unary ops are rows of
// ocl_pointwise_table.cpp (runtime/codegen/ir_ops.c holds every formula).
#include <ATen/native/Resize.h>
#include <cmath>
#include <limits>

#include "ocl_pointwise.h"
#include "ocl_complex_route.h"

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

at::Tensor round_dec(const at::Tensor& out, const at::Tensor& a, int64_t d) {
  auto it = make_iter(I::Unary, out, a);
  run_round_decimals(it, d);
  return it.output();
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
at::Tensor logit(const at::Tensor& out, const at::Tensor& a, std::optional<double> eps) {
  auto it = make_iter(I::UnaryFloat, out, a);
  run_logit(it, eps);
  return it.output();
}

// Predicates with a bool result: isnan, isposinf, isneginf, signbit.
// The op reads its input in its own dtype; a given out must be bool.
template <tocl_ir_op OP>
at::Tensor predicate(const at::Tensor& out, const at::Tensor& a) {
  if (out.defined())
    TORCH_CHECK(out.scalar_type() == at::kBool, tocl_ir_op_name(OP), " does not support non-boolean outputs.");
  auto it = make_iter(I::UnaryBool, out, a);
  EwGraph g(it, it.input_dtype(0));
  g.output(0, g.unary(OP, g.raw_input(0)));
  g.run();
  return it.output();
}
template <tocl_ir_op OP>
using Predicate = Forms<predicate<OP>>;

// logical_not: the result is 0/1 in the output's dtype, any input dtype.
at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& result) {
  auto it = at::TensorIteratorConfig().check_all_same_dtype(false).add_output(result).add_const_input(self).build();
  EwGraph g(it, it.input_dtype(0));
  g.output(0, g.unary(TOCL_IR_LOGICAL_NOT, g.raw_input(0)));
  g.run();
  return result;
}

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

at::Tensor neg(const at::Tensor& out, const at::Tensor& a) {
  TORCH_CHECK_NOT_IMPLEMENTED(a.scalar_type() != at::kBool, "Negation, the `-` operator, on a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return unary_impl<TOCL_IR_NEG, I::Unary, kDtNoBool>(out, a);
}

// polygamma(n, x): digamma for n = 0, trigamma for 1, else
// (-1)^(n+1) n! zeta(n + 1, x), as the CPU chooses.
at::Tensor polygamma_impl(const at::Tensor& out, int64_t n, const at::Tensor& self) {
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  auto it = make_iter(I::UnaryFloat, out, self);
  check_dtype("polygamma", it.common_dtype(), kDtFloat);
  EwGraph g(it);
  int x = g.input(0);
  int r = n == 0   ? g.unary(TOCL_IR_DIGAMMA, x)
          : n == 1 ? g.unary(TOCL_IR_TRIGAMMA, x)
                   : g.binary(TOCL_IR_POLYGAMMA, g.scalar(static_cast<double>(n)), x);
  g.output(0, r);
  g.run();
  return it.output();
}
at::Tensor polygamma(int64_t n, const at::Tensor& self) { return polygamma_impl(at::Tensor(), n, self); }
at::Tensor& polygamma_out(int64_t n, const at::Tensor& self, at::Tensor& out) {
  polygamma_impl(out, n, self);
  return out;
}

// frexp: mantissa in the input's dtype, exponent as int32, both from one kernel.
std::tuple<at::Tensor&, at::Tensor&> frexp_out(const at::Tensor& self, at::Tensor& mantissa, at::Tensor& exponent) {
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()),
              "torch.frexp() only supports floating-point dtypes");
  TORCH_CHECK(mantissa.dtype() == self.dtype(), "torch.frexp() expects mantissa to have dtype ", self.dtype(),
              " but got ", mantissa.dtype());
  TORCH_CHECK(exponent.dtype() == at::kInt, "torch.frexp() expects exponent to have int dtype but got ",
              exponent.dtype());
  auto it = at::TensorIteratorConfig()
                .add_output(mantissa)
                .add_output(exponent)
                .add_const_input(self)
                .check_all_same_dtype(false)
                .set_check_mem_overlap(true)
                .build();
  EwGraph g(it, self.scalar_type());
  int x = g.input(0);
  g.output(0, g.unary(TOCL_IR_FREXP_MANTISSA, x));
  g.output(1, g.cast(g.unary(TOCL_IR_FREXP_EXPONENT, x), TOCL_I32));
  g.run();
  return std::forward_as_tuple(mantissa, exponent);
}
std::tuple<at::Tensor, at::Tensor> frexp(const at::Tensor& self) {
  at::Tensor m = at::empty_like(self), e = at::empty_like(self, self.options().dtype(at::kInt));
  frexp_out(self, m, e);
  return std::make_tuple(m, e);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  // The one-IR-op unary ops are rows of ocl_pointwise_table.cpp.
  TOCL_UNARY_ROW(m, neg, Forms<neg>);
  m.impl("round.decimals", Forms<round_dec>::fn);
  m.impl("round_.decimals", Forms<round_dec>::inplace);
  TOCL_ITER_OUT(m, "round.decimals_out", Forms<round_dec>::out);
  TOCL_UNARY_ROW(m, logit, Forms<logit>);
  m.impl("isnan", Predicate<TOCL_IR_ISNAN>::fn);
  m.impl("isposinf", Predicate<TOCL_IR_ISPOSINF>::fn);
  TOCL_ITER_OUT(m, "isposinf.out", Predicate<TOCL_IR_ISPOSINF>::out);
  m.impl("isneginf", Predicate<TOCL_IR_ISNEGINF>::fn);
  TOCL_ITER_OUT(m, "isneginf.out", Predicate<TOCL_IR_ISNEGINF>::out);
  m.impl("signbit", Predicate<TOCL_IR_SIGNBIT>::fn);
  TOCL_ITER_OUT(m, "signbit.out", Predicate<TOCL_IR_SIGNBIT>::out);
  m.impl("nan_to_num.out", nan_to_num_out);
  m.impl("polygamma", polygamma);
  TOCL_ITER_OUT(m, "polygamma.out", polygamma_out);
  m.impl("frexp.Tensor", frexp);
  m.impl("frexp.Tensor_out", frexp_out);
  // logical_not's functional and in-place forms decompose into .out.
  TOCL_ITER_OUT(m, "logical_not.out", logical_not_out);
}

}  // namespace torch_ocl
