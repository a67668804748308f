// ocl_allocator.h - access to the adapter's allocators.
#pragma once
#include <c10/core/Allocator.h>

#include <utility>

namespace torch_ocl {
c10::Allocator* device_allocator();
c10::Allocator* pinned_allocator();
// (free, total) bytes of device memory as the allocator sees it.
std::pair<size_t, size_t> memory_info(int dev);
}  // namespace torch_ocl
