// ocl_elementwise.h - run a TensorIterator through the runtime's IR engine.
//
// Every pointwise op is: build a TensorIterator (PyTorch's broadcasting, type
// promotion, out= resizing and overlap checks), describe the formula as IR
// nodes with EwGraph, run(). Example (hypot):
//
//   EwGraph g(iter);
//   int a = g.input(0), b = g.input(1);
//   g.output(0, g.unary(TOCL_IR_SQRT, g.binary(TOCL_IR_ADD, g.binary(TOCL_IR_MUL, a, a),
//                                                  g.binary(TOCL_IR_MUL, b, b))));
//   g.run();
#pragma once

#include <ATen/TensorIterator.h>

#include <optional>
#include <vector>

#include "ocl_common.h"

namespace torch_ocl {

class EwGraph {
 public:
  // compute: the dtype the formula is evaluated in; by default the
  // iterator's common dtype (float32 for float16/bfloat16).
  explicit EwGraph(at::TensorIteratorBase& iter, std::optional<c10::ScalarType> compute = std::nullopt);

  tocl_dtype compute() const { return compute_; }
  // Input k (0-based, after the outputs) converted to the compute dtype.
  // A CPU 0-dim tensor (e.g. a Python number) becomes a kernel argument.
  int input(int k);
  // Input k in its own dtype (compute type of its storage).
  int raw_input(int k);
  // dtype of input k as stored.
  tocl_dtype input_dtype(int k) const;
  // A scalar kernel argument of dtype dt (default: the compute dtype).
  int scalar(const c10::Scalar& v, std::optional<tocl_dtype> dt = std::nullopt);
  int cast(int node, tocl_dtype dt);
  int unary(tocl_ir_op op, int a, std::optional<tocl_dtype> dt = std::nullopt);
  int binary(tocl_ir_op op, int a, int b, std::optional<tocl_dtype> dt = std::nullopt);
  int ternary(tocl_ir_op op, int a, int b, int c, std::optional<tocl_dtype> dt = std::nullopt);
  // Store node into output k (converted to the output's dtype).
  void output(int k, int node);
  // Launch on the iterator's device and current stream (no host wait).
  void run();

  tocl_ir_graph& graph() { return g_; }

 private:
  int check(int node) const;
  at::TensorIteratorBase& iter_;
  tocl_ir_graph g_;
  tocl_dtype common_;   // the dtype PyTorch computes in (float16 stays float16)
  tocl_dtype compute_;  // the dtype the kernel computes in (float32 for float16)
  std::vector<int> raw_, cast_;
  std::vector<tocl_tensor> inputs_;
  std::vector<tocl_scalar> scalars_;
  std::vector<int> out_nodes_;
};

// out = op(in0, in1) [with in1 scaled by alpha first when given and != 1].
void run_binary(at::TensorIteratorBase& iter, tocl_ir_op op, const std::optional<c10::Scalar>& alpha);

}  // namespace torch_ocl
