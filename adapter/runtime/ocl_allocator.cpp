// ocl_allocator.cpp - the runtime's caching allocator as a c10::DeviceAllocator
// (so torch.accelerator.memory_* work), and the pinned host allocator, which is
// also the device's at::HostAllocator (torch.accelerator.empty_host_cache).
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>

// at::HostAllocator and REGISTER_HOST_ALLOCATOR arrived in torch 2.9 or so;
// older torch keeps only the hooks' pinned allocator.
#if __has_include(<ATen/core/CachingHostAllocator.h>)
// Its alignas(hardware_destructive_interference_size) warns on GCC 12+.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winterference-size"
#include <ATen/core/CachingHostAllocator.h>
#pragma GCC diagnostic pop
#endif
#if defined(REGISTER_HOST_ALLOCATOR)
#define TOCL_HAS_HOST_ALLOCATOR 1
#else
#define TOCL_HAS_HOST_ALLOCATOR 0
#endif

#include "ocl_allocator.h"
#include "ocl_common.h"
#include "ocl_memory_history.h"

namespace torch_ocl {

namespace {

void device_deleter(void* p) {
  // Deleters cannot throw; a failure here means a bookkeeping bug, and the
  // runtime has already recorded a message. A stack that cannot be gathered
  // only leaves the history without it.
  tocl_addr a = reinterpret_cast<tocl_addr>(p);
  try {
    HistoryScope scope(a);
    (void)tocl_mem_free(a);
  } catch (...) {
    (void)tocl_mem_free(a);
  }
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
    if (n) {
      HistoryScope scope(0);
      TOCL_CHECK(tocl_mem_alloc(dev, n, &a));
    }
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

#if TOCL_HAS_HOST_ALLOCATOR
using PinnedBase = at::HostAllocator;
#else
using PinnedBase = c10::Allocator;
#endif

// Pinned memory is not cached: tocl_host_free releases a block at once, or
// as soon as the copies queued on it are done (host.c). empty_cache releases
// those whose copies have finished; there is nothing else to give back.
struct OclPinnedAllocator final : PinnedBase {
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
#if TOCL_HAS_HOST_ALLOCATOR
  bool record_event(void* ptr, void* /*ctx*/, c10::Stream stream) override {
    if (!ptr || !tocl_host_is_pinned(ptr) || stream.device_type() != c10::DeviceType::PrivateUse1)
      return false;
    TOCL_CHECK(tocl_host_record_use(ptr, stream.device_index(), static_cast<int>(stream.id())));
    return true;
  }
  void empty_cache() override { tocl_host_empty_cache(); }
  at::HostStats get_stats() override {
    tocl_host_stats st{};
    TOCL_CHECK(tocl_host_stats_get(&st));
    at::HostStats r;
    auto held = [](c10::CachingAllocator::Stat& s, uint64_t cur, uint64_t peak, uint64_t alloc, uint64_t freed) {
      s.current = static_cast<int64_t>(cur);
      s.peak = static_cast<int64_t>(peak);
      s.allocated = static_cast<int64_t>(alloc);
      s.freed = static_cast<int64_t>(freed);
    };
    held(r.active_requests, st.live_blocks, st.peak_live_blocks, st.alloc_count, st.free_count);
    held(r.active_bytes, st.live_bytes, st.peak_live_bytes, 0, 0);
    // "allocations" counts blocks the allocator holds: live ones and freed
    // ones whose copies are still queued.
    held(r.allocations, st.live_blocks + st.deferred_blocks, st.peak_live_blocks, st.alloc_count, st.free_count);
    held(r.allocated_bytes, st.live_bytes + st.deferred_bytes, st.peak_live_bytes, 0, 0);
    r.num_host_alloc = static_cast<int64_t>(st.alloc_count);
    r.num_host_free = static_cast<int64_t>(st.free_count);
    return r;
  }
  void reset_accumulated_stats() override { tocl_host_reset_counters(); }
  void reset_peak_stats() override { tocl_host_reset_peak(); }
#endif
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

std::vector<std::pair<std::string, int64_t>> host_allocator_stats() {
  std::vector<std::pair<std::string, int64_t>> out;
#if TOCL_HAS_HOST_ALLOCATOR
  // Read through the registry, so this shows what torch itself sees.
  at::HostStats st = at::getHostAllocator(c10::DeviceType::PrivateUse1)->get_stats();
  auto put = [&](const char* name, const c10::CachingAllocator::Stat& s) {
    std::string n(name);
    out.emplace_back(n + ".current", s.current);
    out.emplace_back(n + ".peak", s.peak);
    out.emplace_back(n + ".allocated", s.allocated);
    out.emplace_back(n + ".freed", s.freed);
  };
  put("active_requests", st.active_requests);
  put("active_bytes", st.active_bytes);
  put("allocations", st.allocations);
  put("allocated_bytes", st.allocated_bytes);
  out.emplace_back("num_host_alloc", st.num_host_alloc);
  out.emplace_back("num_host_free", st.num_host_free);
#else
  TORCH_CHECK(false, "torch_ocl: host allocator statistics need torch with at::HostAllocator (2.9 or later)");
#endif
  return out;
}

void host_allocator_reset(bool peak) {
#if TOCL_HAS_HOST_ALLOCATOR
  at::HostAllocator* h = at::getHostAllocator(c10::DeviceType::PrivateUse1);
  if (peak)
    h->reset_peak_stats();
  else
    h->reset_accumulated_stats();
#else
  TORCH_CHECK(false, "torch_ocl: host allocator statistics need torch with at::HostAllocator (2.9 or later)");
#endif
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_device_allocator);
#if TOCL_HAS_HOST_ALLOCATOR
REGISTER_HOST_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_pinned_allocator);
#endif

}  // namespace torch_ocl
