// ocl_linalg_ops.cpp - torch.linalg on the ocl device.
//
// PyTorch's own linear algebra front end is device-generic: the structured
// kernels (linalg_cholesky_ex, linalg_lu_factor_ex, _linalg_svd, ...) check
// their arguments, lay out column-major working copies, call a DispatchStub
// and check `info`, with the CPU's messages. CUDA plugs cuSOLVER and MAGMA
// into those stubs; ocl plugs in the kernels of runtime/ops/linalg.c
// (Cholesky, LU, Bunch-Kaufman LDL^T, triangular solves, Householder QR,
// Jacobi eigen and SVD)
// and registers the structured front ends for PrivateUse1 through one
// generic wrapper. Decompositions built from others (solve, inverse, det,
// lstsq, orgqr, ormqr, cholesky_solve) are composed here from the kernels
// and native ocl ops.
//
// complex64 and complex128 run the same kernels (complex builds of
// linalg.cl), handed over in the runtime's pairs layout. A stub sees what
// LAPACK would: the memory of its tensors, whatever their conj bit (the
// front ends choose the transpose flags with that in mind), so operands are
// passed raw and a conjugate-transposed solve sets the kernels' conj flag.
#if __has_include(<ATen/core/Dimname.h>)
#include <ATen/core/Dimname.h>
#define TOCL_HAS_DIMNAME 1
#else
#define TOCL_HAS_DIMNAME 0
#endif
#include <ATen/ExpandUtils.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/BatchLinearAlgebra.h>
#include <ATen/native/Cross.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/TransposeType.h>
#include <ATen/ops/_linalg_det_native.h>
#include <ATen/ops/_linalg_eigh_native.h>
#include <ATen/ops/_linalg_slogdet_native.h>
#include <ATen/ops/_linalg_solve_ex_native.h>
#include <ATen/ops/_linalg_svd.h>
#include <ATen/ops/_linalg_svd_native.h>
#include <ATen/ops/cholesky_inverse_native.h>
#include <ATen/ops/conj_physical.h>
#include <ATen/ops/real.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/geqrf_native.h>
#include <ATen/ops/linalg_cholesky_ex_native.h>
#include <ATen/ops/linalg_cross_native.h>
#include <ATen/ops/linalg_householder_product_native.h>
#include <ATen/ops/linalg_inv_ex_native.h>
#include <ATen/ops/linalg_ldl_factor_ex_native.h>
#include <ATen/ops/linalg_ldl_solve_native.h>
#include <ATen/ops/linalg_lstsq_native.h>
#include <ATen/ops/linalg_lu_factor_ex_native.h>
#include <ATen/ops/linalg_lu_native.h>
#include <ATen/ops/linalg_lu_solve_native.h>
#include <ATen/ops/linalg_matrix_sqrth_native.h>
#include <ATen/ops/linalg_polar_native.h>
#include <ATen/ops/linalg_solve.h>
#include <ATen/ops/linalg_qr_native.h>
#include <ATen/ops/linalg_solve_triangular_native.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ormqr_native.h>
#include <ATen/ops/triangular_solve_native.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <utility>

#include "ocl_nn_util.h"
#include "tocl/linalg.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;
using nn_util::dev_of;
using nn_util::stream_of;

// ------------------------------------------------------------------ operands

// t [..., r, c] (keep 2) or [..., len] (keep 1) as a runtime operand with one
// batch dimension, when its batch dimensions share one stride; a complex t
// as its real dtype with a trailing pair dim (tocl/linalg.h).
std::optional<tocl_tensor> as_batched(const Tensor& t, int keep) {
  const int nb = static_cast<int>(t.dim()) - keep;
  TORCH_INTERNAL_ASSERT(nb >= 0);
  int64_t batch = 1, bs = 0, expect = 0;
  bool have = false;
  for (int d = nb - 1; d >= 0; d--) {
    const int64_t sz = t.size(d), st = t.stride(d);
    batch *= sz;
    if (sz == 1)
      continue;
    if (have && st != expect)
      return std::nullopt;
    if (!have)
      bs = st;
    have = true;
    expect = st * sz;
  }
  tocl_tensor full = to_tocl_pairs(t);
  const int64_t u = t.is_complex() ? 2 : 1;  // reals per element
  tocl_tensor r{};
  r.data = full.data;
  r.dtype = full.dtype;
  r.ndim = keep + 1;
  r.sizes[0] = batch;
  r.strides[0] = bs * u;
  for (int i = 0; i < keep; i++) {
    r.sizes[1 + i] = t.size(nb + i);
    r.strides[1 + i] = t.stride(nb + i) * u;
  }
  if (t.is_complex()) {
    r.sizes[r.ndim] = 2;
    r.strides[r.ndim] = 1;
    r.ndim++;
  }
  return r;
}

// The memory of x as LAPACK reads it: conj and neg bits dropped.
Tensor raw(const Tensor& x) {
  Tensor r = x.is_conj() ? x.conj() : x;
  return r.is_neg() ? r._neg_view() : r;
}

// A tensor handed to a kernel (raw): itself when its batch collapses, else
// a contiguous copy, written back by finish() when the kernel wrote it.
struct Batched {
  Tensor orig, work;
  tocl_tensor t{};
  Batched(const Tensor& x_in, int keep) : orig(raw(x_in)) {
    const Tensor& x = orig;
    auto v = as_batched(x, keep);
    work = v ? x : x.contiguous();
    t = v ? *v : *as_batched(work, keep);
  }
  const tocl_tensor* p() const { return &t; }
  void finish() {
    if (!work.is_same(orig))
      orig.copy_(work);
  }
};

