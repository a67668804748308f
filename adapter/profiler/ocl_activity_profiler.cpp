// ocl_activity_profiler.cpp - ocl device activity in torch.profiler: a Kineto
// activity profiler (REGISTER_PRIVATEUSE1_PROFILER) that turns the runtime's
// trace records (tocl/trace.h) into kernel / memcpy / memset activities, and
// the legacy ProfilerStubs behind torch.autograd.profiler.profile(
// use_device="ocl").
//
// The only file built with -DUSE_KINETO -DFMT_HEADER_ONLY and the kineto
// include folder (adapter/CMakeLists.txt): torch's CMake config does not
// define USE_KINETO, and the wheel exports no fmt symbols, which
// GenericTraceActivity::addMetadata needs.
// torch gained the PrivateUse1 profiler registry after 2.11. Without it the
// Kineto part is left out: torch.profiler then shows ocl ops on the CPU
// timeline only, and the legacy stubs below still time them on the device.
#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#define TOCL_HAS_PU1_PROFILER 1
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#include <libkineto.h>
#else
#define TOCL_HAS_PU1_PROFILER 0
#endif
#include <torch/csrc/profiler/stubs/base.h>

#include <c10/core/Device.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/ApproximateClock.h>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tocl/device.h"
#include "tocl/status.h"
#include "tocl/stream.h"
#include "tocl/trace.h"

namespace torch_ocl {
namespace {

#if TOCL_HAS_PU1_PROFILER
using libkineto::ActivityType;

const std::set<ActivityType> kActivities = {ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                            ActivityType::GPU_MEMSET, ActivityType::PRIVATEUSE1_RUNTIME};

// Flow ids of op -> kernel arrows: one per kernel, from a range of their
// own so they never meet the ids of other flows in a trace.
constexpr uint32_t kFirstFlowId = 1u << 30;

ActivityType activity_type(tocl_trace_kind k) {
  switch (k) {
    case TOCL_TRACE_KERNEL:
      return ActivityType::CONCURRENT_KERNEL;
    case TOCL_TRACE_FILL:
      return ActivityType::GPU_MEMSET;
    default:
      return ActivityType::GPU_MEMCPY;
  }
}

// The host call that enqueued a record, shown as a runtime row under its op.
const char* enqueue_call(tocl_trace_kind k) {
  switch (k) {
    case TOCL_TRACE_KERNEL:
      return "clEnqueueNDRangeKernel";
    case TOCL_TRACE_COPY_H2D:
      return "clEnqueueWriteBuffer";
    case TOCL_TRACE_COPY_D2H:
      return "clEnqueueReadBuffer";
    case TOCL_TRACE_COPY_D2D:
      return "clEnqueueCopyBuffer";
    default:
      return "clEnqueueFillBuffer";
  }
}

std::string device_label(int dev) {
  tocl_device_props p{};
  std::string name = "ocl:" + std::to_string(dev);
  if (tocl_device_props_get(dev, &p) == TOCL_OK)
    name += std::string(" ") + p.name;
  return name;
}

// One profiling run: the runtime keeps the device's work between start and
// stop; processTrace turns it into activities this session owns until Kineto
// takes them (getTraceBuffer), since the logger keeps pointers to them.
class OclSession : public libkineto::IActivityProfilerSession {
 public:
  explicit OclSession(std::set<ActivityType> types) : types_(std::move(types)) {}

