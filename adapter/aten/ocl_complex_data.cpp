// ocl_complex_data.cpp - complex ops that move values without looking at
// them, run by the real kernels on a same-size integer reinterpretation.
//
// cat, flip, roll, tril, gather, scatter, index_select, index_put, take,
// put, masked_fill/select/scatter, where, pads, im2col, ... copy, select or
// place elements; none computes with them. So a complex64 call of one of
// them (complex32: int32) runs the op's real ocl kernel on int64 views of
// the same bytes (Tensor::view(dtype), after resolving conj/neg bits), and
// the values it returns are viewed back. One boxed kernel does this for
// every op of the table below, reading the roles of the arguments from the
// op's schema:
//   - a complex tensor (or list) argument is viewed as the carrier integer
//     dtype; all complex tensors of a call must share one complex dtype;
//   - a real floating tensor anywhere means mixed dtypes (type promotion):
//     the call takes the CPU fallback, as does one whose value-named
//     argument (self, other, src, source, value(s), tensors, out) is not
//     complex, or whose `accumulate` is true (that adds);
//   - integer and bool tensors are indices and masks, passed unchanged;
//   - every Scalar argument of these ops is a value: it is converted to the
//     complex dtype and passed as the integer with the same bits;
//   - returns of the carrier dtype are values, viewed back as complex; a
//     returned alias of an argument is returned as that argument.
// An out= (or in-place) argument is its own view, so the kernel writes the
// caller's bytes; if the kernel resizes it, the caller's tensor is set to
// the storage and geometry the view ended with.
// complex128 has no 16-byte integer dtype: the op runs on its real and
// imaginary parts (partwise below), two calls of the real kernel.
#include <ATen/ATen.h>
#include <c10/util/complex.h>
#include <torch/library.h>

#include <cstring>
#include <vector>

#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

c10::ScalarType carrier_of(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::ComplexFloat:
      return c10::ScalarType::Long;
    case c10::ScalarType::ComplexHalf:
      return c10::ScalarType::Int;
    default:
      return c10::ScalarType::Undefined;
  }
}

bool value_name(const std::string& n) {
  return n == "self" || n == "other" || n == "src" || n == "source" || n == "values" || n == "value" ||
         n == "tensors" || n == "out" || n == "input";
}

c10::Scalar scalar_bits(const c10::Scalar& s, c10::ScalarType cx) {
  if (cx == c10::ScalarType::ComplexFloat) {
    c10::complex<float> z = s.toComplexFloat();
    int64_t bits;
    static_assert(sizeof(bits) == sizeof(z));
    std::memcpy(&bits, &z, sizeof(bits));
    return c10::Scalar(bits);
  }
  c10::complex<c10::Half> z = s.toComplexHalf();
  int32_t bits;
  static_assert(sizeof(bits) == sizeof(z));
  std::memcpy(&bits, &z, sizeof(bits));
  return c10::Scalar(static_cast<int64_t>(bits));
}

// A Scalar (or Scalar?) argument of the schema.
bool is_scalar_arg(const c10::Argument& a) {
  c10::TypePtr t = a.type();
  if (t->kind() == c10::TypeKind::OptionalType)
    t = t->castRaw<c10::OptionalType>()->getElementType();
  return t->kind() == c10::TypeKind::NumberType;
}

// Plans the reinterpretation of one call; false: the call takes the CPU.
struct Plan {
  c10::ScalarType cx = c10::ScalarType::Undefined;
  bool ok = true;

  void tensor(const at::Tensor& t, bool is_value, bool written) {
    if (!t.defined())
      return;
    c10::ScalarType st = t.scalar_type();
    if (c10::isComplexType(st)) {
      if (cx == c10::ScalarType::Undefined)
        cx = st;
      ok = ok && st == cx && (carrier_of(st) != c10::ScalarType::Undefined || st == c10::ScalarType::ComplexDouble);
      ok = ok && !(written && (t.is_conj() || t.is_neg()));
      return;
    }
    // A real value among complex ones (promotion), a real floating tensor
    // anywhere, or a wide unsigned one: not a pure reinterpretation.
    if (is_value || c10::isFloatingType(st) || complex_route::routed(st))
      ok = false;
  }
};

at::Tensor as_carrier(const at::Tensor& t, c10::ScalarType carrier) {
  if (!t.defined() || !t.is_complex())
    return t;
  return t.resolve_conj().resolve_neg().view(carrier);
}

