// fallback.cpp - the visible CPU fallback: every aten op without an ocl
// kernel runs on the CPU through PyTorch's boxed fallback, under a policy
// from TORCH_OCL_FALLBACK: warn (default: once per op, naming it), error
// (raise, naming it) or silent. Per-op counts are kept for fallback_stats().
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>
#include <string>

#include "aten/ocl_iter_out.h"
#include "fallback.h"
#include "fallback_args.h"

namespace torch_ocl {
namespace {

std::mutex g_mutex;
std::map<std::string, int64_t> g_counts;

FallbackPolicy policy_from_env() {
  const char* v = std::getenv("TORCH_OCL_FALLBACK");
  if (!v || !*v || !std::strcmp(v, "warn"))
    return FallbackPolicy::Warn;
  if (!std::strcmp(v, "error"))
    return FallbackPolicy::Error;
  if (!std::strcmp(v, "silent"))
    return FallbackPolicy::Silent;
  TORCH_WARN("torch_ocl: TORCH_OCL_FALLBACK='", v, "' is not one of warn, error, silent; using warn");
  return FallbackPolicy::Warn;
}

FallbackPolicy& policy() {
  static FallbackPolicy p = policy_from_env();
  return p;
}

}  // namespace

// Count one CPU run of `name` and apply the policy (raise, warn once, or not).
void note_fallback(const std::string& name) {
  int64_t n;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    n = ++g_counts[name];
  }
  switch (policy()) {
    case FallbackPolicy::Error:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: '", name,
                                  "' has no ocl kernel and TORCH_OCL_FALLBACK=error forbids running it on "
                                  "the CPU. Set TORCH_OCL_FALLBACK=warn to allow the CPU fallback.");
    case FallbackPolicy::Warn:
      if (n == 1)
        TORCH_WARN("torch_ocl: '", name,
                   "' has no ocl kernel yet; running it on the CPU (copies to and from the device). "
                   "Set TORCH_OCL_FALLBACK=silent to hide this or =error to forbid it.");
      break;
    case FallbackPolicy::Silent: break;
  }
}

namespace {

// ---- layout-preserving CPU replicas ----------------------------------------
//
// PyTorch's at::native::cpu_fallback copies each argument with .cpu(), which
// makes a non-dense view contiguous and gives every argument its own storage.
// Ops branch on layout: _linalg_det factors A^T when A is contiguous and its
// backward asks the saved ocl A whether it is, so a strided A made the CPU
// factor one matrix and the backward solve with the other (a silently wrong
// gradient). Here every ocl argument gets a CPU replica with the same sizes,
// strides and relative storage offset, and arguments that share an ocl
// storage share one CPU storage, so aliasing (out= an input, an in-place op
// on a view of another argument) behaves as on the device. Only the elements
// the views cover are copied; the rest of the CPU span is left untouched
// (the CPU allocator does not fill it, so untouched pages cost nothing).

// Bytes from the first to one past the last element of t, relative to the
// start of its storage; {0, 0} for an empty tensor.
std::pair<int64_t, int64_t> byte_range(const at::Tensor& t) {
  if (t.numel() == 0)
    return {0, 0};
  int64_t lo = t.storage_offset(), hi = lo;
  for (int64_t d = 0; d < t.dim(); d++) {
    int64_t reach = (t.size(d) - 1) * t.stride(d);
    (reach < 0 ? lo : hi) += reach;
  }
  int64_t es = static_cast<int64_t>(t.element_size());
  return {lo * es, (hi + 1) * es};
}

struct Replicas {
  // One CPU span per ocl storage: where it starts (bytes into the ocl storage).
  struct Span {
    int64_t lo, hi;
    c10::Storage cpu;
  };
  std::map<const c10::StorageImpl*, Span> spans;

  void note(const at::Tensor& t) {
    if (!t.defined() || t.device().type() != c10::DeviceType::PrivateUse1 || t.numel() == 0)
      return;
    auto r = byte_range(t);
    auto key = t.storage().unsafeGetStorageImpl();
    auto it = spans.find(key);
    if (it == spans.end())
      spans.emplace(key, Span{r.first, r.second, {}});
    else
      it->second.lo = std::min(it->second.lo, r.first), it->second.hi = std::max(it->second.hi, r.second);
  }

