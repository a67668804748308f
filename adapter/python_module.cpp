// python_module.cpp - torch_ocl._C: the Python surface of the runtime
// (devices, memory, streams, generators, program cache, fallback counts).
// Only thin wrappers; the Python package builds the torch.ocl API on them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/Generator.h>

#include "aten/ocl_pointwise_table.h"
#include "aten/ocl_value_range.h"
#include "compile/ocl_segment.h"
#include "distributed/ocl_process_group.h"
#include "fallback.h"
#include "ocl_common.h"
#include "runtime/ocl_allocator.h"
#include "runtime/ocl_generator.h"
#include "runtime/ocl_memory_history.h"
#include "tocl/custom.h"
#include "tocl/fusion.h"
#include "tocl/graph.h"
#include "tocl/program.h"
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#if __has_include(<ATen/core/GraphImplInterface.h>)  // torch 2.14: torch.accelerator.Graph
#include <ATen/core/GraphImplInterface.h>
#define TOCL_HAVE_ACCELERATOR_GRAPH 1
#endif

namespace py = pybind11;
using namespace torch_ocl;

namespace {

// One capture (tocl/graph.h) as every user needs it: torch.ocl.OCLGraph and
// torch.compile(mode="reduce-overhead") through torch_ocl._C._Graph, and
// torch.accelerator.Graph. end() returns why the work cannot be replayed
// ("" if it can): the runtime's reason, or random numbers drawn during the
// capture (Philox offsets are host arguments, so a replay would repeat them).
struct OclCapture {
  OclCapture() = default;
  OclCapture(const OclCapture&) = delete;
  OclCapture& operator=(const OclCapture&) = delete;
  ~OclCapture() { tocl_graph_destroy(g_); }
  void begin(int dev) {
    TORCH_CHECK(!g_, "this graph already holds a capture; reset() it first");
    dev_ = dev;
    rng_ = default_generator(dev).get_state();
    TOCL_CHECK(tocl_graph_begin(dev, &g_));
  }
  std::string end() {
    TORCH_CHECK(g_, "capture_end without capture_begin");
    const char* why = nullptr;
    TOCL_CHECK(tocl_graph_end(g_, &why));
    if (why)
      return why;
    if (!at::equal(default_generator(dev_).get_state(), rng_))
      return "random numbers were drawn (a replay would repeat the capture's numbers)";
    return "";
  }
  void replay() {
    TORCH_CHECK(g_, "nothing was captured");
    TOCL_CHECK(tocl_graph_replay(g_));
  }
  int commands() const { return tocl_graph_commands(g_); }
  void reset() {
    tocl_graph_destroy(g_);
    g_ = nullptr;
  }

 private:
  tocl_graph* g_ = nullptr;
  int dev_ = 0;
  at::Tensor rng_;
};

// torch.compile(mode="reduce-overhead")'s work per call (compile/replay.py),
// one C++ call each: a call's signature, and a recording's replay (are its
// last outputs still referenced, copy the inputs it does not read in place,
// replay, hand out fresh tensors on its outputs). In Python these took about
// 90 us of a decoding step's host time on PoCL's two shared cores.
struct ReplaySignature {
  std::vector<int64_t> ints, statics, copied;  // argument positions

  static PyObject* item(PyObject* args, int64_t i) {
    if (i >= PyList_GET_SIZE(args))
      throw py::index_error("replay signature: argument " + std::to_string(i) + " is missing");
    return PyList_GET_ITEM(args, i);
  }
  static const at::Tensor& tensor(PyObject* args, int64_t i) {
    PyObject* o = item(args, i);
    if (!THPVariable_Check(o))
      throw py::type_error("replay signature: argument " + std::to_string(i) + " is not a tensor");
    return THPVariable_Unpack(o);
  }
  static py::int_ address(const void* p) { return py::int_(reinterpret_cast<uintptr_t>(p)); }

