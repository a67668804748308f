// ocl_ddp_timer.h - DDP's iteration timer for ocl modules.
// Part of the oclgloo backend's one translation unit (included only by
// ocl_process_group.cpp, so torch's headers are compiled once).
#pragma once

#include <array>
#include <optional>
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "ocl_common.h"

namespace torch_ocl {
namespace dist {

using Tensors = std::vector<at::Tensor>;

// DDP's per-iteration timings (ddp._get_ddp_logging_data(): forward,
// backward compute and communication times) for ocl modules, as CudaTimer
// does for CUDA: events on the current stream, read on the device clock.
class OclTimer : public c10d::Timer {
 public:
  explicit OclTimer(c10::Device d) : dev_(d.index() < 0 ? current_device() : d.index()) {}
  ~OclTimer() override {
    for (auto* e : events_)
      tocl_event_destroy(e);
  }
  void record(Event event) override {
    Timer::record(event);  // the host timestamp DDP also reports
    tocl_event*& e = events_[static_cast<int>(event)];
    if (!e && tocl_event_create(&e) != TOCL_OK)
      return;
    if (tocl_event_record(e, dev_, tocl_stream_current(dev_)) != TOCL_OK)
      return;
    recorded_[static_cast<int>(event)] = true;
  }
  std::optional<int64_t> measureDifference(Event start, Event end) override {
    int a = static_cast<int>(start), b = static_cast<int>(end);
    if (!recorded_[a] || !recorded_[b])
      return std::nullopt;
    double ms = 0;
    if (tocl_event_sync(events_[b]) != TOCL_OK || tocl_event_elapsed_ms(events_[a], events_[b], &ms) != TOCL_OK)
      return std::nullopt;
    return static_cast<int64_t>(ms * 1e6);
  }

 private:
  int dev_;
  std::array<tocl_event*, 5> events_{};
  std::array<bool, 5> recorded_{};
};

}  // namespace dist
}  // namespace torch_ocl