  at::Tensor cpu_of(const at::Tensor& t) {
    if (!t.defined() || t.device().type() != c10::DeviceType::PrivateUse1)
      return t;
    auto cpu_opts = t.options().device(c10::kCPU);
    if (t.numel() == 0)
      return at::empty_strided(t.sizes(), t.strides(), cpu_opts);
    if (at::has_internal_overlap(t) == at::MemOverlap::Yes) {
      // An expanded input (stride 0) gets a dense copy, as .cpu() makes: CPU
      // backward kernels write into buffers shaped like their inputs, and an
      // overlapping replica made them refuse to.
      return t.cpu();
    }
    Span& s = spans.at(t.storage().unsafeGetStorageImpl());
    int64_t es = static_cast<int64_t>(t.element_size());
    int64_t rel = t.storage_offset() * es - s.lo;
    if (rel % es != 0) {
      // Views of one storage in dtypes of different sizes that do not align:
      // this argument gets a storage of its own, still with t's strides.
      at::Tensor c = at::empty_strided(t.sizes(), t.strides(), cpu_opts);
      c.copy_(t);
      return c;
    }
    if (!s.cpu.unsafeGetStorageImpl()) {
      auto bytes = at::empty({s.hi - s.lo}, at::TensorOptions().dtype(at::kByte).device(c10::kCPU));
      s.cpu = bytes.storage();
    }
    // The shared CPU storage holds physical values, as the ocl storage does:
    // a conj or neg view (d.conj() beside d, both arguments of one mm) is
    // replicated as its physical view and given its bits back, so that
    // copying it does not overwrite its base's values with conjugates.
    bool conj = t.is_conj(), neg = t.is_neg();
    at::Tensor p = conj ? t.conj() : t;
    if (neg)
      p = at::_neg_view(p);
    at::Tensor c = at::empty({0}, cpu_opts);
    c.set_(s.cpu, rel / es, t.sizes(), t.strides());
    c.copy_(p);
    if (neg)
      c = at::_neg_view(c);
    return conj ? c.conj() : c;
  }
};

}  // namespace

// Helpers shared with sparse_fallback.cpp (declared in fallback_args.h).
bool on_ocl(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

// Write a mutated argument's CPU result back into the ocl tensor. An out=
// argument the CPU op resized gets the CPU's sizes and strides, as a device
// kernel's out= would (resize_output, then the strides the kernel asked for).
void write_back(const at::Tensor& cpu, const at::Tensor& dev) {
  if (!cpu.defined() || !dev.defined())
    return;
  if (cpu.sizes() != dev.sizes() || cpu.strides() != dev.strides()) {
    dev.resize_(cpu.sizes());
    if (cpu.is_non_overlapping_and_dense() && cpu.strides() != dev.strides())
      dev.as_strided_(cpu.sizes(), cpu.strides(), dev.storage_offset());
  }
  if (dev.numel())
    dev.copy_(cpu);
}

// Where an op's results belong: an ocl Device argument (factory ops), else
// the first ocl tensor.
std::optional<c10::Device> target_device(c10::ArrayRef<c10::IValue> args) {
  for (const auto& v : args)
    if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1)
      return v.toDevice();
  std::optional<c10::Device> first;
  for_each_tensor(args, [&](const at::Tensor& t) {
    if (!first && on_ocl(t))
      first = t.device();
  });
  return first;
}

// An out= (written) argument on the CPU for an op whose tensors are on ocl
// is refused, as the CPU and CUDA backends refuse a wrong-device out.
void check_out_device(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                      const c10::Device& dev) {
  for (size_t i = 0; i < args.size(); i++) {
    const auto* alias = schema.arguments()[i].alias_info();
    if (!alias || !alias->isWrite())
      continue;
    auto check = [&](const at::Tensor& t) {
      TORCH_CHECK(!t.defined() || t.device() == dev, "Expected out tensor to have device ", dev, ", but got ",
                  t.device(), " instead");
    };
    if (args[i].isTensor())
      check(args[i].toTensor());
    else if (args[i].isTensorList())
      for (const at::Tensor& t : args[i].toTensorVector())
        check(t);
  }
}

std::string op_name(const c10::FunctionSchema& schema) {
  std::string name = schema.name();
  if (!schema.overload_name().empty())
    name += "." + schema.overload_name();
  return name;
}

int written_argument(const c10::FunctionSchema& schema, const c10::AliasInfo& ret) {
  for (size_t i = 0; i < schema.arguments().size(); i++) {
    const auto* in_alias = schema.arguments()[i].alias_info();
    if (in_alias && *in_alias == ret)
      return static_cast<int>(i);
  }
  return -1;
}

