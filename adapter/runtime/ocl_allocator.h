// ocl_allocator.h - access to the adapter's allocators.
#pragma once
#include <c10/core/Allocator.h>

#include <string>
#include <utility>
#include <vector>

namespace torch_ocl {
c10::Allocator* device_allocator();
c10::Allocator* pinned_allocator();
// (free, total) bytes of device memory as the allocator sees it.
std::pair<size_t, size_t> memory_info(int dev);
// The registered at::HostAllocator's statistics, with torch.cuda.host_memory_stats()'s key names.
std::vector<std::pair<std::string, int64_t>> host_allocator_stats();
void host_allocator_reset(bool peak);  // peak stats, or else the cumulative counts
}  // namespace torch_ocl
