// ocl_complex_pairs.cpp - complex reductions, scans and matrix products
// through the real kernels, on view_as_real's (..., 2) layout.
//
// A complex tensor viewed as real has its parts in a trailing dim of size
// 2. Linear reductions and scans (sum, mean, cumsum, trace) reduce that
// view over the same dims (never the trailing one); var/std are the sums of
// the parts' var/std; norms take |z| (native) and then the real kernel;
// predicates (all/any/count_nonzero/nonzero) take z != 0 as
// re != 0 || im != 0. Matrix products run one real GEMM: A (m, k) complex
// is the real (m, 2k) matrix of its interleaved parts, and
//   B' (2k, 2n) = [[br, bi], [-bi, br]] per element (rows 2p, 2p+1;
//                 columns 2q, 2q+1)
// makes A' B' the real (m, 2n) matrix of C = AB's interleaved parts: the
// four real products in one call, accumulated in the GEMM's own order.
// Conj/neg bits are resolved first (PyTorch lets them through to mm, dot,
// addmm and the like). complex64 and complex128 both run; anything else
// (mixed real/complex operands, a real dtype= on a complex input) takes the
// CPU fallback, counted.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/ScatterGatherChecks.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

at::Tensor resolved(const at::Tensor& t) { return t.resolve_conj().resolve_neg(); }
at::Tensor as_pairs(const at::Tensor& t) { return at::view_as_real(resolved(t)); }
at::Tensor from_pairs(const at::Tensor& r) { return at::view_as_complex(r.contiguous()); }

// A call these kernels do not take: the CPU fallback, boxed, counted. The
// stack holds the returns afterwards (out= and in-place results are
// written into their argument).
template <class... A>
torch::jit::Stack on_cpu(const char* name, const A&... a) {
  complex_route::OpRef op(name);  // a rare path: looked up per call
  torch::jit::Stack s;
  torch::jit::push(s, a...);
  ocl_cpu_fallback(op.get(), &s);
  return s;
}

// The reduced dims of `self` (all of them for none or an empty list), each
// wrapped to [0, ndim).
std::vector<int64_t> reduced_dims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  int64_t nd = self.dim();
  std::vector<int64_t> out;
  if (!dim.has_value() || dim->empty()) {
    for (int64_t d = 0; d < nd; d++)
      out.push_back(d);
  } else {
    for (int64_t d : *dim)
      out.push_back(at::maybe_wrap_dim(d, std::max<int64_t>(nd, 1)));
  }
  return out;
}

void into(at::Tensor& out, const at::Tensor& r) {
  if (out.sizes() != r.sizes())
    out.resize_(r.sizes());
  out.copy_(r);
}

bool same_complex(const at::Tensor& a, const at::Tensor& b) {
  return a.is_complex() && a.scalar_type() == b.scalar_type();
}

// ---- sums, means, scans -------------------------------------------------

// Sum (or mean) of a complex tensor over dims, or the CPU's answer where the
// dtype asks for something else than a complex result.
at::Tensor linear_reduce(const at::Tensor& self_in, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, bool mean) {
  at::Tensor self = dtype.has_value() && *dtype != self_in.scalar_type() ? self_in.to(*dtype) : self_in;
  std::vector<int64_t> dims = reduced_dims(self, dim);
  if (self.dim() == 0) {
    TORCH_CHECK(dims.size() <= 1, "dimension out of range");
    return resolved(self).clone();
  }
  at::Tensor r = as_pairs(self);
  at::Tensor s = mean ? r.mean(dims, keepdim) : r.sum(dims, keepdim);
  return from_pairs(s);
}

bool complex_dtype_ok(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return self.is_complex() && (!dtype.has_value() || c10::isComplexType(*dtype));
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("sum.dim_IntList", self, dim, keepdim, dtype)[0].toTensor();
  return linear_reduce(self, dim, keepdim, dtype, false);
}
at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || !out.is_complex())
    {
    on_cpu("sum.IntList_out", self, dim, keepdim, dtype, out);
    return out;
  }
  into(out, linear_reduce(self, dim, keepdim, dtype.has_value() ? dtype : out.scalar_type(), false));
  return out;
}
at::Tensor sum_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("sum", self, dtype)[0].toTensor();
  return linear_reduce(self, std::nullopt, false, dtype, false);
}
at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("mean.dim", self, dim, keepdim, dtype)[0].toTensor();
  return linear_reduce(self, dim, keepdim, dtype, true);
}
at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || !out.is_complex())
    {
    on_cpu("mean.out", self, dim, keepdim, dtype, out);
    return out;
  }
  into(out, linear_reduce(self, dim, keepdim, dtype.has_value() ? dtype : out.scalar_type(), true));
  return out;
}
at::Tensor mean_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("mean", self, dtype)[0].toTensor();
  return linear_reduce(self, std::nullopt, false, dtype, true);
}
at::Tensor cx_trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return linear_reduce(self.diagonal(), std::nullopt, false, std::nullopt, false);
}

at::Tensor cumsum_impl(const at::Tensor& self_in, int64_t dim, std::optional<at::ScalarType> dtype) {
  at::Tensor self = dtype.has_value() && *dtype != self_in.scalar_type() ? self_in.to(*dtype) : self_in;
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  if (self.dim() == 0)
    return resolved(self).clone();
  return from_pairs(as_pairs(self).cumsum(d));
}
at::Tensor cx_cumsum(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("cumsum", self, dim, dtype)[0].toTensor();
  return cumsum_impl(self, dim, dtype);
}
at::Tensor& cx_cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || !out.is_complex())
    {
    on_cpu("cumsum.out", self, dim, dtype, out);
    return out;
  }
  into(out, cumsum_impl(self, dim, dtype.has_value() ? dtype : out.scalar_type()));
  return out;
}
at::Tensor& cx_cumsum_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    {
    on_cpu("cumsum_", self, dim, dtype);
    return self;
  }
  self.copy_(cumsum_impl(self, dim, dtype));
  return self;
}

// ---- var / std: the sum of the parts' variances --------------------------