// Also the route of complex arguments to real-only kernels (aten/ocl_complex_route.h).
void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::string name = op_name(schema);
  note_fallback(name);

  const size_t nargs = schema.arguments().size();
  const size_t begin = stack->size() - nargs;
  std::vector<c10::IValue> dev_args(stack->begin() + begin, stack->end());

  Replicas rep;
  for_each_tensor(dev_args, [&](const at::Tensor& t) { rep.note(t); });
  std::optional<c10::Device> target = target_device(dev_args);
  if (target)
    check_out_device(schema, dev_args, *target);

  // CPU arguments: replicas in place of ocl tensors, the CPU in place of an ocl device.
  std::vector<c10::IValue> cpu_args(nargs);
  for (size_t i = 0; i < nargs; i++) {
    const auto& v = dev_args[i];
    if (v.isTensor()) {
      cpu_args[i] = rep.cpu_of(v.toTensor());
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> l;
      for (const at::Tensor& t : v.toTensorVector())
        l.push_back(rep.cpu_of(t));
      cpu_args[i] = l;
    } else if (v.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> l;
      for (const auto& t : v.toOptionalTensorVector())
        l.push_back(t ? std::optional<at::Tensor>(rep.cpu_of(*t)) : std::nullopt);
      cpu_args[i] = l;
    } else if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1) {
      cpu_args[i] = c10::Device(c10::kCPU);
    } else {
      cpu_args[i] = v;
    }
  }
  for (size_t i = 0; i < nargs; i++)
    (*stack)[begin + i] = cpu_args[i];

  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

  // Mutated arguments: their CPU results go back into the ocl tensors.
  for (size_t i = 0; i < nargs; i++) {
    const auto* alias = schema.arguments()[i].alias_info();
    if (!alias || !alias->isWrite())
      continue;
    if (dev_args[i].isTensor() && on_ocl(dev_args[i].toTensor())) {
      write_back(cpu_args[i].toTensor(), dev_args[i].toTensor());
    } else if (dev_args[i].isTensorList()) {
      auto d = dev_args[i].toTensorVector();
      auto c = cpu_args[i].toTensorVector();
      for (size_t k = 0; k < d.size(); k++)
        if (on_ocl(d[k]))
          write_back(c[k], d[k]);
    }
  }

  // Returns: a mutable alias is the original ocl argument; anything else is
  // copied to the device (Tensor.to keeps dense strides).
  const auto& returns = schema.returns();
  const size_t rbegin = stack->size() - returns.size();
  for (size_t r = 0; r < returns.size(); r++) {
    c10::IValue& v = (*stack)[rbegin + r];
    const auto* alias = returns[r].alias_info();
    if (alias && alias->isWrite()) {
      int i = written_argument(schema, *alias);
      TORCH_CHECK(i >= 0, "torch_ocl: ", name, " returns a mutable alias that matches no argument");
      v = dev_args[i];
      continue;
    }
    if (alias)
      TORCH_WARN_ONCE("torch_ocl: '", name, "' is a view op without an ocl kernel; its CPU fallback returns a copy, "
                      "not a view");
    if (!target)
      continue;
    if (v.isTensor() && v.toTensor().defined()) {
      v = v.toTensor().to(*target);
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> l;
      for (const at::Tensor& t : v.toTensorVector())
        l.push_back(t.defined() ? t.to(*target) : t);
      v = l;
    }
  }
}

