// sparse_fallback.cpp - sparse tensors (COO, CSR, CSC, BSR, BSC) on ocl.
#include <ATen/ATen.h>
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseTensorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/values_native.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "fallback.h"
#include "fallback_args.h"

namespace torch_ocl {
namespace {

// ---- sparse tensors (COO, CSR, CSC, BSR, BSC) on ocl -------------------------
//
// Tensor.to("ocl") of a CPU sparse CSR tensor works (PyTorch builds it from
// its index and value tensors), but no op has an ocl kernel for these
// layouts. Their ops run on the CPU, counted and governed by the same policy
// as dense fallbacks. Sparse tensors move by their parts, read from the
// TensorImpl: moving them with Tensor.to would dispatch back here. An
// argument the op writes (in-place, out=) takes the CPU result's parts.

bool is_compressed(const at::Tensor& t) {
  return t.defined() && (t.layout() == at::kSparseCsr || t.layout() == at::kSparseCsc ||
                         t.layout() == at::kSparseBsr || t.layout() == at::kSparseBsc);
}

at::Tensor move(const at::Tensor& t, const c10::Device& to) {
  if (!t.defined() || t.device() == to)
    return t;
  if (t.layout() == at::kSparse) {
    auto* impl = static_cast<at::SparseTensorImpl*>(t.unsafeGetTensorImpl());
    return at::_sparse_coo_tensor_unsafe(impl->indices().to(to), impl->values().to(to), t.sizes(),
                                         at::TensorOptions().dtype(t.scalar_type()).layout(at::kSparse).device(to),
                                         impl->coalesced());
  }
  if (!is_compressed(t))
    return t.to(to);
  auto* impl = static_cast<at::SparseCsrTensorImpl*>(t.unsafeGetTensorImpl());
  return at::_sparse_compressed_tensor_unsafe(impl->compressed_indices().to(to), impl->plain_indices().to(to),
                                              impl->values().to(to), t.sizes(),
                                              at::TensorOptions().dtype(t.scalar_type()).layout(t.layout()).device(to));
}

c10::IValue move_value(const c10::IValue& v, const c10::Device& to) {
  if (v.isTensor())
    return move(v.toTensor(), to);
  if (v.isTensorList()) {
    c10::List<at::Tensor> l;
    for (const at::Tensor& t : v.toTensorVector())
      l.push_back(move(t, to));
    return l;
  }
  if (v.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> l;
    for (const auto& t : v.toOptionalTensorVector())
      l.push_back(t ? std::optional<at::Tensor>(move(*t, to)) : std::nullopt);
    return l;
  }
  if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1 && to.is_cpu())
    return c10::Device(c10::kCPU);
  return v;
}

// Put a CPU result into an ocl argument the op wrote: a sparse one takes the
// result's parts (moved to its device), a dense one its values.
void assign_written(const at::Tensor& cpu, const at::Tensor& dev, const std::string& name) {
  if (!cpu.defined() || !dev.defined() || !on_ocl(dev))
    return;
  TORCH_CHECK(cpu.layout() == dev.layout(), "torch_ocl: '", name, "' changed the layout of an argument it wrote");
  if (dev.layout() == at::kStrided) {
    write_back(cpu, dev);
  } else if (dev.layout() == at::kSparse) {
    at::Tensor moved = move(cpu, dev.device());
    auto* src = static_cast<at::SparseTensorImpl*>(moved.unsafeGetTensorImpl());
    auto* dst = static_cast<at::SparseTensorImpl*>(dev.unsafeGetTensorImpl());
    dst->raw_resize_(src->sparse_dim(), src->dense_dim(), moved.sizes());
    dst->set_indices_and_values_unsafe(src->indices(), src->values());
    dst->set_coalesced(src->coalesced());
  } else {
    at::Tensor moved = move(cpu, dev.device());
    auto* src = static_cast<at::SparseCsrTensorImpl*>(moved.unsafeGetTensorImpl());
    static_cast<at::SparseCsrTensorImpl*>(dev.unsafeGetTensorImpl())
        ->set_member_tensors(src->compressed_indices(), src->plain_indices(), src->values(), moved.sizes());
  }
}

void ocl_sparse_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::string name = op_name(schema);
  // Collectives would run through the process group with CPU copies and
  // write the parts back on one rank only as far as that rank knows: refused.
  TORCH_CHECK_NOT_IMPLEMENTED(schema.name().rfind("c10d::", 0) != 0, "torch_ocl: '", name,
                              "' on a sparse tensor: collectives on sparse ocl tensors are not supported; "
                              "use to_dense() first, or run the collective on the CPU");
  const size_t nargs = schema.arguments().size();
  const size_t begin = stack->size() - nargs;
  std::vector<c10::IValue> dev_args(stack->begin() + begin, stack->end());
  std::optional<c10::Device> target = target_device(dev_args);
  if (target)
    check_out_device(schema, dev_args, *target);
  note_fallback(name);
  std::vector<c10::IValue> cpu_args(nargs);
  for (size_t i = 0; i < nargs; i++)
    (*stack)[begin + i] = cpu_args[i] = move_value(dev_args[i], c10::Device(c10::kCPU));
  op.callBoxed(stack);
  // Written arguments: the CPU copies hold the results (same tensor objects).
  for (size_t i = 0; i < nargs; i++) {
    const auto* alias = schema.arguments()[i].alias_info();
    if (!alias || !alias->isWrite())
      continue;
    if (dev_args[i].isTensor()) {
      assign_written(cpu_args[i].toTensor(), dev_args[i].toTensor(), name);
    } else if (dev_args[i].isTensorList()) {
      auto d = dev_args[i].toTensorVector();
      auto c = cpu_args[i].toTensorVector();
      for (size_t k = 0; k < d.size(); k++)
        assign_written(c[k], d[k], name);
    }
  }
  // Returns: a mutable alias is the original ocl argument; the rest move.
  const auto& returns = schema.returns();
  const size_t rbegin = stack->size() - returns.size();
  for (size_t r = 0; r < returns.size(); r++) {
    c10::IValue& v = (*stack)[rbegin + r];
    const auto* alias = returns[r].alias_info();
    if (alias && alias->isWrite()) {
      int i = written_argument(schema, *alias);
      if (i >= 0)
        v = dev_args[i];
      continue;
    }
    if (target)
      v = move_value(v, *target);
  }
}

}  // namespace