at::Tensor var_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                    bool keepdim) {
  std::vector<int64_t> dims = reduced_dims(self, dim);
  at::Tensor r = as_pairs(self);
  if (self.dim() == 0)
    return at::var(r.unsqueeze(0), at::IntArrayRef{0}, correction, false).sum(-1);
  return at::var(r, dims, correction, keepdim).sum(-1);
}
bool var_ok(const at::Tensor& self) { return self.is_complex(); }
at::Tensor cx_var(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
               bool keepdim) {
  if (!var_ok(self))
    return on_cpu("var.correction", self, dim, correction, keepdim)[0].toTensor();
  return var_impl(self, dim, correction, keepdim);
}
at::Tensor std_(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                bool keepdim) {
  if (!var_ok(self))
    return on_cpu("std.correction", self, dim, correction, keepdim)[0].toTensor();
  return var_impl(self, dim, correction, keepdim).sqrt();
}
at::Tensor& cx_var_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                    bool keepdim, at::Tensor& out) {
  if (!var_ok(self) || out.scalar_type() != c10::toRealValueType(self.scalar_type()))
    {
    on_cpu("var.correction_out", self, dim, correction, keepdim, out);
    return out;
  }
  into(out, var_impl(self, dim, correction, keepdim));
  return out;
}
at::Tensor& cx_std_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                    bool keepdim, at::Tensor& out) {
  if (!var_ok(self) || out.scalar_type() != c10::toRealValueType(self.scalar_type()))
    {
    on_cpu("std.correction_out", self, dim, correction, keepdim, out);
    return out;
  }
  into(out, var_impl(self, dim, correction, keepdim).sqrt());
  return out;
}
std::tuple<at::Tensor, at::Tensor> cx_var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction, bool keepdim) {
  if (!var_ok(self))
    {
    auto s = on_cpu("var_mean.correction", self, dim, correction, keepdim);
    return {s[0].toTensor(), s[1].toTensor()};
  }
  return {var_impl(self, dim, correction, keepdim), linear_reduce(self, dim, keepdim, std::nullopt, true)};
}
std::tuple<at::Tensor, at::Tensor> cx_std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction, bool keepdim) {
  if (!var_ok(self))
    {
    auto s = on_cpu("std_mean.correction", self, dim, correction, keepdim);
    return {s[0].toTensor(), s[1].toTensor()};
  }
  return {var_impl(self, dim, correction, keepdim).sqrt(), linear_reduce(self, dim, keepdim, std::nullopt, true)};
}

// ---- norms: of |z| ------------------------------------------------------

at::Tensor vector_norm(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("linalg_vector_norm", self, ord, dim, keepdim, dtype)[0].toTensor();
  at::Tensor a = (dtype.has_value() ? self.to(*dtype) : self).abs();
  return at::linalg_vector_norm(a, ord, dim, keepdim, std::nullopt);
}
at::Tensor& vector_norm_out(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                            bool keepdim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || out.is_complex())
    {
    on_cpu("linalg_vector_norm.out", self, ord, dim, keepdim, dtype, out);
    return out;
  }
  into(out, vector_norm(self, ord, dim, keepdim, dtype));
  return out;
}
at::Tensor norm_opt_dim(const at::Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim,
                        bool keepdim) {
  if (!self.is_complex())
    return on_cpu("norm.ScalarOpt_dim", self, p, dim, keepdim)[0].toTensor();
  return at::norm(self.abs(), p, dim, keepdim);
}
at::Tensor norm_opt_dim_dtype(const at::Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim,
                              bool keepdim, at::ScalarType dtype) {
  if (!self.is_complex() || !c10::isComplexType(dtype))
    return on_cpu("norm.ScalarOpt_dim_dtype", self, p, dim, keepdim, dtype)[0].toTensor();
  return at::norm(self.to(dtype).abs(), p, dim, keepdim);
}

// ---- predicates: z != 0 -------------------------------------------------

at::Tensor nonzero_mask(const at::Tensor& self) { return as_pairs(self).ne(0).any(-1); }

at::Tensor all_(const at::Tensor& self) { return at::all(nonzero_mask(self)); }
at::Tensor any_(const at::Tensor& self) { return at::any(nonzero_mask(self)); }
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim) { return at::all(nonzero_mask(self), dim, keepdim); }
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim) { return at::any(nonzero_mask(self), dim, keepdim); }
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return at::all(nonzero_mask(self), dim, keepdim);
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return at::any(nonzero_mask(self), dim, keepdim);
}
at::Tensor cx_count_nonzero(const at::Tensor& self, at::IntArrayRef dim) { return at::count_nonzero(nonzero_mask(self), dim); }
at::Tensor cx_nonzero(const at::Tensor& self) { return at::nonzero(nonzero_mask(self)); }
at::Tensor& cx_nonzero_out(const at::Tensor& self, at::Tensor& out) { return at::nonzero_out(out, nonzero_mask(self)); }
at::Tensor cx_nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value) {
  return at::nonzero_static_symint(nonzero_mask(self), size, fill_value);
}
bool cx_equal(const at::Tensor& self, const at::Tensor& other) {
  if (!same_complex(self, other))
    return on_cpu("equal", self, other)[0].toBool();
  if (self.sizes() != other.sizes())
    return false;
  return at::equal(as_pairs(self), as_pairs(other));
}

// ---- matrix products: one real GEMM --------------------------------------

// A (..., m, k) complex as the real (..., m, 2k) matrix of its parts.
at::Tensor lhs_real(const at::Tensor& a) {
  at::Tensor r = as_pairs(a).contiguous();
  std::vector<int64_t> s(a.sizes().begin(), a.sizes().end());
  s.back() *= 2;
  return r.view(s);
}
// B (..., k, n) complex as the real (..., 2k, 2n) [[br, bi], [-bi, br]].
at::Tensor rhs_real(const at::Tensor& b) {
  at::Tensor r = as_pairs(b);
  at::Tensor br = r.select(-1, 0), bi = r.select(-1, 1);
  at::Tensor top = at::stack({br, bi}, -1), bottom = at::stack({bi.neg(), br}, -1);  // (..., k, n, 2)
  at::Tensor blk = at::stack({top, bottom}, -3);                                   // (..., k, 2, n, 2)
  std::vector<int64_t> s(b.sizes().begin(), b.sizes().end());
  s[s.size() - 2] *= 2;
  s.back() *= 2;
  return blk.reshape(s);
}
// The real (..., m, 2n) product back as (..., m, n) complex.
at::Tensor product_back(const at::Tensor& c) {
  std::vector<int64_t> s(c.sizes().begin(), c.sizes().end());
  s.back() /= 2;
  s.push_back(2);
  return at::view_as_complex(c.contiguous().view(s));
}

