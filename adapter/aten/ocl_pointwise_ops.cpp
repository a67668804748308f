// ocl_pointwise_ops.cpp - selection and blends over the IR engine: where,
// masked_fill, the clamp family, lerp, addcmul and addcdiv. Iterators are
// configured as PyTorch's meta functions configure them, so promotion,
// broadcasting and out= rules match the CPU.
#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>

#include "ocl_pointwise.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

// ------------------------------------------------------------------ where

at::Tensor& where_out(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  auto rt = at::native::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == rt, "Expected out type to be ", rt, " but got ", out.scalar_type());
  at::Tensor a = self.scalar_type() != rt ? self.to(rt) : self;
  at::Tensor b = other.scalar_type() != rt ? other.to(rt) : other;
  at::Tensor c = cond;
  auto dev = out.device();
  if (c.device() != dev && c.dim() == 0)
    c = c.to(dev);
  if (a.device() != dev && a.dim() == 0)
    a = a.to(dev);
  if (b.device() != dev && b.dim() == 0)
    b = b.to(dev);
  if (c.scalar_type() == at::kByte) {
    TORCH_WARN_ONCE("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                    "future version of PyTorch. Use a boolean condition instead.");
    c = c.to(at::kBool);
  }
  TORCH_CHECK(c.scalar_type() == at::kBool, "where expected condition to be a boolean tensor, but got a tensor with "
              "dtype ", c.scalar_type());
  auto it = at::TensorIteratorConfig()
                .check_all_same_dtype(false)
                .add_output(out)
                .add_const_input(c)
                .add_const_input(a)
                .add_const_input(b)
                .build();
  EwGraph g(it, rt);
  g.output(0, g.ternary(TOCL_IR_WHERE, g.raw_input(0), g.input(1), g.input(2)));
  g.run();
  return out;
}

at::Tensor where(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  auto rt = at::native::result_type(self, other);
  c10::Device dev = self.device();
  for (const auto* t : {&cond, &self, &other})
    if (t->device().type() != c10::kCPU || t->dim() != 0)
      dev = t->device();
  at::Tensor out = at::empty({0}, self.options().dtype(rt).device(dev));
  return where_out(cond, self, other, out);
}

// ------------------------------------------------------------------ masked_fill

at::Tensor& masked_fill_scalar(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  TORCH_CHECK(mask.dtype() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes)
    TORCH_WARN("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before performing "
               "this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar");
  at::assert_no_partial_overlap(self, mask);
  auto it = at::TensorIteratorConfig()
                .set_check_mem_overlap(false)
                .check_all_same_dtype(false)
                .resize_outputs(false)
                .add_output(self)
                .add_const_input(self)
                .add_const_input(mask)
                .build();
  // Out-of-range values raise like the CPU's checked value.to<scalar_t>().
  AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, self.scalar_type(), "masked_fill_",
                             [&] { (void)value.to<scalar_t>(); });
  EwGraph g(it, self.scalar_type());
  // The value converts to self's dtype first, as the CPU's value.to<scalar_t>().
  int v = g.scalar(value, tocl_dtype_compute(to_tocl_dtype(self.scalar_type())));
  g.output(0, g.ternary(TOCL_IR_WHERE, g.raw_input(1), v, g.input(0)));
  g.run();
  return self;
}

at::Tensor& masked_fill_tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return masked_fill_scalar(self, mask, value.item());
}

// ------------------------------------------------------------------ clamp

// Scalar bounds take part in type promotion for integer inputs (clamp(int, 0.5)
// is float), as in PyTorch's clamp meta function; in-place may not promote.
at::Tensor promote_for_clamp(const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                             const std::optional<c10::Scalar>& hi, const at::Tensor& out) {
  TORCH_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  auto rt = self.scalar_type();
  if (!c10::isFloatingType(rt)) {
    at::native::ResultTypeState st = {};
    st = at::native::update_result_type_state(self, st);
    if (lo)
      st = at::native::update_result_type_state(*lo, st);
    if (hi)
      st = at::native::update_result_type_state(*hi, st);
    rt = at::native::result_type(st);
    TORCH_CHECK(rt == self.scalar_type() || !out.defined() || !out.is_same(self), "result type ", rt,
                " can't be cast to the desired output type ", self.dtype());
  }
  return self.to(rt);
}

