// ocl_allocator.cpp - the runtime's caching allocator as a c10::DeviceAllocator
// (so torch.accelerator.memory_* work), and the pinned host allocator.
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include "ocl_allocator.h"
#include "ocl_common.h"

namespace torch_ocl {

namespace {

void device_deleter(void* p) {
  // Deleters cannot throw; a failure here means a bookkeeping bug, and the
  // runtime has already recorded a message.
  (void)tocl_mem_free(reinterpret_cast<tocl_addr>(p));
}

void set_stat(c10::CachingAllocator::StatArray& a, uint64_t current, uint64_t peak) {
  for (auto& s : a) {
    s.current = static_cast<int64_t>(current);
    s.peak = static_cast<int64_t>(peak);
    s.allocated = static_cast<int64_t>(peak);
  }
}

struct OclDeviceAllocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t n) override {
    int dev = current_device();
    tocl_addr a = 0;
    if (n)
      TOCL_CHECK(tocl_mem_alloc(dev, n, &a));
    void* p = reinterpret_cast<void*>(a);
    return {p, p, &device_deleter,
            c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(dev))};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &device_deleter; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (!count)
      return;
    int dev = tocl_mem_device_of(reinterpret_cast<tocl_addr>(dest));
    TOCL_CHECK(tocl_copy_d2d(dev, tocl_stream_current(dev), reinterpret_cast<tocl_addr>(dest),
                             reinterpret_cast<tocl_addr>(src), count));
  }
  bool initialized() override { return tocl_init() == TOCL_OK; }
  // torch versions differ in emptyCache's parameters and in whether
  // getMemoryInfo exists, so these are declared without `override`: the one
  // that matches the installed torch's signature overrides it.
  void empty_all() {
    for (int d = 0; d < tocl_device_count(); d++)
      TOCL_CHECK(tocl_mem_empty_cache(d));
  }
  void emptyCache(c10::MempoolId_t /*pool*/) { empty_all(); }
  void emptyCache() { empty_all(); }
  void recordStream(const c10::DataPtr& ptr, c10::Stream s) override {
    if (ptr.get())
      TOCL_CHECK(tocl_mem_record_stream(reinterpret_cast<tocl_addr>(ptr.get()), static_cast<int>(s.id())));
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex d) override {
    tocl_mem_stats st{};
    TOCL_CHECK(tocl_mem_stats_get(d, &st));
    c10::CachingDeviceAllocator::DeviceStats r;
    set_stat(r.allocated_bytes, st.allocated_bytes, st.peak_allocated_bytes);
    set_stat(r.active_bytes, st.allocated_bytes, st.peak_allocated_bytes);
    set_stat(r.reserved_bytes, st.reserved_bytes, st.peak_reserved_bytes);
    set_stat(r.requested_bytes, st.requested_bytes, st.requested_bytes);
    set_stat(r.allocation, st.active_blocks, st.active_blocks);
    set_stat(r.active, st.active_blocks, st.active_blocks);
    set_stat(r.segment, st.segments, st.segments);
    for (auto& s : r.allocation) {
      s.allocated = static_cast<int64_t>(st.alloc_count);
      s.freed = static_cast<int64_t>(st.free_count);
    }
    r.num_alloc_retries = static_cast<int64_t>(st.alloc_retries);
    r.num_ooms = static_cast<int64_t>(st.ooms);
    return r;
  }
  void resetAccumulatedStats(c10::DeviceIndex d) override { TOCL_CHECK(tocl_mem_reset_counters(d)); }
  void resetPeakStats(c10::DeviceIndex d) override { TOCL_CHECK(tocl_mem_reset_peak(d)); }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex d) { return memory_info(d); }
};

void host_deleter(void* p) { (void)tocl_host_free(p); }

struct OclPinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = nullptr;
    if (n)
      TOCL_CHECK(tocl_host_alloc(n, &p));
    return {p, p, &host_deleter, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &host_deleter; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

OclDeviceAllocator g_device_allocator;
OclPinnedAllocator g_pinned_allocator;

}  // namespace

std::pair<size_t, size_t> memory_info(int dev) {
  tocl_device_props props{};
  TOCL_CHECK(tocl_device_props_get(dev, &props));
  tocl_mem_stats st{};
  TOCL_CHECK(tocl_mem_stats_get(dev, &st));
  uint64_t total = st.limit_bytes ? st.limit_bytes : props.global_mem_bytes;
  uint64_t used = st.reserved_bytes < total ? st.reserved_bytes : total;
  return {static_cast<size_t>(total - used), static_cast<size_t>(total)};
}

c10::Allocator* device_allocator() { return &g_device_allocator; }
c10::Allocator* pinned_allocator() { return &g_pinned_allocator; }

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_device_allocator);

}  // namespace torch_ocl