bool gemm_ok(const at::Tensor& a, const at::Tensor& b) {
  return a.is_complex() && a.scalar_type() == b.scalar_type();
}

at::Tensor mm_impl(const at::Tensor& a, const at::Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || a.size(1) == 0)
    return at::mm(as_pairs(a).select(-1, 0), as_pairs(b).select(-1, 0)).to(a.scalar_type());
  return product_back(at::mm(lhs_real(a), rhs_real(b)));
}
at::Tensor cx_mm(const at::Tensor& a, const at::Tensor& b) {
  if (!gemm_ok(a, b) || a.dim() != 2 || b.dim() != 2)
    return on_cpu("mm", a, b)[0].toTensor();
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
              " and ", b.size(0), "x", b.size(1), ")");
  return mm_impl(a, b);
}
at::Tensor& cx_mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  if (!gemm_ok(a, b) || a.dim() != 2 || b.dim() != 2 || out.scalar_type() != a.scalar_type())
    {
    on_cpu("mm.out", a, b, out);
    return out;
  }
  into(out, cx_mm(a, b));
  return out;
}
at::Tensor bmm_impl(const at::Tensor& a, const at::Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || a.size(2) == 0)
    return at::bmm(as_pairs(a).select(-1, 0), as_pairs(b).select(-1, 0)).to(a.scalar_type());
  return product_back(at::bmm(lhs_real(a), rhs_real(b)));
}
at::Tensor cx_bmm(const at::Tensor& a, const at::Tensor& b) {
  if (!gemm_ok(a, b) || a.dim() != 3 || b.dim() != 3)
    return on_cpu("bmm", a, b)[0].toTensor();
  TORCH_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), "Expected size for first two dimensions of batch2 ",
              "tensor to be: [", a.size(0), ", ", a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
  return bmm_impl(a, b);
}
at::Tensor& cx_bmm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  if (!gemm_ok(a, b) || a.dim() != 3 || b.dim() != 3 || out.scalar_type() != a.scalar_type())
    {
    on_cpu("bmm.out", a, b, out);
    return out;
  }
  into(out, cx_bmm(a, b));
  return out;
}
at::Tensor cx_dot(const at::Tensor& a, const at::Tensor& b) {
  if (!gemm_ok(a, b) || a.dim() != 1 || b.dim() != 1 || a.size(0) != b.size(0))
    return on_cpu("dot", a, b)[0].toTensor();
  return mm_impl(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
}
at::Tensor cx_vdot(const at::Tensor& a, const at::Tensor& b) {
  if (!gemm_ok(a, b) || a.dim() != 1 || b.dim() != 1 || a.size(0) != b.size(0))
    return on_cpu("vdot", a, b)[0].toTensor();
  return mm_impl(a.conj().unsqueeze(0), b.unsqueeze(1)).reshape({});
}
at::Tensor cx_mv(const at::Tensor& a, const at::Tensor& v) {
  if (!gemm_ok(a, v) || a.dim() != 2 || v.dim() != 1 || a.size(1) != v.size(0))
    return on_cpu("mv", a, v)[0].toTensor();
  return mm_impl(a, v.unsqueeze(1)).squeeze(1);
}

// beta * self + alpha * product, with the CPU's rule that beta == 0 ignores
// self (NaN and inf included).
at::Tensor scaled_sum(const at::Tensor& self, const at::Tensor& prod, const c10::Scalar& beta,
                      const c10::Scalar& alpha) {
  at::Tensor p = alpha.equal(1) ? prod : prod.mul(alpha);
  if (beta.toComplexDouble() == c10::complex<double>(0, 0))
    return p;
  at::Tensor s = beta.equal(1) ? resolved(self) : resolved(self).mul(beta);
  return at::add(s, p);
}
template <int KIND>  // 0 addmm, 1 baddbmm, 2 addbmm, 3 addmv
at::Tensor addprod(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& beta,
                   const c10::Scalar& alpha) {
  static const char* names[] = {"addmm", "baddbmm", "addbmm", "addmv"};
  int need_a = KIND == 0 || KIND == 3 ? 2 : 3, need_b = KIND == 3 ? 1 : KIND == 0 ? 2 : 3;
  if (!gemm_ok(a, b) || !same_complex(self, a) || a.dim() != need_a || b.dim() != need_b)
    return on_cpu(names[KIND], self, a, b, beta, alpha)[0].toTensor();
  at::Tensor p = KIND == 0 ? cx_mm(a, b) : KIND == 1 ? cx_bmm(a, b) : KIND == 2 ? cx_bmm(a, b).sum(0) : cx_mv(a, b);
  TORCH_CHECK(at::infer_size(self.sizes(), p.sizes()) == p.sizes(), "The input tensor of shape ", self.sizes(),
              " cannot be broadcast to the product's shape ", p.sizes());
  return scaled_sum(self, p, beta, alpha);
}
template <int KIND>
at::Tensor& addprod_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& beta,
                        const c10::Scalar& alpha, at::Tensor& out) {
  static const char* names[] = {"addmm.out", "baddbmm.out", "addbmm.out", "addmv.out"};
  if (!gemm_ok(a, b) || !same_complex(self, a) || out.scalar_type() != a.scalar_type())
    {
    on_cpu(names[KIND], self, a, b, beta, alpha, out);
    return out;
  }
  into(out, addprod<KIND>(self, a, b, beta, alpha));
  return out;
}
template <int KIND>
at::Tensor& addprod_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& beta,
                     const c10::Scalar& alpha) {
  static const char* names[] = {"addmm_", "baddbmm_", "addbmm_", "addmv_"};
  if (!gemm_ok(a, b) || !same_complex(self, a))
    {
    on_cpu(names[KIND], self, a, b, beta, alpha);
    return self;
  }
  at::Tensor r = addprod<KIND>(self, a, b, beta, alpha);
  TORCH_CHECK(r.sizes() == self.sizes(), "the in-place result's shape ", r.sizes(), " differs from self's ",
              self.sizes());
  self.copy_(r);
  return self;
}

