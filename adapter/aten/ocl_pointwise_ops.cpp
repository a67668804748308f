// ocl_pointwise_ops.cpp - selection and blends over the IR engine: where,
// masked_fill, the clamp family, lerp, addcmul and addcdiv. Iterators are
// configured as PyTorch's meta functions configure them, so promotion,
// broadcasting and out= rules match the CPU.
#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>

#include "ocl_pointwise.h"

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

at::Tensor& clamp_out(const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                      const std::optional<c10::Scalar>& hi, at::Tensor& out) {
  auto x = promote_for_clamp(self, lo, hi, out);
  auto it = make_iter(Iter::Unary, out, x);
  run_clamp_scalar(it, lo, hi);
  return out;
}
at::Tensor clamp_fn(const at::Tensor& self, const std::optional<c10::Scalar>& lo, const std::optional<c10::Scalar>& hi) {
  at::Tensor out;
  auto x = promote_for_clamp(self, lo, hi, out);
  auto it = make_iter(Iter::Unary, out, x);
  run_clamp_scalar(it, lo, hi);
  return it.output();
}
at::Tensor& clamp_(at::Tensor& self, const std::optional<c10::Scalar>& lo, const std::optional<c10::Scalar>& hi) {
  return clamp_out(self, lo, hi, self);
}
at::Tensor clamp_min(const at::Tensor& s, const c10::Scalar& lo) { return clamp_fn(s, std::optional<c10::Scalar>(lo), std::nullopt); }
at::Tensor& clamp_min_(at::Tensor& s, const c10::Scalar& lo) { return clamp_out(s, lo, std::nullopt, s); }
at::Tensor& clamp_min_out(const at::Tensor& s, const c10::Scalar& lo, at::Tensor& o) {
  return clamp_out(s, lo, std::nullopt, o);
}
at::Tensor clamp_max(const at::Tensor& s, const c10::Scalar& hi) {
  return clamp_fn(s, std::optional<c10::Scalar>(), std::optional<c10::Scalar>(hi));
}
at::Tensor& clamp_max_(at::Tensor& s, const c10::Scalar& hi) { return clamp_out(s, std::nullopt, hi, s); }
at::Tensor& clamp_max_out(const at::Tensor& s, const c10::Scalar& hi, at::Tensor& o) {
  return clamp_out(s, std::nullopt, hi, o);
}

// Tensor bounds: one iterator over self and the given bounds.
at::Tensor clamp_t_impl(const at::Tensor& self, const std::optional<at::Tensor>& lo,
                        const std::optional<at::Tensor>& hi, const at::Tensor& out_arg) {
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
at::Tensor clamp_t(const at::Tensor& s, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi) {
  return clamp_t_impl(s, lo, hi, at::Tensor());
}
at::Tensor& clamp_t_(at::Tensor& s, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi) {
  clamp_t_impl(s, lo, hi, s);
  return s;
}
at::Tensor& clamp_t_out(const at::Tensor& s, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi,
                        at::Tensor& o) {
  clamp_t_impl(s, lo, hi, o);
  return o;
}

template <tocl_ir_op OP>
struct ClampT {  // clamp_min.Tensor / clamp_max.Tensor: a binary op
  using B = Binary<OP, Iter::Binary, kDtAll>;
};

// ------------------------------------------------------------------ lerp

at::Tensor lerp_impl(const at::Tensor& self, const at::Tensor& end, const at::Tensor* weight, const c10::Scalar* w,
                     const at::Tensor& out_arg) {
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
at::Tensor lerp_s(const at::Tensor& s, const at::Tensor& e, const c10::Scalar& w) {
  return lerp_impl(s, e, nullptr, &w, at::Tensor());
}
at::Tensor& lerp_s_(at::Tensor& s, const at::Tensor& e, const c10::Scalar& w) {
  lerp_impl(s, e, nullptr, &w, s);
  return s;
}
at::Tensor& lerp_s_out(const at::Tensor& s, const at::Tensor& e, const c10::Scalar& w, at::Tensor& o) {
  lerp_impl(s, e, nullptr, &w, o);
  return o;
}
at::Tensor lerp_t(const at::Tensor& s, const at::Tensor& e, const at::Tensor& w) {
  return lerp_impl(s, e, &w, nullptr, at::Tensor());
}
at::Tensor& lerp_t_(at::Tensor& s, const at::Tensor& e, const at::Tensor& w) {
  lerp_impl(s, e, &w, nullptr, s);
  return s;
}
at::Tensor& lerp_t_out(const at::Tensor& s, const at::Tensor& e, const at::Tensor& w, at::Tensor& o) {
  lerp_impl(s, e, &w, nullptr, o);
  return o;
}

// ------------------------------------------------------------------ addcmul / addcdiv

template <bool DIV>
at::Tensor addc_impl(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const c10::Scalar& value,
                     const at::Tensor& out_arg) {
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
template <bool DIV>
struct Addc {
  static at::Tensor fn(const at::Tensor& s, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& v) {
    return addc_impl<DIV>(s, a, b, v, at::Tensor());
  }
  static at::Tensor& inplace(at::Tensor& s, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& v) {
    addc_impl<DIV>(s, a, b, v, s);
    return s;
  }
  static at::Tensor& out(const at::Tensor& s, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& v,
                         at::Tensor& o) {
    addc_impl<DIV>(s, a, b, v, o);
    return o;
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("where.self", where);
  m.impl("where.self_out", where_out);
  m.impl("masked_fill_.Scalar", masked_fill_scalar);
  m.impl("masked_fill_.Tensor", masked_fill_tensor);
  m.impl("clamp", clamp_fn);
  m.impl("clamp_", clamp_);
  TOCL_ITER_OUT(m, "clamp.out", clamp_out);
  m.impl("clamp.Tensor", clamp_t);
  m.impl("clamp_.Tensor", clamp_t_);
  TOCL_ITER_OUT(m, "clamp.Tensor_out", clamp_t_out);
  m.impl("clamp_min", clamp_min);
  m.impl("clamp_min_", clamp_min_);
  TOCL_ITER_OUT(m, "clamp_min.out", clamp_min_out);
  m.impl("clamp_max", clamp_max);
  m.impl("clamp_max_", clamp_max_);
  TOCL_ITER_OUT(m, "clamp_max.out", clamp_max_out);
  TOCL_BINARY_ROW(m, clamp_min, "Tensor_out", ClampT<TOCL_IR_MAXIMUM>::B);
  TOCL_BINARY_ROW(m, clamp_max, "Tensor_out", ClampT<TOCL_IR_MINIMUM>::B);
  m.impl("lerp.Scalar", lerp_s);
  m.impl("lerp_.Scalar", lerp_s_);
  TOCL_ITER_OUT(m, "lerp.Scalar_out", lerp_s_out);
  m.impl("lerp.Tensor", lerp_t);
  m.impl("lerp_.Tensor", lerp_t_);
  TOCL_ITER_OUT(m, "lerp.Tensor_out", lerp_t_out);
  TOCL_UNARY_ROW(m, addcmul, Addc<false>);
  TOCL_UNARY_ROW(m, addcdiv, Addc<true>);
}

}  // namespace torch_ocl
