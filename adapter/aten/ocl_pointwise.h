// ocl_pointwise.h - a pointwise op as one iterator builder and one IR
// formula: dtype sets, iterator kinds, and the out-form implementations of
// one-IR-op unary and binary ops, whose three overloads (functional,
// in-place, out=) Forms generates. Rows of ocl_pointwise_table.cpp and the
// hand-written ops of the other pointwise files are built from these.
#pragma once

#include <ATen/ScalarOps.h>
#include <ATen/TensorIterator.h>
#include <torch/library.h>

#include "ocl_elementwise.h"
#include "ocl_forms.h"
#include "ocl_iter_out.h"

namespace torch_ocl {

// Dtypes an op accepts, as the CPU's AT_DISPATCH macro for it does; others
// raise NotImplementedError with the CPU's message pattern.
enum DtypeSet : unsigned {
  kDtFloat32 = 1u,  // float32, float64
  kDtInt = 2u,      // uint8, int8 .. int64
  kDtBool = 4u,
  kDtHalf = 8u,     // float16, bfloat16
  kDtFloat = kDtFloat32 | kDtHalf,
  kDtNoBool = kDtFloat | kDtInt,
  kDtAll = kDtFloat | kDtInt | kDtBool,
  kDtNoHalf = kDtFloat32 | kDtInt | kDtBool,  // the CPU's AT_DISPATCH_FLOATING_TYPES after int->float promotion
};

inline void check_dtype(const char* name, c10::ScalarType t, unsigned allowed) {
  unsigned cls = c10::isReducedFloatingType(t) ? kDtHalf
                 : c10::isFloatingType(t)      ? kDtFloat32
                 : t == at::kBool              ? kDtBool
                                               : kDtInt;
  TORCH_CHECK_NOT_IMPLEMENTED(cls & allowed, "\"", name, "\" not implemented for '", c10::toString(t), "'");
}

// How an op's iterator is built (PyTorch's builders: promotion, broadcasting,
// out= resizing and overlap checks are theirs).
enum class Iter { Unary, UnaryFloat, UnaryBool, Binary, BinaryFloat, Compare };

inline at::TensorIterator make_iter(Iter k, const at::Tensor& out, const at::Tensor& a) {
  at::TensorIterator it;
  switch (k) {
    case Iter::UnaryFloat: it.build_unary_float_op(out, a); break;
    case Iter::UnaryBool: it.build_borrowing_unary_force_boolean_op(out, a); break;
    default: it.build_unary_op(out, a); break;
  }
  return it;
}

inline at::TensorIterator make_iter(Iter k, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  at::TensorIterator it;
  switch (k) {
    case Iter::BinaryFloat: it.build_binary_float_op(out, a, b); break;
    case Iter::Compare: it.build_comparison_op(out, a, b); break;
    default: it.build_binary_op(out, a, b); break;
  }
  return it;
}

// One IR op applied to the iterator's inputs (converted to the common
// dtype), stored into output 0.
template <tocl_ir_op OP, unsigned D>
void run_op(at::TensorIteratorBase& it) {
  check_dtype(tocl_ir_op_name(OP), it.common_dtype(), D);
  EwGraph g(it);
  int r;
  if (it.ninputs() == 1)
    r = g.unary(OP, g.input(0));
  else if (it.ninputs() == 2)
    r = g.binary(OP, g.input(0), g.input(1));
  else
    r = g.ternary(OP, g.input(0), g.input(1), g.input(2));
  g.output(0, r);
  g.run();
}

// The out-form implementations of a one-IR-op unary and binary op; Forms
// (ocl_forms.h) makes the functional and in-place overloads from them.
template <tocl_ir_op OP, Iter K, unsigned D>
at::Tensor unary_impl(const at::Tensor& out, const at::Tensor& a) {
  auto it = make_iter(K, out, a);
  run_op<OP, D>(it);
  return it.output();
}

template <tocl_ir_op OP, Iter K, unsigned D>
at::Tensor binary_impl(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  auto it = make_iter(K, out, a, b);
  run_op<OP, D>(it);
  return it.output();
}

template <tocl_ir_op OP, Iter K, unsigned D = kDtAll>
struct Unary : Forms<unary_impl<OP, K, D>> {};

template <tocl_ir_op OP, Iter K, unsigned D = kDtAll>
struct Binary : Forms<binary_impl<OP, K, D>> {
  using F = Forms<binary_impl<OP, K, D>>;
  // Scalar overloads: the number becomes a wrapped 0-dim CPU tensor, which
  // takes part in type promotion as a Python number does.
  static at::Tensor fn_s(const at::Tensor& a, const c10::Scalar& b) { return F::fn(a, at::native::wrapped_scalar_tensor(b)); }
  static at::Tensor& inplace_s(at::Tensor& a, const c10::Scalar& b) {
    return F::inplace(a, at::native::wrapped_scalar_tensor(b));
  }
  static at::Tensor& out_s(const at::Tensor& a, const c10::Scalar& b, at::Tensor& o) {
    return F::out(a, at::native::wrapped_scalar_tensor(b), o);
  }
  static at::Tensor fn_st(const c10::Scalar& a, const at::Tensor& b) { return F::fn(at::native::wrapped_scalar_tensor(a), b); }
  static at::Tensor& out_st(const c10::Scalar& a, const at::Tensor& b, at::Tensor& o) {
    return F::out(at::native::wrapped_scalar_tensor(a), b, o);
  }
};

}  // namespace torch_ocl

// Registration rows: NAME, NAME_ and NAME.out of a unary op. The row's out
// kernel builds a TensorIterator over its out (TOCL_ITER_OUT, ocl_iter_out.h).
#define TOCL_UNARY_ROW(m, name, ...)       \
  m.impl(#name, __VA_ARGS__::fn);          \
  m.impl(#name "_", __VA_ARGS__::inplace); \
  TOCL_ITER_OUT(m, #name ".out", __VA_ARGS__::out)

// NAME.Tensor, NAME_.Tensor and NAME.<out> of a binary op.
#define TOCL_BINARY_ROW(m, name, out_name, ...)   \
  m.impl(#name ".Tensor", __VA_ARGS__::fn);       \
  m.impl(#name "_.Tensor", __VA_ARGS__::inplace); \
  TOCL_ITER_OUT(m, #name "." out_name, __VA_ARGS__::out)
