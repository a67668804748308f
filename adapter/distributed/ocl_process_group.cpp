// ocl_process_group.cpp - "oclgloo": a c10d::Backend for ocl tensors over an
// inner Gloo backend (docs/distributed.md has the design and its measures).
//
// OpenCL has no collective library, so data travels through host memory:
// Gloo moves it (TCP between machines, loopback within one). A collective
// returns its Work at once and two FIFO threads do the rest, so a caller
// such as DDP's reducer keeps enqueuing backward kernels meanwhile:
//   issue thread:    wait (on a comm stream) for the caller's stream at the
//                    call, copy inputs to host, start the Gloo op;
//   complete thread: wait for Gloo, fix up on the host (AVG is SUM then a
//                    divide: Gloo's reduce-scatter AVG sums, pytorch#162338),
//                    copy results back, complete the Work and its Future.
// Both threads take jobs in program order, which is the same on every rank,
// so Gloo sees collectives in the same order everywhere (it pairs them by
// sequence). The Future is device-aware (ocl:r): its waiters and its then()
// callbacks are ordered after the copy back through events, as on CUDA.
// CPU tensors go through the same queue untouched (no copy), keeping order.
#include "distributed/ocl_process_group.h"

#ifdef TOCL_WITH_C10D

#include <cxxabi.h>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include <ATen/ATen.h>
#include <pybind11/chrono.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/utils/pybind.h>

#include "distributed/ocl_ddp_timer.h"
#include "distributed/ocl_dist_reduce.h"
#include "distributed/ocl_dist_staging.h"
#include "distributed/ocl_dist_work.h"
#include "ocl_common.h"

namespace py = pybind11;

namespace torch_ocl {
namespace dist {

// --------------------------------------------------------------- backend

class ProcessGroupOCL : public c10d::Backend {
 public:
  // checker (optional): a second group over the same ranks for the
  // cross-rank agreement check; without it no check is made.
  ProcessGroupOCL(c10::intrusive_ptr<c10d::Backend> inner, c10::intrusive_ptr<c10d::Backend> checker, int rank,
                  int size)
      : Backend(rank, size), inner_(std::move(inner)), checker_(std::move(checker)) {
    TORCH_CHECK(inner_, "oclgloo: the inner backend is None");
    issue_thread_ = std::thread([this] { issue_loop(); });
    complete_thread_ = std::thread([this] { complete_loop(); });
  }
  // The inner groups go without the GIL too: ~ProcessGroupGloo waits on a
  // mutex its run loop holds while freeing a finished job's tensors, which
  // takes the GIL (a CI run hung there, the GIL held by this destructor).
  ~ProcessGroupOCL() override {
    stop();
    std::optional<py::gil_scoped_release> no_gil;
    if (Py_IsInitialized() && PyGILState_Check())
      no_gil.emplace();
    inner_.reset();
    checker_.reset();
  }

  const std::string getBackendName() const override { return "oclgloo"; }
  c10::intrusive_ptr<c10d::Backend> inner() const { return inner_; }
  void setSequenceNumberForGroup() override { inner_->setSequenceNumberForGroup(); }
  uint64_t getSequenceNumberForGroup() override { return inner_->getSequenceNumberForGroup(); }

  // The last collectives' (op, queued, issued to Gloo, completed) times in
  // steady-clock ns: benchmarks and tests read how much communication
  // overlapped other work. Bounded; clear=True empties it.
  using Span = std::tuple<std::string, int64_t, int64_t, int64_t>;
  std::vector<Span> timeline(bool clear) {
    std::lock_guard<std::mutex> g(timeline_mu_);
    std::vector<Span> out(timeline_.begin(), timeline_.end());
    if (clear)
      timeline_.clear();
    return out;
  }

  // Drain both queues and join the threads (the destructor does it too).
  // Never with the GIL held: the last reference to a job's tensor may be
  // dropped on a comm thread, and a tensor whose Python object died first
  // (a temporary passed to a collective) takes the GIL to free it. The
  // destructor runs from Python's dealloc (destroy_process_group) with the
  // GIL held, so joining there deadlocked when a thread was still releasing
  // a finished job: the rare hang the reduce-scatter world showed.
  void stop() {
    std::optional<py::gil_scoped_release> no_gil;
    if (Py_IsInitialized() && PyGILState_Check())
      no_gil.emplace();
    std::call_once(stopped_, [this] {
      issue_q_.close();
      if (issue_thread_.joinable())
        issue_thread_.join();
      complete_q_.close();
      if (complete_thread_.joinable())
        complete_thread_.join();
    });
  }