// ---- products and scans of complex multiplies ----------------------------

// prod over one dim (moved last): halves multiplied pairwise, an odd length
// padded with ones, log2(n) native complex multiplies.
at::Tensor prod_last(at::Tensor x) {
  while (x.size(-1) > 1) {
    int64_t n = x.size(-1);
    if (n % 2) {
      std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
      s.back() = 1;
      x = at::cat({x, at::ones(s, x.options())}, -1);
      n++;
    }
    x = x.narrow(-1, 0, n / 2) * x.narrow(-1, n / 2, n / 2);
  }
  if (x.size(-1) == 0) {
    std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
    s.back() = 1;
    x = at::ones(s, x.options());
  }
  return x.select(-1, 0);
}
at::Tensor cx_prod_dim(const at::Tensor& self_in, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self_in, dtype))
    return on_cpu("prod.dim_int", self_in, dim, keepdim, dtype)[0].toTensor();
  at::Tensor self = resolved(dtype.has_value() ? self_in.to(*dtype) : self_in);
  if (self.dim() == 0) {
    at::maybe_wrap_dim(dim, 1);
    return self.clone();
  }
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::Tensor r = prod_last(self.movedim(d, -1));
  return keepdim ? r.unsqueeze(d) : r;
}
at::Tensor& cx_prod_int_out(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                            at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || !out.is_complex()) {
    on_cpu("prod.int_out", self, dim, keepdim, dtype, out);
    return out;
  }
  into(out, cx_prod_dim(self, dim, keepdim, dtype.has_value() ? dtype : out.scalar_type()));
  return out;
}
at::Tensor cx_prod(const at::Tensor& self_in, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self_in, dtype))
    return on_cpu("prod", self_in, dtype)[0].toTensor();
  at::Tensor self = resolved(dtype.has_value() ? self_in.to(*dtype) : self_in);
  return prod_last(self.reshape({-1}));
}
at::Tensor& cx_prod_out(const at::Tensor& self, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || !out.is_complex()) {
    on_cpu("prod.out", self, dtype, out);
    return out;
  }
  into(out, cx_prod(self, dtype.has_value() ? dtype : out.scalar_type()));
  return out;
}

// cumprod: Hillis-Steele, log2(n) native complex multiplies of shifted
// prefixes.
at::Tensor cumprod_impl(const at::Tensor& self_in, int64_t dim, std::optional<at::ScalarType> dtype) {
  at::Tensor self = resolved(dtype.has_value() && *dtype != self_in.scalar_type() ? self_in.to(*dtype) : self_in);
  if (self.dim() == 0) {
    at::maybe_wrap_dim(dim, 1);
    return self.clone();
  }
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::Tensor y = self.clone(at::MemoryFormat::Contiguous);
  int64_t n = y.size(d);
  for (int64_t s = 1; s < n; s *= 2) {
    at::Tensor next = y.clone();
    next.narrow(d, s, n - s).copy_(y.narrow(d, s, n - s) * y.narrow(d, 0, n - s));
    y = next;
  }
  return y;
}
at::Tensor cx_cumprod(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype))
    return on_cpu("cumprod", self, dim, dtype)[0].toTensor();
  return cumprod_impl(self, dim, dtype);
}
at::Tensor& cx_cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!complex_dtype_ok(self, dtype) || !out.is_complex()) {
    on_cpu("cumprod.out", self, dim, dtype, out);
    return out;
  }
  into(out, cumprod_impl(self, dim, dtype.has_value() ? dtype : out.scalar_type()));
  return out;
}
at::Tensor& cx_cumprod_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  if (!complex_dtype_ok(self, dtype)) {
    on_cpu("cumprod_", self, dim, dtype);
    return self;
  }
  self.copy_(cumprod_impl(self, dim, dtype));
  return self;
}

// linalg_cross: a_{i+1} b_{i+2} - a_{i+2} b_{i+1} along dim, by rolls.
at::Tensor cx_cross(const at::Tensor& a_in, const at::Tensor& b_in, int64_t dim) {
  if (!same_complex(a_in, b_in))
    return on_cpu("linalg_cross", a_in, b_in, dim)[0].toTensor();
  TORCH_CHECK(a_in.dim() == b_in.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  auto ab = at::broadcast_tensors({a_in, b_in});
  at::Tensor a = resolved(ab[0]), b = resolved(ab[1]);
  int64_t d = at::maybe_wrap_dim(dim, a.dim());
  TORCH_CHECK(a.size(d) == 3, "linalg.cross: inputs dimension ", dim, " must have length 3. Got ", a_in.size(d),
              " and ", b_in.size(d));
  return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d);
}
at::Tensor& cx_cross_out(const at::Tensor& a, const at::Tensor& b, int64_t dim, at::Tensor& out) {
  if (!same_complex(a, b) || out.scalar_type() != a.scalar_type()) {
    on_cpu("linalg_cross.out", a, b, dim, out);
    return out;
  }
  into(out, cx_cross(a, b, dim));
  return out;
}

// ---- accumulating scatters on the real view (complex64 and complex128) ---

bool plain_target(const at::Tensor& self) { return self.is_complex() && !self.is_conj() && !self.is_neg(); }

at::Tensor& cx_index_put_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                          const at::Tensor& values, bool accumulate) {
  if (!plain_target(self) || values.scalar_type() != self.scalar_type()) {
    on_cpu("index_put_", self, indices, values, accumulate);
    return self;
  }
  at::Tensor r = at::view_as_real(self);
  at::index_put_(r, indices, at::view_as_real(resolved(values)), accumulate);
  return self;
}
at::Tensor& cx_index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                               const at::Tensor& values, bool accumulate, bool unsafe) {
  if (!plain_target(self) || values.scalar_type() != self.scalar_type()) {
    on_cpu("_index_put_impl_", self, indices, values, accumulate, unsafe);
    return self;
  }
  at::Tensor r = at::view_as_real(self);
  at::_index_put_impl_(r, indices, at::view_as_real(resolved(values)), accumulate, unsafe);
  return self;
}
at::Tensor cx_index_put(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                        const at::Tensor& values, bool accumulate) {
  at::Tensor out = resolved(self).clone();
  return cx_index_put_(out, indices, values, accumulate);
}

