// ocl_elementwise.cpp - TensorIterator (PyTorch's broadcasting, type
// promotion, out= resizing and overlap checks) -> IR graph -> tocl_ew_run.
#include "ocl_elementwise.h"

#include <vector>

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

int cast_to(tocl_ir_graph* g, int node, tocl_dtype storage, tocl_dtype compute) {
  return tocl_dtype_compute(storage) == compute ? node : tocl_ir_cast(g, node, compute);
}

}  // namespace

void run_binary(at::TensorIteratorBase& iter, tocl_ir_op op, const std::optional<c10::Scalar>& alpha) {
  if (iter.numel() == 0)
    return;
  const tocl_dtype cd = tocl_dtype_compute(to_tocl_dtype(iter.common_dtype()));
  tocl_ir_graph g;
  tocl_ir_init(&g);
  std::vector<tocl_tensor> inputs;
  std::vector<tocl_scalar> scalars;
  int node[2];
  for (int k = 0; k < 2; k++) {
    int arg = iter.noutputs() + k;
    if (iter.is_cpu_scalar(arg)) {
      // A CPU 0-dim tensor (e.g. a Python number) becomes a kernel argument.
      scalars.push_back(to_tocl_scalar(iter.tensor(arg).item()));
      node[k] = tocl_ir_scalar(&g, cd);
    } else {
      inputs.push_back(operand(iter, arg));
      node[k] = cast_to(&g, tocl_ir_input(&g, inputs.back().dtype), inputs.back().dtype, cd);
    }
  }
  if (alpha && !(alpha->equal(1))) {
    scalars.push_back(to_tocl_scalar(*alpha));
    node[1] = tocl_ir_binary(&g, TOCL_IR_MUL, cd, tocl_ir_scalar(&g, cd), node[1]);
  }
  int r = tocl_ir_binary(&g, op, cd, node[0], node[1]);
  tocl_tensor out = operand(iter, 0);
  tocl_ir_output(&g, r, out.dtype);  // the store converts to the output's dtype
  TORCH_CHECK(!g.overflow, "torch_ocl: internal error building the elementwise graph");
  int dev = iter.device(0).index();
  TOCL_CHECK(tocl_ew_run(dev, tocl_stream_current(dev), &g, &out, inputs.data(), scalars.data()));
}

}  // namespace torch_ocl
