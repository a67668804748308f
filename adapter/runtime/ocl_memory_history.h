// ocl_memory_history.h - what the allocator reports (memory profiler,
// allocation history for snapshots): the allocator's side of it.
#pragma once

#include <c10/macros/Macros.h>

#include <atomic>

#include "tocl/mem.h"

namespace pybind11 {
class module_;
}

namespace torch_ocl {

// Non-zero while the history keeps Python/C++ stacks: then the allocator
// gathers one before each allocation or free (outside the runtime's lock:
// gathering Python frames takes the GIL).
extern std::atomic<bool> g_history_gathers;

// While one lives on a thread, the runtime's events on that thread get its
// stack. `freed` is the address being freed (0 for an allocation).
struct HistoryScope {
  explicit HistoryScope(tocl_addr freed) {
    if (C10_UNLIKELY(g_history_gathers.load(std::memory_order_relaxed)))
      begin(freed);
  }
  ~HistoryScope() {
    if (C10_UNLIKELY(active_))
      end();
  }
  HistoryScope(const HistoryScope&) = delete;
  HistoryScope& operator=(const HistoryScope&) = delete;

 private:
  void begin(tocl_addr freed);
  void end();
  bool active_ = false;
};

// _C._record_memory_history, _C._memory_snapshot, host allocator statistics.
void register_memory_bindings(pybind11::module_& m);

}  // namespace torch_ocl
