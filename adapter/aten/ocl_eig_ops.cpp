// ocl_eig_ops.cpp - torch.linalg.eig and eigvals on the ocl device.
//
// PyTorch's own linalg_eig_out copies the input to the CPU for n <= 2048
// (MAGMA has no GPU geev) and calls its stub there, so the stub is no way
// in for a device: aten::linalg_eig(.out), _linalg_eigvals and
// linalg_eigvals.out are registered here directly, with the CPU's checks
// and messages, over tocl_la_geev (kernels/eig.cl, LAPACK's geev step for
// step, so eigenvalues come in the CPU's order). linalg_eigvals itself is
// composite: it calls linalg_eig when a gradient is needed, so autograd
// runs PyTorch's own eig backward over these kernels.
#include <ATen/ATen.h>
#include <ATen/ops/_linalg_check_errors.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <tuple>
#include <vector>

#include "ocl_complex_route.h"
#include "ocl_nn_util.h"
#include "tocl/linalg.h"

namespace torch_ocl {
namespace {

using at::Tensor;
using nn_util::dev_of;
using nn_util::stream_of;

// The CPU's argument checks, in its order; returns the complex result dtype.
c10::ScalarType check_input(const Tensor& A, const char* api) {
  const auto ct = c10::toComplexType(A.scalar_type());  // raises for integer dtypes, as the CPU
  TORCH_CHECK(A.dim() >= 2, api, ": The input tensor A must have at least 2 dimensions.");
  TORCH_CHECK(A.size(-1) == A.size(-2), api, ": A must be batches of square matrices, but they are ", A.size(-2),
              " by ", A.size(-1), " matrices");
  const auto d = A.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(d == at::kFloat || d == at::kDouble || d == at::kComplexFloat || d == at::kComplexDouble,
                              "\"linalg_eig_ocl\" not implemented for '", c10::toString(d), "'");
  return ct;
}

// Eigenvalues [..., n] and, when vectors, eigenvectors [..., n, n] (complex)
// of A, checked: non-convergence raises the CPU's message.
std::tuple<Tensor, Tensor> geev(const Tensor& A, bool vectors, const char* api) {
  const auto ct = check_input(A, api);
  c10::DeviceGuard g(A.device());
  const int64_t n = A.size(-1);
  std::vector<int64_t> vshape(A.sizes().begin(), A.sizes().end() - 1);
  const int64_t batch = n == 0 ? 0 : A.numel() / (n * n);
  auto opts = A.options();
  Tensor values = at::empty(vshape, opts.dtype(ct));
  Tensor vecs = vectors ? at::empty(A.sizes(), opts.dtype(ct)) : Tensor();
  if (A.numel() == 0)
    return {values, vecs};
  // column-major working copies: [batch, n, n] with strides (n * n, 1, n)
  auto colmajor = [&](c10::TensorOptions o) { return at::empty({batch, n, n}, o).mT(); };
  Tensor h = colmajor(opts);
  h.copy_(A.reshape({batch, n, n}));  // copy_ resolves conj and neg bits
  Tensor z = vectors ? colmajor(opts) : Tensor(), v = vectors ? colmajor(opts.dtype(ct)) : Tensor();
  Tensor w = at::empty({batch, n}, opts.dtype(ct));
  Tensor ws = at::empty({batch, 4 * n}, opts), rs = at::empty({batch, 2 * n}, opts.dtype(c10::toRealValueType(A.scalar_type())));
  Tensor info = at::zeros({batch, 1}, opts.dtype(at::kInt));
  tocl_tensor th = to_tocl_pairs(h), tw = to_tocl_pairs(w), tws = to_tocl_pairs(ws), trs = to_tocl_pairs(rs),
              ti = to_tocl_pairs(info), tz{}, tv{};
  if (vectors) {
    tz = to_tocl_pairs(z);
    tv = to_tocl_pairs(v);
  }
  TOCL_CHECK(tocl_la_geev(dev_of(h), stream_of(h), &th, vectors ? &tz : nullptr, &tw, vectors ? &tv : nullptr, &tws,
                          &trs, &ti));
  at::_linalg_check_errors(info.view(-1), std::string("torch.") + api, A.dim() == 2);
  values.copy_(w.view(vshape));
  if (vectors)
    vecs.copy_(v.view(A.sizes()));
  return {values, vecs};
}

// An out= argument: the CPU's dtype and device checks, then resize and copy.
void deliver(const Tensor& r, const Tensor& out, const char* api, const char* what) {
  TORCH_CHECK(at::can_cast(r.scalar_type(), out.scalar_type()), api, ": Expected ", what,
              " to be safely castable from ", r.scalar_type(), " dtype, but got ", what, " with dtype ",
              out.scalar_type());
  TORCH_CHECK(out.device() == r.device(), api, ": Expected ", what, " and input tensors to be on the same device, but got ",
              what, " on ", out.device(), " and input on ", r.device());
  resize_out(out, r.sizes());
  out.copy_(r);
}

std::tuple<Tensor, Tensor> eig(const Tensor& A) {
  TORCH_CHECK(A.isfinite().all().item<bool>(), "torch.linalg.eig: input tensor should not contain infs or NaNs.");
  return geev(A, true, "linalg.eig");
}

std::tuple<Tensor&, Tensor&> eig_out(const Tensor& A, Tensor& values, Tensor& vectors) {
  auto r = eig(A);
  deliver(std::get<0>(r), values, "torch.linalg.eig", "eigenvalues");
  deliver(std::get<1>(r), vectors, "torch.linalg.eig", "eigenvectors");
  return {values, vectors};
}

Tensor eigvals(const Tensor& A) { return std::get<0>(geev(A, false, "linalg.eigvals")); }

Tensor& eigvals_out(const Tensor& A, Tensor& out) {
  deliver(eigvals(A), out, "torch.linalg.eigvals", "eigenvalues");
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);  // the kernels compute in complex themselves
  m.impl_complex("linalg_eig", eig);
  m.impl_complex("linalg_eig.out", eig_out);
  m.impl_complex("_linalg_eigvals", eigvals);
  m.impl_complex("linalg_eigvals.out", eigvals_out);
}

}  // namespace
}  // namespace torch_ocl