  // (integer arguments, static inputs' addresses, copied inputs' addresses
  // where `owned` holds their storage else None), as replay.py's _key.
  py::tuple operator()(const py::list& args, const py::object& owned) const {
    PyObject* a = args.ptr();
    py::tuple ti(ints.size()), ts(statics.size()), tc(copied.size());
    try {
      for (size_t k = 0; k < ints.size(); k++)
        ti[k] = py::reinterpret_borrow<py::object>(item(a, ints[k]));
      for (size_t k = 0; k < statics.size(); k++)
        ts[k] = address(tensor(a, statics[k]).data_ptr());
      for (size_t k = 0; k < copied.size(); k++) {
        const at::Tensor& t = tensor(a, copied[k]);
        tc[k] = owned.contains(address(t.storage().data())) ? py::object(address(t.data_ptr())) : py::object(py::none());
      }
    } catch (const c10::Error& e) {  // a tensor without storage: not a signature
      throw py::type_error(e.what_without_backtrace());
    }
    return py::make_tuple(ti, ts, tc);
  }
};

struct ReplayRecording {
  py::object graph;                                          // the _Graph holding the capture
  std::vector<std::pair<int64_t, at::Tensor>> placeholders;  // (argument position, copy target)
  py::list outputs;
  std::vector<c10::Storage> storages;  // the ones the recording owns and a replay overwrites
  std::vector<size_t> baseline;        // their use counts while only the recording holds them

  ReplayRecording(py::object g, const std::vector<std::pair<int64_t, at::Tensor>>& ph, py::list outs,
                  const std::vector<at::Tensor>& owned)
      : graph(std::move(g)), placeholders(ph), outputs(std::move(outs)) {
    for (const at::Tensor& t : owned)
      storages.push_back(t.storage());
    for (const c10::Storage& st : storages)
      baseline.push_back(st.use_count());
  }

  // New tensors on the outputs, never the recording's own objects: a
  // caller's reference then shows in the storages' use counts.
  py::list hand_out() const {
    py::list out(outputs.size());
    for (size_t i = 0; i < outputs.size(); i++) {
      PyObject* o = PyList_GET_ITEM(outputs.ptr(), i);
      out[i] = THPVariable_Check(o) ? py::reinterpret_steal<py::object>(THPVariable_Wrap(THPVariable_Unpack(o).detach()))
                                    : py::reinterpret_borrow<py::object>(o);
    }
    return out;
  }

  bool outputs_live() const {
    for (size_t i = 0; i < storages.size(); i++)
      if (storages[i].use_count() > baseline[i])
        return true;
    return false;
  }

  // The outputs of a replay, or why it ran none: "live" (the last outputs
  // are still referenced) or "shape" (an input's shape changed).
  py::object run(const py::list& args) {
    if (outputs_live())
      return py::str("live");
    PyObject* a = args.ptr();
    for (const auto& [i, p] : placeholders)
      if (!ReplaySignature::tensor(a, i).sizes().equals(p.sizes()))
        return py::str("shape");  // copy_ would broadcast: never replay on a changed shape
    for (auto& [i, p] : placeholders)
      p.copy_(ReplaySignature::tensor(a, i));
    PyList_SetSlice(a, 0, PyList_GET_SIZE(a), nullptr);  // boxed convention: the inputs may go now
    graph.cast<OclCapture&>().replay();
    return hand_out();
  }
};

#ifdef TOCL_HAVE_ACCELERATOR_GRAPH
// torch.accelerator.Graph on ocl: raises at capture_end what a replay
// cannot repeat, and drops the capture.
struct OclGraphImpl final : at::GraphImplInterface {
  explicit OclGraphImpl(const at::GraphImplArgs&) {}
  void capture_begin(at::MempoolId_t pool, at::GraphCaptureMode) override {
    TORCH_CHECK(pool.first == 0 && pool.second == 0, "ocl graphs do not share memory pools");
    c_.begin(current_device());
  }
  void capture_end() override {
    std::string why = c_.end();
    if (!why.empty()) {
      c_.reset();
      TORCH_CHECK(false, "the captured work cannot be replayed: ", why);
    }
  }
  void instantiate() override {}
  void replay() override { c_.replay(); }
  void reset() override { c_.reset(); }
  at::MempoolId_t pool() const override { return {0, 0}; }
  void enable_debug_mode() override {}
  void debug_dump(const std::string&) override { TORCH_CHECK(false, "debug_dump is not supported for ocl graphs"); }

