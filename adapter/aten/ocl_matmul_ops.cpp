// ocl_matmul_ops.cpp - matrix products on the native GEMM (runtime/ops/gemm.c):
// mm, bmm, addmm, _addmm_activation, addmv, baddbmm, addbmm, dot, vdot with
// their out= and in-place forms. Each unpacks its tensors as (address, batch,
// row and column strides) and makes one tocl_gemm call, so transposed and
// sliced operands are never copied and alpha, beta * self and the activation
// run in the kernel's epilogue. matmul, linear, einsum, tensordot, mv, outer
// and inner are composites over these. Argument errors follow the CPU's.
// The GEMM is float-only: integer (and bool) products take the counted CPU
// fallback (fallback.h), so they work as on the CPU unless the policy forbids.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_addmm_activation.h>
#include <ATen/ops/addbmm.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/addmv.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/dot.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/vdot.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>

#include "fallback.h"
#include "ocl_common.h"
#include "tocl/gemm.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

bool is_gemm_dtype(c10::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16 || t == at::kDouble;
}

// True when dtype t has no GEMM kernel: the product then runs on the CPU,
// counted as aten::<op> and governed by the policy (raises under 'error').
// The CPU raises its own error for the dtypes it lacks too (bool).
bool cpu_route(c10::ScalarType t, const char* op) {
  if (is_gemm_dtype(t))
    return false;
  note_fallback(std::string("aten::") + op);
  return true;
}

// Copy a CPU result into an ocl out tensor already checked and sized.
at::Tensor& copy_back(at::Tensor& out, const at::Tensor& r) {
  resize_out(out, r.sizes());
  out.copy_(r);
  return out;
}

// (batch, rows, cols) strides of a 2-D (batch stride 0) or 3-D tensor.
tocl_gemm_operand operand(const at::Tensor& t) {
  tocl_gemm_operand o{};
  o.data = t.numel() ? device_addr(t) : 0;
  if (t.dim() == 3) {
    o.bs = t.stride(0), o.rs = t.stride(1), o.cs = t.stride(2);
  } else {
    o.bs = 0, o.rs = t.stride(0), o.cs = t.stride(1);
  }
  return o;
}

// True when x and y may share memory (TooHard counts as shared).
bool may_overlap(const at::Tensor& x, const at::Tensor& y) {
  return x.numel() && y.numel() && x.storage().is_alias_of(y.storage()) &&
         at::get_overlap_status(x, y) != at::MemOverlapStatus::No;
}

// True when out cannot be written element by element by the kernel: it
// overlaps itself, or shares memory with an operand the kernel reads while
// writing (d aliasing out exactly is fine: each element reads then writes).
bool needs_temp(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* d) {
  if (at::has_internal_overlap(out) != at::MemOverlap::No)
    return true;
  if (may_overlap(out, a) || may_overlap(out, b))
    return true;
  if (d && may_overlap(out, *d))
    return !(at::get_overlap_status(out, *d) == at::MemOverlapStatus::Full && out.strides() == d->strides());
  return false;
}

// out (M x N or B x M x N) := act(alpha * a @ b + beta * d). a, b are 2-D or
// 3-D (batch strides may be 0); d, when given, is broadcast to out's shape.
void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* d, double beta,
               double alpha, tocl_gemm_act act = TOCL_GEMM_ACT_NONE) {
  if (out.numel() == 0)
    return;
  if (needs_temp(out, a, b, d)) { // a fresh tensor overlaps nothing: no recursion
    at::Tensor tmp = at::empty(out.sizes(), out.options());
    gemm_into(tmp, a, b, d, beta, alpha, act);
    out.copy_(tmp);
    return;
  }
  c10::DeviceGuard guard(out.device());
  int dev = out.device().index();
  bool batched = out.dim() == 3;
  tocl_gemm_desc g = tocl_gemm_desc_init(to_tocl_dtype(out.scalar_type()), out.size(batched ? 1 : 0),
                                         out.size(batched ? 2 : 1), a.size(a.dim() - 1));
  g.batch = batched ? out.size(0) : 1;
  g.a = operand(a);
  g.b = operand(b);
  g.c = operand(out);
  g.alpha = alpha;
  if (d && beta != 0.0) {
    g.d = operand(d->expand(out.sizes()));
    g.beta = beta;
  }
  g.act = act;
  TOCL_CHECK(tocl_gemm(dev, tocl_stream_current(dev), &g));
}