namespace {

// ---- the out= contract at the dispatcher boundary --------------------------
//
// PyTorch's CUDA registrations check every out= argument's device in the
// generated wrapper before the kernel runs, and structured kernels give a
// non-contiguous out= a contiguous proxy that is copied back at the end. An
// extension's TORCH_LIBRARY_IMPL kernels get neither, so each out= overload
// of aten is wrapped here, once, after every kernel of the extension has been
// registered: the wrapper checks the out arguments' device (before anything
// is written or resized) and then calls the kernel it replaced (an ocl
// kernel) or the CompositeExplicitAutograd one.
//
// The wrapper is boxed: each call boxes its arguments onto a stack and the
// kernel behind it unboxes them again, on the host path of every small op.
// So ocl kernels that already keep the contract are left as they are: those
// registered with TOCL_ITER_OUT (aten/ocl_iter_out.h), whose TensorIterator
// checks the out's device first and writes strided outs in place (pointwise,
// comparison and activation rows: torch.add(x, y, out=z) among them). Every
// other out= overload is wrapped, so a new kernel is wrapped unless its
// registration says otherwise; the wrapper finds the schema's out arguments
// once and copies nothing when no out needs a temporary.

std::mutex& iterator_outs_mutex() {
  static std::mutex m;
  return m;
}
// Filled while the extension's static registrations run (note_iterator_out).
std::set<std::string>& iterator_outs() {
  static std::set<std::string> s;
  return s;
}
// What install_out_device_checks() did with each out= overload it saw.
std::vector<std::string>& out_check_table() {
  static std::vector<std::string> t;
  return t;
}

bool is_out_arg(const c10::Argument& a) { return a.kwarg_only() && a.alias_info() && a.alias_info()->isWrite(); }

bool has_out_argument(const c10::FunctionSchema& s) {
  for (const auto& a : s.arguments())
    if (is_out_arg(a))
      return true;
  return false;
}

// The boxed kernel put in front of an out= overload. `native`: the ocl kernel
// it replaced; without one, the CompositeExplicitAutograd kernel runs. The
// schema's out arguments and the returns that alias them are found once,
// here, not on every call.
class CheckedOut final : public c10::OperatorKernel {
 public:
  CheckedOut(const c10::FunctionSchema& schema, std::optional<c10::SafeKernelFunction> native)
      : native_(std::move(native)), nargs_(schema.arguments().size()) {
    for (size_t i = 0; i < nargs_; i++)
      if (is_out_arg(schema.arguments()[i]))
        outs_.push_back(i);
    const auto& returns = schema.returns();
    for (size_t r = 0; r < returns.size(); r++) {
      const auto* alias = returns[r].alias_info();
      if (!alias || !alias->isWrite())
        continue;
      for (size_t i = 0; i < nargs_; i++) {
        const auto* in_alias = schema.arguments()[i].alias_info();
        if (in_alias && *in_alias == *alias) {
          return_of_.emplace_back(r, i);
          break;
        }
      }
    }
    nreturns_ = returns.size();
  }

  // f(t) for each tensor passed as an out argument (a Tensor or each of a Tensor[]).
  template <class F>
  void for_each_out(c10::ArrayRef<c10::IValue> args, F&& f) const {
    for (size_t i : outs_) {
      if (args[i].isTensor())
        f(args[i].toTensor());
      else if (args[i].isTensorList())
        for (const at::Tensor& t : args[i].toTensorVector())
          f(t);
    }
  }

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    const size_t begin = stack->size() - nargs_;
    c10::ArrayRef<c10::IValue> args(stack->data() + begin, nargs_);
    if (auto target = target_device(args))
      for_each_out(args, [&](const at::Tensor& t) {
        TORCH_CHECK(!t.defined() || t.device() == *target, "Expected out tensor to have device ", *target,
                    ", but got ", t.device(), " instead");
      });
    if (!native_) {
      op.callBoxedForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd, *stack);
      return;
    }
    // ocl kernels write their outputs densely; a non-contiguous out (a
    // gapped or transposed view, a channels-last tensor) gets a contiguous
    // temporary of its sizes and dtype, copied into the out afterwards, as
    // structured kernels and TensorIterator do on the CPU. The out keeps its
    // strides and storage, and nothing outside the view is written. (Kernels
    // see the out's sizes: some read them, normal.Tensor_float_out for one.)
    auto needs_proxy = [](const at::Tensor& t) { return on_ocl(t) && t.numel() != 0 && !t.is_contiguous(); };
    bool any = false;
    for_each_out(args, [&](const at::Tensor& t) {
      if (!needs_proxy(t))
        return;
      // An out whose elements share memory (an expanded tensor; never a contiguous one) is
      // refused before anything is resized or written, as the CPU's kernels do (index_select's
      // error input): the dense temporary would otherwise hide the overlap from the kernel.
      if (t.numel() > 1)
        at::assert_no_internal_overlap(t);
      any = true;
    });
    if (!any) {  // the common case: every out is contiguous (or empty, or to be resized)
      native_->callBoxed(op, ks, stack);
      return;
    }
    std::vector<c10::IValue> saved(args.begin(), args.end());
    std::vector<std::pair<at::Tensor, at::Tensor>> proxies;  // (out, temporary)
    auto proxy_of = [&](const at::Tensor& t) {
      if (!needs_proxy(t))
        return t;
      at::Tensor tmp = at::empty(t.sizes(), t.options());
      proxies.emplace_back(t, tmp);
      return tmp;
    };
    for (size_t i : outs_) {
      c10::IValue& v = (*stack)[begin + i];
      if (v.isTensor()) {
        v = proxy_of(v.toTensor());
      } else if (v.isTensorList()) {
        c10::List<at::Tensor> l;
        for (const at::Tensor& t : v.toTensorVector())
          l.push_back(proxy_of(t));
        v = l;
      }
    }
    native_->callBoxed(op, ks, stack);
    for (auto& [out, tmp] : proxies) {
      // A kernel that resized the temporary (and gave PyTorch's resize
      // warning for it) resizes the out: it takes the temporary's strides.
      if (tmp.sizes() != out.sizes()) {
        out.resize_(tmp.sizes());
        if (tmp.is_non_overlapping_and_dense() && tmp.strides() != out.strides())
          out.as_strided_(tmp.sizes(), tmp.strides(), out.storage_offset());
      }
      if (out.numel())
        out.copy_(tmp);
    }
    // Returns that alias an out argument are that argument.
    const size_t rbegin = stack->size() - nreturns_;
    for (const auto& [r, i] : return_of_)
      (*stack)[rbegin + r] = saved[i];
  }

 private:
  std::optional<c10::SafeKernelFunction> native_;
  size_t nargs_, nreturns_ = 0;
  std::vector<size_t> outs_;                          // indices of the out arguments
  std::vector<std::pair<size_t, size_t>> return_of_;  // (return, the argument it aliases)
};