at::Tensor& index_add_impl(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                           const c10::Scalar& alpha) {
  at::Tensor src = resolved(source);
  if (!alpha.equal(1))
    src = src * alpha;
  at::Tensor t = self;
  if (self.dim() == 0) {
    at::maybe_wrap_dim(dim, 1);
    t = self.unsqueeze(0);
    src = src.reshape({-1});
    dim = 0;
  }
  int64_t d = at::maybe_wrap_dim(dim, t.dim());
  at::Tensor r = at::view_as_real(t);
  r.index_add_(d, index, at::view_as_real(src.dim() == 0 ? src.reshape({1}) : src));
  return self;
}
at::Tensor& cx_index_add_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          const c10::Scalar& alpha) {
  if (!plain_target(self) || source.scalar_type() != self.scalar_type()) {
    on_cpu("index_add_", self, dim, index, source, alpha);
    return self;
  }
  return index_add_impl(self, dim, index, source, alpha);
}
at::Tensor cx_index_add(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                        const c10::Scalar& alpha) {
  if (!self.is_complex() || source.scalar_type() != self.scalar_type())
    return on_cpu("index_add", self, dim, index, source, alpha)[0].toTensor();
  at::Tensor out = resolved(self).clone();
  return index_add_impl(out, dim, index, source, alpha);
}
at::Tensor& cx_index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                             const c10::Scalar& alpha, at::Tensor& out) {
  if (!self.is_complex() || out.scalar_type() != self.scalar_type() ||
      source.scalar_type() != self.scalar_type()) {
    on_cpu("index_add.out", self, dim, index, source, alpha, out);
    return out;
  }
  into(out, cx_index_add(self, dim, index, source, alpha));
  return out;
}

at::Tensor& scatter_add_impl(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src_in) {
  at::Tensor src = resolved(src_in);
  at::Tensor t = self, idx = index;
  if (self.dim() == 0) {
    at::maybe_wrap_dim(dim, 1);
    t = self.unsqueeze(0);
    idx = index.reshape({-1});
    src = src.reshape({-1});
    dim = 0;
  }
  int64_t d = at::maybe_wrap_dim(dim, t.dim());
  std::vector<int64_t> s(idx.sizes().begin(), idx.sizes().end());
  s.push_back(2);
  at::Tensor r = at::view_as_real(t);
  r.scatter_add_(d, idx.unsqueeze(-1).expand(s), at::view_as_real(src));
  return self;
}
at::Tensor& cx_scatter_add_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  if (!plain_target(self) || src.scalar_type() != self.scalar_type()) {
    on_cpu("scatter_add_", self, dim, index, src);
    return self;
  }
  return scatter_add_impl(self, dim, index, src);
}
at::Tensor cx_scatter_add(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  if (!self.is_complex() || src.scalar_type() != self.scalar_type())
    return on_cpu("scatter_add", self, dim, index, src)[0].toTensor();
  at::Tensor out = resolved(self).clone();
  return scatter_add_impl(out, dim, index, src);
}
at::Tensor& cx_scatter_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               at::Tensor& out) {
  if (!self.is_complex() || src.scalar_type() != self.scalar_type() || out.scalar_type() != self.scalar_type()) {
    on_cpu("scatter_add.out", self, dim, index, src, out);
    return out;
  }
  into(out, cx_scatter_add(self, dim, index, src));
  return out;
}

// ---- scatter with reduce= (complex64 and complex128) ----------------------
// add/sum/mean add on the real view (scatter_add_impl). multiply/prod must
// multiply each target by its sources in index order along dim, as the
// CPU's loop does (complex products do not commute bitwise): sources are
// ranked by occurrence among those with the same target (a stable sort of
// the index along dim), and round r multiplies every target by its r-th
// source. A round's targets are distinct, so it is a gather, a product and
// a scatter; sources of other rounds are sent to a spare slot past the end
// of dim. Rounds: the largest number of sources of one target.

at::Tensor occurrence_rank(const at::Tensor& idx, int64_t d) {
  auto sorted = at::sort(idx, /*stable=*/true, d, /*descending=*/false);
  const at::Tensor& sv = std::get<0>(sorted);
  const at::Tensor& perm = std::get<1>(sorted);
  int64_t n = idx.size(d);
  std::vector<int64_t> shape(idx.dim(), 1);
  shape[d] = n;
  at::Tensor pos = at::arange(n, idx.options().dtype(at::kLong)).view(shape).expand(idx.sizes());
  at::Tensor start = at::ones(idx.sizes(), idx.options().dtype(at::kBool));
  if (n > 1)
    start.narrow(d, 1, n - 1).copy_(sv.narrow(d, 1, n - 1) != sv.narrow(d, 0, n - 1));
  at::Tensor first = std::get<0>(at::cummax(at::where(start, pos, at::zeros_like(pos)), d));
  return at::empty_like(pos).scatter_(d, perm, pos - first);
}

void scatter_mul_impl(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src_in) {
  at::Tensor src = resolved(src_in);
  at::Tensor t = self, idx = index;
  if (self.dim() == 0) {
    at::maybe_wrap_dim(dim, 1);
    t = self.unsqueeze(0);
    idx = index.reshape({-1});
    src = src.reshape({-1});
    dim = 0;
  }
  if (idx.numel() == 0)
    return;
  int64_t d = at::maybe_wrap_dim(dim, t.dim());
  src = src.narrow(d, 0, idx.size(d));  // src may be larger than index: the leading part is used
  for (int64_t k = 0; k < idx.dim(); k++)
    if (k != d)
      src = src.narrow(k, 0, idx.size(k));
  idx = idx.to(at::kLong);
  int64_t n = t.size(d);
  idx = at::where(idx < 0, idx + n, idx);
  at::Tensor rank = occurrence_rank(idx, d);
  int64_t rounds = rank.max().item<int64_t>() + 1;
  std::vector<int64_t> pad(t.sizes().begin(), t.sizes().end());
  pad[d] = 1;
  at::Tensor work = at::cat({t, at::zeros(pad, t.options())}, d);
  at::Tensor spare = at::full_like(idx, n);
  for (int64_t r = 0; r < rounds; r++) {
    at::Tensor ir = at::where(rank == r, idx, spare);
    work.scatter_(d, ir, work.gather(d, ir) * src);
  }
  t.copy_(work.narrow(d, 0, n));
}