  c10::intrusive_ptr<c10d::Work> broadcast(Tensors& tensors, const c10d::BroadcastOptions& opts) override {
    check_one(tensors, "broadcast");
    check_rank(opts.rootRank, "broadcast root");
    auto job = std::make_shared<Job>();
    if (opts.rootRank == rank_)
      job->reads = tensors;  // the root sends its values and keeps them
    else
      job->writes = tensors;
    job->result = tensors;
    auto o = opts;
    bool root = opts.rootRank == rank_;
    job->issue = [this, o, root](Tensors& in, Tensors& out) { return inner_->broadcast(root ? in : out, o); };
    job->agree = key(c10d::OpType::BROADCAST, tensors[0], -1, opts.rootRank);
    return submit(job, {&tensors}, c10d::OpType::BROADCAST, "oclgloo:broadcast");
  }

  c10::intrusive_ptr<c10d::Work> allreduce(Tensors& tensors, const c10d::AllreduceOptions& opts) override {
    check_one(tensors, "allreduce");
    Reduction r = plan_reduction(opts.reduceOp, tensors[0].scalar_type(), size_, "allreduce");
    auto job = inplace_job(tensors);
    auto o = opts;
    o.reduceOp = r.op;
    job->issue = [this, o, r](Tensors& in, Tensors&) {
      if (r.scale != 1.0)
        in[0].mul_(r.scale);  // in place is right here: the input is also the output
      return inner_->allreduce(in, o);
    };
    job->finish = [r](Tensors& out) { finish_reduction(out[0], r); };
    job->agree = key(c10d::OpType::ALLREDUCE, tensors[0], opts.reduceOp.op_);
    return submit(job, {&tensors}, c10d::OpType::ALLREDUCE, "oclgloo:all_reduce");
  }

  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(Tensors& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override {
    TORCH_CHECK(!tensors.empty(), "oclgloo: allreduce_coalesced needs at least one tensor");
    check_same_dtype(tensors, tensors[0], "allreduce_coalesced");
    Reduction r = plan_reduction(opts.reduceOp, tensors[0].scalar_type(), size_, "allreduce_coalesced");
    auto job = inplace_job(tensors);
    c10d::AllreduceOptions o;
    o.reduceOp = r.op;
    o.timeout = opts.timeout;
    auto flat = std::make_shared<at::Tensor>();
    job->issue = [this, o, r, flat](Tensors& in, Tensors&) {
      *flat = scaled(flat_cat(in), r);
      Tensors one{*flat};
      return inner_->allreduce(one, o);
    };
    job->finish = [r, flat](Tensors& out) {
      finish_reduction(*flat, r);
      flat_split(*flat, out);
    };
    job->agree = key(c10d::OpType::ALLREDUCE_COALESCED, tensors[0].scalar_type(), {total_numel(tensors)}, opts.reduceOp.op_, tensors.size());
    return submit(job, {&tensors}, c10d::OpType::ALLREDUCE_COALESCED, "oclgloo:all_reduce_coalesced");
  }

  c10::intrusive_ptr<c10d::Work> reduce(Tensors& tensors, const c10d::ReduceOptions& opts) override {
    check_one(tensors, "reduce");
    check_rank(opts.rootRank, "reduce root");
    Reduction r = plan_reduction(opts.reduceOp, tensors[0].scalar_type(), size_, "reduce");
    bool root = opts.rootRank == rank_;
    auto job = std::make_shared<Job>();
    job->reads = tensors;
    if (root)
      job->writes = tensors;  // only the root's tensor changes
    job->result = tensors;
    auto o = opts;
    o.reduceOp = r.op;
    auto buf = std::make_shared<at::Tensor>();
    job->issue = [this, o, r, buf](Tensors& in, Tensors&) {
      // A private buffer: Gloo may leave partial sums in a non-root's tensor.
      *buf = r.scale == 1.0 ? in[0].clone() : in[0].mul(r.scale);
      Tensors one{*buf};
      return inner_->reduce(one, o);
    };
    job->finish = [r, buf, root](Tensors& out) {
      if (!root)
        return;
      finish_reduction(*buf, r);
      out[0].copy_(*buf);
    };
    job->agree = key(c10d::OpType::REDUCE, tensors[0], opts.reduceOp.op_, opts.rootRank);
    return submit(job, {&tensors}, c10d::OpType::REDUCE, "oclgloo:reduce");
  }

  c10::intrusive_ptr<c10d::Work> allgather(std::vector<Tensors>& outputs, Tensors& inputs,
                                           const c10d::AllgatherOptions& opts) override {
    check_one(inputs, "allgather");
    TORCH_CHECK(outputs.size() == 1, "oclgloo: allgather takes one output list (one device per process)");
    check_list(outputs[0], inputs[0], "allgather");
    auto job = std::make_shared<Job>();
    job->reads = inputs;
    job->writes = outputs[0];
    job->result = outputs[0];
    auto o = opts;
    job->issue = [this, o](Tensors& in, Tensors& out) {
      std::vector<Tensors> lists{out};
      return inner_->allgather(lists, in, o);
    };
    job->agree = key(c10d::OpType::ALLGATHER, inputs[0]);
    return submit(job, {&inputs, &outputs[0]}, c10d::OpType::ALLGATHER, "oclgloo:all_gather");
  }

  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override {
    TORCH_CHECK(output.numel() == input.numel() * size_, "oclgloo: all_gather_into_tensor: the output has ",
                output.numel(), " elements; expected the input's ", input.numel(), " times the group size ",
                size_);
    check_same_dtype({output}, input, "all_gather_into_tensor");
    auto job = std::make_shared<Job>();
    job->reads = {input};
    job->writes = {output};
    job->result = {output};
    auto o = opts;
    job->issue = [this, o](Tensors& in, Tensors& out) {
      at::Tensor flat_out = out[0].view({-1});
      at::Tensor flat_in = in[0].view({-1});
      return inner_->_allgather_base(flat_out, flat_in, o);
    };
    Tensors all{output, input};
    job->agree = key(c10d::OpType::_ALLGATHER_BASE, input);
    return submit(job, {&all}, c10d::OpType::_ALLGATHER_BASE, "oclgloo:_allgather_base");
  }

  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(Tensors& outputs, Tensors& inputs,
                                                                 const c10d::AllgatherOptions& opts) override {
    check_pairs(inputs, outputs, "allgather_into_tensor_coalesced", "output");
    auto job = std::make_shared<Job>();
    job->reads = inputs;
    job->writes = outputs;
    job->result = outputs;
    auto o = opts;
    auto gathered = std::make_shared<at::Tensor>();
    int size = size_;
    job->issue = [this, o, gathered, size](Tensors& in, Tensors&) {
      at::Tensor flat_in = flat_cat(in);
      *gathered = at::empty({size * flat_in.numel()}, flat_in.options());
      return inner_->_allgather_base(*gathered, flat_in, o);
    };
    job->finish = [gathered, size](Tensors& out) {
      // gathered is [rank][input i][elements]; output i is [rank][elements].
      at::Tensor rows = gathered->view({size, -1});
      int64_t off = 0;
      for (auto& h : out) {
        int64_t n = h.numel() / size;
        h.view({size, n}).copy_(rows.narrow(1, off, n));
        off += n;
      }
    };
    Tensors all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    job->agree = key(c10d::OpType::COALESCED, inputs[0].scalar_type(), {total_numel(inputs)}, -1, inputs.size());
    return submit(job, {&all}, c10d::OpType::COALESCED, "oclgloo:allgather_into_tensor_coalesced");
  }

  c10::intrusive_ptr<c10d::Work> gather(std::vector<Tensors>& outputs, Tensors& inputs,
                                        const c10d::GatherOptions& opts) override {
    check_one(inputs, "gather");
    check_rank(opts.rootRank, "gather destination");
    bool root = opts.rootRank == rank_;
    if (root) {
      TORCH_CHECK(outputs.size() == 1, "oclgloo: gather takes one output list on the destination rank");
      check_list(outputs[0], inputs[0], "gather");
    } else {
      TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                  "oclgloo: gather: only the destination rank passes an output list");
    }
    auto job = std::make_shared<Job>();
    job->reads = inputs;
    if (root)
      job->writes = outputs[0];
    job->result = job->writes;
    auto o = opts;
    job->issue = [this, o, root](Tensors& in, Tensors& out) {
      std::vector<Tensors> lists;
      if (root)
        lists.push_back(out);
      return inner_->gather(lists, in, o);
    };
    Tensors all = inputs;
    if (root)
      all.insert(all.end(), outputs[0].begin(), outputs[0].end());
    job->agree = key(c10d::OpType::GATHER, inputs[0], -1, opts.rootRank);
    return submit(job, {&all}, c10d::OpType::GATHER, "oclgloo:gather");
  }