// The CPU's dispatch error (NotImplementedError) for a dtype LAPACK lacks.
void check_float(const Tensor& t, const char* name) {
  const auto d = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(d == at::kFloat || d == at::kDouble || d == at::kComplexFloat || d == at::kComplexDouble,
                              "\"", name, "_ocl\" not implemented for '", c10::toString(d), "'");
}

// info [...] (int32, the batch shape) as a [batch, 1] operand.
Tensor info_view(const Tensor& info) { return info.reshape({-1, 1}); }

// ------------------------------------------------------------------ kernels

void potrf(const Tensor& a, const Tensor& info) {  // lower, in place
  Batched A(a, 2), I(info_view(info), 1);
  TOCL_CHECK(tocl_la_potrf(dev_of(a), stream_of(a), A.p(), I.p()));
  A.finish();
  I.finish();
}

// b := a^-1 b, or conj(a)^-1 b (conj; a^H with a's transposed view)
void trsm(const Tensor& a, const Tensor& b, bool upper, bool unit, bool conj = false) {
  Batched A(a, 2), B(b, 2);
  TOCL_CHECK(tocl_la_trsm(dev_of(b), stream_of(b), A.p(), B.p(), upper, unit, conj));
  B.finish();
}

void laswp(const Tensor& piv, const Tensor& b, bool reverse) {
  Batched P(piv, 1), B(b, 2);
  TOCL_CHECK(tocl_la_laswp(dev_of(b), stream_of(b), P.p(), B.p(), reverse));
  B.finish();
}

// c := (product of the reflectors) c; conj_tau: each H^H, conj_v: each H^T
void house_apply(const Tensor& v, const Tensor& tau, const Tensor& c, bool forward, bool conj_tau = false,
                 bool conj_v = false) {
  Batched V(v, 2), T(tau, 1), C(c, 2);
  TOCL_CHECK(tocl_la_house_apply(dev_of(c), stream_of(c), V.p(), T.p(), C.p(), forward, conj_tau, conj_v));
  C.finish();
}

// Expand a's batch dimensions to b's (LU and pivots broadcast against B).
Tensor expand_batch(const Tensor& a, const Tensor& b, int keep) {
  std::vector<int64_t> shape(b.sizes().begin(), b.sizes().end() - 2);
  for (int i = keep; i > 0; i--)
    shape.push_back(a.size(-i));
  return a.expand(shape);
}

// ------------------------------------------------------------------ stubs

void ocl_cholesky(const Tensor& input, const Tensor& info, bool upper) {
  check_float(input, "cholesky");
  c10::DeviceGuard g(input.device());
  // upper: the lower factor L of A^T = conj(A) (Hermitian A), written
  // through the transposed view: U = L^T, and A = conj(L) L^T = U^H U
  potrf(upper ? input.mT() : input, info);
}

// (B, A) already broadcast by cholesky_solve: A = L L^H (or U^H U).
Tensor ocl_cholesky_solve_helper(const Tensor& self, const Tensor& A_in, bool upper) {
  check_float(self, "cholesky_solve");
  c10::DeviceGuard g(self.device());
  Tensor X = self.mT().clone(at::MemoryFormat::Contiguous).mT().resolve_conj();
  if (X.numel() == 0)
    return X;
  Tensor A = A_in.resolve_conj();
  // L = A (lower) or U^H = conj(A^T) (upper): A's view and whether to conjugate
  Tensor L = upper ? A.mT() : A;
  trsm(L, X, /*upper=*/false, false, /*conj=*/upper);
  trsm(L.mT(), X, /*upper=*/true, false, /*conj=*/!upper);
  return X;
}

Tensor& ocl_cholesky_inverse(Tensor& result, Tensor& infos, bool upper) {
  c10::DeviceGuard g(result.device());
  const int64_t n = result.size(-1);
  Tensor eye = at::eye(n, result.options()).expand_as(result);
  Tensor inv = ocl_cholesky_solve_helper(eye, raw(result).clone(), upper);
  raw(result).copy_(inv);
  return result;
}

void ocl_lu_factor(const Tensor& input, const Tensor& pivots, const Tensor& infos, bool compute_pivots) {
  check_float(input, "lu_factor");
  c10::DeviceGuard g(input.device());
  Batched A(input, 2), P(pivots, 1), I(info_view(infos), 1);
  TOCL_CHECK(tocl_la_getrf(dev_of(input), stream_of(input), A.p(), P.p(), I.p(), compute_pivots));
  A.finish();
  P.finish();
  I.finish();
}

void ocl_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, at::native::TransposeType trans) {
  c10::DeviceGuard g(B.device());
  if (B.numel() == 0)
    return;
  Tensor lu = expand_batch(LU, B, 2), piv = expand_batch(pivots, B, 1);
  if (trans == at::native::TransposeType::NoTranspose) {  // P L U X = B
    laswp(piv, B, false);
    trsm(lu, B, false, true);
    trsm(lu, B, true, false);
  } else {  // U^T L^T P^T X = B, or U^H L^H P^T X = B
    const bool cj = trans == at::native::TransposeType::ConjTranspose;
    trsm(lu.mT(), B, false, false, cj);
    trsm(lu.mT(), B, true, true, cj);
    laswp(piv, B, true);
  }
}

// LD (column-major, the lower triangle of A) := L and D, as sytrf / hetrf.
// PyTorch always asks for the lower triangle; LAPACK's upper variant
// factors from the last column and would pivot differently.
void ocl_ldl_factor(const Tensor& LD, const Tensor& pivots, const Tensor& info, bool upper, bool hermitian) {
  check_float(LD, "ldl_factor");
  TORCH_CHECK(!upper, "torch.linalg.ldl_factor: the ocl device factors the lower triangle only");
  c10::DeviceGuard g(LD.device());
  Batched A(LD, 2), P(pivots, 1), I(info_view(info), 1);
  TOCL_CHECK(tocl_la_sytrf(dev_of(LD), stream_of(LD), A.p(), P.p(), I.p(), hermitian));
  A.finish();
  P.finish();
  I.finish();
}