// The layout's own accessors and copy_ (device-independent in ATen: they read
// the TensorImpl's parts), so that Tensor.to and .cpu() move these tensors.
TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("crow_indices", TORCH_FN(at::native::crow_indices_sparse_csr));
  m.impl("col_indices", TORCH_FN(at::native::col_indices_sparse_csr));
  m.impl("ccol_indices", TORCH_FN(at::native::ccol_indices_sparse_csr));
  m.impl("row_indices", TORCH_FN(at::native::row_indices_sparse_csr));
  m.impl("values", TORCH_FN(at::native::values_sparse_csr));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse_csr));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse_csr));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse_csr));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_compressed_));
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_sparse_fallback>());
}

// COO tensors the same way: the factory PyTorch's Tensor.to and to_sparse
// end in, the parts' accessors, copy_, and the CPU fallback for the rest.
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_sparse_coo_tensor_with_dims_and_tensors", TORCH_FN(at::native::new_with_dims_and_tensor_sparse_symint));
  m.impl("_indices", TORCH_FN(at::native::_indices_sparse));
  m.impl("_values", TORCH_FN(at::native::_values_sparse));
  m.impl("indices", TORCH_FN(at::native::indices_sparse));
  m.impl("values", TORCH_FN(at::native::values_sparse));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("is_coalesced", TORCH_FN(at::native::is_coalesced_sparse));
  m.impl("_coalesced_", TORCH_FN(at::native::_coalesced_sparse_));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_wrapper_));
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_sparse_fallback>());
}

}  // namespace torch_ocl
