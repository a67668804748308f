// fallback.h - CPU fallback policy and per-op counts.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace torch_ocl {
enum class FallbackPolicy { Warn, Error, Silent };
FallbackPolicy fallback_policy();
void set_fallback_policy(FallbackPolicy p);
std::map<std::string, int64_t> fallback_stats();
void fallback_reset_stats();
// Count one CPU run of an op and apply the policy (raises under 'error').
void note_fallback(const std::string& name);
// Put the out= contract (an out on the wrong device refused before anything
// is written, a non-contiguous out given a contiguous temporary copied back)
// in front of every aten out= overload that has an ocl kernel or only a
// CompositeExplicitAutograd one, except the ocl kernels registered with
// TOCL_ITER_OUT (their TensorIterator keeps the contract unwrapped). Runs
// once, at import; returns how many overloads were wrapped.
int install_out_device_checks();
}  // namespace torch_ocl