// B := A^-1 B with ocl_ldl_factor's LD and pivots (broadcast against B).
void ocl_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool upper, bool hermitian) {
  TORCH_CHECK(!upper, "torch.linalg.ldl_solve: the ocl device solves with lower factors only");
  c10::DeviceGuard g(B.device());
  if (B.numel() == 0)
    return;
  Tensor ld = expand_batch(LD, B, 2), piv = expand_batch(pivots.to(at::kInt), B, 1);
  Batched A(ld, 2), P(piv, 1), X(B, 2);
  TOCL_CHECK(tocl_la_sytrs(dev_of(B), stream_of(B), A.p(), P.p(), X.p(), hermitian));
  X.finish();
}

void ocl_triangular_solve(const Tensor& A, const Tensor& B, bool left, bool upper,
                          at::native::TransposeType trans, bool unit) {
  c10::DeviceGuard g(B.device());
  if (B.numel() == 0)
    return;
  const bool t = trans != at::native::TransposeType::NoTranspose;
  const bool cj = trans == at::native::TransposeType::ConjTranspose;
  // LAPACK reads A's memory as column-major whatever its strides, and
  // linalg_solve_triangular passes a row-major A with the flags that make
  // that right: see the matrix LAPACK would.
  auto lapack_view = [](const Tensor& x) { return x.stride(-1) == 1 && x.stride(-2) != 1 ? x.mT() : x; };
  Tensor a = expand_batch(lapack_view(raw(A)), B, 2);
  if (left)  // op(A) X = B
    trsm(t ? a.mT() : a, B, t ? !upper : upper, unit, cj);
  else  // X op(A) = B  <=>  op(A)^T X^T = B^T (op(A)^T = conj(A) for A^H)
    trsm(t ? a : a.mT(), B.mT(), t ? upper : !upper, unit, cj);
}

void ocl_geqrf(const Tensor& input, const Tensor& tau) {
  check_float(input, "geqrf");
  c10::DeviceGuard g(input.device());
  Batched A(input, 2), T(tau, 1);
  TOCL_CHECK(tocl_la_geqrf(dev_of(input), stream_of(input), A.p(), T.p()));
  A.finish();
  T.finish();
}

// Q (m x n, the first n columns of H_0 ... H_{k-1}) in place of the reflectors.
Tensor& ocl_orgqr(Tensor& result, const Tensor& tau) {
  c10::DeviceGuard g(result.device());
  if (result.numel() == 0)
    return result;
  const int64_t k = tau.size(-1);
  Tensor q = raw(result);
  Tensor v = q.narrow(-1, 0, k).clone();
  q.zero_();
  q.diagonal(0, -2, -1).fill_(1);
  house_apply(v, tau, q, /*forward=*/false);
  return result;
}

void ocl_ormqr(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool transpose) {
  c10::DeviceGuard g(other.device());
  if (other.numel() == 0 || tau.size(-1) == 0)
    return;
  Tensor v = input.narrow(-1, 0, tau.size(-1));
  // Q = H_0 ... H_{k-1} (transpose: Q^H): Q C applies H_{k-1} first, Q^H C
  // applies H_0^H first; C Q = (Q^T C^T)^T, Q^T applying H_0^T first, and
  // C Q^H = (conj(Q) C^T)^T, conj(Q) applying conj(H_{k-1}) first
  if (left)
    house_apply(v, tau, other, transpose, /*conj_tau=*/transpose);
  else
    house_apply(v, tau, other.mT(), !transpose, /*conj_tau=*/transpose, /*conj_v=*/true);
}

// Sort each batch row of vals (ascending or descending) and permute the
// columns of the matrices in `cols` the same way.
Tensor sort_columns(const Tensor& vals, bool descending, std::initializer_list<Tensor*> cols) {
  auto sorted = vals.sort(/*stable=*/true, -1, descending);
  Tensor idx = std::get<1>(sorted);
  for (Tensor* c : cols)
    *c = c->gather(-1, idx.unsqueeze(-2).expand(c->sizes()));
  return std::get<0>(sorted);
}

void ocl_eigh(const Tensor& eigenvalues, const Tensor& eigenvectors, const Tensor& infos, bool upper,
              bool compute_v) {
  check_float(eigenvectors, "linalg_eigh");
  c10::DeviceGuard g(eigenvectors.device());
  const int64_t n = eigenvectors.size(-1);
  // the full symmetric (Hermitian) matrix from the referenced triangle,
  // whose diagonal's imaginary part LAPACK ignores
  Tensor a = raw(eigenvectors);
  Tensor w = upper ? a.triu() + at::conj_physical(a.triu(1).mT()) : a.tril() + at::conj_physical(a.tril(-1).mT());
  w = w.reshape({-1, n, n}).contiguous();
  if (w.is_complex())
    w.diagonal(0, -2, -1).copy_(at::real(w.diagonal(0, -2, -1)).clone());
  const int64_t batch = w.size(0);
  auto opts = w.options();
  Tensor vals = at::empty({batch, n}, opts.dtype(c10::toRealValueType(w.scalar_type())));
  Tensor vec = compute_v ? at::empty({batch, n, n}, opts) : Tensor();
  Tensor rot = at::empty({batch, n + (n & 1)}, opts), info = at::zeros({batch, 1}, opts.dtype(at::kInt));
  Batched W(w, 2), E(vals, 1), R(rot, 1), I(info, 1);
  std::optional<Batched> V;
  if (compute_v)
    V.emplace(vec, 2);
  TOCL_CHECK(tocl_la_eigh(dev_of(w), stream_of(w), W.p(), V ? V->p() : nullptr, E.p(), R.p(), I.p()));
  Tensor sorted = compute_v ? sort_columns(vals, false, {&vec}) : std::get<0>(vals.sort(-1));
  eigenvalues.copy_(sorted.view(eigenvalues.sizes()));
  if (compute_v)
    eigenvectors.copy_(vec.view(eigenvectors.sizes()));
  infos.copy_(info.view(infos.sizes()));
}

