// ocl_compare_ops.cpp - comparisons (eq ne lt le gt ge, Tensor and Scalar
// forms) and logical and/or/xor/not over the IR engine. PyTorch's
// comparison iterator promotes the operands to their common dtype and
// stores the bool result converted to the output's dtype (so eq_ on a float
// tensor writes 0.0/1.0).
#include "ocl_pointwise.h"

namespace torch_ocl {
namespace {

template <tocl_ir_op OP>
using Cmp = Binary<OP, Iter::Compare>;

// logical_not: the result is 0/1 in the output's dtype, any input dtype.
at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& result) {
  auto it = at::TensorIteratorConfig().check_all_same_dtype(false).add_output(result).add_const_input(self).build();
  EwGraph g(it, it.input_dtype(0));
  g.output(0, g.unary(TOCL_IR_LOGICAL_NOT, g.raw_input(0)));
  g.run();
  return result;
}

}  // namespace

#define TOCL_CMP_ROWS(m, name, OP)                    \
  m.impl(#name ".Tensor", Cmp<OP>::fn);               \
  m.impl(#name "_.Tensor", Cmp<OP>::inplace);         \
  TOCL_ITER_OUT(m, #name ".Tensor_out", Cmp<OP>::out); \
  m.impl(#name ".Scalar", Cmp<OP>::fn_s);             \
  m.impl(#name "_.Scalar", Cmp<OP>::inplace_s);       \
  TOCL_ITER_OUT(m, #name ".Scalar_out", Cmp<OP>::out_s)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  TOCL_CMP_ROWS(m, eq, TOCL_IR_EQ);
  TOCL_CMP_ROWS(m, ne, TOCL_IR_NE);
  TOCL_CMP_ROWS(m, lt, TOCL_IR_LT);
  TOCL_CMP_ROWS(m, le, TOCL_IR_LE);
  TOCL_CMP_ROWS(m, gt, TOCL_IR_GT);
  TOCL_CMP_ROWS(m, ge, TOCL_IR_GE);
  // logical_and / _or / _xor / _not functional and in-place forms decompose into .out.
  TOCL_ITER_OUT(m, "logical_and.out", Cmp<TOCL_IR_LOGICAL_AND>::out);
  TOCL_ITER_OUT(m, "logical_or.out", Cmp<TOCL_IR_LOGICAL_OR>::out);
  TOCL_ITER_OUT(m, "logical_xor.out", Cmp<TOCL_IR_LOGICAL_XOR>::out);
  TOCL_ITER_OUT(m, "logical_not.out", logical_not_out);
}

}  // namespace torch_ocl
