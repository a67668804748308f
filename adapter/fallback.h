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
// Wrap every aten out= overload that has no ocl kernel but a composite one
// with a check of the out device; returns how many were wrapped.
int install_out_device_checks();
}  // namespace torch_ocl