// min(max(x, lo), hi) with NaN-propagating max/min: a NaN input or bound
// gives NaN, and min > max gives max, as on the CPU.
void run_clamp_scalar(at::TensorIteratorBase& it, const std::optional<c10::Scalar>& lo,
                      const std::optional<c10::Scalar>& hi) {
  check_dtype(lo && hi ? "clamp_scalar_cpu" : lo ? "clamp_min_scalar_cpu" : "clamp_max_scalar_cpu", it.common_dtype(),
              kDtNoBool);
  EwGraph g(it);
  int r = g.input(0);
  if (lo)
    r = g.binary(TOCL_IR_MAXIMUM, r, g.scalar(*lo));
  if (hi)
    r = g.binary(TOCL_IR_MINIMUM, r, g.scalar(*hi));
  g.output(0, r);
  g.run();
}

at::Tensor clamp(const at::Tensor& out, const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                 const std::optional<c10::Scalar>& hi) {
  auto x = promote_for_clamp(self, lo, hi, out);
  auto it = make_iter(Iter::Unary, out, x);
  run_clamp_scalar(it, lo, hi);
  return it.output();
}
at::Tensor clamp_min(const at::Tensor& out, const at::Tensor& s, const c10::Scalar& lo) {
  return clamp(out, s, lo, std::nullopt);
}
at::Tensor clamp_max(const at::Tensor& out, const at::Tensor& s, const c10::Scalar& hi) {
  return clamp(out, s, std::nullopt, hi);
}

// Tensor bounds: one iterator over self and the given bounds.
at::Tensor clamp_t(const at::Tensor& out_arg, const at::Tensor& self, const std::optional<at::Tensor>& lo,
                   const std::optional<at::Tensor>& hi) {
  bool has_lo = lo.has_value() && lo->defined(), has_hi = hi.has_value() && hi->defined();
  TORCH_CHECK(has_lo || has_hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  at::Tensor out = out_arg;
  at::TensorIteratorConfig cfg;
  cfg.set_check_mem_overlap(true)
      .add_output(out)
      .add_const_input(self)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true);
  if (has_lo)
    cfg.add_const_input(*lo);
  if (has_hi)
    cfg.add_const_input(*hi);
  auto it = cfg.build();
  check_dtype("clamp_cpu", it.common_dtype(), kDtNoBool);
  EwGraph g(it);
  int r = g.input(0), k = 1;
  if (has_lo)
    r = g.binary(TOCL_IR_MAXIMUM, r, g.input(k++));
  if (has_hi)
    r = g.binary(TOCL_IR_MINIMUM, r, g.input(k++));
  g.output(0, r);
  g.run();
  return it.output();
}
// clamp_min.Tensor and clamp_max.Tensor are one binary op each: rows of
// ocl_pointwise_table.cpp.

// ------------------------------------------------------------------ lerp