// ---------------------------------------------------------------- argument checks (CPU messages)

void check_mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.dtype() == mat2.dtype(), "expected m1 and m2 to have the same dtype, but got: ", self.dtype(),
              " != ", mat2.dtype());
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
              self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
}

void check_addmm(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2) {
  TORCH_CHECK(m1.dim() == 2, "mat1 must be a matrix, got ", m1.dim(), "-D tensor");
  TORCH_CHECK(m2.dim() == 2, "mat2 must be a matrix, got ", m2.dim(), "-D tensor");
  TORCH_CHECK(m1.dtype() == m2.dtype(), "expected mat1 and mat2 to have the same dtype, but got: ", m1.dtype(),
              " != ", m2.dtype());
  TORCH_CHECK(self.dtype() == m1.dtype(), "self and mat2 must have the same dtype, but got ", self.scalar_type(),
              " and ", m2.scalar_type());
  TORCH_CHECK(m1.size(1) == m2.size(0), "mat1 and mat2 shapes cannot be multiplied (", m1.size(0), "x", m1.size(1),
              " and ", m2.size(0), "x", m2.size(1), ")");
}

void check_bmm(const at::Tensor& b1, const at::Tensor& b2) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b1.dtype() == b2.dtype(), "expected scalar type ", b1.scalar_type(), " but found ",
              b2.scalar_type());
  TORCH_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
              "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ", b1.size(2),
              "] but got: [", b2.size(0), ", ", b2.size(1), "].");
}

void check_out(const at::Tensor& out, c10::ScalarType t) {
  TORCH_CHECK(out.scalar_type() == t, "Expected out tensor to have dtype ", c10::scalarTypeToTypeMeta(t),
              ", but got ", out.dtype(), " instead");
}

// An in-place form cannot change self's shape.
void check_inplace(const at::Tensor& self, at::IntArrayRef shape) {
  TORCH_CHECK(self.sizes() == shape, "Bad in-place call: input tensor size ", self.sizes(),
              " and output tensor size ", shape, " should match");
}

// ---------------------------------------------------------------- mm / addmm / _addmm_activation

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_mm(self, mat2);
  check_out(out, self.scalar_type());
  if (cpu_route(self.scalar_type(), "mm"))
    return copy_back(out, at::mm(self.cpu(), mat2.cpu()));
  resize_out(out, {self.size(0), mat2.size(1)});
  gemm_into(out, self, mat2, nullptr, 0.0, 1.0);
  return out;
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  check_mm(self, mat2);
  if (cpu_route(self.scalar_type(), "mm"))
    return at::mm(self.cpu(), mat2.cpu()).to(self.device());
  at::Tensor out = at::empty({self.size(0), mat2.size(1)}, self.options());
  gemm_into(out, self, mat2, nullptr, 0.0, 1.0);
  return out;
}