  void start() override {
    if (tocl_trace_begin() != TOCL_OK) {
      errors_.push_back(std::string("ocl trace could not start: ") + tocl_last_error());
      status_ = libkineto::TraceStatus::ERROR;
      return;
    }
    started_ = true;
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    if (started_)
      tocl_trace_end();
    if (status_ == libkineto::TraceStatus::RECORDING)
      status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void pushCorrelationId(uint64_t id) override { tocl_trace_corr_push(id); }
  void popCorrelationId() override { tocl_trace_corr_pop(); }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, [](int32_t) -> const libkineto::ITraceActivity* { return nullptr; }, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked, int64_t start,
                    int64_t end) override {
    if (!started_)
      return;
    started_ = false;
    tocl_trace_record* recs = nullptr;
    size_t n = 0;
    if (tocl_trace_collect(&recs, &n) != TOCL_OK) {
      errors_.push_back(std::string("ocl trace could not be collected: ") + tocl_last_error());
      status_ = libkineto::TraceStatus::ERROR;
      return;
    }
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start, end, "ocl");
    buffer_->gpuOpCount = 0;
    bool runtime_rows = types_.count(ActivityType::PRIVATEUSE1_RUNTIME) > 0;
    uint32_t flow = kFirstFlowId;
    for (size_t i = 0; i < n; i++) {
      const tocl_trace_record& r = recs[i];
      ActivityType type = activity_type(r.kind);
      if (!types_.count(type))
        continue;
      const libkineto::ITraceActivity* op = r.corr ? linked(static_cast<int32_t>(r.corr)) : nullptr;
      // The arrow starts at the enqueue call, on the host thread that made
      // it, inside its op (for fused eager: inside the op that flushed).
      bool arrow = runtime_rows && op;
      if (arrow) {
        buffer_->emplace_activity(buffer_->span, ActivityType::PRIVATEUSE1_RUNTIME, std::string(enqueue_call(r.kind)));
        auto& call = *buffer_->activities.back();
        call.startTime = r.enqueue_start_ns;
        call.endTime = r.enqueue_end_ns;
        call.device = pid_;
        call.resource = static_cast<int64_t>(r.host_thread);
        call.threadId = static_cast<int32_t>(r.host_thread);
        call.id = static_cast<int32_t>(r.corr);
        call.linked = op;
        call.flow.id = flow;
        call.flow.type = libkineto::kLinkAsyncCpuGpu;
        call.flow.start = true;
        call.log(logger);
      }
      buffer_->emplace_activity(buffer_->span, type, std::string(r.name));
      auto& a = *buffer_->activities.back();
      a.startTime = r.start_ns;  // Kineto activities are in ns
      a.endTime = r.end_ns;
      a.device = r.dev;
      a.resource = r.stream;
      a.threadId = r.stream;
      a.id = static_cast<int32_t>(r.corr);
      a.linked = op;
      if (arrow) {
        a.flow.id = flow++;
        a.flow.type = libkineto::kLinkAsyncCpuGpu;
        a.flow.start = false;
      }
      a.addMetadata("device", r.dev);
      a.addMetadata("stream", r.stream);
      a.addMetadata("correlation", r.corr);
      if (r.kind == TOCL_TRACE_KERNEL) {
        a.addMetadata("fused ops", r.fused_ops);
      } else {
        a.addMetadata("bytes", r.bytes);
        int64_t dur = r.end_ns - r.start_ns;
        if (dur > 0)
          a.addMetadata("memory bandwidth (GB/s)", static_cast<double>(r.bytes) / static_cast<double>(dur));
      }
      streams_.insert({r.dev, r.stream});
      buffer_->gpuOpCount++;
      a.log(logger);
    }
    tocl_trace_free(recs);
  }

  // Kineto shows one device label per profiling run: the lowest device
  // that ran anything.
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    int dev = streams_.empty() ? 0 : streams_.begin()->first;
    std::string name = device_label(dev);
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{dev, dev, name, "ocl:" + std::to_string(dev)});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [dev, stream] : streams_)
      out.push_back(libkineto::ResourceInfo{stream, stream, dev,
                                            "ocl:" + std::to_string(dev) + " stream " + std::to_string(stream)});
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

 private:
  std::set<ActivityType> types_;
  std::vector<std::string> errors_;
  std::set<std::pair<int, int>> streams_;  // (device, stream) that ran work
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  bool started_ = false;
  int64_t pid_ = static_cast<int64_t>(getpid());
};

class OclActivityProfiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return kActivities; }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config&) override {
    std::set<ActivityType> wanted;
    for (ActivityType t : types)
      if (kActivities.count(t))
        wanted.insert(t);
    if (wanted.empty())
      return nullptr;
    return std::make_unique<OclSession>(std::move(wanted));
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"ocl"};
};

#endif  // TOCL_HAS_PU1_PROFILER

// ---- legacy route: torch.autograd.profiler.profile(use_device="ocl") ----

const c10::impl::DeviceGuardImplInterface* guard() {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
}

// Events on the current stream; elapsed in microseconds, as the CUDA stubs.
struct OclStubs : torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    int dev = guard()->getDevice().index();
    if (device)
      *device = static_cast<c10::DeviceIndex>(dev);
    tocl_event* e = nullptr;
    if (tocl_event_create(&e) == TOCL_OK && tocl_event_record(e, dev, tocl_stream_current(dev)) == TOCL_OK)
      *event = std::shared_ptr<void>(e, [](void* p) { tocl_event_destroy(static_cast<tocl_event*>(p)); });
    else
      tocl_event_destroy(e);  // no event: elapsed() reports 0 for this op
    if (cpu_ns)
      *cpu_ns = c10::getTime();
  }

  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* a,
                const torch::profiler::impl::ProfilerVoidEventStub* b) const override {
    if (!a || !b || !*a || !*b)
      return 0.f;
    auto* e0 = static_cast<tocl_event*>(a->get());
    auto* e1 = static_cast<tocl_event*>(b->get());
    double ms = 0;
    if (tocl_event_sync(e0) != TOCL_OK || tocl_event_sync(e1) != TOCL_OK ||
        tocl_event_elapsed_ms(e0, e1, &ms) != TOCL_OK)
      return 0.f;
    return static_cast<float>(ms * 1000.0);
  }

  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    const c10::impl::DeviceGuardImplInterface* g = guard();
    c10::Device cur = g->getDevice();
    for (int d = 0; d < tocl_device_count(); d++) {
      g->uncheckedSetDevice(c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(d)));
      op(d);
    }
    g->uncheckedSetDevice(cur);
  }

  void synchronize() const override {
    for (int d = 0; d < tocl_device_count(); d++)
      tocl_device_sync(d);
  }
};

struct RegisterStubs {
  RegisterStubs() {
    static OclStubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
} register_stubs;

}  // namespace
}  // namespace torch_ocl

#if TOCL_HAS_PU1_PROFILER
using torch_ocl::OclActivityProfiler;
REGISTER_PRIVATEUSE1_PROFILER(OclActivityProfiler);
#endif
