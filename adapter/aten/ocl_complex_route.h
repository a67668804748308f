// ocl_complex_route.h - complex arguments reach an ocl kernel only where it
// computes in complex; everywhere else they take the CPU fallback.
//
// Complex tensors live on the ocl device (storage, copies, views, fill and
// the ops of ocl_complex_ops.cpp and the FFT run natively), but most ocl
// kernels compute in real dtypes only. Without this, a complex argument
// reaching one of them would raise a dtype error on ocl where the CPU
// computes: the wrong answer for a user. With it, such a call runs through
// the CPU fallback, counted and subject to the fallback policy (an error
// under TORCH_OCL_FALLBACK=error), as an op without an ocl kernel does.
//
// How: each TORCH_LIBRARY_IMPL(aten, PrivateUse1, ...) of an op family wraps
// its library in RoutedLibrary. impl(name, fn) registers fn behind a lambda
// that looks at the argument dtypes (a few loads per tensor, no boxing) and
// calls fn unless one is complex; a complex call is boxed and handed to the
// op's complex kernel where ocl_complex_ops.cpp has one, else to the CPU
// fallback. Kernels that compute in complex themselves register with
// impl_complex(), which puts nothing in front of them. Views and allocation
// (ocl_tensor_core.cpp) and copies (ocl_copy.cpp) never use this: they are
// dtype-agnostic or complex-aware.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/boxing/impl/boxing.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <memory>
#include <optional>
#include <string>

namespace torch_ocl {

// The boxed CPU fallback (adapter/fallback.cpp).
void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Complex kernels of ops whose ocl kernel is real-only (ocl_complex_ops.cpp):
// a routed call with complex arguments runs the one registered under the
// op's name ("add.out"), else the CPU fallback. Registered at static
// initialisation, looked up at call time.
void register_complex_kernel(const char* name, c10::KernelFunction k);
// The boxed kernel a routed complex call runs: the registered complex
// kernel, else the CPU fallback.
void complex_or_cpu(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);

namespace complex_route {

// Dtypes ocl tensors hold but real kernels do not compute in: complex, and
// uint16/32/64 (held for what returns them, e.g. hash_tensor).
inline bool routed(c10::ScalarType t) {
  return c10::isComplexType(t) || t == c10::ScalarType::UInt16 || t == c10::ScalarType::UInt32 ||
         t == c10::ScalarType::UInt64;
}

inline bool cx(const at::Tensor& t) { return t.defined() && routed(t.scalar_type()); }
inline bool cx(const std::optional<at::Tensor>& t) { return t.has_value() && cx(*t); }
inline bool cx(at::TensorList l) {
  for (const at::Tensor& t : l)
    if (cx(t))
      return true;
  return false;
}
inline bool cx(const at::ITensorListRef& l) {
  for (const at::Tensor& t : l)
    if (cx(t))
      return true;
  return false;
}
inline bool cx(const c10::List<std::optional<at::Tensor>>& l) {
  for (const std::optional<at::Tensor>& t : l)
    if (t.has_value() && cx(*t))
      return true;
  return false;
}
inline bool cx(const c10::Scalar& s) { return s.isComplex(); }
inline bool cx(const std::optional<c10::Scalar>& s) { return s.has_value() && s->isComplex(); }
inline bool cx(c10::ScalarType t) { return routed(t); }
inline bool cx(const std::optional<c10::ScalarType>& t) { return t.has_value() && routed(*t); }
// Sizes, flags, strings, generators, devices: never complex.
template <class T>
inline bool cx(const T&) {
  return false;
}

template <class... A>
inline bool any_complex(const A&... a) {
  return (cx(a) || ...);
}

// The operator a routed call hands to the fallback, looked up on first use.
class OpRef {
 public:
  explicit OpRef(const char* name) : name_(name) {}
  const c10::OperatorHandle& get() {
    if (!op_) {
      auto dot = name_.find('.');
      std::string base = "aten::" + name_.substr(0, dot);
      std::string overload = dot == std::string::npos ? "" : name_.substr(dot + 1);
      op_ = c10::Dispatcher::singleton().findSchemaOrThrow(base.c_str(), overload.c_str());
    }
    return *op_;
  }

 private:
  std::string name_;
  std::optional<c10::OperatorHandle> op_;
};

template <class R, class... A>
R to_cpu(OpRef& op, A... a) {
  static const c10::BoxedKernel fallback = c10::BoxedKernel::makeFromFunction<&complex_or_cpu>();
  return c10::impl::BoxedKernelWrapper<R(A...)>::call(fallback, op.get(),
                                                      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                      std::forward<A>(a)...);
}

}  // namespace complex_route

class RoutedLibrary {
 public:
  explicit RoutedLibrary(torch::Library& lib) : lib_(lib) {}

  // An ocl kernel that computes in real dtypes only.
  template <class R, class... A>
  RoutedLibrary& impl(const char* name, R (*fn)(A...)) {
    auto op = std::make_shared<complex_route::OpRef>(name);
    lib_.impl(name, [fn, op](A... a) -> R {
      if (C10_LIKELY(!complex_route::any_complex(a...)))
        return fn(std::forward<A>(a)...);
      return complex_route::to_cpu<R, A...>(*op, std::forward<A>(a)...);
    });
    return *this;
  }
  // Anything else (TORCH_FN and the like) is registered as it is.
  template <class F>
  RoutedLibrary& impl(const char* name, F&& f) {
    lib_.impl(name, std::forward<F>(f));
    return *this;
  }
  // An ocl kernel that handles complex arguments itself.
  template <class F>
  RoutedLibrary& impl_complex(const char* name, F&& f) {
    lib_.impl(name, std::forward<F>(f));
    return *this;
  }

 private:
  torch::Library& lib_;
};

}  // namespace torch_ocl