at::Tensor& addmm_out_act(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                          const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out, tocl_gemm_act act,
                          const char* op) {
  check_addmm(self, m1, m2);
  std::vector<int64_t> shape{m1.size(0), m2.size(1)};
  at::Tensor s = self.expand(shape); // CPU's broadcast error on a mismatch
  if (!out.is_same(self)) {
    check_out(out, self.scalar_type());
    resize_out(out, shape);
  } else {
    check_inplace(self, shape);
  }
  if (cpu_route(m1.scalar_type(), op)) {
    at::Tensor c = self.cpu(), c1 = m1.cpu(), c2 = m2.cpu();
    return copy_back(out, act == TOCL_GEMM_ACT_NONE ? at::addmm(c, c1, c2, beta, alpha)
                                                    : at::_addmm_activation(c, c1, c2, beta, alpha,
                                                                            act == TOCL_GEMM_ACT_GELU));
  }
  gemm_into(out, m1, m2, &s, beta.toDouble(), alpha.toDouble(), act);
  return out;
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2, const c10::Scalar& beta,
                      const c10::Scalar& alpha, at::Tensor& out) {
  return addmm_out_act(self, m1, m2, beta, alpha, out, TOCL_GEMM_ACT_NONE, "addmm");
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2, const c10::Scalar& beta,
                 const c10::Scalar& alpha) {
  at::Tensor out = at::empty({0}, self.options());
  return addmm_out(self, m1, m2, beta, alpha, out);
}

// torch_ocl::linear_residual: x @ wt + bias + residual as one GEMM, the bias
// as its row bias and the residual as its D operand (compile/epilogues.py
// makes it from a linear layer's addmm and the residual add after it, so a
// transformer block's two residual adds cost no launch). Sums in the GEMM's
// accumulator: not bit for bit addmm-then-add, which rounds in between.
at::Tensor linear_residual(const at::Tensor& x, const at::Tensor& wt, const at::Tensor& bias,
                           const at::Tensor& residual) {
  check_mm(x, wt);
  int64_t M = x.size(0), N = wt.size(1);
  TORCH_CHECK(is_gemm_dtype(x.scalar_type()), "linear_residual: no ocl GEMM for ", x.scalar_type());
  TORCH_CHECK(bias.dim() == 1 && bias.size(0) == N && bias.scalar_type() == x.scalar_type(),
              "linear_residual: expected a bias of ", N, " ", x.scalar_type(), " values, got ", bias.sizes(), " ",
              bias.scalar_type());
  TORCH_CHECK(residual.dim() == 2 && residual.size(0) == M && residual.size(1) == N &&
                  residual.scalar_type() == x.scalar_type(),
              "linear_residual: expected a [", M, ", ", N, "] ", x.scalar_type(), " residual, got ", residual.sizes(),
              " ", residual.scalar_type());
  for (const at::Tensor* t : {&wt, &bias, &residual})
    TORCH_CHECK(t->device() == x.device(), "linear_residual: expected every tensor on ", x.device(), ", got ",
                t->device());
  at::Tensor out = at::empty({M, N}, x.options());
  if (out.numel() == 0)
    return out;
  c10::DeviceGuard guard(out.device());
  int dev = out.device().index();
  tocl_gemm_desc g = tocl_gemm_desc_init(to_tocl_dtype(out.scalar_type()), M, N, x.size(1));
  g.a = operand(x);
  g.b = operand(wt);
  g.c = operand(out);
  g.d = operand(residual);
  g.beta = 1.0;
  g.bias.data = device_addr(bias);
  g.bias.cs = bias.stride(0);  // a 1 x N operand: cs runs along it
  g.bias_mode = TOCL_GEMM_BIAS_ROW;
  TOCL_CHECK(tocl_gemm(dev, tocl_stream_current(dev), &g));
  return out;
}

