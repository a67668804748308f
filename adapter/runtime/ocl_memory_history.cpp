// ocl_memory_history.cpp - the runtime allocator's events, turned into what
// PyTorch's tools read: memory usage and out-of-memory reports for
// torch.profiler (profile_memory, export_memory_timeline), and the allocation
// history and segment snapshot in torch.cuda.memory._snapshot()'s dictionary
// shape (torch.cuda._memory_viz and the memory viewer read it unchanged).
//
// The runtime calls observe() with its lock held, so observe() only copies
// and never gathers a stack: the allocator gathers one before it calls the
// runtime (HistoryScope), because gathering Python frames takes the GIL and
// another thread may hold the GIL while it waits for the allocator's lock.
#include <c10/core/Allocator.h>
#include <c10/util/ApproximateClock.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/profiler/combined_traceback.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ocl_allocator.h"
#include "ocl_common.h"
#include "ocl_memory_history.h"

namespace py = pybind11;

// From torch/csrc/profiler/python/combined_traceback.h, which the wheel ships
// but cannot be included: it needs nlohmann/json, which the wheel does not
// ship. libtorch_python exports the function.
namespace torch {
std::vector<py::object> py_symbolize(std::vector<CapturedTraceback*>& to_symbolize);
}

namespace torch_ocl {

std::atomic<bool> g_history_gathers{false};

namespace {

// torch.cuda.memory._record_memory_history's levels, in order.
enum Level { kNone = 0, kState = 1, kAlloc = 2, kAll = 3 };

// Action names exactly as torch.cuda.memory's TraceEntry spells them, in
// tocl_mem_event_kind order.
const char* const kActions[] = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"};
constexpr int kNumActions = sizeof kActions / sizeof kActions[0];
static_assert(TOCL_MEM_EV_OOM + 1 == kNumActions, "one action name per tocl_mem_event_kind");

using Context = std::shared_ptr<c10::GatheredContext>;

struct Entry {
  tocl_mem_event ev;
  int64_t time_us;
  Context ctx;
};

struct History {
  std::mutex mu;  // taken inside the runtime's lock (observe), never around a runtime call
  std::atomic<bool> on{false};
  int enabled = kNone;  // kState: contexts of live blocks; kAll: also the trace
  int context = kNone;  // which events keep a stack
  bool cpp = false;     // stacks="all": C++ frames too
  size_t max_entries = 0;
  unsigned skip = 0;    // bit per tocl_mem_event_kind
  std::vector<Entry> ring;
  size_t next = 0;      // where the next entry goes once the ring is full
  std::unordered_map<tocl_addr, Context> live;  // stack of each live block's allocation
};

History& history() {
  static History* h = new History();  // never destroyed: events may arrive during exit
  return *h;
}

// The stack the current thread gathered for the runtime call in progress.
thread_local Context tl_ctx;
thread_local tocl_addr tl_freed = 0;
thread_local bool tl_in_alloc = false;

void report_to_profiler(const tocl_mem_event& ev) {
  c10::Device dev(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(ev.dev));
  // Reported when the caller frees, as CUDA does: that is when the memory
  // stops being the caller's, whatever other streams still do with it.
  if (ev.kind == TOCL_MEM_EV_ALLOC || ev.kind == TOCL_MEM_EV_FREE_REQUESTED) {
    int64_t delta = static_cast<int64_t>(ev.size);
    c10::reportMemoryUsageToProfiler(reinterpret_cast<void*>(ev.addr),
                                     ev.kind == TOCL_MEM_EV_ALLOC ? delta : -delta, ev.allocated_bytes,
                                     ev.reserved_bytes, dev);
  } else if (ev.kind == TOCL_MEM_EV_OOM) {
    c10::reportOutOfMemoryToProfiler(static_cast<int64_t>(ev.size), ev.allocated_bytes, ev.reserved_bytes, dev);
  }
}

// The stack this thread gathered, if it belongs to this event: an
// allocation's for events inside tocl_mem_alloc, a free's only for the block
// being freed (a free can complete other blocks' pending frees).
Context own_context(const tocl_mem_event& ev) {
  if (!tl_ctx)
    return nullptr;
  switch (ev.kind) {
    case TOCL_MEM_EV_ALLOC:
    case TOCL_MEM_EV_SEGMENT_ALLOC:
    case TOCL_MEM_EV_OOM:
      return tl_in_alloc ? tl_ctx : nullptr;
    case TOCL_MEM_EV_FREE_REQUESTED:
    case TOCL_MEM_EV_FREE_COMPLETED:
      return tl_freed == ev.addr ? tl_ctx : nullptr;
    default:
      return nullptr;
  }
}

void record(History& h, const tocl_mem_event& ev) {
  std::lock_guard<std::mutex> g(h.mu);
  if (h.enabled == kNone)
    return;
  Context mine = own_context(ev);
  Context ctx;
  if (ev.kind == TOCL_MEM_EV_ALLOC) {
    if (h.context >= kState && mine)
      h.live[ev.addr] = mine;
    ctx = h.context >= kAlloc ? mine : nullptr;
  } else if (ev.kind == TOCL_MEM_EV_FREE_REQUESTED || ev.kind == TOCL_MEM_EV_FREE_COMPLETED) {
    // As CUDA: the free's own stack with context="all", else the allocation's.
    auto it = h.live.find(ev.addr);
    Context alloc_ctx = it != h.live.end() ? it->second : nullptr;
    ctx = h.context >= kAll && mine ? mine : alloc_ctx;
    if (ev.kind == TOCL_MEM_EV_FREE_COMPLETED && it != h.live.end())
      h.live.erase(it);
  } else {
    ctx = h.context >= kAlloc ? mine : nullptr;
  }
  if (h.enabled < kAll || (h.skip & (1u << ev.kind)) || h.max_entries == 0)
    return;
  Entry e{ev, static_cast<int64_t>(c10::getTime() / 1000), std::move(ctx)};
  if (h.ring.size() < h.max_entries) {
    h.ring.push_back(std::move(e));
  } else {
    h.ring[h.next] = std::move(e);
    h.next = (h.next + 1) % h.max_entries;
  }
}

// Installed for the life of the process. With profiling and history off it
// costs a call, one relaxed load and the profiler's thread-local test.
void observe(const tocl_mem_event* ev, void* /*user*/) {
  History& h = history();
  bool hist = h.on.load(std::memory_order_relaxed);
  if (C10_LIKELY(!hist) && C10_LIKELY(!c10::memoryProfilingEnabled()))
    return;
  if (c10::memoryProfilingEnabled())
    report_to_profiler(*ev);
  if (hist)
    record(h, *ev);
}

struct InstallObserver {
  InstallObserver() { tocl_mem_set_observer(&observe, nullptr); }
} install_observer;

int parse_level(const std::optional<std::string>& s, const char* what, bool allow_alloc) {
  if (!s)
    return kNone;
  if (*s == "state")
    return kState;
  if (*s == "alloc" && allow_alloc)
    return kAlloc;
  if (*s == "all")
    return kAll;
  TORCH_CHECK_VALUE(false, "torch.ocl.memory._record_memory_history: ", what, " must be None, \"state\"",
                    allow_alloc ? ", \"alloc\"" : "", " or \"all\", got \"", *s, "\"");
  return kNone;
}

void record_memory_history(const std::optional<std::string>& enabled, const std::optional<std::string>& context,
                           const std::string& stacks, size_t max_entries, bool clear_history,
                           const std::vector<std::string>& skip_actions) {
  int en = parse_level(enabled, "enabled", false);
  int ctx = parse_level(context, "context", true);
  TORCH_CHECK_VALUE(stacks == "python" || stacks == "all",
                    "torch.ocl.memory._record_memory_history: stacks must be \"python\" or \"all\", got \"", stacks,
                    "\"");
  unsigned skip = 0;
  for (const auto& a : skip_actions) {
    int k = 0;
    while (k < kNumActions && a != kActions[k])
      k++;
    // "snapshot" and "annotate" entries are never recorded here, so skipping them is a no-op.
    TORCH_CHECK_VALUE(k < kNumActions || a == "snapshot" || a == "annotate",
                      "torch.ocl.memory._record_memory_history: unknown action \"", a,
                      "\" in skip_actions (expected alloc, free_requested, free_completed, segment_alloc, "
                      "segment_free, oom, snapshot)");
    if (k < kNumActions)
      skip |= 1u << k;
  }
  History& h = history();
  std::vector<Entry> dropped;  // destroyed outside the lock
  std::unordered_map<tocl_addr, Context> dropped_live;
  {
    std::lock_guard<std::mutex> g(h.mu);
    h.enabled = en;
    h.context = en == kNone ? kNone : ctx;
    h.cpp = stacks == "all";
    h.skip = skip;
    if (en == kNone || clear_history || max_entries != h.max_entries) {
      dropped.swap(h.ring);
      h.next = 0;
    }
    h.max_entries = max_entries;
    if (en == kNone)
      dropped_live.swap(h.live);
    h.on.store(en != kNone, std::memory_order_relaxed);
    g_history_gathers.store(en != kNone && h.context != kNone, std::memory_order_relaxed);
  }
}

py::list frames_of(const Context& c, std::unordered_map<c10::GatheredContext*, py::object>& symbolized) {
  if (!c)
    return py::list();
  auto it = symbolized.find(c.get());
  return it != symbolized.end() ? py::list(it->second) : py::list();
}

const char* block_state_name(tocl_mem_block_state s) {
  switch (s) {
    case TOCL_MEM_BLOCK_ACTIVE_ALLOCATED:
      return "active_allocated";
    case TOCL_MEM_BLOCK_AWAITING_FREE:
      return "active_awaiting_free";
    default:
      return "inactive";
  }
}

// torch.cuda.memory._snapshot()'s dictionary for every ocl device.
py::dict memory_snapshot(bool include_traces) {
  tocl_mem_snapshot snap{};
  TOCL_CHECK(tocl_mem_snapshot_take(&snap));
  std::unique_ptr<tocl_mem_snapshot, void (*)(tocl_mem_snapshot*)> guard(&snap, &tocl_mem_snapshot_release);

  History& h = history();
  std::vector<Entry> trace;
  std::vector<Context> block_ctx(static_cast<size_t>(snap.nblocks));
  {
    std::lock_guard<std::mutex> g(h.mu);
    if (include_traces) {
      trace.reserve(h.ring.size());
      for (size_t i = 0; i < h.ring.size(); i++)  // oldest first
        trace.push_back(h.ring[(h.next + i) % h.ring.size()]);
    }
    for (int i = 0; i < snap.nblocks; i++) {
      if (snap.blocks[i].state == TOCL_MEM_BLOCK_INACTIVE)
        continue;
      auto it = h.live.find(snap.blocks[i].addr);
      if (it != h.live.end())
        block_ctx[static_cast<size_t>(i)] = it->second;
    }
  }

  // Symbolize every distinct stack once (the expensive part, with C++ frames).
  std::vector<torch::CapturedTraceback*> to_symbolize;
  std::vector<c10::GatheredContext*> keys;
  std::unordered_map<c10::GatheredContext*, py::object> symbolized;
  auto want = [&](const Context& c) {
    if (c && symbolized.emplace(c.get(), py::none()).second) {
      to_symbolize.push_back(torch::getCapturedTracebackFromContext(c));
      keys.push_back(c.get());
    }
  };
  for (const auto& e : trace)
    want(e.ctx);
  for (const auto& c : block_ctx)
    want(c);
  std::vector<py::object> frames = torch::py_symbolize(to_symbolize);
  for (size_t i = 0; i < keys.size(); i++)
    symbolized[keys[i]] = frames[i];

  py::list segments;
  for (int s = 0; s < snap.nsegments; s++) {
    const tocl_mem_segment_info& si = snap.segments[s];
    py::list blocks;
    uint64_t requested = 0;
    for (int k = 0; k < si.nblocks; k++) {
      int bi = si.first_block + k;
      const tocl_mem_block_info& b = snap.blocks[bi];
      py::dict d;
      d["address"] = b.addr;
      d["size"] = b.size;
      d["requested_size"] = b.requested;
      d["state"] = block_state_name(b.state);
      d["frames"] = frames_of(block_ctx[static_cast<size_t>(bi)], symbolized);
      requested += b.requested;
      blocks.append(d);
    }
    py::dict d;
    d["device"] = si.dev;
    d["address"] = si.addr;
    d["total_size"] = si.size;
    d["allocated_size"] = si.allocated;
    d["active_size"] = si.active;
    d["requested_size"] = requested;
    d["stream"] = si.stream;
    d["segment_type"] = si.large ? "large" : "small";
    d["segment_pool_id"] = py::make_tuple(0, 0);
    d["is_expandable"] = false;
    d["frames"] = py::list();
    d["blocks"] = blocks;
    segments.append(d);
  }

  int ndev = tocl_device_count();
  std::vector<py::list> per_dev(static_cast<size_t>(ndev > 0 ? ndev : 0));
  for (const auto& e : trace) {
    if (e.ev.dev < 0 || e.ev.dev >= ndev)
      continue;
    py::dict d;
    d["action"] = kActions[e.ev.kind];
    d["addr"] = e.ev.addr;
    d["size"] = e.ev.size;
    d["stream"] = e.ev.stream;
    d["time_us"] = e.time_us;
    d["frames"] = frames_of(e.ctx, symbolized);
    if (e.ev.kind == TOCL_MEM_EV_OOM)
      d["device_free"] = e.ev.device_free;
    per_dev[static_cast<size_t>(e.ev.dev)].append(d);
  }
  py::list device_traces;
  for (auto& l : per_dev)
    device_traces.append(l);

  py::dict settings;
  settings["PYTORCH_OCL_ALLOC_CONF"] = "";
  py::dict out;
  out["segments"] = segments;
  out["device_traces"] = device_traces;
  out["allocator_settings"] = settings;
  return out;
}

}  // namespace

void HistoryScope::begin(tocl_addr freed) {
  bool cpp;
  {
    History& h = history();
    std::lock_guard<std::mutex> g(h.mu);
    cpp = h.cpp;
  }
  tl_ctx = torch::CapturedTraceback::gather(/*python=*/true, /*script=*/true, cpp);
  tl_freed = freed;
  tl_in_alloc = freed == 0;
  active_ = true;
}

void HistoryScope::end() {
  tl_ctx.reset();
  tl_freed = 0;
  tl_in_alloc = false;
}

void register_memory_bindings(py::module_& m) {
  m.def("_record_memory_history", &record_memory_history, py::arg("enabled"), py::arg("context"),
        py::arg("stacks"), py::arg("max_entries"), py::arg("clear_history"), py::arg("skip_actions"));
  m.def("_memory_snapshot", &memory_snapshot, py::arg("include_traces") = true);
  // For measuring what the observer costs when nothing listens (bench only:
  // without it the profiler and the history see nothing).
  m.def("_set_memory_observer", [](bool on) { tocl_mem_set_observer(on ? &observe : nullptr, nullptr); });
  m.def("_host_memory_stats", [] { return host_allocator_stats(); });
  m.def("_reset_host_memory_stats", [](bool peak) { host_allocator_reset(peak); });
}

}  // namespace torch_ocl
