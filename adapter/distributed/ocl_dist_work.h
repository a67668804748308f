// ocl_dist_work.h - a collective's Work (with its device-aware Future), its
// job, and the FIFO between the backend's two threads.
// Part of the oclgloo backend's one translation unit (included only by
// ocl_process_group.cpp, so torch's headers are compiled once).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "ocl_common.h"

namespace torch_ocl {
namespace dist {

using Tensors = std::vector<at::Tensor>;

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// An error from Gloo (a timeout, a dead peer) named after the collective,
// as torch.distributed.DistBackendError; the backend's own checks already
// name it and pass through as they are.
inline std::exception_ptr named_error(const char* title, std::exception_ptr e) {
  std::string msg;
  try {
    std::rethrow_exception(e);
  } catch (const c10::Error& err) {
    msg = err.what_without_backtrace();
  } catch (const std::exception& err) {
    msg = err.what();
  } catch (...) {
    msg = "unknown error";
  }
  if (msg.rfind("oclgloo", 0) == 0)
    return e;
  try {
    C10_THROW_ERROR(DistBackendError, c10::str(title, " failed: ", msg));
  } catch (...) {
    return std::current_exception();
  }
}

// ------------------------------------------------------------------ work

class WorkOCL : public c10d::Work {
 public:
  WorkOCL(int rank, c10d::OpType type, const char* title, std::vector<c10::Device> devices)
      : Work(rank, type, title),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                          std::move(devices))) {}

  std::vector<at::Tensor> result() override {
    std::lock_guard<std::mutex> g(mutex_);
    return outputs_;
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  // Orders the caller's current stream after the copy back (the Future's
  // events); Work::wait() calls it once the host side has completed.
  void synchronize() override {
    if (future_->completed() && !future_->hasError())
      future_->wait();
  }
  int sourceRank() const override {
    std::lock_guard<std::mutex> g(mutex_);
    TORCH_CHECK(inner_, "oclgloo: sourceRank() is only known once a recv from any source completes");
    return inner_->sourceRank();
  }

  void complete(const Tensors& outputs, c10::intrusive_ptr<c10d::Work> inner) {
    {
      std::lock_guard<std::mutex> g(mutex_);
      outputs_ = outputs;
      inner_ = std::move(inner);
    }
    future_->markCompleted(c10::IValue(outputs));
    finish();
  }
  void fail(std::exception_ptr e) {
    if (!future_->completed())
      future_->setError(e);
    finish(e);
  }

 private:
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  Tensors outputs_;
  c10::intrusive_ptr<c10d::Work> inner_;
};

// ------------------------------------------------------------------ jobs

// One collective on its way through the two threads. reads are copied to
// host before issue; writes receive the host results after completion
// (inplace: the same tensors, one host copy serving both).
struct Job {
  using Issue = std::function<c10::intrusive_ptr<c10d::Work>(Tensors& in, Tensors& out)>;
  using Finish = std::function<void(Tensors& out)>;

  Tensors reads, writes, result;
  bool inplace = false;
  std::vector<int64_t> agree;  // what every rank's call must match (empty: not checked)
  Issue issue;
  Finish finish;  // host-side fix-up once Gloo is done (optional)

  int dev = -1;  // the ocl device, -1 when every tensor is on the CPU
  std::shared_ptr<tocl_event> ready;  // the caller's stream at the call
  c10::intrusive_ptr<WorkOCL> work;
  Tensors in, out;
  std::vector<bool> out_is_mapped;  // out[i] is writes[i]'s own memory: nothing to copy back
  std::vector<tocl_map> maps;       // released once Gloo is done (or the job fails)
  c10::intrusive_ptr<c10d::Work> inner;
  const char* title = "";

  void unmap_all() {
    for (auto& m : maps)
      tocl_mem_unmap(&m);
    maps.clear();
  }
  ~Job() { unmap_all(); }
  int64_t queued_ns = 0, issued_ns = 0;  // steady clock (Python: time.monotonic_ns)
};
using JobPtr = std::shared_ptr<Job>;

template <class T>
class Fifo {
 public:
  void push(T v) {
    {
      std::lock_guard<std::mutex> g(mu_);
      q_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  bool pop(T& v) {  // false once closed and drained
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return closed_ || !q_.empty(); });
    if (q_.empty())
      return false;
    v = std::move(q_.front());
    q_.pop_front();
    return true;
  }
  void close() {
    {
      std::lock_guard<std::mutex> g(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

}  // namespace dist
}  // namespace torch_ocl