// torch_ocl::norm_linear: layer_norm(x) @ wt [+ bias] [ReLU] (x [M, K]
// normalised over K), from a LayerNorm whose output only feeds a linear
// layer (compile/prologues.py). One row on a CPU device is one kernel that
// normalises x as it reads it (tocl_gemm_normed): a decoding step's three
// norms per block and the final one cost no launch. Elsewhere it runs the
// two ops the graph had, so the values are those of the unfused graph.
at::Tensor norm_linear(const at::Tensor& x, const std::optional<at::Tensor>& gamma,
                       const std::optional<at::Tensor>& beta, double eps, const at::Tensor& wt,
                       const std::optional<at::Tensor>& bias, bool relu) {
  check_mm(x, wt);
  int64_t M = x.size(0), K = x.size(1), N = wt.size(1);
  const at::Tensor* affine[] = {gamma ? &*gamma : nullptr, beta ? &*beta : nullptr, bias ? &*bias : nullptr};
  const int64_t lens[] = {K, K, N};
  const char* names[] = {"norm weight", "norm bias", "bias"};
  for (int i = 0; i < 3; i++) {
    const at::Tensor* t = affine[i];
    if (!t)
      continue;
    TORCH_CHECK(t->dim() == 1 && t->size(0) == lens[i] && t->scalar_type() == x.scalar_type(), "norm_linear: expected a ",
                names[i], " of ", lens[i], " ", x.scalar_type(), " values, got ", t->sizes(), " ", t->scalar_type());
    TORCH_CHECK(t->device() == x.device(), "norm_linear: expected every tensor on ", x.device(), ", got ", t->device());
  }
  TORCH_CHECK(wt.device() == x.device(), "norm_linear: expected every tensor on ", x.device(), ", got ", wt.device());
  TORCH_CHECK(relu ? bias.has_value() : true, "norm_linear: relu needs a bias (it comes from _addmm_activation)");
  c10::DeviceGuard guard(x.device());
  int dev = x.device().index();
  tocl_gemm_desc g = tocl_gemm_desc_init(to_tocl_dtype(x.scalar_type()), M, N, K);
  g.a = operand(x);
  g.b = operand(wt);
  tocl_gemm_norm n{};
  n.eps = eps;
  bool unit = true;
  for (int i = 0; i < 2; i++)
    unit = unit && (!affine[i] || affine[i]->stride(0) == 1 || affine[i]->size(0) <= 1);
  if (M * N * K > 0 && is_gemm_dtype(x.scalar_type()) && unit && tocl_gemm_norm_usable(dev, &g, &n)) {
    n.gamma = gamma ? device_addr(*gamma) : 0;
    n.beta = beta ? device_addr(*beta) : 0;
    at::Tensor out = at::empty({M, N}, x.options());
    g.c = operand(out);
    if (bias) {
      g.bias.data = device_addr(*bias);
      g.bias.cs = bias->stride(0);  // a 1 x N operand: cs runs along it
      g.bias_mode = TOCL_GEMM_BIAS_ROW;
    }
    g.act = relu ? TOCL_GEMM_ACT_RELU : TOCL_GEMM_ACT_NONE;
    TOCL_CHECK(tocl_gemm_normed(dev, tocl_stream_current(dev), &g, &n));
    return out;
  }
  at::Tensor y = std::get<0>(at::native_layer_norm(x, {K}, gamma, beta, eps));
  if (!bias)
    return at::mm(y, wt);
  return relu ? at::_addmm_activation(*bias, y, wt, 1, 1, false) : at::addmm(*bias, y, wt);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2, const c10::Scalar& beta,
                   const c10::Scalar& alpha) {
  return addmm_out(self, m1, m2, beta, alpha, self);
}

at::Tensor& addmm_activation_out(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                                 const c10::Scalar& beta, const c10::Scalar& alpha, bool use_gelu,
                                 at::Tensor& out) {
  return addmm_out_act(self, m1, m2, beta, alpha, out, use_gelu ? TOCL_GEMM_ACT_GELU : TOCL_GEMM_ACT_RELU,
                       "_addmm_activation");
}

at::Tensor addmm_activation(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                            const c10::Scalar& beta, const c10::Scalar& alpha, bool use_gelu) {
  at::Tensor out = at::empty({0}, self.options());
  return addmm_activation_out(self, m1, m2, beta, alpha, use_gelu, out);
}

// ---------------------------------------------------------------- bmm / baddbmm / addbmm