at::Tensor lerp_impl(const at::Tensor& out_arg, const at::Tensor& self, const at::Tensor& end, const at::Tensor* weight,
                     const c10::Scalar* w) {
  TORCH_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(), " for `end` but got dtype ", end.dtype());
  at::Tensor out = out_arg;
  at::TensorIterator it;
  if (weight) {
    TORCH_CHECK(self.dtype() == weight->dtype(), "expected dtype ", self.dtype(), " for `weight` but got dtype ",
                weight->dtype());
    at::TensorIteratorConfig cfg;
    cfg.allow_cpu_scalars(true).add_output(out).add_const_input(self).add_const_input(end).add_const_input(*weight);
    it.build(cfg);
  } else {
    it.build_binary_op(out, self, end);
  }
  check_dtype(weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar", it.common_dtype(), kDtFloat);
  EwGraph g(it);
  int wn = weight ? g.input(2) : g.scalar(*w);
  g.output(0, g.ternary(TOCL_IR_LERP, g.input(0), g.input(1), wn));
  g.run();
  return it.output();
}
at::Tensor lerp_s(const at::Tensor& o, const at::Tensor& s, const at::Tensor& e, const c10::Scalar& w) {
  return lerp_impl(o, s, e, nullptr, &w);
}
at::Tensor lerp_t(const at::Tensor& o, const at::Tensor& s, const at::Tensor& e, const at::Tensor& w) {
  return lerp_impl(o, s, e, &w, nullptr);
}

// ------------------------------------------------------------------ addcmul / addcdiv

template <bool DIV>
at::Tensor addc(const at::Tensor& out_arg, const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                const c10::Scalar& value) {
  if (DIV && c10::isIntegralType(t1.scalar_type(), true) && c10::isIntegralType(t2.scalar_type(), true)) {
    TORCH_CHECK(false, "Integer division with addcdiv is no longer supported, and in a future  ",
                "release addcdiv will perform a true division of tensor1 and tensor2. ",
                "The historic addcdiv behavior can be implemented as ",
                "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) ", "for integer inputs and as ",
                "(input + value * tensor1 / tensor2) for float inputs. ",
                "The future addcdiv behavior is just the latter implementation: ",
                "(input + value * tensor1 / tensor2), for all dtypes.");
  }
  at::Tensor out = out_arg;
  at::TensorIterator it;
  it.build_ternary_op(out, self, t1, t2);
  if (DIV)
    check_dtype("addcdiv_cpu_out", it.common_dtype(), kDtFloat);
  else
    check_dtype("addcmul_cpu_out", it.common_dtype(), kDtAll);
  EwGraph g(it);
  int s = g.scalar(value);
  int r = DIV ? g.binary(TOCL_IR_MUL, s, g.binary(TOCL_IR_DIV, g.input(1), g.input(2)))
              : g.binary(TOCL_IR_MUL, g.binary(TOCL_IR_MUL, s, g.input(1)), g.input(2));
  g.output(0, g.binary(TOCL_IR_ADD, g.input(0), r));
  g.run();
  return it.output();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("where.self", where);
  m.impl("where.self_out", where_out);
  m.impl("masked_fill_.Scalar", masked_fill_scalar);
  m.impl("masked_fill_.Tensor", masked_fill_tensor);
  TOCL_UNARY_ROW(m, clamp, Forms<clamp>);
  m.impl("clamp.Tensor", Forms<clamp_t>::fn);
  m.impl("clamp_.Tensor", Forms<clamp_t>::inplace);
  TOCL_ITER_OUT(m, "clamp.Tensor_out", Forms<clamp_t>::out);
  TOCL_UNARY_ROW(m, clamp_min, Forms<clamp_min>);
  TOCL_UNARY_ROW(m, clamp_max, Forms<clamp_max>);
  m.impl("lerp.Scalar", Forms<lerp_s>::fn);
  m.impl("lerp_.Scalar", Forms<lerp_s>::inplace);
  TOCL_ITER_OUT(m, "lerp.Scalar_out", Forms<lerp_s>::out);
  m.impl("lerp.Tensor", Forms<lerp_t>::fn);
  m.impl("lerp_.Tensor", Forms<lerp_t>::inplace);
  TOCL_ITER_OUT(m, "lerp.Tensor_out", Forms<lerp_t>::out);
  TOCL_UNARY_ROW(m, addcmul, Forms<addc<false>>);
  TOCL_UNARY_ROW(m, addcdiv, Forms<addc<true>>);
}

}  // namespace torch_ocl