 private:
  OclCapture c_;
};
#endif

py::dict device_props(int dev) {
  tocl_device_props p{};
  TOCL_CHECK(tocl_device_props_get(dev, &p));
  static const char* kinds[] = {"gpu", "accelerator", "cpu", "other"};
  py::dict d;
  d["name"] = p.name;
  d["vendor"] = p.vendor;
  d["platform_name"] = p.platform_name;
  d["platform_version"] = p.platform_version;
  d["driver_version"] = p.driver_version;
  d["opencl_version"] = p.opencl_version;
  d["opencl_c_version"] = p.opencl_c_version;
  d["type"] = kinds[p.kind];
  d["compute_units"] = p.compute_units;
  d["total_memory"] = p.global_mem_bytes;
  d["local_memory"] = p.local_mem_bytes;
  d["max_alloc"] = p.max_alloc_bytes;
  d["max_work_group_size"] = p.max_work_group_size;
  d["has_fp64"] = static_cast<bool>(p.has_fp64);
  d["has_fp16"] = static_cast<bool>(p.has_fp16);
  d["extensions"] = p.extensions;
  return d;
}

py::dict memory_stats(int dev) {
  tocl_mem_stats s{};
  TOCL_CHECK(tocl_mem_stats_get(dev, &s));
  py::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["requested_bytes"] = s.requested_bytes;
  d["reserved_bytes"] = s.reserved_bytes;
  d["peak_allocated_bytes"] = s.peak_allocated_bytes;
  d["peak_reserved_bytes"] = s.peak_reserved_bytes;
  d["active_blocks"] = s.active_blocks;
  d["segments"] = s.segments;
  d["alloc_count"] = s.alloc_count;
  d["free_count"] = s.free_count;
  d["cache_hits"] = s.cache_hits;
  d["alloc_retries"] = s.alloc_retries;
  d["ooms"] = s.ooms;
  d["limit_bytes"] = s.limit_bytes;
  return d;
}

py::dict program_stats() {
  tocl_program_stats s{};
  TOCL_CHECK(tocl_program_stats_get(&s));
  tocl_ew_stats e{};
  tocl_ew_stats_get(&e);
  py::dict d;
  d["memory_hits"] = s.memory_hits;
  d["disk_hits"] = s.disk_hits;
  d["builds"] = s.builds;
  d["disk_writes"] = s.disk_writes;
  d["disk_rejects"] = s.disk_rejects;
  d["build_seconds"] = s.build_seconds;
  d["build_failures"] = s.build_failures;
  d["known_failures"] = s.known_failures;
  d["disk_writes_pending"] = s.disk_writes_pending;
  d["lean_builds"] = s.lean_builds;
  d["lean_fallbacks"] = s.lean_fallbacks;
  d["elementwise_launches"] = e.launches;
  d["elementwise_kernels"] = e.kernels_created;
  return d;
}

py::dict cache_info() {
  char dir[4096];
  TOCL_CHECK(tocl_cache_dir(dir, sizeof dir));
  uint64_t files = 0, bytes = 0;
  TOCL_CHECK(tocl_cache_info(&files, &bytes));
  py::dict d;
  d["dir"] = std::string(dir);
  d["files"] = files;
  d["bytes"] = bytes;
  return d;
}

// ---- custom kernels (torch_ocl.compile_kernel; the logic is runtime/custom/) ----

// torch_ocl.Local(nbytes): the size of a __local buffer argument.
struct LocalArg {
  uint64_t nbytes;
};

py::list custom_params(const tocl_custom_kernel* k) {
  static const char* kinds[] = {"buffer", "local", "scalar", "unsupported"};
  py::list out;
  for (int i = 0; i < tocl_custom_param_count(k); i++) {
    const tocl_custom_param* p = tocl_custom_param_at(k, i);
    py::dict d;
    d["name"] = p->name;
    d["type"] = p->type;
    d["decl"] = p->decl;
    d["kind"] = kinds[p->kind];
    d["vec"] = p->vec;
    d["const"] = static_cast<bool>(p->is_const);
    out.append(d);
  }
  return out;
}

// Unpack the Python arguments of a launch, then one runtime call. A tensor
// must be a contiguous ocl tensor (the kernel sees raw memory from its first
// element); the kernel runs on the device of the first tensor, or the current
// device, on that device's current stream.
void custom_launch(uintptr_t kptr, const std::vector<size_t>& global, const std::optional<std::vector<size_t>>& local,
                   const py::sequence& args) {
  auto* k = reinterpret_cast<const tocl_custom_kernel*>(kptr);
  const size_t n = args.size();
  std::vector<tocl_custom_arg> cargs(n);
  std::vector<std::vector<tocl_scalar>> values(n);
  int dev = -1;
  for (size_t i = 0; i < n; i++) {
    py::handle a = args[i];
    tocl_custom_arg& c = cargs[i];
    const char* pname = i < static_cast<size_t>(tocl_custom_param_count(k))
                            ? tocl_custom_param_at(k, static_cast<int>(i))->name : "?";
    if (THPVariable_Check(a.ptr())) {
      const at::Tensor& t = THPVariable_Unpack(a.ptr());
      if (t.device().type() != c10::DeviceType::PrivateUse1)
        throw py::type_error(std::string("kernel ") + tocl_custom_kernel_name(k) + ": argument " + std::to_string(i) +
                             " (" + pname + ") is a tensor on " + t.device().str() +
                             "; pass a tensor on the ocl device (.to('ocl'))");
      if (!t.is_contiguous())
        throw py::value_error(std::string("kernel ") + tocl_custom_kernel_name(k) + ": argument " +
                              std::to_string(i) + " (" + pname +
                              ") is not contiguous; the kernel indexes raw memory, so pass .contiguous() (and copy "
                              "back an output)");
      if (dev < 0)
        dev = t.device().index();
      c.kind = TOCL_CUSTOM_BUFFER;
      c.addr = reinterpret_cast<tocl_addr>(t.data_ptr());
      c.dtype = to_tocl_dtype(t.scalar_type());
      c.nbytes = static_cast<uint64_t>(t.numel()) * t.element_size();
    } else if (py::isinstance<LocalArg>(a)) {
      c.kind = TOCL_CUSTOM_LOCAL;
      c.nbytes = a.cast<LocalArg&>().nbytes;
    } else {
      c.kind = TOCL_CUSTOM_SCALAR;
      auto one = [&](py::handle v) {
        tocl_scalar s{};
        if (PyFloat_Check(v.ptr())) {
          s.is_float = 1;
          s.f = PyFloat_AsDouble(v.ptr());
        } else if (PyLong_Check(v.ptr())) {
          int overflow = 0;
          s.i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
          if (overflow)
            throw py::value_error(std::string("kernel ") + tocl_custom_kernel_name(k) + ": argument " +
                                  std::to_string(i) + " (" + pname + ") does not fit in 64 bits");
        } else {
          throw py::type_error(std::string("kernel ") + tocl_custom_kernel_name(k) + ": argument " +
                               std::to_string(i) + " (" + pname + ") is a " + Py_TYPE(v.ptr())->tp_name +
                               "; pass a tensor, a number, a list of numbers (vector types) or torch_ocl.Local");
        }
        values[i].push_back(s);
      };
      if (PyList_Check(a.ptr()) || PyTuple_Check(a.ptr()))
        for (py::handle v : a.cast<py::sequence>())
          one(v);
      else
        one(a);
      c.count = static_cast<int>(values[i].size());
      c.values = values[i].data();
    }
  }
  if (dev < 0)
    dev = current_device();
  if (local && local->size() != global.size())
    throw py::value_error(std::string("kernel ") + tocl_custom_kernel_name(k) + ": group_size has " +
                          std::to_string(local->size()) + " dimensions, threads has " +
                          std::to_string(global.size()));
  tocl_custom_fault fault = TOCL_CUSTOM_FAULT_NONE;
  tocl_status s = tocl_custom_launch(k, dev, tocl_stream_current(dev), static_cast<int>(global.size()), global.data(),
                                     local ? local->data() : nullptr, cargs.data(), static_cast<int>(n), &fault);
  if (s == TOCL_OK)
    return;
  if (fault == TOCL_CUSTOM_FAULT_TYPE)
    throw py::type_error(tocl_last_error());
  if (fault == TOCL_CUSTOM_FAULT_VALUE)
    throw py::value_error(tocl_last_error());
  TOCL_CHECK(s);
}

void register_custom_bindings(py::module& m) {
  py::class_<LocalArg>(m, "Local", "The size in bytes of a __local buffer argument of a custom kernel.")
      .def(py::init([](int64_t nbytes) {
             if (nbytes <= 0)
               throw py::value_error("Local(nbytes): nbytes must be positive, got " + std::to_string(nbytes));
             return LocalArg{static_cast<uint64_t>(nbytes)};
           }),
           py::arg("nbytes"))
      .def_readonly("nbytes", &LocalArg::nbytes)
      .def("__repr__", [](const LocalArg& l) { return "Local(" + std::to_string(l.nbytes) + ")"; });
  m.def("_custom_compile", [](int dev, const std::string& src, const std::string& opts, const std::string& defines) {
    tocl_custom_lib* lib = nullptr;
    tocl_status s = tocl_custom_compile(dev, src.c_str(), opts.c_str(), defines.c_str(), &lib);
    if (s == TOCL_E_INVALID)
      throw py::value_error(tocl_last_error());
    TOCL_CHECK(s);
    return reinterpret_cast<uintptr_t>(lib);
  });
  m.def("_custom_kernels", [](uintptr_t lptr) {
    auto* lib = reinterpret_cast<const tocl_custom_lib*>(lptr);
    py::list out;
    for (int i = 0; i < tocl_custom_kernel_count(lib); i++) {
      const tocl_custom_kernel* k = tocl_custom_kernel_at(lib, i);
      out.append(py::make_tuple(reinterpret_cast<uintptr_t>(k), tocl_custom_kernel_name(k), custom_params(k)));
    }
    return out;
  });
  m.def("_custom_text", [](uintptr_t lptr) {
    return std::string(tocl_custom_lib_text(reinterpret_cast<const tocl_custom_lib*>(lptr)));
  });
  m.def("_custom_limits", [](uintptr_t kptr, int dev) {
    tocl_custom_limits l{};
    TOCL_CHECK(tocl_custom_kernel_limits(reinterpret_cast<const tocl_custom_kernel*>(kptr), dev, &l));
    py::dict d;
    d["max_work_group_size"] = l.max_work_group_size;
    d["preferred_work_group_size_multiple"] = l.preferred_group_multiple;
    d["static_local_memory"] = l.local_mem_bytes;
    d["private_memory"] = l.private_mem_bytes;
    d["device_local_memory"] = l.device_local_mem_bytes;
    d["max_work_item_sizes"] = py::make_tuple(l.device_max_group_dims[0], l.device_max_group_dims[1],
                                              l.device_max_group_dims[2]);
    return d;
  });
  m.def("_custom_launch", &custom_launch, py::arg("kernel"), py::arg("threads"), py::arg("group_size"),
        py::arg("args"));
  m.def("_custom_test_hide_fp64", [](bool hide) { tocl_custom_test_hide_fp64(hide ? 1 : 0); });
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_ocl native runtime bindings";
  m.def("_init", [] {
    tocl_status s = tocl_init();
    if (s != TOCL_OK)
      throw std::runtime_error(tocl_last_error());
  });
  m.def("_install_out_device_checks", &install_out_device_checks);
  m.def("_device_count", [] { return tocl_device_count(); });
  m.def("_target_check_counts", [] {  // nll_loss's target checks: (spared a wait, waited); ocl_value_range.h
    auto c = check_counts(CheckKind::target);
    return py::make_tuple(c.spared, c.waited);
  });
  m.def("_index_check_counts", [] {  // index_select's (embedding's) index checks, likewise
    auto c = check_counts(CheckKind::index);
    return py::make_tuple(c.spared, c.waited);
  });
  m.def("_check_device", [](int dev) { TOCL_CHECK(tocl_device_check(dev)); });
  m.def("_device_props", &device_props);
  m.def("_get_device", [] { return current_device(); });
  m.def("_set_device", [](int dev) {
    TOCL_CHECK(tocl_device_check(dev));
    c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)
        ->setDevice(c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(dev)));
  });

  m.def("_memory_stats", &memory_stats);
  m.def("_reset_peak_memory_stats", [](int dev) { TOCL_CHECK(tocl_mem_reset_peak(dev)); });
  m.def("_reset_accumulated_memory_stats", [](int dev) { TOCL_CHECK(tocl_mem_reset_counters(dev)); });
  m.def("_empty_cache", [] {
    for (int d = 0; d < tocl_device_count(); d++)
      TOCL_CHECK(tocl_mem_empty_cache(d));
  });
  m.def("_mem_get_info", [](int dev) { return memory_info(dev); });
  m.def("_set_memory_limit", [](int dev, uint64_t bytes) { TOCL_CHECK(tocl_mem_set_limit(dev, bytes)); });
  register_memory_bindings(m);
  // c10d's Python types exist only once torch.distributed is imported, so
  // the backend class is bound on demand (torch_ocl.distributed does it).
  m.def("_register_distributed", [m]() mutable {
    if (!py::hasattr(m, "_ProcessGroupOCL"))
      register_distributed_bindings(m);
  });
  m.def("_is_pinned", [](uintptr_t p) { return tocl_host_is_pinned(reinterpret_cast<void*>(p)) != 0; });

  m.def("_current_stream", [](int dev) { return tocl_stream_current(dev); });
  m.def("_set_stream", [](int dev, int s) { TOCL_CHECK(tocl_stream_set_current(dev, s)); });
  m.def("_stream_from_pool", [](int dev) {
    int s = 0;
    TOCL_CHECK(tocl_stream_from_pool(dev, &s));
    return s;
  });
  m.def("_stream_synchronize", [](int dev, int s) {
    py::gil_scoped_release nogil;
    TOCL_CHECK(tocl_stream_sync(dev, s));
  });
  m.def("_synchronize", [](int dev) {
    py::gil_scoped_release nogil;
    TOCL_CHECK(tocl_device_sync(dev));
  });

  m.def("_default_generator", [](int dev) {
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(default_generator(dev)));
  });

  // Graph capture and replay: torch.ocl.OCLGraph and
  // torch.compile(mode="reduce-overhead") build on this handle.
  py::class_<OclCapture>(m, "_Graph")
      .def(py::init<>())
      .def("capture_begin", &OclCapture::begin)
      .def("capture_end",
           [](OclCapture& c) -> py::object {
             std::string why = c.end();
             return why.empty() ? py::object(py::none()) : py::object(py::str(why));
           })
      .def("replay", &OclCapture::replay)
      .def("commands", &OclCapture::commands)
      .def("reset", &OclCapture::reset);

  m.def("_graph_capturing", [] { return tocl_graph_capturing() != 0; });
  py::class_<ReplaySignature>(m, "_ReplaySignature")
      .def(py::init([](std::vector<int64_t> i, std::vector<int64_t> s, std::vector<int64_t> c) {
        return ReplaySignature{std::move(i), std::move(s), std::move(c)};
      }))
      .def("__call__", &ReplaySignature::operator());
  py::class_<ReplayRecording>(m, "_ReplayRecording")
      .def(py::init<py::object, const std::vector<std::pair<int64_t, at::Tensor>>&, py::list,
                    const std::vector<at::Tensor>&>())
      .def("run", &ReplayRecording::run)
      .def("hand_out", &ReplayRecording::hand_out);
  // Registered once the backend is named "ocl" (the registry's key is the
  // device type's name): torch.accelerator.Graph then captures on ocl.
  m.def("_register_accelerator_graph", [] {
#ifdef TOCL_HAVE_ACCELERATOR_GRAPH
    auto key = c10::DeviceTypeName(c10::DeviceType::PrivateUse1, /*lower_case=*/false);
    if (!at::GraphImplRegistry()->Has(key))
      at::GraphImplRegistry()->Register(
          key, [](at::GraphImplArgs a) -> std::unique_ptr<at::GraphImplInterface> {
            return std::make_unique<OclGraphImpl>(a);
          });
    return true;
#else
    return false;
#endif
  });

  m.def("_program_stats", &program_stats);
  m.def("_reset_program_stats", [] { tocl_program_stats_reset(); });
  m.def("_program_cache_flush", [] {
    py::gil_scoped_release nogil;  // the builder may be waiting for the GIL-free driver
    tocl_program_cache_flush();
  });
  // Guard mode (TORCH_OCL_GUARD=1): canaries around every device block.
  m.def("_guard_enabled", [] { return tocl_mem_guard_enabled() != 0; });
  m.def("_guard_violations", [] { return tocl_mem_guard_violations(); });
  m.def("_guard_check", [] {
    for (int d = 0; d < tocl_device_count(); d++)
      TOCL_CHECK(tocl_mem_guard_check(d));
    return tocl_mem_guard_violations();
  });
  m.def("_cache_info", &cache_info);
  m.def("_cache_clear", [] {
    uint64_t n = 0;
    TOCL_CHECK(tocl_cache_clear(&n));
    return n;
  });
  // Tests: the next n program builds fail in the driver with a real build log.
  m.def("_inject_build_failures", [](int n) { tocl_program_inject_build_failures(n); });
  m.def("_strict_builds", [] { return tocl_strict_builds() != 0; });
  // A child forked after the parent used the device (see runtime/core/fork.c).
  m.def("_in_bad_fork", [] { return tocl_in_bad_fork() != 0; });
  m.def("_build_program", [](int dev, const std::string& src, const std::string& opts, const std::string& name) {
    TOCL_CHECK(tocl_program_prepare(dev, src.c_str(), opts.c_str(), name.c_str()));
  });

  m.def("_eager_mode", [] { return tocl_eager_mode_get() == TOCL_EAGER_FUSED ? "fused" : "strict"; });
  m.def("_set_eager_mode", [](const std::string& mode) {
    if (mode != "strict" && mode != "fused")
      throw py::value_error("eager mode must be 'strict' or 'fused', got '" + mode + "'");
    py::gil_scoped_release nogil;
    TOCL_CHECK(tocl_eager_mode_set(mode == "fused" ? TOCL_EAGER_FUSED : TOCL_EAGER_STRICT));
  });
  m.def("_fusion_flush", [] {
    py::gil_scoped_release nogil;
    TOCL_CHECK(tocl_fusion_flush_all());
  });
  m.def("_fusion_set_sync_build", [](bool on) { tocl_fusion_set_sync_build(on); });
  m.def("_fusion_wait_builds", [] {
    py::gil_scoped_release nogil;
    tocl_fusion_wait_builds();
  });
  m.def("_fusion_abandon_builds", [](double seconds) {
    py::gil_scoped_release nogil;
    return tocl_fusion_abandon_builds(seconds) != 0;
  });
  m.def("_fusion_stats", [] {
    tocl_fusion_stats s{};
    tocl_fusion_stats_get(&s);
    py::dict d;
    d["ops_recorded"] = s.ops_recorded;
    d["flushes"] = s.flushes;
    d["graphs_flushed"] = s.graphs_flushed;
    d["fused_launches"] = s.fused_launches;
    d["kernels_launched"] = s.kernels_launched;
    d["ops_run_separately"] = s.ops_run_separately;
    d["intermediates_elided"] = s.intermediates_elided;
    d["reductions_fused"] = s.reductions_fused;
    d["broadcasts_inlined"] = s.broadcasts_inlined;
    d["cache_hits"] = s.cache_hits;
    d["cache_misses"] = s.cache_misses;
    d["builds"] = s.builds;
    d["build_seconds"] = s.build_seconds;
    d["ops_pending"] = s.ops_pending;
    d["free_table_entries"] = s.free_table_entries;
    return d;
  });
  m.def("_reset_fusion_stats", [] { tocl_fusion_stats_reset(); });

  // [(aten overload, IR op, iterator kind, dtypes)]: the ops that are one IR
  // op each (adapter/aten/ocl_pointwise_table.cpp), for the compile lowering.
  m.def("_pointwise_table", [] { return pointwise_table(); });
  register_segment_bindings(m);
  register_custom_bindings(m);
  m.def("_fallback_stats", [] { return fallback_stats(); });
  m.def("_reset_fallback_stats", [] { fallback_reset_stats(); });
  m.def("_set_fallback_policy", [](const std::string& p) {
    if (p == "warn")
      set_fallback_policy(FallbackPolicy::Warn);
    else if (p == "error")
      set_fallback_policy(FallbackPolicy::Error);
    else if (p == "silent")
      set_fallback_policy(FallbackPolicy::Silent);
    else
      throw py::value_error("fallback policy must be 'warn', 'error' or 'silent', got '" + p + "'");
  });
  m.def("_get_fallback_policy", [] {
    switch (fallback_policy()) {
      case FallbackPolicy::Error: return "error";
      case FallbackPolicy::Silent: return "silent";
      default: return "warn";
    }
  });
}
