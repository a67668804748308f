// ocl_dist_staging.h - handing ocl tensors to Gloo as host memory: mapped on
// CPU devices, copied elsewhere.
// Part of the oclgloo backend's one translation unit (included only by
// ocl_process_group.cpp, so torch's headers are compiled once).
#pragma once

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "ocl_common.h"

namespace torch_ocl {
namespace dist {

using Tensors = std::vector<at::Tensor>;


// On CPU devices a contiguous ocl tensor is handed to Gloo as a host view of
// its own memory (tocl_mem_map: no copy either way). TORCH_OCL_DIST_MAP=0
// copies instead (for comparison).
inline bool can_map(const at::Tensor& t) {
  static const bool enabled = [] {
    const char* e = std::getenv("TORCH_OCL_DIST_MAP");
    return !(e && std::string(e) == "0");
  }();
  if (!enabled || t.is_cpu() || !t.is_contiguous() || t.numel() == 0)
    return false;
  // Per device: 0 unknown, 1 no, 2 yes (static storage starts zeroed).
  // Atomic: the issue and completion threads of several groups ask at
  // once; asking twice gives the same answer.
  static std::atomic<int> supported[64];
  int dev = t.device().index();
  if (dev < 0 || dev >= 64)
    return false;
  int s = supported[dev].load(std::memory_order_relaxed);
  if (s == 0) {
    s = tocl_mem_map_supported(dev) ? 2 : 1;
    supported[dev].store(s, std::memory_order_relaxed);
  }
  return s == 2;
}

// The host view of t's memory, mapped after the work queued on the current
// stream; the mapping is kept in maps until released.
inline at::Tensor mapped(const at::Tensor& t, std::vector<tocl_map>& maps) {
  int dev = t.device().index();
  tocl_map m{};
  TOCL_CHECK(tocl_mem_map(dev, tocl_stream_current(dev), reinterpret_cast<tocl_addr>(t.data_ptr()), t.nbytes(), &m));
  maps.push_back(m);
  return at::from_blob(m.host, t.sizes(), t.options().device(at::kCPU));
}

// A contiguous host tensor with t's values (t itself when it already is one).
inline at::Tensor to_host(const at::Tensor& t) {
  if (t.is_cpu() && t.is_contiguous())
    return t;
  at::Tensor h = at::empty(t.sizes(), t.options().device(at::kCPU).memory_format(at::MemoryFormat::Contiguous));
  h.copy_(t);
  return h;
}

// A contiguous host tensor to receive t's new values.
inline at::Tensor host_like(const at::Tensor& t) {
  if (t.is_cpu() && t.is_contiguous())
    return t;
  return at::empty(t.sizes(), t.options().device(at::kCPU).memory_format(at::MemoryFormat::Contiguous));
}

// Host tensors flattened into one buffer (one Gloo call for a coalesced op).
inline at::Tensor flat_cat(const Tensors& hs) {
  Tensors flat;
  for (const auto& h : hs)
    flat.push_back(h.reshape({-1}));
  return at::cat(flat);
}

// Copy consecutive segments of a flat buffer back into hs.
inline void flat_split(const at::Tensor& flat, Tensors& hs) {
  int64_t off = 0;
  for (auto& h : hs) {
    h.view({-1}).copy_(flat.narrow(0, off, h.numel()));
    off += h.numel();
  }
}

// A coalesced call's total size: its key's shape.
inline int64_t total_numel(const Tensors& ts) {
  int64_t n = 0;
  for (const auto& t : ts)
    n += t.numel();
  return n;
}

// Each of a thread's ocl devices gets its own stream from the pool, taken
// the first time the thread touches the device.
inline void use_comm_stream(int dev) {
  thread_local std::vector<int> streams;
  if (dev >= static_cast<int>(streams.size()))
    streams.resize(dev + 1, -1);
  if (streams[dev] < 0) {
    int s = 0;
    TOCL_CHECK(tocl_stream_from_pool(dev, &s));
    streams[dev] = s;
  }
  TOCL_CHECK(tocl_stream_set_current(dev, streams[dev]));
}

}  // namespace dist
}  // namespace torch_ocl