  c10::intrusive_ptr<c10d::Work> scatter(Tensors& outputs, std::vector<Tensors>& inputs,
                                         const c10d::ScatterOptions& opts) override {
    check_one(outputs, "scatter");
    check_rank(opts.rootRank, "scatter source");
    bool root = opts.rootRank == rank_;
    if (root) {
      TORCH_CHECK(inputs.size() == 1, "oclgloo: scatter takes one input list on the source rank");
      check_list(inputs[0], outputs[0], "scatter");
    } else {
      TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                  "oclgloo: scatter: only the source rank passes an input list");
    }
    auto job = std::make_shared<Job>();
    if (root)
      job->reads = inputs[0];
    job->writes = outputs;
    job->result = outputs;
    auto o = opts;
    job->issue = [this, o, root](Tensors& in, Tensors& out) {
      std::vector<Tensors> lists;
      if (root)
        lists.push_back(in);
      return inner_->scatter(out, lists, o);
    };
    Tensors all = outputs;
    if (root)
      all.insert(all.end(), inputs[0].begin(), inputs[0].end());
    job->agree = key(c10d::OpType::SCATTER, outputs[0], -1, opts.rootRank);
    return submit(job, {&all}, c10d::OpType::SCATTER, "oclgloo:scatter");
  }

  c10::intrusive_ptr<c10d::Work> reduce_scatter(Tensors& outputs, std::vector<Tensors>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override {
    check_one(outputs, "reduce_scatter");
    TORCH_CHECK(inputs.size() == 1, "oclgloo: reduce_scatter takes one input list (one device per process)");
    check_list(inputs[0], outputs[0], "reduce_scatter");
    Reduction r = plan_reduction(opts.reduceOp, outputs[0].scalar_type(), size_, "reduce_scatter");
    auto job = std::make_shared<Job>();
    job->reads = inputs[0];
    job->writes = outputs;
    job->result = outputs;
    auto o = opts;
    o.reduceOp = r.op;
    auto stacked = std::make_shared<at::Tensor>();
    int64_t n = outputs[0].numel();
    job->issue = [this, o, r, stacked, n](Tensors& in, Tensors& out) {
      *stacked = scaled(flat_cat(in), r);  // rank j's chunk at [j*n, (j+1)*n)
      at::Tensor flat_out = out[0].view({-1});
      return inner_->_reduce_scatter_base(flat_out, *stacked, o);
    };
    job->finish = [r](Tensors& out) { finish_reduction(out[0], r); };
    Tensors all = outputs;
    all.insert(all.end(), inputs[0].begin(), inputs[0].end());
    job->agree = key(c10d::OpType::REDUCE_SCATTER, outputs[0], opts.reduceOp.op_);
    return submit(job, {&all}, c10d::OpType::REDUCE_SCATTER, "oclgloo:reduce_scatter");
  }

  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override {
    TORCH_CHECK(input.numel() == output.numel() * size_, "oclgloo: reduce_scatter_tensor: the input has ",
                input.numel(), " elements; expected the output's ", output.numel(), " times the group size ",
                size_);
    check_same_dtype({output}, input, "reduce_scatter_tensor");
    Reduction r = plan_reduction(opts.reduceOp, input.scalar_type(), size_, "reduce_scatter_tensor");
    auto job = std::make_shared<Job>();
    job->reads = {input};
    job->writes = {output};
    job->result = {output};
    auto o = opts;
    o.reduceOp = r.op;
    job->issue = [this, o, r](Tensors& in, Tensors& out) {
      at::Tensor flat_in = scaled(in[0].view({-1}), r);
      at::Tensor flat_out = out[0].view({-1});
      return inner_->_reduce_scatter_base(flat_out, flat_in, o);
    };
    job->finish = [r](Tensors& out) { finish_reduction(out[0], r); };
    Tensors all{output, input};
    job->agree = key(c10d::OpType::_REDUCE_SCATTER_BASE, output, opts.reduceOp.op_);
    return submit(job, {&all}, c10d::OpType::_REDUCE_SCATTER_BASE, "oclgloo:_reduce_scatter_base");
  }

  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(Tensors& outputs, Tensors& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override {
    check_pairs(outputs, inputs, "reduce_scatter_tensor_coalesced", "input");
    Reduction r = plan_reduction(opts.reduceOp, inputs[0].scalar_type(), size_, "reduce_scatter_tensor_coalesced");
    auto job = std::make_shared<Job>();
    job->reads = inputs;
    job->writes = outputs;
    job->result = outputs;
    auto o = opts;
    o.reduceOp = r.op;
    auto reduced = std::make_shared<at::Tensor>();
    int size = size_;
    job->issue = [this, o, r, reduced, size](Tensors& in, Tensors&) {
      // Rows by destination rank: row j holds chunk j of every input.
      Tensors cols;
      for (auto& h : in)
        cols.push_back(h.reshape({size, -1}));
      at::Tensor stacked = scaled(at::cat(cols, 1).reshape({-1}), r);
      *reduced = at::empty({stacked.numel() / size}, stacked.options());
      return inner_->_reduce_scatter_base(*reduced, stacked, o);
    };
    job->finish = [r, reduced](Tensors& out) {
      finish_reduction(*reduced, r);
      flat_split(*reduced, out);
    };
    Tensors all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    job->agree = key(c10d::OpType::COALESCED, outputs[0].scalar_type(), {total_numel(outputs)}, opts.reduceOp.op_, outputs.size());
    return submit(job, {&all}, c10d::OpType::COALESCED, "oclgloo:reduce_scatter_tensor_coalesced");
  }

  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& osplit,
                                               std::vector<int64_t>& isplit,
                                               const c10d::AllToAllOptions& opts) override {
    check_same_dtype({output}, input, "all_to_all_single");
    auto job = std::make_shared<Job>();
    job->reads = {input};
    job->writes = {output};
    job->result = {output};
    auto o = opts;
    job->issue = [this, o, osplit, isplit](Tensors& in, Tensors& out) mutable {
      return inner_->alltoall_base(out[0], in[0], osplit, isplit, o);
    };
    Tensors all{output, input};
    job->agree = key(c10d::OpType::ALLTOALL_BASE, input, -1, -1, false);
    return submit(job, {&all}, c10d::OpType::ALLTOALL_BASE, "oclgloo:all_to_all_single");
  }

  c10::intrusive_ptr<c10d::Work> alltoall(Tensors& outputs, Tensors& inputs,
                                          const c10d::AllToAllOptions& opts) override {
    TORCH_CHECK(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_,
                "oclgloo: all_to_all takes one input and one output tensor per rank (", size_, "); got ",
                inputs.size(), " and ", outputs.size());
    check_same_dtype(inputs, inputs[0], "all_to_all");
    check_same_dtype(outputs, inputs[0], "all_to_all");
    std::vector<int64_t> isplit, osplit;
    for (auto& t : inputs)
      isplit.push_back(t.numel());
    for (auto& t : outputs)
      osplit.push_back(t.numel());
    auto job = std::make_shared<Job>();
    job->reads = inputs;
    job->writes = outputs;
    job->result = outputs;
    auto o = opts;
    auto received = std::make_shared<at::Tensor>();
    job->issue = [this, o, osplit, isplit, received](Tensors& in, Tensors&) mutable {
      at::Tensor flat_in = flat_cat(in);
      int64_t total = 0;
      for (auto n : osplit)
        total += n;
      *received = at::empty({total}, flat_in.options());
      return inner_->alltoall_base(*received, flat_in, osplit, isplit, o);
    };
    job->finish = [received](Tensors& out) { flat_split(*received, out); };
    Tensors all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    job->agree = key(c10d::OpType::ALLTOALL, inputs[0], -1, -1, false);
    return submit(job, {&all}, c10d::OpType::ALLTOALL, "oclgloo:all_to_all");
  }

  c10::intrusive_ptr<c10d::Work> send(Tensors& tensors, int dst, int tag) override {
    check_one(tensors, "send");
    check_rank(dst, "send destination");
    auto job = std::make_shared<Job>();
    job->reads = tensors;
    job->result = tensors;
    job->issue = [this, dst, tag](Tensors& in, Tensors&) { return inner_->send(in, dst, tag); };
    return submit(job, {&tensors}, c10d::OpType::SEND, "oclgloo:send");
  }

  c10::intrusive_ptr<c10d::Work> recv(Tensors& tensors, int src, int tag) override {
    check_one(tensors, "recv");
    check_rank(src, "recv source");
    auto job = std::make_shared<Job>();
    job->writes = tensors;
    job->result = tensors;
    job->issue = [this, src, tag](Tensors&, Tensors& out) { return inner_->recv(out, src, tag); };
    return submit(job, {&tensors}, c10d::OpType::RECV, "oclgloo:recv");
  }

  c10::intrusive_ptr<c10d::Work> recvAnysource(Tensors& tensors, int tag) override {
    check_one(tensors, "recv");
    auto job = std::make_shared<Job>();
    job->writes = tensors;
    job->result = tensors;
    job->issue = [this, tag](Tensors&, Tensors& out) { return inner_->recvAnysource(out, tag); };
    return submit(job, {&tensors}, c10d::OpType::RECVANYSOURCE, "oclgloo:recvAnySource");
  }

  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override {
    auto job = std::make_shared<Job>();
    auto o = opts;
    // Gloo's barrier works on the CPU; the ocl device plays no part in it.
    o.device_ids.clear();
    o.device = std::nullopt;
    job->issue = [this, o](Tensors&, Tensors&) { return inner_->barrier(o); };
    Tensors none;
    return submit(job, {&none}, c10d::OpType::BARRIER, "oclgloo:barrier");
  }

  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) override {
    // Behind every collective already queued, so the ranks agree on order.
    auto job = std::make_shared<Job>();
    auto o = opts;
    job->issue = [this, o, waitAllRanks](Tensors&, Tensors&) {
      inner_->monitoredBarrier(o, waitAllRanks);
      return c10::intrusive_ptr<c10d::Work>();
    };
    Tensors none;
    submit(job, {&none}, c10d::OpType::BARRIER, "oclgloo:monitored_barrier")->wait();
  }

