// ocl_binary_ops.cpp - add/sub/mul/div (tensor and scalar forms, in-place,
// out=) as rows of one table over the IR engine.
#include <ATen/native/BinaryOps.h>
#include <torch/library.h>

#include "ocl_elementwise.h"

namespace torch_ocl {
namespace {

// One generator per table row: the functional, in-place and out= overloads.
template <tocl_ir_op OP, bool FLOAT_OP>
struct Binary {
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", AlphaBinary<TOCL_IR_ADD>::fn);
  m.impl("add_.Tensor", AlphaBinary<TOCL_IR_ADD>::inplace);
  m.impl("add.out", AlphaBinary<TOCL_IR_ADD>::out);
  m.impl("sub.Tensor", AlphaBinary<TOCL_IR_SUB>::fn);
  m.impl("sub_.Tensor", AlphaBinary<TOCL_IR_SUB>::inplace);
  m.impl("sub.out", AlphaBinary<TOCL_IR_SUB>::out);
  m.impl("mul.Tensor", Binary<TOCL_IR_MUL, false>::fn);
  m.impl("mul_.Tensor", Binary<TOCL_IR_MUL, false>::inplace);
  m.impl("mul.out", Binary<TOCL_IR_MUL, false>::out);
  m.impl("div.Tensor", Binary<TOCL_IR_DIV, true>::fn);
  m.impl("div_.Tensor", Binary<TOCL_IR_DIV, true>::inplace);
  m.impl("div.out", Binary<TOCL_IR_DIV, true>::out);
}

}  // namespace torch_ocl
