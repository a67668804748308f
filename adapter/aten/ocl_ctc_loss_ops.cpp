// ocl_ctc_loss_ops.cpp - the CTC loss (F.ctc_loss, speech recognition) and
// its gradient, composed from ops native on ocl: the CPU kernel's alpha and
// beta recursions in log space (Graves et al. 2006, eq. 6-16), run one time
// step at a time for the whole batch at once over the extended label
// sequence (blanks between labels), each sequence frozen past its own input
// length; the gradient as the CPU forms it from log(alpha * beta) summed per
// label. Lengths are host integers, as the CPU takes them.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// What both directions need: the extended labels l' [N, Lp] (blank at even
// s), whether s may skip from s - 2 [N, Lp], and log_probs gathered at l'
// [T, N, Lp].
struct CtcSetup {
  int64_t T = 0, N = 0, C = 0, Lp = 0;
  std::vector<int64_t> in_len, tg_len;
  Tensor lprime, skip, lp_ext;
};

CtcSetup ctc_setup(const Tensor& log_probs, const Tensor& targets, at::IntArrayRef input_lengths,
                   at::IntArrayRef target_lengths, int64_t blank) {
  TORCH_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
              "-dimensional tensor for argument #1 'log_probs' (while checking arguments for ctc_loss_cpu)");
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt,
              "Expected tensor for argument #2 'targets' to have one of the following scalar types: Int, Long; but "
              "got ", targets.scalar_type(), " instead (while checking arguments for ctc_loss_cpu)");
  CtcSetup s;
  s.T = log_probs.size(0);
  s.N = log_probs.size(1);
  s.C = log_probs.size(2);
  TORCH_CHECK(blank < s.C && blank >= 0, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == s.N, "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == s.N, "target_lengths must be of size batch_size");
  s.in_len.assign(input_lengths.begin(), input_lengths.end());
  s.tg_len.assign(target_lengths.begin(), target_lengths.end());
  int64_t smax = 0, pos = 0;
  std::vector<int64_t> offsets(s.N);
  for (int64_t b = 0; b < s.N; b++) {
    TORCH_CHECK(s.tg_len[b] >= 0, "target_lengths must be non-negative");
    TORCH_CHECK(s.in_len[b] >= 0 && s.in_len[b] <= s.T, "Expected input_lengths to have value at most ", s.T,
                ", but got value ", s.in_len[b], " (while checking arguments for ctc_loss_cpu)");
    smax = std::max(smax, s.tg_len[b]);
    offsets[b] = targets.dim() == 1 ? pos : 0;
    pos += s.tg_len[b];
  }
  if (targets.dim() == 1) {
    TORCH_CHECK(targets.size(0) >= pos, "Expected tensor to have size at least ", pos,
                " at dimension 0, but got size ", targets.size(0),
                " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  } else {
    smax = std::max(smax, targets.size(1));
    for (int64_t b = 0; b < s.N; b++)
      TORCH_CHECK(s.tg_len[b] <= targets.size(1), "Expected tensor to have size at least ", s.tg_len[b],
                  " at dimension 1, but got size ", targets.size(1),
                  " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  }
  s.Lp = 2 * smax + 1;
  // padded labels [N, smax], blank past each target's length
  auto lopts = log_probs.options().dtype(at::kLong);
  std::vector<int64_t> where(s.N * smax), keep(s.N * smax);
  for (int64_t b = 0; b < s.N; b++)
    for (int64_t j = 0; j < smax; j++) {
      keep[b * smax + j] = j < s.tg_len[b];
      where[b * smax + j] = j < s.tg_len[b] ? (targets.dim() == 1 ? offsets[b] + j : b * targets.size(1) + j) : 0;
    }
  Tensor flat_t = targets.reshape({-1}).to(at::kLong);
  Tensor idx = at::tensor(where, at::kLong).to(log_probs.device());
  Tensor kept = at::tensor(keep, at::kLong).to(log_probs.device()).to(at::kBool);
  Tensor labels = smax ? at::where(kept, flat_t.index_select(0, idx), blank).view({s.N, smax})
                       : at::empty({s.N, 0}, lopts);
  Tensor lprime = at::full({s.N, s.Lp}, blank, lopts);
  if (smax)
    lprime.narrow(1, 1, 2 * smax).view({s.N, smax, 2}).select(2, 0).copy_(labels);
  s.lprime = lprime;
  Tensor prev2 = at::cat({at::full({s.N, 2}, -1, lopts), lprime.narrow(1, 0, s.Lp - 2)}, 1);
  s.skip = (lprime != prev2) & (at::arange(s.Lp, lopts) >= 2);
  s.lp_ext = log_probs.gather(2, lprime.unsqueeze(0).expand({s.T, s.N, s.Lp}));
  return s;
}

Tensor shift_right(const Tensor& a, int64_t k) {  // a[:, s - k], -inf where s < k
  return at::cat({at::full({a.size(0), k}, kNegInf, a.options()), a.narrow(1, 0, a.size(1) - k)}, 1);
}
Tensor shift_left(const Tensor& a, int64_t k) {  // a[:, s + k], -inf past the end
  return at::cat({a.narrow(1, k, a.size(1) - k), at::full({a.size(0), k}, kNegInf, a.options())}, 1);
}

// log(exp(x) + exp(y) + exp(z)) as the CPU computes it (max subtracted; an
// all -inf triple gives -inf).
Tensor logsumexp3(const Tensor& x, const Tensor& y, const Tensor& z) {
  Tensor m = at::maximum(at::maximum(x, y), z);
  m = at::where(m == kNegInf, 0.0, m);
  return at::log(at::exp(x - m) + at::exp(y - m) + at::exp(z - m)) + m;
}

Tensor lengths_tensor(const std::vector<int64_t>& v, const Tensor& like) {
  return at::tensor(v, at::kLong).to(like.device());
}

std::tuple<Tensor, Tensor> ctc_loss(const Tensor& log_probs, const Tensor& targets, at::IntArrayRef input_lengths,
                                    at::IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  TORCH_CHECK(at::isFloatingType(log_probs.scalar_type()), "\"ctc_loss_cpu\" not implemented for '",
              log_probs.scalar_type(), "'");
  CtcSetup s = ctc_setup(log_probs, targets, input_lengths, target_lengths, blank);
  auto opts = log_probs.options();
  Tensor log_alpha = at::full({s.N, s.T, s.Lp}, kNegInf, opts);
  Tensor nll = at::zeros({s.N}, opts);
  if (s.N == 0)
    return {nll, log_alpha};
  Tensor in_len = lengths_tensor(s.in_len, log_probs), tg_len = lengths_tensor(s.tg_len, log_probs);
  Tensor sidx = at::arange(s.Lp, in_len.options());
  if (s.T > 0) {
    // t = 0: blank, and the first label where there is one
    Tensor a = at::where((sidx == 0) | ((sidx == 1) & (tg_len > 0).unsqueeze(1)), s.lp_ext[0], kNegInf);
    log_alpha.select(1, 0).copy_(a);
    for (int64_t t = 1; t < s.T; t++) {
      Tensor next = logsumexp3(a, shift_right(a, 1), at::where(s.skip, shift_right(a, 2), kNegInf)) + s.lp_ext[t];
      a = at::where((in_len > t).unsqueeze(1), next, a);  // frozen past the sequence's end
      log_alpha.select(1, t).copy_(a);
    }
    Tensor l1 = a.gather(1, (2 * tg_len).unsqueeze(1)).squeeze(1);
    Tensor l2 = at::where(tg_len > 0, a.gather(1, (2 * tg_len - 1).clamp_min(0).unsqueeze(1)).squeeze(1), kNegInf);
    nll = -logsumexp3(l1, l2, at::full_like(l1, kNegInf));
  }
  // an empty input: likelihood 1 for an empty target, else 0
  nll = at::where(in_len == 0, at::where(tg_len == 0, 0.0, std::numeric_limits<double>::infinity()), nll)
            .to(log_probs.scalar_type());
  return {nll, log_alpha};
}

Tensor ctc_loss_backward(const Tensor& grad_out, const Tensor& log_probs, const Tensor& targets,
                         at::IntArrayRef input_lengths, at::IntArrayRef target_lengths, const Tensor& nll,
                         const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  CtcSetup s = ctc_setup(log_probs, targets, input_lengths, target_lengths, blank);
  auto opts = log_probs.options();
  Tensor grad = at::zeros_like(log_probs, at::MemoryFormat::Contiguous);
  if (s.N == 0 || s.T == 0)
    return grad;
  Tensor in_len = lengths_tensor(s.in_len, log_probs), tg_len = lengths_tensor(s.tg_len, log_probs);
  Tensor sidx = at::arange(s.Lp, in_len.options());
  // may s take from s + 2 (the mirror of the forward's skip)
  Tensor skip_next = shift_left(s.skip.to(opts.dtype()), 2) > 0;
  Tensor ab = at::empty({s.N, s.T, s.Lp}, opts);  // log(alpha * beta)
  Tensor b = at::full({s.N, s.Lp}, kNegInf, opts);
  for (int64_t t = s.T - 1; t >= 0; t--) {
    Tensor lp = s.lp_ext[t];
    Tensor init = at::where((sidx == (2 * tg_len).unsqueeze(1)) |
                                ((sidx == (2 * tg_len - 1).unsqueeze(1)) & (tg_len > 0).unsqueeze(1)),
                            lp, kNegInf);
    Tensor rec = logsumexp3(b, shift_left(b, 1), at::where(skip_next, shift_left(b, 2), kNegInf)) + lp;
    Tensor last = (in_len - 1 == t).unsqueeze(1), inside = (in_len - 1 > t).unsqueeze(1);
    b = at::where(last, init, at::where(inside, rec, kNegInf));
    ab.select(1, t).copy_(log_alpha.select(1, t) + b);
  }
  // log of the sum of alpha * beta over the positions s holding each label c: [N, T, C]
  Tensor index = s.lprime.unsqueeze(1).expand({s.N, s.T, s.Lp});
  Tensor mx = at::full({s.N, s.T, s.C}, kNegInf, opts).scatter_reduce_(2, index, ab, "amax", true);
  Tensor mxs = mx.gather(2, index);
  Tensor e = at::where(mxs == kNegInf, 0.0, at::exp(ab - mxs)).to(opts.dtype());
  Tensor lcab = at::log(at::zeros({s.N, s.T, s.C}, opts).scatter_add_(2, index, e)) + at::where(mx == kNegInf, 0.0, mx);
  Tensor lp = log_probs.permute({1, 0, 2});  // [N, T, C]
  Tensor n = nll.view({s.N, 1, 1});
  Tensor g = (at::exp(lp) - at::exp(lcab + n - lp)) * grad_out.view({s.N, 1, 1});
  Tensor active = (at::arange(s.T, in_len.options()).unsqueeze(0) < in_len.unsqueeze(1)).unsqueeze(2);
  Tensor zero = active.logical_not();
  if (zero_infinity)
    zero = zero | (nll == std::numeric_limits<double>::infinity()).view({s.N, 1, 1});
  g = at::where(zero, 0.0, g).to(opts.dtype());
  return g.permute({1, 0, 2}).contiguous();
}

std::vector<int64_t> host_lengths(const Tensor& t) {
  Tensor c = t.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::tuple<Tensor, Tensor> ctc_loss_tensor(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                                           const Tensor& target_lengths, int64_t blank, bool zero_infinity) {
  TORCH_CHECK(at::isIntegralType(input_lengths.scalar_type(), /*includeBool=*/false),
              "input_lengths must be integral");
  TORCH_CHECK(at::isIntegralType(target_lengths.scalar_type(), /*includeBool=*/false),
              "target_lengths must be integral");
  return ctc_loss(log_probs, targets, host_lengths(input_lengths), host_lengths(target_lengths), blank,
                  zero_infinity);
}

Tensor ctc_loss_backward_tensor(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                const Tensor& input_lengths, const Tensor& target_lengths, const Tensor& nll,
                                const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  return ctc_loss_backward(grad, log_probs, targets, host_lengths(input_lengths), host_lengths(target_lengths), nll,
                           log_alpha, blank, zero_infinity);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_ctc_loss", ctc_loss);
  m.impl("_ctc_loss.Tensor", ctc_loss_tensor);
  m.impl("_ctc_loss_backward", ctc_loss_backward);
  m.impl("_ctc_loss_backward.Tensor", ctc_loss_backward_tensor);
}

}  // namespace
}  // namespace torch_ocl