 private:
  // The ocl device of a call's tensors (-1: all on the CPU), after checking
  // that each is a dense ocl or CPU tensor and that the ocl ones share one
  // device, the group's when it is bound to one.
  int device_of(std::initializer_list<const Tensors*> lists, const char* op) {
    int dev = -1;
    for (const Tensors* ts : lists)
      for (const at::Tensor& t : *ts) {
        TORCH_CHECK(t.defined(), "oclgloo: ", op, ": undefined tensor");
        TORCH_CHECK(t.layout() == at::kStrided, "oclgloo: ", op, " supports dense (strided) tensors only, got ",
                    t.layout());
        if (t.device().type() == c10::DeviceType::PrivateUse1) {
          int d = t.device().index();
          TORCH_CHECK(dev < 0 || dev == d, "oclgloo: ", op, ": every tensor must be on one ocl device; got ocl:", dev,
                      " and ocl:", d);
          dev = d;
        } else {
          TORCH_CHECK(t.is_cpu(), "oclgloo: ", op, " takes ocl or CPU tensors; got a tensor on ", t.device());
        }
      }
    auto bound = getBoundDeviceId();
    if (dev >= 0 && bound && bound->type() == c10::DeviceType::PrivateUse1 && bound->has_index())
      TORCH_CHECK(bound->index() == dev, "oclgloo: ", op, ": this process group is bound to ocl:", int(bound->index()),
                  " (init_process_group(device_id=...)) but the tensor is on ocl:", dev);
    return dev;
  }

