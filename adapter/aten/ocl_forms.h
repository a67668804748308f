// ocl_forms.h - the functional, in-place and out= overloads of an op
// generated from its one out-form implementation.
//
// An out-form implementation has the shape
//
//   at::Tensor impl(const at::Tensor& out, const at::Tensor& first, Args... args);
//
// It writes op(first, args...) into `out` and returns the tensor it wrote.
// An undefined `out` asks it to allocate the result (a TensorIterator built
// over an undefined output does, with the op's dtype and memory-format
// rules; impl returns iter.output()); `out` being `first` is the in-place
// form. Forms<impl> then gives the three overloads with the dispatcher's
// signatures:
//
//   fn(first, args...)            -> impl(undefined, first, args...)
//   inplace(first&, args...)      -> impl(first, first, args...), returns first
//   out(first, args..., out&)     -> impl(out, first, args...), returns out
//
// so that the three can never drift apart: a check or a promotion rule
// lives in impl once. An op registers only the members whose overloads
// exist (backward ops have fn and out, relu has fn and inplace).
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_ocl {

template <auto IMPL>
struct Forms;

template <typename... Args, at::Tensor (*IMPL)(const at::Tensor&, const at::Tensor&, Args...)>
struct Forms<IMPL> {
  static at::Tensor fn(const at::Tensor& first, Args... args) { return IMPL(at::Tensor(), first, args...); }
  static at::Tensor& inplace(at::Tensor& first, Args... args) {
    IMPL(first, first, args...);
    return first;
  }
  static at::Tensor& out(const at::Tensor& first, Args... args, at::Tensor& o) {
    IMPL(o, first, args...);
    return o;
  }
};

}  // namespace torch_ocl