at::Tensor& bmm_out(const at::Tensor& b1, const at::Tensor& b2, at::Tensor& out) {
  check_bmm(b1, b2);
  check_out(out, b1.scalar_type());
  if (cpu_route(b1.scalar_type(), "bmm"))
    return copy_back(out, at::bmm(b1.cpu(), b2.cpu()));
  resize_out(out, {b1.size(0), b1.size(1), b2.size(2)});
  gemm_into(out, b1, b2, nullptr, 0.0, 1.0);
  return out;
}

at::Tensor bmm(const at::Tensor& b1, const at::Tensor& b2) {
  check_bmm(b1, b2);
  if (cpu_route(b1.scalar_type(), "bmm"))
    return at::bmm(b1.cpu(), b2.cpu()).to(b1.device());
  at::Tensor out = at::empty({b1.size(0), b1.size(1), b2.size(2)}, b1.options());
  gemm_into(out, b1, b2, nullptr, 0.0, 1.0);
  return out;
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const c10::Scalar& beta,
                        const c10::Scalar& alpha, at::Tensor& out) {
  check_bmm(b1, b2);
  TORCH_CHECK(self.dtype() == b1.dtype(), "Input dtypes must be the same, got: input ", self.dtype(),
              ", batch1: ", b1.dtype(), ", batch2: ", b2.dtype());
  std::vector<int64_t> shape{b1.size(0), b1.size(1), b2.size(2)};
  at::Tensor s = self.expand(shape);
  if (!out.is_same(self)) {
    check_out(out, self.scalar_type());
    resize_out(out, shape);
  } else {
    check_inplace(self, shape);
  }
  if (cpu_route(b1.scalar_type(), "baddbmm"))
    return copy_back(out, at::baddbmm(self.cpu(), b1.cpu(), b2.cpu(), beta, alpha));
  gemm_into(out, b1, b2, &s, beta.toDouble(), alpha.toDouble());
  return out;
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const c10::Scalar& beta,
                   const c10::Scalar& alpha) {
  at::Tensor out = at::empty({0}, self.options());
  return baddbmm_out(self, b1, b2, beta, alpha, out);
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const c10::Scalar& beta,
                     const c10::Scalar& alpha) {
  return baddbmm_out(self, b1, b2, beta, alpha, self);
}

// sum_b b1[b] @ b2[b] is one product with K' = batch * K: [b1[0] b1[1] ...] @ [b2[0]; b2[1]; ...].
at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const c10::Scalar& beta,
                       const c10::Scalar& alpha, at::Tensor& out) {
  check_bmm(b1, b2);
  TORCH_CHECK(self.dtype() == b1.dtype(), "Input dtypes must be the same, got: input ", self.dtype(),
              ", batch1: ", b1.dtype(), ", batch2: ", b2.dtype());
  std::vector<int64_t> shape{b1.size(1), b2.size(2)};
  at::Tensor s = self.expand(shape);
  if (!out.is_same(self)) {
    check_out(out, self.scalar_type());
    resize_out(out, shape);
  } else {
    check_inplace(self, shape);
  }
  if (cpu_route(b1.scalar_type(), "addbmm"))
    return copy_back(out, at::addbmm(self.cpu(), b1.cpu(), b2.cpu(), beta, alpha));
  int64_t nb = b1.size(0), M = b1.size(1), K = b1.size(2), N = b2.size(2);
  at::Tensor a2 = b1.permute({1, 0, 2}).reshape({M, nb * K});
  at::Tensor bb2 = b2.reshape({nb * K, N});
  gemm_into(out, a2, bb2, &s, beta.toDouble(), alpha.toDouble());
  return out;
}

at::Tensor addbmm(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const c10::Scalar& beta,
                  const c10::Scalar& alpha) {
  at::Tensor out = at::empty({0}, self.options());
  return addbmm_out(self, b1, b2, beta, alpha, out);
}

at::Tensor& addbmm_(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const c10::Scalar& beta,
                    const c10::Scalar& alpha) {
  return addbmm_out(self, b1, b2, beta, alpha, self);
}

