// ocl_complex_route.cpp - the registry of complex kernels behind routed ops
// (ocl_complex_route.h).
#include "ocl_complex_route.h"

#include <unordered_map>
#include <mutex>

namespace torch_ocl {
namespace {

std::unordered_map<c10::OperatorName, c10::KernelFunction>& registry() {
  static std::unordered_map<c10::OperatorName, c10::KernelFunction> r;
  return r;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

c10::OperatorName parse(const std::string& name) {
  auto dot = name.find('.');
  return c10::OperatorName("aten::" + name.substr(0, dot), dot == std::string::npos ? "" : name.substr(dot + 1));
}

// Whether a boxed call has a uint16/32/64 tensor argument (no complex kernel
// computes in those).
bool has_wide_unsigned(const torch::jit::Stack& stack, size_t n) {
  auto wide = [](const at::Tensor& t) { return t.defined() && !t.is_complex() && complex_route::routed(t.scalar_type()); };
  for (size_t i = stack.size() - n; i < stack.size(); i++) {
    const c10::IValue& v = stack[i];
    if (v.isTensor() && wide(v.toTensor()))
      return true;
    if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorVector())
        if (wide(t))
          return true;
  }
  return false;
}

}  // namespace

void register_complex_kernel(const char* name, c10::KernelFunction k) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[parse(name)] = std::move(k);
}

void complex_or_cpu(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  const c10::KernelFunction* k = nullptr;
  if (!has_wide_unsigned(*stack, op.schema().arguments().size())) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(op.operator_name());
    if (it != registry().end())
      k = &it->second;  // entries are never erased
  }
  if (k)
    k->callBoxed(op, ks, stack);
  else
    ocl_cpu_fallback(op, stack);
}

}  // namespace torch_ocl