// One-sided Jacobi on the tall orientation; U from a QR of the rotated
// columns, which also completes U to a full basis (full_matrices, or zero
// singular values).
void ocl_svd(const Tensor& A_in, const bool full, const bool compute_uv, const std::optional<c10::string_view>& driver,
             const Tensor& U, const Tensor& S, const Tensor& Vh, const Tensor& info) {
  const Tensor A = raw(A_in);
  check_float(A, "linalg_svd");
  TORCH_CHECK(!driver.has_value(), "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
              "with cuSOLVER backend.");
  c10::DeviceGuard g(A.device());
  const int64_t m = A.size(-2), n = A.size(-1);
  const bool wide = m < n;
  const int64_t M = wide ? n : m, N = wide ? m : n;
  Tensor w = (wide ? A.mT() : A).reshape({-1, M, N}).contiguous();
  if (w.is_same(A) || w.data_ptr() == A.data_ptr())
    w = w.clone();
  const int64_t batch = w.size(0);
  auto opts = w.options();
  Tensor v = compute_uv ? at::empty({batch, N, N}, opts) : Tensor();
  Tensor inf = at::zeros({batch, 1}, opts.dtype(at::kInt));
  {
    Batched W(w, 2), I(inf, 1);
    std::optional<Batched> V;
    if (compute_uv)
      V.emplace(v, 2);
    TOCL_CHECK(tocl_la_svd_jacobi(dev_of(w), stream_of(w), W.p(), V ? V->p() : nullptr, I.p()));
  }
  Tensor sv = at::linalg_vector_norm(w, 2, {-2}, false, std::nullopt);
  Tensor s = compute_uv ? sort_columns(sv, true, {&w, &v}) : std::get<0>(sv.sort(-1, true));
  S.copy_(s.view(S.sizes()));
  info.copy_(inf.view(info.sizes()));
  if (!compute_uv)
    return;
  // w = Q R with R diagonal up to rounding (w's columns are orthogonal)
  Tensor tau = at::empty({batch, N}, opts);
  ocl_geqrf(w, tau);
  const int64_t cols = full ? M : N;
  Tensor q = at::zeros({batch, M, cols}, opts);
  q.diagonal(0, -2, -1).fill_(1);
  house_apply(w, tau, q, /*forward=*/false);
  Tensor d = w.diagonal(0, -2, -1);  // real (LAPACK's larfg makes it so)
  Tensor sign = at::where((w.is_complex() ? at::real(d) : d) < 0, -1.0, 1.0).to(opts.dtype());
  q.narrow(-1, 0, N).mul_(sign.unsqueeze(-2));
  Tensor left = q, right = v;  // A' = left diag(s) right^H, A' = A or A^T
  std::vector<int64_t> bshape(A.sizes().begin(), A.sizes().end() - 2);
  auto batched = [&](const Tensor& t) {
    std::vector<int64_t> sh = bshape;
    sh.push_back(t.size(-2));
    sh.push_back(t.size(-1));
    return t.reshape(sh);
  };
  if (!wide) {
    U.copy_(batched(left));
    Vh.copy_(batched(at::conj_physical(right.mT())));
  } else {  // A = conj(right) diag(s) left^T
    U.copy_(batched(at::conj_physical(right)));
    Vh.copy_(batched(left.mT()));
  }
}

// Least squares through the SVD: the minimum-norm solution with singular
// values at or below rcond * max dropped (what gelsd computes; for full-rank
// input it is gelsy's and gels's solution as well).
void ocl_lstsq(const Tensor& a_in, Tensor& b, Tensor& rank, Tensor& singular_values, Tensor& infos, double rcond,
               std::string driver) {
  c10::DeviceGuard g(a_in.device());
  const Tensor a = raw(a_in);
  const int64_t m = a.size(-2), n = a.size(-1);
  if (m == 0 || n == 0)
    return;
  auto usv = at::_linalg_svd(a, /*full_matrices=*/false, /*compute_uv=*/true);
  Tensor u = std::get<0>(usv), s = std::get<1>(usv), vh = std::get<2>(usv);
  Tensor keep = s > s.amax(-1, true) * rcond;
  Tensor sinv = at::where(keep, s.reciprocal(), at::zeros({}, s.options()));
  Tensor rhs = b.narrow(-2, 0, m);
  Tensor x = at::matmul(vh.mH(), sinv.unsqueeze(-1) * at::matmul(u.mH(), rhs));
  if (m > n) {  // LAPACK leaves the residual's components in rows n..m-1
    Tensor r = at::matmul(a, x) - rhs;
    Tensor tail = b.narrow(-2, n, m - n);
    tail.zero_();
    tail.narrow(-2, 0, 1).copy_(at::linalg_vector_norm(r, 2, {-2}, true, std::nullopt));
  }
  b.narrow(-2, 0, n).copy_(x);
  if (driver != "gels")
    rank.copy_(keep.sum(-1).view(rank.sizes()));
  if (driver == "gelsd" || driver == "gelss")
    singular_values.copy_(s.view(singular_values.sizes()));
}

