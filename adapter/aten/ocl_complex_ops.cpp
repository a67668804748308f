// ocl_complex_ops.cpp - complex arithmetic on the ocl device.
//
// A complex value is a pair in the IR: every complex operand of a
// TensorIterator is loaded as two strided real operands (its real and
// imaginary parts, complex_part's layout), the formula is written over
// pairs of IR nodes (CxGraph below), and a complex output is stored as two
// real outputs of the same kernel. So the elementwise engine, its renderer,
// program cache and fused eager serve complex ops unchanged: one kernel per
// op, no temporaries. Formulas follow c10::complex (division by Smith's
// scaling, as c10::complex::operator/).
//
// Ops whose ocl kernel is real-only reach these kernels through the complex
// registry (ocl_complex_route.h): a routed call with a complex argument runs
// the kernel registered here under its name. Ops with no real ocl kernel
// (complex, polar, conj_physical) are registered directly.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "ocl_alpha_iter.h"
#include "ocl_common.h"
#include "ocl_complex_route.h"
#include "ocl_forms.h"

namespace torch_ocl {
namespace {

// A complex value as two IR nodes; a real operand's imaginary part is the
// constant 0.
struct Z {
  int re, im;
};

class CxGraph {
 public:
  // `value`: the complex (or real) dtype the op computes in; its real
  // dtype's compute type is the kernel's (float for complex32).
  CxGraph(at::TensorIteratorBase& iter, c10::ScalarType value) : iter_(iter) {
    tocl_ir_init(&g_);
    compute_ = tocl_dtype_compute(to_tocl_dtype(c10::toRealValueType(value)));
  }

  Z in(int k) {
    int arg = iter_.noutputs() + k;
    if (iter_.is_cpu_scalar(arg)) {
      c10::complex<double> z = iter_.tensor(arg).item().toComplexDouble();
      return {constant(z.real()), constant(z.imag())};
    }
    if (c10::isComplexType(iter_.dtype(arg)))
      return {load(arg, 0), load(arg, 1)};
    return {load(arg, -1), zero()};
  }
  int constant(double v) {
    tocl_scalar s{};
    s.is_float = 1;
    s.f = v;
    scalars_.push_back(s);
    return check(tocl_ir_scalar(&g_, compute_));
  }
  int zero() {
    if (zero_ < 0)
      zero_ = constant(0.0);
    return zero_;
  }
  int un(tocl_ir_op op, int a) { return check(tocl_ir_unary(&g_, op, compute_, a)); }
  int bin(tocl_ir_op op, int a, int b) { return check(tocl_ir_binary(&g_, op, compute_, a, b)); }
  int pred(tocl_ir_op op, int a, int b) { return check(tocl_ir_binary(&g_, op, TOCL_BOOL, a, b)); }
  int where(int c, int a, int b) { return check(tocl_ir_ternary(&g_, TOCL_IR_WHERE, compute_, c, a, b)); }

  Z add(Z a, Z b) { return {bin(TOCL_IR_ADD, a.re, b.re), bin(TOCL_IR_ADD, a.im, b.im)}; }
  Z sub(Z a, Z b) { return {bin(TOCL_IR_SUB, a.re, b.re), bin(TOCL_IR_SUB, a.im, b.im)}; }
  Z mul(Z a, Z b) {
    return {bin(TOCL_IR_SUB, bin(TOCL_IR_MUL, a.re, b.re), bin(TOCL_IR_MUL, a.im, b.im)),
            bin(TOCL_IR_ADD, bin(TOCL_IR_MUL, a.re, b.im), bin(TOCL_IR_MUL, a.im, b.re))};
  }
  // c10::complex::operator/: scale by the larger part of the divisor.
  Z div(Z x, Z y) {
    int a = x.re, b = x.im, c = y.re, d = y.im;
    int ac = un(TOCL_IR_ABS, c), ad = un(TOCL_IR_ABS, d);
    int one = constant(1.0);
    // |c| >= |d|: rat = d / c, scl = 1 / (c + d rat)
    int r1 = bin(TOCL_IR_DIV, d, c);
    int s1 = bin(TOCL_IR_DIV, one, bin(TOCL_IR_ADD, c, bin(TOCL_IR_MUL, d, r1)));
    int re1 = bin(TOCL_IR_MUL, bin(TOCL_IR_ADD, a, bin(TOCL_IR_MUL, b, r1)), s1);
    int im1 = bin(TOCL_IR_MUL, bin(TOCL_IR_SUB, b, bin(TOCL_IR_MUL, a, r1)), s1);
    // otherwise: rat = c / d, scl = 1 / (d + c rat)
    int r2 = bin(TOCL_IR_DIV, c, d);
    int s2 = bin(TOCL_IR_DIV, one, bin(TOCL_IR_ADD, d, bin(TOCL_IR_MUL, c, r2)));
    int re2 = bin(TOCL_IR_MUL, bin(TOCL_IR_ADD, bin(TOCL_IR_MUL, a, r2), b), s2);
    int im2 = bin(TOCL_IR_MUL, bin(TOCL_IR_SUB, bin(TOCL_IR_MUL, b, r2), a), s2);
    // a zero divisor: a / |c| and b / |d|, inf or NaN as c10::complex gives
    int z = pred(TOCL_IR_LOGICAL_AND, pred(TOCL_IR_EQ, ac, zero()), pred(TOCL_IR_EQ, ad, zero()));
    int ge = pred(TOCL_IR_GE, ac, ad);
    return {where(z, bin(TOCL_IR_DIV, a, ac), where(ge, re1, re2)),
            where(z, bin(TOCL_IR_DIV, b, ad), where(ge, im1, im2))};
  }

