// ocl_binary_ops.cpp - binary arithmetic (add/sub/mul/div with rounding
// modes, remainder, fmod, pow, atan2, hypot, copysign, xlogy, heaviside,
// minimum/maximum/fmin/fmax, bitwise ops and shifts) as rows of one table
// over the IR engine.
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocl_pointwise.h"

namespace torch_ocl {
namespace {

// One generator per table row: the functional, in-place and out= overloads.
template <tocl_ir_op OP, bool FLOAT_OP>
struct SimpleBinary {
  static at::TensorIterator make(at::TensorBase& out, const at::Tensor& a, const at::Tensor& b) {
    return FLOAT_OP ? at::TensorIterator::binary_float_op(out, a, b) : at::TensorIterator::binary_op(out, a, b);
  }
  static at::Tensor fn(const at::Tensor& a, const at::Tensor& b) {
    at::Tensor out;
    auto iter = make(out, a, b);
    run_binary(iter, OP, std::nullopt);
    return iter.output();
  }
  static at::Tensor& inplace(at::Tensor& self, const at::Tensor& b) {
    auto iter = make(self, self, b);
    run_binary(iter, OP, std::nullopt);
    return self;
  }
  static at::Tensor& out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
    auto iter = make(out, a, b);
    run_binary(iter, OP, std::nullopt);
    return out;
  }
};

// add and sub carry alpha; sub refuses bool like PyTorch.
template <tocl_ir_op OP>
struct AlphaBinary {
  static void check(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha, c10::ScalarType t) {
    if (OP == TOCL_IR_SUB)
      at::native::sub_check(a, b);
    at::native::alpha_check(t, alpha);
  }
  static at::Tensor fn(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
    at::Tensor out;
    auto iter = at::TensorIterator::binary_op(out, a, b);
    check(a, b, alpha, iter.common_dtype());
    run_binary(iter, OP, alpha);
    return iter.output();
  }
  static at::Tensor& inplace(at::Tensor& self, const at::Tensor& b, const c10::Scalar& alpha) {
    auto iter = at::TensorIterator::binary_op(self, self, b);
    check(self, b, alpha, iter.common_dtype());
    run_binary(iter, OP, alpha);
    return self;
  }
  static at::Tensor& out(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha, at::Tensor& out) {
    auto iter = at::TensorIterator::binary_op(out, a, b);
    check(a, b, alpha, iter.common_dtype());
    run_binary(iter, OP, alpha);
    return out;
  }
};

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

at::TensorIterator div_iter(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, tocl_ir_op op) {
  return make_iter(op == TOCL_IR_DIV ? Iter::BinaryFloat : Iter::Binary, out, a, b);
}
at::Tensor div_mode(const at::Tensor& a, const at::Tensor& b, std::optional<c10::string_view> mode) {
  tocl_ir_op op = div_mode_op(mode);
  at::Tensor out;
  auto it = div_iter(out, a, b, op);
  run_div_mode(it, op);
  return it.output();
}
at::Tensor& div_mode_(at::Tensor& a, const at::Tensor& b, std::optional<c10::string_view> mode) {
  tocl_ir_op op = div_mode_op(mode);
  auto it = div_iter(a, a, b, op);
  run_div_mode(it, op);
  return a;
}
at::Tensor& div_mode_out(const at::Tensor& a, const at::Tensor& b, std::optional<c10::string_view> mode,
                         at::Tensor& o) {
  tocl_ir_op op = div_mode_op(mode);
  auto it = div_iter(o, a, b, op);
  run_div_mode(it, op);
  return o;
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
at::Tensor pow_ts(const at::Tensor& base, const c10::Scalar& e) {
  at::Tensor out;
  auto it = pow_scalar_iter(out, base, e);
  run_pow_scalar(it, e);
  return it.output();
}
at::Tensor& pow_ts_(at::Tensor& base, const c10::Scalar& e) {
  auto it = pow_scalar_iter(base, base, e);
  run_pow_scalar(it, e);
  return base;
}
at::Tensor& pow_ts_out(const at::Tensor& base, const c10::Scalar& e, at::Tensor& o) {
  auto it = pow_scalar_iter(o, base, e);
  run_pow_scalar(it, e);
  return o;
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

template <tocl_ir_op OP>
struct Heaviside {
  static void check(const at::Tensor& a, const at::Tensor& b) {
    TORCH_CHECK(a.dtype() == b.dtype(), "heaviside is not yet implemented for tensors with different dtypes");
  }
  using B = torch_ocl::Binary<OP, Iter::Binary>;
  static at::Tensor fn(const at::Tensor& a, const at::Tensor& b) { return check(a, b), B::fn(a, b); }
  static at::Tensor& inplace(at::Tensor& a, const at::Tensor& b) { return check(a, b), B::inplace(a, b); }
  static at::Tensor& out(const at::Tensor& a, const at::Tensor& b, at::Tensor& o) { return check(a, b), B::out(a, b, o); }
};

using Shl = Binary<TOCL_IR_LSHIFT, Iter::Binary, kDtInt>;
using Shr = Binary<TOCL_IR_RSHIFT, Iter::Binary, kDtInt>;
using FloorDiv = Binary<TOCL_IR_FLOOR_DIV, Iter::Binary, kDtNoBool>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", AlphaBinary<TOCL_IR_ADD>::fn);
  m.impl("add_.Tensor", AlphaBinary<TOCL_IR_ADD>::inplace);
  TOCL_ITER_OUT(m, "add.out", AlphaBinary<TOCL_IR_ADD>::out);
  m.impl("sub.Tensor", AlphaBinary<TOCL_IR_SUB>::fn);
  m.impl("sub_.Tensor", AlphaBinary<TOCL_IR_SUB>::inplace);
  TOCL_ITER_OUT(m, "sub.out", AlphaBinary<TOCL_IR_SUB>::out);
  m.impl("mul.Tensor", SimpleBinary<TOCL_IR_MUL, false>::fn);
  m.impl("mul_.Tensor", SimpleBinary<TOCL_IR_MUL, false>::inplace);
  TOCL_ITER_OUT(m, "mul.out", SimpleBinary<TOCL_IR_MUL, false>::out);
  m.impl("div.Tensor", SimpleBinary<TOCL_IR_DIV, true>::fn);
  m.impl("div_.Tensor", SimpleBinary<TOCL_IR_DIV, true>::inplace);
  TOCL_ITER_OUT(m, "div.out", SimpleBinary<TOCL_IR_DIV, true>::out);
  m.impl("rsub.Tensor", rsub);
  m.impl("div.Tensor_mode", div_mode);
  m.impl("div_.Tensor_mode", div_mode_);
  TOCL_ITER_OUT(m, "div.out_mode", div_mode_out);
  m.impl("floor_divide", FloorDiv::fn);
  m.impl("floor_divide_.Tensor", FloorDiv::inplace);
  TOCL_ITER_OUT(m, "floor_divide.out", FloorDiv::out);
  TOCL_BINARY_ROW(m, remainder, "Tensor_out", Binary<TOCL_IR_REMAINDER, Iter::Binary, kDtNoBool>);
  m.impl("remainder.Scalar_Tensor", Binary<TOCL_IR_REMAINDER, Iter::Binary, kDtNoBool>::fn_st);
  TOCL_BINARY_ROW(m, fmod, "Tensor_out", Binary<TOCL_IR_FMOD, Iter::Binary, kDtNoBool>);
  m.impl("pow.Tensor_Tensor", Pow::fn);
  m.impl("pow_.Tensor", Pow::inplace);
  TOCL_ITER_OUT(m, "pow.Tensor_Tensor_out", Pow::out);
  m.impl("pow.Tensor_Scalar", pow_ts);
  m.impl("pow_.Scalar", pow_ts_);
  TOCL_ITER_OUT(m, "pow.Tensor_Scalar_out", pow_ts_out);
  m.impl("pow.Scalar", pow_st);
  m.impl("pow.Scalar_out", pow_st_out);
  TOCL_UNARY_ROW(m, atan2, Binary<TOCL_IR_ATAN2, Iter::BinaryFloat>);
  TOCL_UNARY_ROW(m, hypot, Binary<TOCL_IR_HYPOT, Iter::Binary, kDtFloat>);
  TOCL_BINARY_ROW(m, copysign, "out", Binary<TOCL_IR_COPYSIGN, Iter::BinaryFloat>);
  m.impl("xlogy.Tensor", Binary<TOCL_IR_XLOGY, Iter::BinaryFloat>::fn);
  m.impl("xlogy_.Tensor", Binary<TOCL_IR_XLOGY, Iter::BinaryFloat>::inplace);
  TOCL_ITER_OUT(m, "xlogy.OutTensor", Binary<TOCL_IR_XLOGY, Iter::BinaryFloat>::out);
  TOCL_UNARY_ROW(m, heaviside, Heaviside<TOCL_IR_HEAVISIDE>);
  m.impl("maximum", Binary<TOCL_IR_MAXIMUM, Iter::Binary>::fn);
  TOCL_ITER_OUT(m, "maximum.out", Binary<TOCL_IR_MAXIMUM, Iter::Binary>::out);
  m.impl("minimum", Binary<TOCL_IR_MINIMUM, Iter::Binary>::fn);
  TOCL_ITER_OUT(m, "minimum.out", Binary<TOCL_IR_MINIMUM, Iter::Binary>::out);
  m.impl("fmax", Binary<TOCL_IR_FMAX, Iter::Binary>::fn);
  TOCL_ITER_OUT(m, "fmax.out", Binary<TOCL_IR_FMAX, Iter::Binary>::out);
  m.impl("fmin", Binary<TOCL_IR_FMIN, Iter::Binary>::fn);
  TOCL_ITER_OUT(m, "fmin.out", Binary<TOCL_IR_FMIN, Iter::Binary>::out);
  TOCL_BINARY_ROW(m, bitwise_and, "Tensor_out", Binary<TOCL_IR_BITWISE_AND, Iter::Binary, kDtInt | kDtBool>);
  TOCL_BINARY_ROW(m, bitwise_or, "Tensor_out", Binary<TOCL_IR_BITWISE_OR, Iter::Binary, kDtInt | kDtBool>);
  TOCL_BINARY_ROW(m, bitwise_xor, "Tensor_out", Binary<TOCL_IR_BITWISE_XOR, Iter::Binary, kDtInt | kDtBool>);
  TOCL_BINARY_ROW(m, bitwise_left_shift, "Tensor_out", Shl);
  TOCL_BINARY_ROW(m, bitwise_right_shift, "Tensor_out", Shr);
  m.impl("__lshift__.Tensor", Shl::fn);
  m.impl("__lshift__.Scalar", Shl::fn_s);
  m.impl("__ilshift__.Tensor", Shl::inplace);
  m.impl("__ilshift__.Scalar", Shl::inplace_s);
  m.impl("__rshift__.Tensor", Shr::fn);
  m.impl("__rshift__.Scalar", Shr::fn_s);
  m.impl("__irshift__.Tensor", Shr::inplace);
  m.impl("__irshift__.Scalar", Shr::inplace_s);
}

}  // namespace torch_ocl