void reduce_name_check(c10::string_view reduce) {
  TORCH_CHECK(reduce == "add" || reduce == "multiply", "reduce argument must be either add or multiply.");
}

// scatter(reduce=): src a tensor, or value broadcast to index's shape.
at::Tensor& scatter_reduce_impl(at::Tensor& out, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                c10::string_view reduce) {
  if (reduce == "add")
    return scatter_add_impl(out, dim, index, src);
  scatter_mul_impl(out, dim, index, src);
  return out;
}

bool cx_scatter_ok(const at::Tensor& self, const at::Tensor* src, const at::Tensor& out) {
  return self.is_complex() && out.scalar_type() == self.scalar_type() && !out.is_conj() && !out.is_neg() &&
         (!src || src->scalar_type() == self.scalar_type());
}

// The CPU's checks and messages (dtype, shape, reduce name), then out = self.
void scatter_reduce_prepare(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                            at::Tensor& out) {
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::native::scatter_gather_dtype_check("scatter", self, index,
                                         src ? std::optional<at::Tensor>(*src) : std::nullopt);
  at::native::scatter_shape_check(self, d, index, src ? std::optional<at::Tensor>(*src) : std::nullopt);
  if (!out.is_same(self)) {
    into(out, resolved(self));
  }
}

at::Tensor& cx_scatter_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                  c10::string_view reduce, at::Tensor& out) {
  if (!cx_scatter_ok(self, &src, out)) {
    on_cpu("scatter.reduce_out", self, dim, index, src, reduce, out);
    return out;
  }
  reduce_name_check(reduce);
  scatter_reduce_prepare(self, dim, index, &src, out);
  return scatter_reduce_impl(out, dim, index, src, reduce);
}
at::Tensor cx_scatter_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                             c10::string_view reduce) {
  if (!self.is_complex() || src.scalar_type() != self.scalar_type())
    return on_cpu("scatter.reduce", self, dim, index, src, reduce)[0].toTensor();
  at::Tensor out = at::empty({0}, self.options());
  return cx_scatter_reduce_out(self, dim, index, src, reduce, out);
}
at::Tensor& cx_scatter_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce) {
  if (!cx_scatter_ok(self, &src, self)) {
    on_cpu("scatter_.reduce", self, dim, index, src, reduce);
    return self;
  }
  return cx_scatter_reduce_out(self, dim, index, src, reduce, self);
}
at::Tensor& cx_scatter_value_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                        const c10::Scalar& value, c10::string_view reduce, at::Tensor& out) {
  if (!cx_scatter_ok(self, nullptr, out)) {
    on_cpu("scatter.value_reduce_out", self, dim, index, value, reduce, out);
    return out;
  }
  reduce_name_check(reduce);
  scatter_reduce_prepare(self, dim, index, nullptr, out);
  at::Tensor src = at::full(index.sizes(), value, self.options());
  return scatter_reduce_impl(out, dim, index, src, reduce);
}
at::Tensor cx_scatter_value_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const c10::Scalar& value, c10::string_view reduce) {
  if (!self.is_complex())
    return on_cpu("scatter.value_reduce", self, dim, index, value, reduce)[0].toTensor();
  at::Tensor out = at::empty({0}, self.options());
  return cx_scatter_value_reduce_out(self, dim, index, value, reduce, out);
}
at::Tensor& cx_scatter_value_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value,
                                     c10::string_view reduce) {
  if (!cx_scatter_ok(self, nullptr, self)) {
    on_cpu("scatter_.value_reduce", self, dim, index, value, reduce);
    return self;
  }
  return cx_scatter_value_reduce_out(self, dim, index, value, reduce, self);
}

// scatter_reduce.two: sum, prod and mean (the CPU has no complex amax/amin:
// those take its error). include_self=False first sets the scattered
// positions to the identity; mean divides by the count (0 taken as 1).
at::Tensor& cx_scatter_reduce_two_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                      const at::Tensor& src, c10::string_view reduce, bool include_self,
                                      at::Tensor& out) {
  if (!cx_scatter_ok(self, &src, out) || !(reduce == "sum" || reduce == "prod" || reduce == "mean")) {
    on_cpu("scatter_reduce.two_out", self, dim, index, src, reduce, include_self, out);
    return out;
  }
  scatter_reduce_prepare(self, dim, index, &src, out);
  if (index.numel() == 0)
    return out;
  bool prod = reduce == "prod";
  if (!include_self)
    out.scatter_(dim, index, c10::Scalar(prod ? 1.0 : 0.0));
  scatter_reduce_impl(out, dim, index, src, prod ? "multiply" : "add");
  if (reduce == "mean") {
    at::Tensor count = at::full(out.sizes(), include_self ? 1 : 0, out.options().dtype(at::kLong));
    count.scatter_add_(dim, index, at::ones(index.sizes(), count.options()));
    count.masked_fill_(count == 0, 1);
    out.div_(count);
  }
  return out;
}
at::Tensor cx_scatter_reduce_two(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                 c10::string_view reduce, bool include_self) {
  if (!self.is_complex() || src.scalar_type() != self.scalar_type() ||
      !(reduce == "sum" || reduce == "prod" || reduce == "mean"))
    return on_cpu("scatter_reduce.two", self, dim, index, src, reduce, include_self)[0].toTensor();
  at::Tensor out = at::empty({0}, self.options());
  return cx_scatter_reduce_two_out(self, dim, index, src, reduce, include_self, out);
}
at::Tensor& cx_scatter_reduce_two_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                   c10::string_view reduce, bool include_self) {
  if (!cx_scatter_ok(self, &src, self) || !(reduce == "sum" || reduce == "prod" || reduce == "mean")) {
    on_cpu("scatter_reduce_.two", self, dim, index, src, reduce, include_self);
    return self;
  }
  return cx_scatter_reduce_two_out(self, dim, index, src, reduce, include_self, self);
}

