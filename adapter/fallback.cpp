// fallback.cpp - the visible CPU fallback: every aten op without an ocl
// kernel runs on the CPU through PyTorch's boxed fallback, under a policy
// from TORCH_OCL_FALLBACK: warn (default: once per op, naming it), error
// (raise, naming it) or silent. Per-op counts are kept for fallback_stats().
#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "fallback.h"

namespace torch_ocl {
namespace {

std::mutex g_mutex;
std::map<std::string, int64_t> g_counts;

FallbackPolicy policy_from_env() {
  const char* v = std::getenv("TORCH_OCL_FALLBACK");
  if (!v || !*v || !std::strcmp(v, "warn"))
    return FallbackPolicy::Warn;
  if (!std::strcmp(v, "error"))
    return FallbackPolicy::Error;
  if (!std::strcmp(v, "silent"))
    return FallbackPolicy::Silent;
  TORCH_WARN("torch_ocl: TORCH_OCL_FALLBACK='", v, "' is not one of warn, error, silent; using warn");
  return FallbackPolicy::Warn;
}

FallbackPolicy& policy() {
  static FallbackPolicy p = policy_from_env();
  return p;
}

}  // namespace

// Count one CPU run of `name` and apply the policy (raise, warn once, or not).
void note_fallback(const std::string& name) {
  int64_t n;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    n = ++g_counts[name];
  }
  switch (policy()) {
    case FallbackPolicy::Error:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: '", name,
                                  "' has no ocl kernel and TORCH_OCL_FALLBACK=error forbids running it on "
                                  "the CPU. Set TORCH_OCL_FALLBACK=warn to allow the CPU fallback.");
    case FallbackPolicy::Warn:
      if (n == 1)
        TORCH_WARN("torch_ocl: '", name,
                   "' has no ocl kernel yet; running it on the CPU (copies to and from the device). "
                   "Set TORCH_OCL_FALLBACK=silent to hide this or =error to forbid it.");
      break;
    case FallbackPolicy::Silent: break;
  }
}

namespace {

void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::string name = schema.name();
  if (!schema.overload_name().empty())
    name += "." + schema.overload_name();
  note_fallback(name);
  at::native::cpu_fallback(op, stack);
}

}  // namespace

FallbackPolicy fallback_policy() { return policy(); }
void set_fallback_policy(FallbackPolicy p) { policy() = p; }

std::map<std::string, int64_t> fallback_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_counts;
}

void fallback_reset_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_cpu_fallback>());
}

}  // namespace torch_ocl