// ---------------------------------------------------------------- addmv / dot / vdot

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const c10::Scalar& beta,
                      const c10::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK((mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1),
              "vector + matrix @ vector expected, got ", self.dim(), ", ", mat.dim(), ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.dim() ? self.size(0) : 1, "), mat (", mat.size(0), "x",
              mat.size(1), "), vec (", vec.size(0), ")");
  TORCH_CHECK(mat.dtype() == vec.dtype() && self.dtype() == mat.dtype(),
              "addmv input tensors must have the same dtype, but got ", self.scalar_type(), ", ", mat.scalar_type(),
              ", and ", vec.scalar_type());
  int64_t M = mat.size(0);
  at::Tensor s = self.expand({M});
  if (!out.is_same(self)) {
    check_out(out, self.scalar_type());
    resize_out(out, {M});
  } else {
    check_inplace(self, {M});
  }
  if (cpu_route(mat.scalar_type(), "addmv"))
    return copy_back(out, at::addmv(self.cpu(), mat.cpu(), vec.cpu(), beta, alpha));
  at::Tensor s1 = s.unsqueeze(1);
  gemm_into(out.unsqueeze(1), mat, vec.unsqueeze(1), &s1, beta.toDouble(), alpha.toDouble());
  return out;
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const c10::Scalar& beta,
                 const c10::Scalar& alpha) {
  at::Tensor out = at::empty({0}, self.options());
  return addmv_out(self, mat, vec, beta, alpha, out);
}

at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const c10::Scalar& beta,
                   const c10::Scalar& alpha) {
  return addmv_out(self, mat, vec, beta, alpha, self);
}

at::Tensor dot_impl(const at::Tensor& self, const at::Tensor& other, const char* op) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), op, " : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", other.numel(), "] to have the same number of elements, but got ", self.numel(),
              " and ", other.numel(), " elements respectively");
  if (cpu_route(self.scalar_type(), op)) {
    at::Tensor c = self.cpu(), o = other.cpu();
    return (std::string(op) == "vdot" ? at::vdot(c, o) : at::dot(c, o)).to(self.device());
  }
  at::Tensor out = at::empty(at::IntArrayRef{}, self.options());
  gemm_into(out.view({1, 1}), self.unsqueeze(0), other.unsqueeze(1), nullptr, 0.0, 1.0);
  return out;
}

at::Tensor dot(const at::Tensor& self, const at::Tensor& other) { return dot_impl(self, other, "dot"); }
at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) { return dot_impl(self, other, "vdot"); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("mm", mm);
  m.impl("mm.out", mm_out);
  m.impl("addmm", addmm);
  m.impl("addmm.out", addmm_out);
  m.impl("addmm_", addmm_);
  m.impl("_addmm_activation", addmm_activation);
  m.impl("_addmm_activation.out", addmm_activation_out);
  m.impl("bmm", bmm);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm", baddbmm);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("baddbmm_", baddbmm_);
  m.impl("addbmm", addbmm);
  m.impl("addbmm.out", addbmm_out);
  m.impl("addbmm_", addbmm_);
  m.impl("addmv", addmv);
  m.impl("addmv.out", addmv_out);
  m.impl("addmv_", addmv_);
  m.impl("dot", dot);
  m.impl("vdot", vdot);
}

TORCH_LIBRARY_FRAGMENT(torch_ocl, m) {
  m.def("linear_residual(Tensor x, Tensor wt, Tensor bias, Tensor residual) -> Tensor");
  m.def("norm_linear(Tensor x, Tensor? weight, Tensor? bias, float eps, Tensor wt, Tensor? lin_bias, bool relu=False) "
        "-> Tensor");
}

TORCH_LIBRARY_IMPL(torch_ocl, PrivateUse1, m) {
  m.impl("linear_residual", TORCH_FN(linear_residual));
  m.impl("norm_linear", TORCH_FN(norm_linear));
}

}  // namespace torch_ocl