// put_: flat index i is the real view's 2i and 2i + 1.
at::Tensor& cx_put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source, bool accumulate) {
  if (!plain_target(self) || source.scalar_type() != self.scalar_type()) {
    on_cpu("put_", self, index, source, accumulate);
    return self;
  }
  int64_t n = self.numel();
  at::Tensor i = index.reshape({-1});
  i = at::where(i < 0, i + n, i);  // out of range stays out of range for the real kernel's check
  at::Tensor i2 = at::stack({i * 2, i * 2 + 1}, -1).reshape({-1});
  at::Tensor r = at::view_as_real(self);
  r.put_(i2, at::view_as_real(resolved(source)).reshape({-1}), accumulate);
  return self;
}
at::Tensor cx_put(const at::Tensor& self, const at::Tensor& index, const at::Tensor& source, bool accumulate) {
  at::Tensor out = resolved(self).clone();
  return cx_put_(out, index, source, accumulate);
}

// ---- factories --------------------------------------------------------------

at::Tensor& cx_eye_m_out(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  if (!out.is_complex() || out.is_conj() || out.is_neg()) {
    on_cpu("eye.m_out", n, m, out);
    return out;
  }
  out.resize_({n, m});
  out.zero_();
  out.diagonal().fill_(1);
  return out;
}
at::Tensor& cx_eye_out(int64_t n, at::Tensor& out) { return cx_eye_m_out(n, n, out); }

at::Tensor& cx_linspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, at::Tensor& out) {
  if (!out.is_complex() || out.is_conj() || out.is_neg()) {
    on_cpu("linspace.out", start, end, steps, out);
    return out;
  }
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  c10::complex<double> a = start.toComplexDouble(), b = end.toComplexDouble();
  auto ro = out.options().dtype(c10::toRealValueType(out.scalar_type()));
  at::Tensor re = at::linspace(a.real(), b.real(), steps, ro), im = at::linspace(a.imag(), b.imag(), steps, ro);
  out.resize_({steps});
  at::Tensor r = at::view_as_real(out);
  r.select(-1, 0).copy_(re);
  r.select(-1, 1).copy_(im);
  return out;
}

// ---- logsumexp, logspace, renorm ------------------------------------------
// (complex logcumsumexp is a scan kind of its own: ocl_scan_ops.cpp.)

// PyTorch's logsumexp for complex: the max of the real parts (infinite ones
// taken as 0) out of exp, then log of the sum plus it.
at::Tensor lse_impl(const at::Tensor& self_in, at::IntArrayRef dims, bool keepdim) {
  at::Tensor self = resolved(self_in);
  if (self.numel() == 0)
    return at::sum(self.exp(), dims, keepdim).log();
  at::Tensor maxes = at::amax(at::real(self), dims, true);
  maxes.masked_fill_(maxes.abs() == INFINITY, 0);
  at::Tensor sq = maxes;
  if (!keepdim) {
    std::vector<int64_t> ds;
    for (int64_t d : dims)
      ds.push_back(at::maybe_wrap_dim(d, std::max<int64_t>(self.dim(), 1)));
    std::sort(ds.rbegin(), ds.rend());
    ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
    if (self.dim() == 0)
      sq = maxes.reshape({});
    else if (ds.empty())
      sq = maxes.reshape({});
    else
      for (int64_t d : ds)
        sq = sq.squeeze(d);
  }
  at::Tensor s = at::sum((self - maxes).exp(), dims, keepdim);
  return s.log().add(sq);
}
at::Tensor cx_logsumexp(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  if (!self.is_complex())
    return on_cpu("logsumexp", self, dims, keepdim)[0].toTensor();
  return lse_impl(self, dims, keepdim);
}
at::Tensor& cx_logsumexp_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  if (!self.is_complex() || out.scalar_type() != self.scalar_type()) {
    on_cpu("logsumexp.out", self, dims, keepdim, out);
    return out;
  }
  into(out, lse_impl(self, dims, keepdim));
  return out;
}

// logspace: base ** linspace(start, end), the CPU's pow of a complex
// exponent.
at::Tensor& cx_logspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, double base,
                            at::Tensor& out) {
  if (!out.is_complex() || out.is_conj() || out.is_neg()) {
    on_cpu("logspace.out", start, end, steps, base, out);
    return out;
  }
  at::Tensor lin = at::empty({0}, out.options());
  cx_linspace_out(start, end, steps, lin);
  into(out, at::pow(c10::Scalar(base), lin));
  return out;
}

// renorm: each slice along dim scaled by maxnorm / (norm + 1e-7) where its
// p-norm exceeds maxnorm (PyTorch's renorm_out).
at::Tensor renorm_impl(const at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> rd;
  for (int64_t i = 0; i < self.dim(); i++)
    if (i != d)
      rd.push_back(i);
  at::Tensor norm = at::linalg_vector_norm(resolved(self), p, rd, true, std::nullopt);
  double mx = maxnorm.toDouble();
  at::Tensor factor = at::where(norm > mx, mx / (norm + 1e-7), at::ones_like(norm));
  return resolved(self) * factor;
}
at::Tensor cx_renorm(const at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  if (!self.is_complex())
    return on_cpu("renorm", self, p, dim, maxnorm)[0].toTensor();
  return renorm_impl(self, p, dim, maxnorm);
}
at::Tensor& cx_renorm_out(const at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm,
                          at::Tensor& out) {
  if (!self.is_complex() || out.scalar_type() != self.scalar_type()) {
    on_cpu("renorm.out", self, p, dim, maxnorm, out);
    return out;
  }
  into(out, renorm_impl(self, p, dim, maxnorm));
  return out;
}
at::Tensor& cx_renorm_(at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  if (!plain_target(self)) {
    on_cpu("renorm_", self, p, dim, maxnorm);
    return self;
  }
  self.copy_(renorm_impl(self, p, dim, maxnorm));
  return self;
}

// ---- random fills: PyTorch fills the real view ------------------------------

at::Tensor& cx_normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  if (!plain_target(self)) {
    on_cpu("normal_", self, mean, std, gen);
    return self;
  }
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  // each part has half the variance
  at::view_as_real(self).normal_(mean, std / std::sqrt(2.0), gen);
  return self;
}
at::Tensor& cx_uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  if (!plain_target(self)) {
    on_cpu("uniform_", self, from, to, gen);
    return self;
  }
  at::view_as_real(self).uniform_(from, to, gen);
  return self;
}