// exp(A) by scaling and squaring with the [13/13] Pade approximant (Higham
// 2005); each matrix of the batch is scaled by its own power of two, as the
// CPU's kernel does. Lower precisions are computed in float64 where the
// device has it: the squarings amplify float32 rounding to ~10 ulp, where
// the CPU's float32 kernel stays within 1-2.
Tensor ocl_matrix_exp(const Tensor& self) {
  TORCH_CHECK(self.dim() >= 2, "linalg.matrix_exp: The input tensor A must have at least 2 dimensions.");
  TORCH_CHECK(self.size(-1) == self.size(-2), "linalg.matrix_exp: A must be batches of square matrices, but they are ",
              self.size(-2), " by ", self.size(-1), " matrices");
  c10::DeviceGuard g(self.device());
  const auto dt = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(dt) || dt == at::kComplexFloat || dt == at::kComplexDouble,
              "linalg.matrix_exp: the ocl device supports floating and complex matrices, got ", dt);
  const int64_t n = self.size(-1);
  if (self.numel() == 0)
    return at::empty_like(self, at::MemoryFormat::Contiguous);
  if (n == 1)
    return self.exp();
  tocl_device_props props;
  TOCL_CHECK(tocl_device_props_get(self.device().index(), &props));
  const auto real = at::isComplexType(dt) ? c10::toRealValueType(dt) : dt;
  auto wide = props.has_fp64 ? at::kDouble : real == at::kDouble ? real : at::kFloat;
  Tensor a = self.to(at::isComplexType(dt) ? c10::toComplexType(wide) : wide).reshape({-1, n, n});
  static const double b[14] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                               129060195264000., 10559470521600., 670442572800., 33522128640.,
                               1323241920., 40840800., 960960., 16380., 182., 1.};
  const double theta13 = 5.371920351148152;
  Tensor norm = a.abs().sum(-2).amax(-1);
  Tensor s = at::clamp_min(at::ceil(at::log2(norm / theta13)), 0);
  s = at::where(at::isfinite(s), s, at::zeros({}, s.options()));
  Tensor x = a * at::pow(2.0, -s).view({-1, 1, 1});
  Tensor eye = at::eye(n, a.options()).expand_as(a);
  Tensor x2 = at::matmul(x, x), x4 = at::matmul(x2, x2), x6 = at::matmul(x4, x2);
  Tensor u = at::matmul(x, at::matmul(x6, b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 +
                               b[3] * x2 + b[1] * eye);
  Tensor v = at::matmul(x6, b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye;
  Tensor r = at::linalg_solve(v - u, v + u);
  const int64_t squarings = s.max().item<double>();
  for (int64_t i = 0; i < squarings; i++)
    r = at::where((s > static_cast<double>(i)).view({-1, 1, 1}), at::matmul(r, r), r);
  return r.to(dt).reshape(self.sizes());
}
Tensor& matrix_exp_out(const Tensor& self, Tensor& out) { return nn_util::deliver(ocl_matrix_exp(self), out); }

void ocl_cross(const Tensor& result, const Tensor& a, const Tensor& b, const int64_t dim) {
  c10::DeviceGuard g(result.device());
  auto at_ = [&](const Tensor& t, int64_t i) { return t.select(dim, i); };
  result.select(dim, 0).copy_(at_(a, 1) * at_(b, 2) - at_(a, 2) * at_(b, 1));
  result.select(dim, 1).copy_(at_(a, 2) * at_(b, 0) - at_(a, 0) * at_(b, 2));
  result.select(dim, 2).copy_(at_(a, 0) * at_(b, 1) - at_(a, 1) * at_(b, 0));
}

// ------------------------------------------------------------------ structured front ends

// PyTorch's structured kernel class S, its outputs allocated on the input's
// device: what codegen emits for CPU and CUDA, once for every op here.
template <class S, size_t N>
struct Structured final : S {
  std::array<Tensor, N> outs;
  // Torch with named tensors (2.11; ATen/core/Dimname.h) passes a trailing
  // DimnameList; later ones do not.
#if !TOCL_HAS_DIMNAME
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions o) override {
    allocate(i, sizes, strides, o);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions o) override {
    allocate(i, sizes, strides, o);
  }
#else
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions o,
                          at::DimnameList) override {
    allocate(i, sizes, strides, o);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions o,
                              at::DimnameList) override {
    allocate(i, sizes, strides, o);
  }
#endif
  // an empty stride list asks for a contiguous output
  void allocate(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions o) {
    outs[i] = strides.empty() ? at::empty(sizes, o) : at::empty_strided(sizes, strides, o);
  }
  const Tensor& maybe_get_output(int64_t i) override { return outs[i]; }
};

template <class S, size_t N, size_t... I, class... A>
std::array<Tensor, N> run_structured(std::index_sequence<I...>, const A&... args) {
  Structured<S, N> op;
  op.meta(args...);
  op.impl(args..., op.outs[I]...);
  return op.outs;
}

template <class S, size_t N, class... A>
std::array<Tensor, N> structured(const Tensor& first, const A&... rest) {
  c10::DeviceGuard g(first.device());
  return run_structured<S, N>(std::make_index_sequence<N>{}, first, rest...);
}