// complex128 (no 16-byte integer): the op runs twice, on the real parts
// of every complex argument (a Scalar's real part) and then on the imaginary
// parts, each a strided float64 view; the value results are joined by
// complex(). Written arguments are written through their part views.
void partwise(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t n = args.size(), nret = schema.returns().size();
  std::vector<c10::IValue> in(stack->end() - n, stack->end());
  stack->erase(stack->end() - n, stack->end());
  auto part = [](const at::Tensor& t, int p, bool w) -> at::Tensor {
    if (!t.defined() || !t.is_complex())
      return t;
    at::Tensor r = w ? t : t.resolve_conj().resolve_neg();
    return p == 0 ? at::real(r) : at::imag(r);
  };
  // Written arguments: the caller's tensor and its sizes before the call.
  std::vector<std::pair<at::Tensor, std::vector<int64_t>>> written;
  for (size_t i = 0; i < n; i++)
    if (args[i].alias_info() && args[i].alias_info()->isWrite() && in[i].isTensor())
      written.emplace_back(in[i].toTensor(), in[i].toTensor().sizes().vec());
  std::vector<c10::IValue> res[2];
  std::vector<at::Tensor> wviews[2];
  auto run = [&]() {
    for (int p = 0; p < 2; p++) {
      wviews[p].clear();
      for (size_t i = 0; i < n; i++) {
        const c10::IValue& v = in[i];
        bool w = args[i].alias_info() && args[i].alias_info()->isWrite();
        if (v.isTensor()) {
          at::Tensor t = part(v.toTensor(), p, w);
          if (w)
            wviews[p].push_back(t);
          stack->push_back(t);
        } else if (v.isTensorList()) {
          std::vector<at::Tensor> l = v.toTensorVector();
          for (at::Tensor& t : l)
            t = part(t, p, false);
          stack->push_back(l);
        } else if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
          c10::List<std::optional<at::Tensor>> l;
          for (const c10::IValue& e : v.toListRef())
            l.push_back(e.isTensor() ? std::optional<at::Tensor>(part(e.toTensor(), p, false)) : std::nullopt);
          stack->push_back(l);
        } else if (is_scalar_arg(args[i]) && !v.isNone()) {
          c10::complex<double> z = v.toScalar().toComplexDouble();
          stack->push_back(c10::Scalar(p == 0 ? z.real() : z.imag()));
        } else {
          stack->push_back(v);
        }
      }
      op.redispatchBoxed(ks, stack);
      res[p].assign(stack->end() - nret, stack->end());
      stack->erase(stack->end() - nret, stack->end());
    }
  };
  run();
  // A written argument the kernel resized (out=): resize the caller's tensor
  // and run again into views of it.
  bool again = false;
  for (size_t k = 0; k < written.size(); k++)
    if (wviews[0][k].sizes() != c10::IntArrayRef(written[k].second)) {
      written[k].first.resize_(wviews[0][k].sizes());
      again = true;
    }
  if (again)
    run();
  auto join = [&](const at::Tensor& re, const at::Tensor& im) -> at::Tensor {
    for (size_t k = 0; k < written.size(); k++)
      if (re.unsafeGetTensorImpl() == wviews[0][k].unsafeGetTensorImpl())
        return written[k].first;
    if (re.defined() && re.scalar_type() == c10::ScalarType::Double && im.defined())
      return at::complex(re, im);
    return re;
  };
  for (size_t r = 0; r < nret; r++) {
    const c10::IValue &a = res[0][r], &b = res[1][r];
    if (a.isTensor()) {
      stack->push_back(join(a.toTensor(), b.toTensor()));
    } else if (a.isTensorList()) {
      std::vector<at::Tensor> la = a.toTensorVector(), lb = b.toTensorVector();
      for (size_t j = 0; j < la.size(); j++)
        la[j] = join(la[j], lb[j]);
      stack->push_back(la);
    } else {
      stack->push_back(a);
    }
  }
}