  // Output k: both parts of a complex output, the real part of a real one.
  void out(int k, Z z) {
    if (c10::isComplexType(iter_.dtype(k))) {
      outs_.push_back(part(k, 0));
      nodes_.push_back(z.re);
      outs_.push_back(part(k, 1));
      nodes_.push_back(z.im);
    } else {
      outs_.push_back(part(k, -1));
      nodes_.push_back(z.re);
    }
  }

  void run() {
    if (iter_.numel() == 0)
      return;
    for (size_t i = 0; i < outs_.size(); i++)
      check(tocl_ir_output(&g_, nodes_[i], outs_[i].dtype));
    int dev = iter_.device(0).index();
    TOCL_CHECK(tocl_ew_run(dev, tocl_stream_current(dev), &g_, outs_.data(), inputs_.data(), scalars_.data()));
  }

 private:
  int check(int node) const {
    TORCH_CHECK(node >= 0 && !g_.overflow, "torch_ocl: internal error: a complex elementwise graph could not be built");
    return node;
  }
  // Operand arg of the iterator as a real strided tensor: part 0 / 1 of a
  // complex operand, or (part -1) a real operand itself.
  tocl_tensor part(int arg, int p) const {
    c10::ScalarType st = iter_.dtype(arg);
    c10::ScalarType el = p >= 0 ? c10::toRealValueType(st) : st;
    int64_t es = static_cast<int64_t>(c10::elementSize(el));
    tocl_tensor t{};
    t.data = reinterpret_cast<tocl_addr>(iter_.data_ptr(arg)) + static_cast<tocl_addr>(p > 0 ? es : 0);
    t.dtype = to_tocl_dtype(el);
    t.ndim = static_cast<int>(iter_.ndim());
    TORCH_CHECK(t.ndim <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: too many dimensions: ", t.ndim);
    for (int i = 0; i < t.ndim; i++) {
      t.sizes[i] = iter_.shape()[i];
      t.strides[i] = iter_.strides(arg)[i] / es;
    }
    return t;
  }
  int load(int arg, int p) {
    inputs_.push_back(part(arg, p));
    return check(tocl_ir_cast(&g_, check(tocl_ir_input(&g_, inputs_.back().dtype)), compute_));
  }

  at::TensorIteratorBase& iter_;
  tocl_ir_graph g_;
  tocl_dtype compute_;
  int zero_ = -1;
  std::vector<tocl_tensor> inputs_, outs_;
  std::vector<tocl_scalar> scalars_;
  std::vector<int> nodes_;
};

enum class Op { Add, Sub, Mul, Div };

void run_binary(at::TensorIteratorBase& it, Op op, const std::optional<c10::Scalar>& alpha) {
  CxGraph g(it, it.common_dtype());
  Z a = g.in(0), b = g.in(1);
  if (alpha && !alpha->equal(1)) {
    c10::complex<double> s = alpha->toComplexDouble();
    b = g.mul(Z{g.constant(s.real()), g.constant(s.imag())}, b);
  }
  Z r = op == Op::Add ? g.add(a, b) : op == Op::Sub ? g.sub(a, b) : op == Op::Mul ? g.mul(a, b) : g.div(a, b);
  g.out(0, r);
  g.run();
}

template <Op OP>
at::Tensor alpha_binary(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b,
                        const c10::Scalar& alpha) {
  at::Tensor out = out_arg;
  auto iter = alpha_binary_iter(out, a, b, alpha, OP == Op::Sub);
  run_binary(iter, OP, alpha);
  return iter.output();
}

template <Op OP>
at::Tensor simple_binary(const at::Tensor& out_arg, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = out_arg;
  auto iter = OP == Op::Div ? at::TensorIterator::binary_float_op(out, a, b) : at::TensorIterator::binary_op(out, a, b);
  run_binary(iter, OP, std::nullopt);
  return iter.output();
}

at::Tensor neg(const at::Tensor& out_arg, const at::Tensor& a) {
  at::Tensor out = out_arg;
  auto iter = at::TensorIterator::unary_op(out, a);
  CxGraph g(iter, iter.common_dtype());
  Z x = g.in(0);
  g.out(0, Z{g.un(TOCL_IR_NEG, x.re), g.un(TOCL_IR_NEG, x.im)});
  g.run();
  return iter.output();
}

// A real result of a complex input (abs, angle): out has the input's real
// dtype (or a complex one, whose imaginary part is then 0).
template <class F>
at::Tensor& to_real(const at::Tensor& self, at::Tensor& out, F&& f) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(self)
                  .check_all_same_dtype(false)
                  .resize_outputs(true)
                  .build();
  CxGraph g(iter, self.scalar_type());
  Z x = g.in(0);
  g.out(0, Z{f(g, x), g.zero()});
  g.run();
  return out;
}

at::Tensor& abs_out(const at::Tensor& self, at::Tensor& out) {
  return to_real(self, out, [](CxGraph& g, Z x) { return g.bin(TOCL_IR_HYPOT, x.re, x.im); });
}
at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out) {
  return to_real(self, out, [](CxGraph& g, Z x) { return g.bin(TOCL_IR_ATAN2, x.im, x.re); });
}
at::Tensor angle(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return angle_out(self, out);
}

at::Tensor& conj_out(const at::Tensor& self, at::Tensor& out) {
  if (!self.is_complex()) {
    // The CPU's unary iterator: one dtype for input and out.
    TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Found dtype ", out.scalar_type(), " but expected ",
                self.scalar_type());
    resize_out(out, self.sizes());
    return out.copy_(self);
  }
  auto iter = at::TensorIterator::unary_op(out, self);
  CxGraph g(iter, iter.common_dtype());
  Z x = g.in(0);
  g.out(0, Z{x.re, g.un(TOCL_IR_NEG, x.im)});
  g.run();
  return out;
}