  void check_one(const Tensors& ts, const char* op) {
    TORCH_CHECK(ts.size() == 1, "oclgloo: ", op, " takes one tensor per call (one device per process), got ",
                ts.size());
  }
  void check_rank(int64_t r, const char* what) {
    TORCH_CHECK(r >= 0 && r < size_, "oclgloo: ", what, " rank ", r, " is outside the group of size ", size_);
  }
  void check_same_dtype(const Tensors& ts, const at::Tensor& ref, const char* op) {
    for (const auto& t : ts)
      TORCH_CHECK(t.scalar_type() == ref.scalar_type(), "oclgloo: ", op, ": tensors must share one dtype; got ",
                  t.scalar_type(), " and ", ref.scalar_type());
  }
  // A coalesced call's pairs: as many small as big tensors, each big one
  // holding the group size times its small one's elements, one dtype for all.
  // (all-gather: small = inputs, big = outputs; reduce-scatter: the reverse.)
  void check_pairs(const Tensors& small, const Tensors& big, const char* op, const char* big_name) {
    TORCH_CHECK(!small.empty() && small.size() == big.size(), "oclgloo: ", op,
                " needs as many outputs as inputs (got ", small.size(), " and ", big.size(), ")");
    for (size_t i = 0; i < small.size(); i++)
      TORCH_CHECK(big[i].numel() == small[i].numel() * size_, "oclgloo: ", op, ": ", big_name, " ", i, " has ",
                  big[i].numel(), " elements; expected ", small[i].numel() * size_);
    check_same_dtype(small, small[0], op);
    check_same_dtype(big, small[0], op);
  }
  // A per-rank list (allgather outputs, scatter inputs, ...): one tensor per
  // rank, each like ref.
  void check_list(const Tensors& ts, const at::Tensor& ref, const char* op) {
    TORCH_CHECK(static_cast<int>(ts.size()) == size_, "oclgloo: ", op, ": the list must have one tensor per rank (",
                size_, "), got ", ts.size());
    for (const auto& t : ts) {
      TORCH_CHECK(t.scalar_type() == ref.scalar_type(), "oclgloo: ", op, ": dtype ", t.scalar_type(),
                  " in the list does not match ", ref.scalar_type());
      TORCH_CHECK(t.numel() == ref.numel(), "oclgloo: ", op, ": a tensor of ", t.numel(),
                  " elements in the list does not match the ", ref.numel(), " of the other side");
    }
  }
  // The part of a call that every rank must agree on, checked across ranks
  // before the data moves: a mismatch would otherwise be a Gloo abort
  // ("Received data size doesn't match") or silently wrong numbers.
  // Layout: [op type, dtype, reduce op, root or count, numel, ndim, sizes...].
  static constexpr int kKeyDims = 6;
  static constexpr int kKeyCompared = 5;  // op type, dtype, reduce op, root or count, numel
  static std::vector<int64_t> key(c10d::OpType type, at::ScalarType dtype, c10::IntArrayRef sizes,
                                  int64_t reduce_op = -1, int64_t root = -1, bool with_shape = true) {
    std::vector<int64_t> k(6 + kKeyDims, -1);
    k[0] = static_cast<int64_t>(type);
    k[1] = static_cast<int64_t>(dtype);
    k[2] = reduce_op;
    k[3] = root;
    if (with_shape) {
      k[4] = c10::multiply_integers(sizes);
      k[5] = static_cast<int64_t>(sizes.size());
      for (size_t d = 0; d < sizes.size() && d < kKeyDims; d++)
        k[6 + d] = sizes[d];
    }
    return k;
  }
  static std::vector<int64_t> key(c10d::OpType type, const at::Tensor& ref, int64_t reduce_op = -1,
                                  int64_t root = -1, bool with_shape = true) {
    return key(type, ref.scalar_type(), ref.sizes(), reduce_op, root, with_shape);
  }
  static std::string describe(const int64_t* k) {
    std::ostringstream o;
    o << c10::toString(static_cast<at::ScalarType>(k[1]));
    if (k[5] >= 0) {
      o << "[";
      for (int64_t d = 0; d < k[5] && d < kKeyDims; d++)
        o << (d ? ", " : "") << k[6 + d];
      o << (k[5] > kKeyDims ? ", ...]" : "]") << " (" << k[4] << " elements)";
    }
    if (k[2] >= 0)
      o << " reduce op " << k[2];
    if (k[3] >= 0)
      o << " root/count " << k[3];
    return o.str();
  }
  // Every rank's key, all-gathered on the checking backend: a second Gloo
  // group, so that the check does not queue behind earlier data transfers
  // on the inner one (it runs while this job's inputs are copied to host).
  struct Agreement {
    at::Tensor all;
    c10::intrusive_ptr<c10d::Work> work;
  };
  Agreement start_agreement(const Job& job) {
    int64_t n = static_cast<int64_t>(job.agree.size());
    at::Tensor mine = at::tensor(job.agree, at::kLong);
    Agreement a{at::empty({size_ * n}, at::kLong), nullptr};
    a.work = checker_->_allgather_base(a.all, mine);
    return a;
  }
  // Throws on every rank (they all see the same keys).
  void finish_agreement(const Job& job, Agreement& agreement) {
    agreement.work->wait();
    int64_t n = static_cast<int64_t>(job.agree.size());
    const int64_t* a = agreement.all.data_ptr<int64_t>();
    for (int r = 0; r < size_; r++) {
      // Sizes are shown but not compared: Gloo, like NCCL, needs only the
      // element counts to agree ([4, 2] against [8] is fine).
      if (std::equal(a, a + kKeyCompared, a + r * n))
        continue;
      std::ostringstream o;
      o << job.title << ": the ranks' calls do not match (a collective mismatch across ranks):";
      for (int q = 0; q < size_; q++)
        o << "\n  rank " << q << ": " << describe(a + q * n);
      TORCH_CHECK(false, o.str());
    }
  }

