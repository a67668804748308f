// ocl_binary_ops.cpp - the binary ops that are more than one IR op over a
// TensorIterator: add/sub with alpha, mul, div and its rounding modes, rsub,
// pow with a scalar exponent, heaviside, nextafter. The one-IR-op binary ops are rows
// of ocl_pointwise_table.cpp.
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocl_alpha_iter.h"
#include "ocl_pointwise.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

// mul and div: run_binary, which takes no dtype check (every dtype
// multiplies; div's float iterator promotes).
template <tocl_ir_op OP, bool FLOAT_OP>
at::Tensor simple_binary(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = out_arg;  // the iterator borrows it and may allocate into it
  auto iter = FLOAT_OP ? at::TensorIterator::binary_float_op(out, a, b) : at::TensorIterator::binary_op(out, a, b);
  run_binary(iter, OP, std::nullopt);
  return iter.output();
}
template <tocl_ir_op OP, bool FLOAT_OP>
using SimpleBinary = Forms<simple_binary<OP, FLOAT_OP>>;

// add and sub carry alpha; sub refuses bool like PyTorch.
template <tocl_ir_op OP>
at::Tensor alpha_binary(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  at::Tensor out = out_arg;
  auto iter = alpha_binary_iter(out, a, b, alpha, OP == TOCL_IR_SUB);
  run_binary(iter, OP, alpha);
  return iter.output();
}
template <tocl_ir_op OP>
using AlphaBinary = Forms<alpha_binary<OP>>;

// rsub(a, b, alpha) = b - alpha * a.
at::Tensor rsub(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  return AlphaBinary<TOCL_IR_SUB>::fn(b, a, alpha);
}

// div with rounding_mode None / "trunc" / "floor".
tocl_ir_op div_mode_op(std::optional<c10::string_view> mode) {
  if (!mode.has_value())
    return TOCL_IR_DIV;
  if (*mode == "trunc")
    return TOCL_IR_TRUNC_DIV;
  if (*mode == "floor")
    return TOCL_IR_FLOOR_DIV;
  TORCH_CHECK(false, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
}

void run_div_mode(at::TensorIteratorBase& it, tocl_ir_op op) {
  if (op == TOCL_IR_TRUNC_DIV)
    run_op<TOCL_IR_TRUNC_DIV, kDtNoBool>(it);
  else if (op == TOCL_IR_FLOOR_DIV)
    run_op<TOCL_IR_FLOOR_DIV, kDtNoBool>(it);
  else
    run_op<TOCL_IR_DIV, kDtFloat>(it);
}

at::Tensor div_mode(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                    std::optional<c10::string_view> mode) {
  tocl_ir_op op = div_mode_op(mode);
  auto it = make_iter(op == TOCL_IR_DIV ? Iter::BinaryFloat : Iter::Binary, out, a, b);
  run_div_mode(it, op);
  return it.output();
}

// pow(tensor, scalar): the CPU's special exponents (x*x, sqrt, ...) keep
// results bit-identical where it matters; integers refuse negative exponents.
void run_pow_scalar(at::TensorIteratorBase& it, const c10::Scalar& e) {
  check_dtype("pow", it.common_dtype(), kDtNoBool);
  EwGraph g(it);
  int x = g.input(0), r;
  bool fl = c10::isFloatingType(it.common_dtype());
  double d = e.toDouble();
  if (d == 0) {
    r = g.scalar(1);
  } else if (d == 1) {
    r = x;
  } else if (d == 2) {
    r = g.binary(TOCL_IR_MUL, x, x);
  } else if (d == 3) {
    r = g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, x, x), x);
  } else if (fl && d == 0.5) {
    r = g.unary(TOCL_IR_SQRT, x);
  } else if (fl && d == -0.5) {
    r = g.unary(TOCL_IR_RSQRT, x);
  } else if (fl && d == -1) {
    r = g.unary(TOCL_IR_RECIPROCAL, x);
  } else if (fl && d == -2) {
    r = g.unary(TOCL_IR_RECIPROCAL, g.binary(TOCL_IR_MUL, x, x));
  } else {
    r = g.binary(TOCL_IR_POW, x, g.scalar(e));
  }
  g.output(0, r);
  g.run();
}
at::TensorIterator pow_scalar_iter(const at::Tensor& out, const at::Tensor& base, const c10::Scalar& e) {
  TORCH_CHECK(!(c10::isIntegralType(base.scalar_type(), true) && e.isIntegral(true) && e.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
  auto common = at::result_type(base, e);
  at::TensorIterator it;
  it.build_output_borrowing_argument_owning_unary_op(out, base.to(common));
  return it;
}
at::Tensor pow_ts(const at::Tensor& out, const at::Tensor& base, const c10::Scalar& e) {
  auto it = pow_scalar_iter(out, base, e);
  run_pow_scalar(it, e);
  return it.output();
}
using Pow = Binary<TOCL_IR_POW, Iter::Binary, kDtNoBool>;
at::Tensor& pow_st_out(const c10::Scalar& base, const at::Tensor& e, at::Tensor& o) {
  if (base.equal(1.0)) {
    resize_out(o, e.sizes());
    return o.fill_(1);
  }
  return Pow::out(at::native::wrapped_scalar_tensor(base), e, o);
}
at::Tensor pow_st(const c10::Scalar& base, const at::Tensor& e) {
  at::Tensor o = at::empty_like(e, e.options().dtype(at::result_type(base, e)), at::MemoryFormat::Contiguous);
  return pow_st_out(base, e, o);
}

at::Tensor heaviside(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dtype() == b.dtype(), "heaviside is not yet implemented for tensors with different dtypes");
  return binary_impl<TOCL_IR_HEAVISIDE, Iter::Binary, kDtAll>(out, a, b);
}

// nextafter: a float16/bfloat16 value steps by its storage format's ulp, not float's.
at::Tensor nextafter(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  auto it = make_iter(Iter::Binary, out, a, b);
  auto ct = it.common_dtype();
  check_dtype("nextafter_cpu", ct, kDtFloat);
  tocl_ir_op op = ct == at::kHalf       ? TOCL_IR_NEXTAFTER_F16
                  : ct == at::kBFloat16 ? TOCL_IR_NEXTAFTER_BF16
                                        : TOCL_IR_NEXTAFTER;
  EwGraph g(it);
  g.output(0, g.binary(op, g.input(0), g.input(1)));
  g.run();
  return it.output();
}

}  // namespace

