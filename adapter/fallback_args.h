// fallback_args.h - what the CPU fallbacks (fallback.cpp for dense tensors,
// sparse_fallback.cpp for sparse layouts) share about an op's arguments.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace torch_ocl {

bool on_ocl(const at::Tensor& t);

// Write a mutated argument's CPU result back into the (dense) ocl tensor. An
// out= argument the CPU op resized gets the CPU's sizes and strides, as a
// device kernel's out= would.
void write_back(const at::Tensor& cpu, const at::Tensor& dev);

// Every tensor among the arguments: plain, in lists, in optional lists.
template <typename F>
void for_each_tensor(c10::ArrayRef<c10::IValue> args, F&& f) {
  for (const auto& v : args) {
    if (v.isTensor())
      f(v.toTensor());
    else if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorVector())
        f(t);
    else if (v.isOptionalTensorList())
      for (const auto& t : v.toOptionalTensorVector())
        if (t)
          f(*t);
  }
}

// Where an op's results belong: an ocl Device argument (factory ops), else
// the first ocl tensor.
std::optional<c10::Device> target_device(c10::ArrayRef<c10::IValue> args);

// An out= (written) argument on another device than the op's tensors is
// refused, as the CPU and CUDA backends refuse a wrong-device out.
void check_out_device(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                      const c10::Device& dev);

// "aten::name.overload", as fallback counts and messages name ops.
std::string op_name(const c10::FunctionSchema& schema);

// The index of the argument a mutable-alias return aliases (an in-place or
// out= op returns its written argument), or -1.
int written_argument(const c10::FunctionSchema& schema, const c10::AliasInfo& ret);

}  // namespace torch_ocl