  JobPtr inplace_job(Tensors& tensors) {
    auto job = std::make_shared<Job>();
    job->reads = tensors;
    job->writes = tensors;
    job->result = tensors;
    job->inplace = true;
    return job;
  }

  c10::intrusive_ptr<c10d::Work> submit(JobPtr job, std::initializer_list<const Tensors*> lists, c10d::OpType type,
                                        const char* title) {
    job->dev = device_of(lists, title);
    std::vector<c10::Device> devices;
    if (job->dev >= 0) {
      devices.emplace_back(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(job->dev));
      tocl_event* e = nullptr;
      TOCL_CHECK(tocl_event_create(&e));
      job->ready.reset(e, tocl_event_destroy);
      // Also runs the caller's recorded (fused) ops: the inputs' values exist.
      TOCL_CHECK(tocl_event_record(e, job->dev, tocl_stream_current(job->dev)));
    }
    job->work = c10::make_intrusive<WorkOCL>(rank_, type, title, std::move(devices));
    job->title = title;
    job->queued_ns = now_ns();
    auto work = job->work;
    issue_q_.push(std::move(job));
    return work;
  }

  void issue_loop() {
    at::NoGradGuard no_grad;  // copies into parameters are not autograd events
    JobPtr job;
    while (issue_q_.pop(job)) {
      try {
        if (job->dev >= 0) {
          use_comm_stream(job->dev);
          TOCL_CHECK(tocl_event_block(job->ready.get(), job->dev, tocl_stream_current(job->dev)));
        }
        std::optional<Agreement> agreement;
        if (checker_ && !job->agree.empty())
          agreement = start_agreement(*job);
        for (const auto& t : job->reads)
          job->in.push_back(can_map(t) ? mapped(t, job->maps) : to_host(t));
        if (agreement)
          finish_agreement(*job, *agreement);
        if (job->inplace) {
          job->out = job->in;
          for (const auto& t : job->writes)
            job->out_is_mapped.push_back(can_map(t));
        } else {
          for (const auto& t : job->writes) {
            bool map = can_map(t);
            job->out.push_back(map ? mapped(t, job->maps) : host_like(t));
            job->out_is_mapped.push_back(map);
          }
        }
        job->issued_ns = now_ns();
        job->inner = job->issue(job->in, job->out);
        complete_q_.push(std::move(job));
      } catch (abi::__forced_unwind&) {
        throw;  // pthread_exit (Python's finalization ends threads that ask for the GIL): let it unwind
      } catch (...) {
        job->work->fail(named_error(job->title, std::current_exception()));
      }
      job.reset();
    }
  }