// Results into out= arguments as structured kernels do: every out must have
// its result's dtype (checked before any is written), and an out that gets
// resized also takes the result's strides (column-major for the factors).
template <size_t N>
void deliver_all(const std::array<Tensor, N>& res, std::array<std::reference_wrapper<Tensor>, N> outs) {
  for (size_t i = 0; i < N; i++)
    TORCH_CHECK(outs[i].get().scalar_type() == res[i].scalar_type(), "Expected out tensor to have dtype ",
                res[i].dtype(), ", but got ", outs[i].get().dtype(), " instead");
  for (size_t i = 0; i < N; i++) {
    Tensor& out = outs[i].get();
    if (out.is_same(res[i]))
      continue;
    if (resize_out(out, res[i].sizes()) && res[i].is_non_overlapping_and_dense())
      out.as_strided_(res[i].sizes(), res[i].strides());
    out.copy_(res[i]);
  }
}

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper, bool check) {
  auto r = structured<at::native::structured_linalg_cholesky_ex_out, 2>(A, upper, check);
  return {r[0], r[1]};
}
std::tuple<Tensor&, Tensor&> cholesky_ex_out(const Tensor& A, bool upper, bool check, Tensor& L, Tensor& info) {
  deliver_all<2>(structured<at::native::structured_linalg_cholesky_ex_out, 2>(A, upper, check), {L, info});
  return {L, info};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check) {
  auto r = structured<at::native::structured_linalg_lu_factor_ex_out, 3>(A, pivot, check);
  return {r[0], r[1], r[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> lu_factor_ex_out(const Tensor& A, bool pivot, bool check, Tensor& LU,
                                                        Tensor& piv, Tensor& info) {
  deliver_all<3>(structured<at::native::structured_linalg_lu_factor_ex_out, 3>(A, pivot, check), {LU, piv, info});
  return {LU, piv, info};
}

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian, bool check) {
  auto r = structured<at::native::structured_linalg_ldl_factor_ex_out, 3>(A, hermitian, check);
  return {r[0], r[1], r[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> ldl_factor_ex_out(const Tensor& A, bool hermitian, bool check, Tensor& LD,
                                                         Tensor& piv, Tensor& info) {
  deliver_all<3>(structured<at::native::structured_linalg_ldl_factor_ex_out, 3>(A, hermitian, check),
                 {LD, piv, info});
  return {LD, piv, info};
}

Tensor ldl_solve(const Tensor& LD, const Tensor& piv, const Tensor& B, bool hermitian) {
  return structured<at::native::structured_linalg_ldl_solve_out, 1>(LD, piv, B, hermitian)[0];
}
Tensor& ldl_solve_out(const Tensor& LD, const Tensor& piv, const Tensor& B, bool hermitian, Tensor& out) {
  deliver_all<1>({ldl_solve(LD, piv, B, hermitian)}, {out});
  return out;
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot) {
  auto r = structured<at::native::structured_linalg_lu_out, 3>(A, pivot);
  return {r[0], r[1], r[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> linalg_lu_out(const Tensor& A, bool pivot, Tensor& P, Tensor& L, Tensor& U) {
  deliver_all<3>(structured<at::native::structured_linalg_lu_out, 3>(A, pivot), {P, L, U});
  return {P, L, U};
}

Tensor lu_solve(const Tensor& LU, const Tensor& piv, const Tensor& B, bool left, bool adjoint) {
  return structured<at::native::structured_linalg_lu_solve_out, 1>(LU, piv, B, left, adjoint)[0];
}
Tensor& lu_solve_out(const Tensor& LU, const Tensor& piv, const Tensor& B, bool left, bool adjoint, Tensor& out) {
  deliver_all<1>({lu_solve(LU, piv, B, left, adjoint)}, {out});
  return out;
}

std::tuple<Tensor, Tensor, Tensor> linalg_det(const Tensor& A) {
  auto r = structured<at::native::structured__linalg_det_out, 3>(A);
  return {r[0], r[1], r[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> linalg_det_out(const Tensor& A, Tensor& res, Tensor& LU, Tensor& piv) {
  deliver_all<3>(structured<at::native::structured__linalg_det_out, 3>(A), {res, LU, piv});
  return {res, LU, piv};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> slogdet(const Tensor& A) {
  auto r = structured<at::native::structured__linalg_slogdet_out, 4>(A);
  return {r[0], r[1], r[2], r[3]};
}
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> slogdet_out(const Tensor& A, Tensor& sign, Tensor& lad, Tensor& LU,
                                                           Tensor& piv) {
  deliver_all<4>(structured<at::native::structured__linalg_slogdet_out, 4>(A), {sign, lad, LU, piv});
  return {sign, lad, LU, piv};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left, bool check) {
  auto r = structured<at::native::structured__linalg_solve_ex_out, 4>(A, B, left, check);
  return {r[0], r[1], r[2], r[3]};
}
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> solve_ex_out(const Tensor& A, const Tensor& B, bool left, bool check,
                                                            Tensor& res, Tensor& LU, Tensor& piv, Tensor& info) {
  deliver_all<4>(structured<at::native::structured__linalg_solve_ex_out, 4>(A, B, left, check), {res, LU, piv, info});
  return {res, LU, piv, info};
}

std::tuple<Tensor, Tensor> tri_solve(const Tensor& self, const Tensor& A, bool upper, bool transpose, bool unit) {
  auto r = structured<at::native::structured_triangular_solve_out, 2>(self, A, upper, transpose, unit);
  return {r[0], r[1]};
}
std::tuple<Tensor&, Tensor&> tri_solve_out(const Tensor& self, const Tensor& A, bool upper, bool transpose, bool unit,
                                           Tensor& X, Tensor& M) {
  deliver_all<2>(structured<at::native::structured_triangular_solve_out, 2>(self, A, upper, transpose, unit), {X, M});
  return {X, M};
}

std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check) {
  auto r = structured<at::native::structured_linalg_inv_ex_out, 2>(A, check);
  return {r[0], r[1]};
}
std::tuple<Tensor&, Tensor&> inv_ex_out(const Tensor& A, bool check, Tensor& inv, Tensor& info) {
  deliver_all<2>(structured<at::native::structured_linalg_inv_ex_out, 2>(A, check), {inv, info});
  return {inv, info};
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, c10::string_view mode) {
  auto r = structured<at::native::structured_linalg_qr_out, 2>(A, mode);
  return {r[0], r[1]};
}
std::tuple<Tensor&, Tensor&> qr_out(const Tensor& A, c10::string_view mode, Tensor& Q, Tensor& R) {
  deliver_all<2>(structured<at::native::structured_linalg_qr_out, 2>(A, mode), {Q, R});
  return {Q, R};
}

std::tuple<Tensor, Tensor> eigh(const Tensor& A, c10::string_view uplo, bool compute_v) {
  auto r = structured<at::native::structured__linalg_eigh_out, 2>(A, uplo, compute_v);
  return {r[0], r[1]};
}
std::tuple<Tensor&, Tensor&> eigh_out(const Tensor& A, c10::string_view uplo, bool compute_v, Tensor& L, Tensor& V) {
  deliver_all<2>(structured<at::native::structured__linalg_eigh_out, 2>(A, uplo, compute_v), {L, V});
  return {L, V};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full, bool compute_uv,
                                       std::optional<c10::string_view> driver) {
  auto r = structured<at::native::structured__linalg_svd_out, 3>(A, full, compute_uv, driver);
  return {r[0], r[1], r[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> svd_out(const Tensor& A, bool full, bool compute_uv,
                                              std::optional<c10::string_view> driver, Tensor& U, Tensor& S,
                                              Tensor& Vh) {
  deliver_all<3>(structured<at::native::structured__linalg_svd_out, 3>(A, full, compute_uv, driver), {U, S, Vh});
  return {U, S, Vh};
}

// linalg.polar: PyTorch's structured kernel outside CUDA is a composition
// (reduced SVD, U Vh, and Vh^H diag(S) Vh made exactly Hermitian) over the
// ops above, so the ocl result is the CPU's to rounding.
std::tuple<Tensor, Tensor> polar(const Tensor& A) {
  auto r = structured<at::native::structured_linalg_polar_out, 2>(A);
  return {r[0], r[1]};
}
std::tuple<Tensor&, Tensor&> polar_out(const Tensor& A, Tensor& U, Tensor& H) {
  deliver_all<2>(structured<at::native::structured_linalg_polar_out, 2>(A), {U, H});
  return {U, H};
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  return structured<at::native::structured_linalg_cross_out, 1>(a, b, dim)[0];
}
Tensor& cross_out(const Tensor& a, const Tensor& b, int64_t dim, Tensor& out) {
  deliver_all<1>({cross(a, b, dim)}, {out});
  return out;
}

// ------------------------------------------------------------------ ops composed here

Tensor& cholesky_solve_helper_out(const Tensor& self, const Tensor& A, bool upper, Tensor& out) {
  return nn_util::deliver(ocl_cholesky_solve_helper(self, A, upper), out);
}

// P, L, U from lu_factor's output (the CPU's checks and messages).
std::tuple<Tensor, Tensor, Tensor> ocl_lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                             bool unpack_pivots) {
  TORCH_CHECK(LU.dim() >= 2, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", LU.sizes(),
              " instead");
  if (unpack_pivots)
    TORCH_CHECK(pivots.scalar_type() == at::kInt,
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor");
  c10::DeviceGuard g(LU.device());
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  Tensor P, L, U;
  if (unpack_data) {
    U = LU.narrow(-2, 0, k).triu();
    L = LU.narrow(-1, 0, k).tril(-1);
    L.diagonal(0, -2, -1).fill_(1);
  } else {
    L = at::empty({0}, LU.options());
    U = at::empty({0}, LU.options());
  }
  if (unpack_pivots) {
    std::vector<int64_t> shape(LU.sizes().begin(), LU.sizes().end() - 2);
    shape.push_back(m);
    shape.push_back(m);
    Tensor rows = at::eye(m, LU.options()).expand(shape).contiguous();
    if (pivots.numel() && m) {
      TORCH_CHECK(!((pivots < 1) | (pivots > m)).any().item<bool>(),
                  "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive. Did you use the pivots "
                  "returned by torch.linalg.lu_factor?");
      laswp(expand_batch(pivots.narrow(-1, 0, std::min<int64_t>(k, pivots.size(-1))), rows, 1), rows, false);
    }
    P = rows.mT();  // A = P L U with P = (the interchanged identity)^T
  } else {
    P = at::empty({0}, LU.options());
  }
  return {P, L, U};
}
std::tuple<Tensor&, Tensor&, Tensor&> lu_unpack_out(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                                    bool unpack_pivots, Tensor& P, Tensor& L, Tensor& U) {
  auto r = ocl_lu_unpack(LU, pivots, unpack_data, unpack_pivots);
  deliver_all<3>(std::array<Tensor, 3>{std::get<0>(r), std::get<1>(r), std::get<2>(r)}, {P, L, U});
  return {P, L, U};
}

Tensor ocl_trace(const Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return self.diagonal().sum();
}
Tensor& trace_out(const Tensor& self, Tensor& out) { return nn_util::deliver(ocl_trace(self), out); }

// angle of a real tensor: pi for negative values, 0 otherwise, NaN kept.
Tensor ocl_angle(const Tensor& self) {
  TORCH_CHECK(!self.is_complex(), "angle: complex tensors are not supported on the ocl device");
  Tensor x = at::isFloatingType(self.scalar_type()) ? self : self.to(c10::get_default_dtype_as_scalartype());
  return at::where(x.isnan(), x, (x < 0).to(x.scalar_type()) * M_PI);
}
Tensor& angle_out(const Tensor& self, Tensor& out) {
  Tensor r = ocl_angle(self);
  TORCH_CHECK(at::canCast(r.scalar_type(), out.scalar_type()), "result type ", r.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  return nn_util::deliver(r, out);
}

}  // namespace
}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(cholesky_stub, &torch_ocl::ocl_cholesky)
REGISTER_PRIVATEUSE1_DISPATCH(cholesky_inverse_stub, &torch_ocl::ocl_cholesky_inverse)
REGISTER_PRIVATEUSE1_DISPATCH(lu_factor_stub, &torch_ocl::ocl_lu_factor)
REGISTER_PRIVATEUSE1_DISPATCH(lu_solve_stub, &torch_ocl::ocl_lu_solve)
REGISTER_PRIVATEUSE1_DISPATCH(ldl_factor_stub, &torch_ocl::ocl_ldl_factor)
REGISTER_PRIVATEUSE1_DISPATCH(ldl_solve_stub, &torch_ocl::ocl_ldl_solve)
REGISTER_PRIVATEUSE1_DISPATCH(triangular_solve_stub, &torch_ocl::ocl_triangular_solve)
REGISTER_PRIVATEUSE1_DISPATCH(geqrf_stub, &torch_ocl::ocl_geqrf)
REGISTER_PRIVATEUSE1_DISPATCH(orgqr_stub, &torch_ocl::ocl_orgqr)
REGISTER_PRIVATEUSE1_DISPATCH(ormqr_stub, &torch_ocl::ocl_ormqr)
REGISTER_PRIVATEUSE1_DISPATCH(linalg_eigh_stub, &torch_ocl::ocl_eigh)
REGISTER_PRIVATEUSE1_DISPATCH(svd_stub, &torch_ocl::ocl_svd)
REGISTER_PRIVATEUSE1_DISPATCH(lstsq_stub, &torch_ocl::ocl_lstsq)
REGISTER_PRIVATEUSE1_DISPATCH(cross_stub, &torch_ocl::ocl_cross)
}  // namespace at::native

namespace torch_ocl {
namespace {

// impl_complex: the kernels compute in complex themselves (the stubs take
// complex64 / complex128; the structured front ends refuse other dtypes
// with the CPU's messages).
TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl_complex("linalg_cholesky_ex", cholesky_ex);
  m.impl_complex("linalg_cholesky_ex.L", cholesky_ex_out);
  m.impl_complex("cholesky_inverse", at::native::cholesky_inverse);
  m.impl_complex("cholesky_inverse.out", at::native::cholesky_inverse_out);
  m.impl_complex("_cholesky_solve_helper", ocl_cholesky_solve_helper);
  m.impl_complex("_cholesky_solve_helper.out", cholesky_solve_helper_out);
  m.impl_complex("linalg_lu_factor_ex", lu_factor_ex);
  m.impl_complex("linalg_lu_factor_ex.out", lu_factor_ex_out);
  m.impl_complex("linalg_ldl_factor_ex", ldl_factor_ex);
  m.impl_complex("linalg_ldl_factor_ex.out", ldl_factor_ex_out);
  m.impl_complex("linalg_ldl_solve", ldl_solve);
  m.impl_complex("linalg_ldl_solve.out", ldl_solve_out);
  m.impl_complex("linalg_lu", linalg_lu);
  m.impl_complex("linalg_lu.out", linalg_lu_out);
  m.impl_complex("lu_unpack", ocl_lu_unpack);
  m.impl_complex("lu_unpack.out", lu_unpack_out);
  m.impl_complex("linalg_lu_solve", lu_solve);
  m.impl_complex("linalg_lu_solve.out", lu_solve_out);
  m.impl_complex("_linalg_det", linalg_det);
  m.impl_complex("_linalg_det.result", linalg_det_out);
  m.impl_complex("_linalg_slogdet", slogdet);
  m.impl_complex("_linalg_slogdet.sign", slogdet_out);
  m.impl_complex("_linalg_solve_ex", solve_ex);
  m.impl_complex("_linalg_solve_ex.result", solve_ex_out);
  m.impl_complex("linalg_solve_triangular", at::native::linalg_solve_triangular);
  m.impl_complex("linalg_solve_triangular.out", at::native::linalg_solve_triangular_out);
  m.impl_complex("triangular_solve", tri_solve);
  m.impl_complex("triangular_solve.X", tri_solve_out);
  m.impl_complex("linalg_inv_ex", inv_ex);
  m.impl_complex("linalg_inv_ex.inverse", inv_ex_out);
  m.impl_complex("geqrf", at::native::geqrf);
  m.impl_complex("geqrf.a", at::native::geqrf_out);
  m.impl_complex("linalg_householder_product", at::native::linalg_householder_product);
  m.impl_complex("linalg_householder_product.out", at::native::linalg_householder_product_out);
  m.impl_complex("ormqr", at::native::ormqr);
  m.impl_complex("ormqr.out", at::native::ormqr_out);
  m.impl_complex("linalg_qr", qr);
  m.impl_complex("linalg_qr.out", qr_out);
  m.impl_complex("_linalg_eigh", eigh);
  m.impl_complex("_linalg_eigh.eigenvalues", eigh_out);
  m.impl_complex("_linalg_svd", svd);
  m.impl_complex("_linalg_svd.U", svd_out);
  m.impl_complex("linalg_lstsq.out", at::native::linalg_lstsq_out);
  m.impl_complex("linalg_polar", polar);
  m.impl_complex("linalg_polar.out", polar_out);
  // eigh, eigenvalues clamped at 0, V diag(sqrt(L)) V^H made Hermitian: a
  // device-generic composition in PyTorch, registered as it is.
  m.impl_complex("linalg_matrix_sqrth", at::native::linalg_matrix_sqrth);
  m.impl_complex("linalg_matrix_sqrth.out", at::native::linalg_matrix_sqrth_out);
  m.impl("linalg_cross", cross);
  m.impl("linalg_cross.out", cross_out);
  m.impl_complex("linalg_matrix_exp", ocl_matrix_exp);
  m.impl_complex("linalg_matrix_exp.out", matrix_exp_out);
  m.impl("trace", ocl_trace);
  m.impl("trace.out", trace_out);
  m.impl("angle", ocl_angle);
  m.impl("angle.out", angle_out);
}

}  // namespace
}  // namespace torch_ocl
