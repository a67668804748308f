// ocl_elementwise.cpp - TensorIterator -> IR graph -> tocl_ew_run.
#include "ocl_elementwise.h"

namespace torch_ocl {
namespace {

// The iterator's view of one operand: same iteration shape for all, strides
// converted from bytes to elements.
tocl_tensor operand(const at::TensorIteratorBase& iter, int arg) {
  tocl_tensor t{};
  t.data = reinterpret_cast<tocl_addr>(iter.data_ptr(arg));
  t.dtype = to_tocl_dtype(iter.dtype(arg));
  t.ndim = static_cast<int>(iter.ndim());
  TORCH_CHECK(t.ndim <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: too many dimensions: ", t.ndim);
  int64_t es = iter.element_size(arg);
  for (int i = 0; i < t.ndim; i++) {
    t.sizes[i] = iter.shape()[i];
    t.strides[i] = iter.strides(arg)[i] / es;
  }
  return t;
}

}  // namespace

EwGraph::EwGraph(at::TensorIteratorBase& iter, std::optional<c10::ScalarType> compute) : iter_(iter) {
  tocl_ir_init(&g_);
  // common_dtype() is only asked for when no compute dtype is given: an
  // iterator over mixed dtypes without promotion has none.
  common_ = to_tocl_dtype(compute ? *compute : iter.common_dtype());
  compute_ = tocl_dtype_compute(common_);
  int nin = iter.ninputs();
  raw_.assign(nin, -1);
  cast_.assign(nin, -1);
  out_nodes_.assign(iter.noutputs(), -1);
}

int EwGraph::check(int node) const {
  TORCH_CHECK(node >= 0 && !g_.overflow,
              "torch_ocl: internal error: the elementwise graph could not be built (an op without a formula "
              "for this dtype, or more than ",
              TOCL_IR_MAX_NODES, " nodes)");
  return node;
}

tocl_dtype EwGraph::input_dtype(int k) const { return to_tocl_dtype(iter_.dtype(iter_.noutputs() + k)); }

int EwGraph::raw_input(int k) {
  TORCH_CHECK(k >= 0 && k < static_cast<int>(raw_.size()), "torch_ocl: no input ", k);
  if (raw_[k] >= 0)
    return raw_[k];
  int arg = iter_.noutputs() + k;
  if (iter_.is_cpu_scalar(arg)) {
    // Passed in the compute dtype (as PyTorch converts it), so a Python
    // float never needs fp64 on the device.
    scalars_.push_back(to_tocl_scalar(iter_.tensor(arg).item()));
    tocl_dtype sd = to_tocl_dtype(iter_.dtype(arg));
    raw_[k] = check(tocl_ir_scalar(&g_, sd == TOCL_BOOL ? TOCL_BOOL : compute_));
  } else {
    inputs_.push_back(operand(iter_, arg));
    raw_[k] = check(tocl_ir_input(&g_, inputs_.back().dtype));
  }
  return raw_[k];
}

int EwGraph::input(int k) {
  if (cast_.at(k) < 0)
    cast_[k] = check(tocl_ir_cast(&g_, raw_input(k), compute_));
  return cast_[k];
}

int EwGraph::scalar(const c10::Scalar& v, std::optional<tocl_dtype> dt) {
  scalars_.push_back(to_tocl_scalar(v));
  return check(tocl_ir_scalar(&g_, dt.value_or(compute_)));
}

int EwGraph::cast(int node, tocl_dtype dt) { return check(tocl_ir_cast(&g_, node, dt)); }
int EwGraph::unary(tocl_ir_op op, int a, std::optional<tocl_dtype> dt) {
  return check(tocl_ir_unary(&g_, op, dt.value_or(compute_), a));
}
int EwGraph::binary(tocl_ir_op op, int a, int b, std::optional<tocl_dtype> dt) {
  return check(tocl_ir_binary(&g_, op, dt.value_or(compute_), a, b));
}
int EwGraph::ternary(tocl_ir_op op, int a, int b, int c, std::optional<tocl_dtype> dt) {
  return check(tocl_ir_ternary(&g_, op, dt.value_or(compute_), a, b, c));
}

void EwGraph::output(int k, int node) {
  // A float16/bfloat16 result is computed in float32, and PyTorch rounds it
  // to the common dtype before casting to an out= of another dtype:
  // half(33000) + half(33000) into a float64 out is inf, not 66000.
  tocl_dtype out_dt = to_tocl_dtype(iter_.dtype(k));
  if (node >= 0 && common_ != compute_ && out_dt != common_ && g_.nodes[node].dtype == compute_)
    node = unary(common_ == TOCL_F16 ? TOCL_IR_ROUND_F16 : TOCL_IR_ROUND_BF16, node);
  out_nodes_.at(k) = node;
}

void EwGraph::run() {
  if (iter_.numel() == 0)
    return;
  std::vector<tocl_tensor> outs;
  for (int k = 0; k < iter_.noutputs(); k++) {
    TORCH_CHECK(out_nodes_[k] >= 0, "torch_ocl: internal error: output ", k, " has no value");
    outs.push_back(operand(iter_, k));
    check(tocl_ir_output(&g_, out_nodes_[k], outs.back().dtype));
  }
  int dev = iter_.device(0).index();
  TOCL_CHECK(tocl_ew_run(dev, tocl_stream_current(dev), &g_, outs.data(), inputs_.data(), scalars_.data()));
}

void run_binary(at::TensorIteratorBase& iter, tocl_ir_op op, const std::optional<c10::Scalar>& alpha) {
  if (iter.numel() == 0)
    return;
  EwGraph g(iter);
  int a = g.input(0), b = g.input(1);
  if (alpha && !alpha->equal(1))
    b = g.binary(TOCL_IR_MUL, g.scalar(*alpha), b);
  g.output(0, g.binary(op, a, b));
  g.run();
}

}  // namespace torch_ocl