void reinterpret_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t n = args.size();
  const size_t base = stack->size() - n;

  Plan plan;
  for (size_t i = 0; i < n && plan.ok; i++) {
    const c10::IValue& v = (*stack)[base + i];
    const auto& a = args[i];
    bool is_value = value_name(a.name());
    bool written = a.alias_info() && a.alias_info()->isWrite();
    if (v.isTensor()) {
      plan.tensor(v.toTensor(), is_value, written);
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector())
        plan.tensor(t, is_value, written);
    } else if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
      for (const c10::IValue& e : v.toListRef())
        if (e.isTensor())
          plan.tensor(e.toTensor(), is_value, written);
    } else if (v.isBool() && a.name() == "accumulate" && v.toBool()) {
      plan.ok = false;
    } else if (v.isString() && a.name() == "reduce") {
      plan.ok = false;
    }
  }
  if (!plan.ok || plan.cx == c10::ScalarType::Undefined) {
    ocl_cpu_fallback(op, stack);
    return;
  }
  if (plan.cx == c10::ScalarType::ComplexDouble) {
    partwise(op, ks, stack);
    return;
  }
  const c10::ScalarType carrier = carrier_of(plan.cx);

  // Written arguments: the caller's tensor and the view the kernel writes.
  std::vector<std::pair<at::Tensor, at::Tensor>> written;
  for (size_t i = 0; i < n; i++) {
    c10::IValue& v = (*stack)[base + i];
    const auto& a = args[i];
    bool w = a.alias_info() && a.alias_info()->isWrite();
    if (v.isTensor()) {
      at::Tensor t = v.toTensor();
      if (!t.is_complex())
        continue;
      at::Tensor c = w ? t.view(carrier) : as_carrier(t, carrier);
      if (w)
        written.emplace_back(t, c);
      v = c;
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> l = v.toTensorVector();
      for (at::Tensor& t : l)
        t = as_carrier(t, carrier);
      v = l;
    } else if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
      c10::List<std::optional<at::Tensor>> l;
      for (const c10::IValue& e : v.toListRef())
        l.push_back(e.isTensor() ? std::optional<at::Tensor>(as_carrier(e.toTensor(), carrier)) : std::nullopt);
      v = l;
    } else if (is_scalar_arg(a) && !v.isNone()) {
      v = scalar_bits(v.toScalar(), plan.cx);
    }
  }

  op.redispatchBoxed(ks, stack);

  for (auto& [orig, view] : written)
    if (view.sizes() != orig.sizes() || view.strides() != orig.strides() ||
        view.storage_offset() != orig.storage_offset() || !view.storage().is_alias_of(orig.storage()))
      orig.set_(view.storage(), view.storage_offset(), view.sizes(), view.strides());
  const size_t nret = schema.returns().size();
  auto back = [&](const at::Tensor& t) -> at::Tensor {
    for (auto& [orig, view] : written)
      if (t.unsafeGetTensorImpl() == view.unsafeGetTensorImpl())
        return orig;
    if (t.defined() && t.scalar_type() == carrier)
      return t.view(plan.cx);
    return t;
  };
  for (size_t i = stack->size() - nret; i < stack->size(); i++) {
    c10::IValue& r = (*stack)[i];
    if (r.isTensor()) {
      r = back(r.toTensor());
    } else if (r.isTensorList()) {
      std::vector<at::Tensor> l = r.toTensorVector();
      for (at::Tensor& t : l)
        t = back(t);
      r = l;
    }
  }
}

// Ops (aten overload names) whose every complex argument is moved, never
// computed with.
constexpr const char* kMoveOps[] = {
    "cat", "cat.out", "_chunk_cat", "_chunk_cat.out",
    "flip", "flip.out", "roll", "roll.out",
    "tril", "tril_", "tril.out", "triu", "triu_", "triu.out",
    "gather", "gather.out",
    "scatter.src", "scatter_.src", "scatter.src_out", "scatter.value", "scatter_.value", "scatter.value_out",
    "index_select", "index_select.out",
    "index_copy", "index_copy_", "index_copy.out",
    "index_fill.int_Scalar", "index_fill_.int_Scalar", "index_fill.int_Tensor", "index_fill_.int_Tensor",
    "index.Tensor", "index.Tensor_out",
    "index_put.out",
    "take", "take.out",
    "masked_fill.Scalar", "masked_fill_.Scalar", "masked_fill.Tensor", "masked_fill_.Tensor",
    "masked_select", "masked_select.out", "masked_scatter", "masked_scatter_",
    "where.self", "where.self_out",
    "reflection_pad1d", "reflection_pad1d.out", "reflection_pad2d", "reflection_pad2d.out",
    "reflection_pad3d", "reflection_pad3d.out",
    "replication_pad1d", "replication_pad1d.out", "replication_pad2d", "replication_pad2d.out",
    "replication_pad3d", "replication_pad3d.out",
    "im2col", "im2col.out", "channel_shuffle", "native_channel_shuffle", "pixel_shuffle",
    "pixel_unshuffle",
};

[[maybe_unused]] const bool move_ops_registered = [] {
  for (const char* name : kMoveOps)
    register_complex_kernel(name, c10::KernelFunction::makeFromBoxedFunction<&reinterpret_kernel>());
  return true;
}();

}  // namespace
}  // namespace torch_ocl