// Swallows warnings while the wrappers are registered: replacing a kernel on
// purpose is not the accident PyTorch's "Overriding a previously registered
// kernel" warning is about.
class QuietHandler final : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

}  // namespace

void note_iterator_out(const char* name) {
  std::lock_guard<std::mutex> lock(iterator_outs_mutex());
  iterator_outs().insert(name);
}

int install_out_device_checks() {
  // Registered once, after every static TORCH_LIBRARY_IMPL of the extension
  // has run, so that each wrapper captures the ocl kernel it stands in front of.
  static std::unique_ptr<torch::Library> lib;
  static int count = 0;
  if (lib)
    return count;
  lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                         __LINE__);
  QuietHandler quiet;
  c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  auto& d = c10::Dispatcher::singleton();
  for (const auto& name : d.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0)
      continue;
    auto op = d.findOp(name);
    if (!op || !op->hasSchema() || !has_out_argument(op->schema()))
      continue;
    std::string full = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
    std::optional<c10::SafeKernelFunction> native;
    if (op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      bool iter;
      {
        std::lock_guard<std::mutex> lock(iterator_outs_mutex());
        iter = iterator_outs().count(full) != 0;
      }
      if (iter) {  // its TensorIterator keeps the contract
        out_check_table().push_back(full + " iterator");
        continue;
      }
      native = op->getComputedKernelForDispatchKey(c10::DispatchKey::PrivateUse1);
    } else if (!op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd)) {
      continue;  // the CPU fallback checks its out arguments itself
    }
    out_check_table().push_back(full + (native ? " wrapped" : " composite"));
    lib->impl(full.c_str(), torch::CppFunction::makeFromBoxedFunctor(
                               std::make_unique<CheckedOut>(op->schema(), std::move(native))));
    count++;
  }
  return count;
}

namespace {
// torch.ops.torch_ocl._out_checks(): "<overload> <how>" for every aten out=
// overload install_out_device_checks() saw, how being 'wrapped' (an ocl
// kernel behind the wrapper), 'composite' (the CompositeExplicitAutograd
// kernel behind it) or 'iterator' (registered with TOCL_ITER_OUT, not
// wrapped); tests/python/test_out_checks.py reads it.
std::vector<std::string> out_checks_op() { return out_check_table(); }
}  // namespace

TORCH_LIBRARY(torch_ocl, m) { m.def("_out_checks() -> str[]", &out_checks_op); }

FallbackPolicy fallback_policy() { return policy(); }
void set_fallback_policy(FallbackPolicy p) { policy() = p; }

std::map<std::string, int64_t> fallback_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_counts;
}

void fallback_reset_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_cpu_fallback>());
}

}  // namespace torch_ocl