template <auto F>
void reg_pairs(const char* name) {
  register_complex_kernel(name, c10::KernelFunction::makeFromUnboxedFunction(
                                    c10::CompileTimeFunctionPointer<std::remove_pointer_t<decltype(F)>, F>()));
}

[[maybe_unused]] const bool pair_ops_registered = [] {
  reg_pairs<&sum_dim>("sum.dim_IntList");
  reg_pairs<&sum_out>("sum.IntList_out");
  reg_pairs<&sum_all>("sum");
  reg_pairs<&mean_dim>("mean.dim");
  reg_pairs<&mean_out>("mean.out");
  reg_pairs<&mean_all>("mean");
  reg_pairs<&cx_trace>("trace");
  reg_pairs<&cx_cumsum>("cumsum");
  reg_pairs<&cx_cumsum_out>("cumsum.out");
  reg_pairs<&cx_cumsum_>("cumsum_");
  reg_pairs<&cx_var>("var.correction");
  reg_pairs<&cx_var_out>("var.correction_out");
  reg_pairs<&std_>("std.correction");
  reg_pairs<&cx_std_out>("std.correction_out");
  reg_pairs<&cx_var_mean>("var_mean.correction");
  reg_pairs<&cx_std_mean>("std_mean.correction");
  reg_pairs<&vector_norm>("linalg_vector_norm");
  reg_pairs<&vector_norm_out>("linalg_vector_norm.out");
  reg_pairs<&norm_opt_dim>("norm.ScalarOpt_dim");
  reg_pairs<&norm_opt_dim_dtype>("norm.ScalarOpt_dim_dtype");
  reg_pairs<&all_>("all");
  reg_pairs<&any_>("any");
  reg_pairs<&all_dim>("all.dim");
  reg_pairs<&any_dim>("any.dim");
  reg_pairs<&all_dims>("all.dims");
  reg_pairs<&any_dims>("any.dims");
  reg_pairs<&cx_count_nonzero>("count_nonzero.dim_IntList");
  reg_pairs<&cx_nonzero>("nonzero");
  reg_pairs<&cx_nonzero_out>("nonzero.out");
  reg_pairs<&cx_nonzero_static>("nonzero_static");
  reg_pairs<&cx_equal>("equal");
  reg_pairs<&cx_mm>("mm");
  reg_pairs<&cx_mm_out>("mm.out");
  reg_pairs<&cx_bmm>("bmm");
  reg_pairs<&cx_bmm_out>("bmm.out");
  reg_pairs<&cx_dot>("dot");
  reg_pairs<&cx_vdot>("vdot");
  reg_pairs<&cx_mv>("mv");
  reg_pairs<&addprod<0>>("addmm");
  reg_pairs<&addprod_out<0>>("addmm.out");
  reg_pairs<&addprod_<0>>("addmm_");
  reg_pairs<&addprod<1>>("baddbmm");
  reg_pairs<&addprod_out<1>>("baddbmm.out");
  reg_pairs<&addprod_<1>>("baddbmm_");
  reg_pairs<&addprod<2>>("addbmm");
  reg_pairs<&addprod_out<2>>("addbmm.out");
  reg_pairs<&addprod_<2>>("addbmm_");
  reg_pairs<&addprod<3>>("addmv");
  reg_pairs<&addprod_out<3>>("addmv.out");
  reg_pairs<&addprod_<3>>("addmv_");
  reg_pairs<&cx_prod>("prod");
  reg_pairs<&cx_prod_out>("prod.out");
  reg_pairs<&cx_prod_dim>("prod.dim_int");
  reg_pairs<&cx_prod_int_out>("prod.int_out");
  reg_pairs<&cx_cumprod>("cumprod");
  reg_pairs<&cx_cumprod_out>("cumprod.out");
  reg_pairs<&cx_cumprod_>("cumprod_");
  reg_pairs<&cx_cross>("linalg_cross");
  reg_pairs<&cx_cross_out>("linalg_cross.out");
  reg_pairs<&cx_index_put_>("index_put_");
  reg_pairs<&cx_index_put_impl_>("_index_put_impl_");
  reg_pairs<&cx_index_put>("index_put");
  reg_pairs<&cx_index_add_>("index_add_");
  reg_pairs<&cx_index_add>("index_add");
  reg_pairs<&cx_index_add_out>("index_add.out");
  reg_pairs<&cx_scatter_add_>("scatter_add_");
  reg_pairs<&cx_scatter_add>("scatter_add");
  reg_pairs<&cx_scatter_add_out>("scatter_add.out");
  reg_pairs<&cx_scatter_reduce>("scatter.reduce");
  reg_pairs<&cx_scatter_reduce_>("scatter_.reduce");
  reg_pairs<&cx_scatter_reduce_out>("scatter.reduce_out");
  reg_pairs<&cx_scatter_value_reduce>("scatter.value_reduce");
  reg_pairs<&cx_scatter_value_reduce_>("scatter_.value_reduce");
  reg_pairs<&cx_scatter_value_reduce_out>("scatter.value_reduce_out");
  reg_pairs<&cx_scatter_reduce_two>("scatter_reduce.two");
  reg_pairs<&cx_scatter_reduce_two_>("scatter_reduce_.two");
  reg_pairs<&cx_scatter_reduce_two_out>("scatter_reduce.two_out");
  reg_pairs<&cx_put_>("put_");
  reg_pairs<&cx_put>("put");
  reg_pairs<&cx_eye_m_out>("eye.m_out");
  reg_pairs<&cx_eye_out>("eye.out");
  reg_pairs<&cx_linspace_out>("linspace.out");
  reg_pairs<&cx_logsumexp>("logsumexp");
  reg_pairs<&cx_logsumexp_out>("logsumexp.out");
  reg_pairs<&cx_logspace_out>("logspace.out");
  reg_pairs<&cx_renorm>("renorm");
  reg_pairs<&cx_renorm_out>("renorm.out");
  reg_pairs<&cx_renorm_>("renorm_");
  reg_pairs<&cx_normal_>("normal_");
  reg_pairs<&cx_uniform_>("uniform_");
  return true;
}();

}  // namespace
}  // namespace torch_ocl