// PyTorch's conj_physical_ calls its DispatchStub directly.
at::Tensor& conj_physical_inplace(at::Tensor& self) {
  if (self.is_complex())
    conj_out(self, self);
  return self;
}

// complex() and polar(): two real tensors of one floating dtype in, the
// matching complex dtype out, with the CPU's checks and messages.
void check_parts(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  auto ok = [](c10::ScalarType t) { return t == at::kFloat || t == at::kDouble || t == at::kHalf; };
  TORCH_CHECK(ok(a.scalar_type()) && ok(b.scalar_type()), "Expected both inputs to be Half, Float or Double tensors but got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "Expected object of scalar type ", a.scalar_type(),
              " but got scalar type ", b.scalar_type(), " for second argument");
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(a.scalar_type()), "Expected object of scalar type ",
              c10::toComplexType(a.scalar_type()), " but got scalar type ", out.scalar_type(),
              " for argument 'out'");
}

template <class F>
at::Tensor& from_parts(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, F&& f) {
  check_parts(out, a, b);
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(a)
                  .add_const_input(b)
                  .check_all_same_dtype(false)
                  .build();
  CxGraph g(iter, out.scalar_type());
  g.out(0, f(g, g.in(0).re, g.in(1).re));
  g.run();
  return out;
}

at::Tensor& complex_out(const at::Tensor& re, const at::Tensor& im, at::Tensor& out) {
  return from_parts(re, im, out, [](CxGraph&, int r, int i) { return Z{r, i}; });
}
at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  return from_parts(abs, angle, out, [](CxGraph& g, int r, int t) {
    return Z{g.bin(TOCL_IR_MUL, r, g.un(TOCL_IR_COS, t)), g.bin(TOCL_IR_MUL, r, g.un(TOCL_IR_SIN, t))};
  });
}

template <auto F>
void reg(const char* name) {
  register_complex_kernel(name, c10::KernelFunction::makeFromUnboxedFunction(c10::CompileTimeFunctionPointer<
                                                                             std::remove_pointer_t<decltype(F)>, F>()));
}

// The complex kernels of routed ops, by aten overload name.
[[maybe_unused]] const bool registered = [] {
  reg<Forms<alpha_binary<Op::Add>>::fn>("add.Tensor");
  reg<Forms<alpha_binary<Op::Add>>::inplace>("add_.Tensor");
  reg<Forms<alpha_binary<Op::Add>>::out>("add.out");
  reg<Forms<alpha_binary<Op::Sub>>::fn>("sub.Tensor");
  reg<Forms<alpha_binary<Op::Sub>>::inplace>("sub_.Tensor");
  reg<Forms<alpha_binary<Op::Sub>>::out>("sub.out");
  reg<Forms<simple_binary<Op::Mul>>::fn>("mul.Tensor");
  reg<Forms<simple_binary<Op::Mul>>::inplace>("mul_.Tensor");
  reg<Forms<simple_binary<Op::Mul>>::out>("mul.out");
  reg<Forms<simple_binary<Op::Div>>::fn>("div.Tensor");
  reg<Forms<simple_binary<Op::Div>>::inplace>("div_.Tensor");
  reg<Forms<simple_binary<Op::Div>>::out>("div.out");
  reg<Forms<neg>::fn>("neg");
  reg<Forms<neg>::inplace>("neg_");
  reg<Forms<neg>::out>("neg.out");
  reg<abs_out>("abs.out");
  reg<angle>("angle");
  reg<angle_out>("angle.out");
  return true;
}();

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl_complex("conj_physical.out", conj_out);
  m.impl_complex("conj_physical_", conj_physical_inplace);
  m.impl_complex("complex.out", complex_out);
  m.impl_complex("polar.out", polar_out);
}

}  // namespace torch_ocl