  void complete_loop() {
    at::NoGradGuard no_grad;
    JobPtr job;
    while (complete_q_.pop(job)) {
      try {
        if (job->inner)
          job->inner->wait();
        if (job->finish)
          job->finish(job->out);
        if (job->dev >= 0 && !job->writes.empty()) {
          use_comm_stream(job->dev);
          // The outputs may still be read by work queued before the call.
          TOCL_CHECK(tocl_event_block(job->ready.get(), job->dev, tocl_stream_current(job->dev)));
        }
        job->unmap_all();  // Gloo and the fix-ups wrote mapped outputs in place
        for (size_t i = 0; i < job->writes.size(); i++)
          if (!job->out_is_mapped[i] && !job->writes[i].is_same(job->out[i]))
            job->writes[i].copy_(job->out[i]);
        job->work->complete(job->result, job->inner);
        record(*job);
        hold_for_test();
      } catch (abi::__forced_unwind&) {
        throw;  // pthread_exit (Python's finalization ends threads that ask for the GIL): let it unwind
      } catch (...) {
        job->work->fail(named_error(job->title, std::current_exception()));
      }
      job.reset();
    }
  }

  // TORCH_OCL_DIST_TEST_HOLD_MS: keep each finished job (and its tensors)
  // that long after its Work completes, so a test can destroy the group
  // while a comm thread still holds tensors (the stop() deadlock above).
  static void hold_for_test() {
    static const int ms = [] {
      const char* e = std::getenv("TORCH_OCL_DIST_TEST_HOLD_MS");
      return e ? std::atoi(e) : 0;
    }();
    if (ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  void record(const Job& job) {
    std::lock_guard<std::mutex> g(timeline_mu_);
    if (timeline_.size() >= 4096)
      timeline_.pop_front();
    timeline_.emplace_back(job.title, job.queued_ns, job.issued_ns, now_ns());
  }

  c10::intrusive_ptr<c10d::Backend> inner_;
  c10::intrusive_ptr<c10d::Backend> checker_;  // agreement checks (null: none)
  std::mutex timeline_mu_;
  std::deque<Span> timeline_;
  Fifo<JobPtr> issue_q_, complete_q_;
  std::thread issue_thread_, complete_thread_;
  std::once_flag stopped_;
};

}  // namespace dist
}  // namespace torch_ocl

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::kPrivateUse1, torch_ocl::dist::OclTimer);
}  // namespace c10d

namespace torch_ocl {

void register_distributed_bindings(py::module& m) {
  py::class_<dist::ProcessGroupOCL, c10d::Backend, c10::intrusive_ptr<dist::ProcessGroupOCL>>(m, "_ProcessGroupOCL")
      .def(py::init([](const c10::intrusive_ptr<c10d::Backend>& inner,
                       const std::optional<c10::intrusive_ptr<c10d::Backend>>& checker, int rank, int size) {
             return c10::make_intrusive<dist::ProcessGroupOCL>(inner, checker.value_or(nullptr), rank, size);
           }),
           py::arg("inner"), py::arg("checker"), py::arg("rank"), py::arg("size"))
      .def_property_readonly("inner", &dist::ProcessGroupOCL::inner)
      .def("_timeline", &dist::ProcessGroupOCL::timeline, py::arg("clear") = false)
      .def("_stop", &dist::ProcessGroupOCL::stop, py::call_guard<py::gil_scoped_release>());
}

}  // namespace torch_ocl

#else  // torch without distributed

namespace torch_ocl {
void register_distributed_bindings(pybind11::module&) {}
}  // namespace torch_ocl

#endif