at::TensorIterator alpha_binary_iter(at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                                     const c10::Scalar& alpha, bool sub) {
  if (sub)
    at::native::sub_check(a, b);
  auto iter = at::TensorIterator::binary_op(out, a, b);
  at::native::alpha_check(iter.common_dtype(), alpha);
  return iter;
}

// The one-IR-op binary ops (remainder, fmod, pow.Tensor_Tensor, atan2,
// hypot, copysign, xlogy, maximum/minimum/fmax/fmin, bitwise ops, shifts,
// floor_divide) are rows of ocl_pointwise_table.cpp.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("add.Tensor", AlphaBinary<TOCL_IR_ADD>::fn);
  m.impl("add_.Tensor", AlphaBinary<TOCL_IR_ADD>::inplace);
  TOCL_ITER_OUT(m, "add.out", AlphaBinary<TOCL_IR_ADD>::out);
  m.impl("sub.Tensor", AlphaBinary<TOCL_IR_SUB>::fn);
  m.impl("sub_.Tensor", AlphaBinary<TOCL_IR_SUB>::inplace);
  TOCL_ITER_OUT(m, "sub.out", AlphaBinary<TOCL_IR_SUB>::out);
  TOCL_BINARY_ROW(m, mul, "out", SimpleBinary<TOCL_IR_MUL, false>);
  TOCL_BINARY_ROW(m, div, "out", SimpleBinary<TOCL_IR_DIV, true>);
  m.impl("rsub.Tensor", rsub);
  m.impl("nextafter", Forms<nextafter>::fn);
  m.impl("nextafter_", Forms<nextafter>::inplace);
  TOCL_ITER_OUT(m, "nextafter.out", Forms<nextafter>::out);
  m.impl("div.Tensor_mode", Forms<div_mode>::fn);
  m.impl("div_.Tensor_mode", Forms<div_mode>::inplace);
  TOCL_ITER_OUT(m, "div.out_mode", Forms<div_mode>::out);
  m.impl("pow.Tensor_Scalar", Forms<pow_ts>::fn);
  m.impl("pow_.Scalar", Forms<pow_ts>::inplace);
  TOCL_ITER_OUT(m, "pow.Tensor_Scalar_out", Forms<pow_ts>::out);
  m.impl("pow.Scalar", pow_st);
  m.impl("pow.Scalar_out", pow_st_out);
  TOCL_UNARY_ROW(m, heaviside, Forms<heaviside>);
}

}  // namespace torch_ocl
