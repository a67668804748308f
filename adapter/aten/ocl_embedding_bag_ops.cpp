// ocl_embedding_bag_ops.cpp - nn.EmbeddingBag / F.embedding_bag (sum, mean,
// max; per-sample weights; padding_idx; include_last_offset) and its dense
// backward, composed from ops native on ocl: each index's bag from the
// offsets (index_add of ones, cumsum), rows by index_select, bags by
// index_add (sum, mean) or scatter_reduce (max, with the first maximal
// position kept for the backward, as the CPU's loop keeps it). The
// auxiliary outputs (offset2bag, bag_size, max_indices) have the CPU's
// shapes; only this file's backward reads their values.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <tuple>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

enum { kSum = 0, kMean = 1, kMax = 2 };

void bag_checks(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode,
                const std::optional<Tensor>& psw) {
  TORCH_CHECK(indices.dim() == 1, "input has to be a 1D or 2D Tensor, but got Tensor of dimension ", indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_bag: Expected tensor for argument #1 'indices' to have one of the following scalar types: "
              "Long, Int; but got ", indices.scalar_type(), " instead");
  TORCH_CHECK(offsets.scalar_type() == at::kLong || offsets.scalar_type() == at::kInt,
              "embedding_bag: Expected tensor for argument #1 'offsets' to have one of the following scalar types: "
              "Long, Int; but got ", offsets.scalar_type(), " instead");
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  TORCH_CHECK(mode >= kSum && mode <= kMax, "mode has to be one of sum, mean or max");
  if (psw.has_value() && psw->defined()) {
    TORCH_CHECK(mode == kSum, "embedding_bag: per_sample_weights only supported with mode='sum'");
    TORCH_CHECK(psw->dim() == 1 && psw->numel() == indices.numel(),
                "embedding_bag: per_sample_weights must be a 1D tensor with as many elements as indices");
    TORCH_CHECK(psw->scalar_type() == weight.scalar_type(), "embedding_bag: Expected per_sample_weights to have the "
                "weight's dtype ", weight.scalar_type(), ", but got ", psw->scalar_type());
  }
}

// Bag of every index (N), from the first num_bags offsets.
Tensor offset2bag_of(const Tensor& offsets, int64_t n, int64_t num_bags) {
  Tensor o = offsets.narrow(0, 0, num_bags).to(at::kLong).clamp(0, n);
  Tensor marks = at::zeros({n + 1}, o.options()).index_add_(0, o, at::ones_like(o));
  return marks.narrow(0, 0, n).cumsum(0) - 1;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const std::optional<Tensor>& psw,
                                                         bool include_last_offset, int64_t padding_idx) {
  bag_checks(weight, indices, offsets, mode, psw);
  const int64_t n = indices.numel(), dim = weight.size(1);
  int64_t num_bags = offsets.size(0);
  if (include_last_offset) {
    TORCH_CHECK(num_bags >= 1, "include_last_offset: number of offset should be at least 1");
    num_bags -= 1;
  }
  if (offsets.numel() > 0) {  // the CPU's checks, one read of both ends
    Tensor ends = at::stack({offsets.select(0, 0), offsets.select(0, -1)}).to(at::kLong).cpu();
    TORCH_CHECK(ends[0].item<int64_t>() == 0, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                "has to start from position 0. However, got ", ends[0].item<int64_t>());
    TORCH_CHECK(ends[1].item<int64_t>() <= n, "offsets[-1] can not be greater than input's length ", n, " but got "
                "offsets[-1] of ", ends[1].item<int64_t>());
  }
  Tensor idx = indices.to(at::kLong);
  Tensor o2b = offset2bag_of(offsets, n, num_bags);
  Tensor valid = padding_idx >= 0 ? idx != padding_idx : at::ones({n}, idx.options().dtype(at::kBool));
  Tensor rows = weight.index_select(0, idx);
  // positions whose bag lies past the last one (include_last_offset's tail) go to a spare bag
  Tensor bag = at::where(o2b < num_bags, o2b, num_bags);
  Tensor bag_size = at::zeros({num_bags + 1}, idx.options()).index_add_(0, bag, valid.to(at::kLong));
  bag_size = bag_size.narrow(0, 0, num_bags);
  Tensor out, max_indices;
  if (mode == kMax) {
    const double lowest = -std::numeric_limits<double>::infinity();
    Tensor r = at::where(valid.unsqueeze(1), rows, lowest);
    Tensor full = at::full({num_bags + 1, dim}, lowest, weight.options());
    Tensor bag2 = bag.unsqueeze(1).expand({n, dim});
    full.scatter_reduce_(0, bag2, r, "amax", /*include_self=*/true);
    // the first position holding each bag's maximum (the CPU keeps the first)
    Tensor hit = valid.unsqueeze(1) & (r == full.index_select(0, bag));
    Tensor pos = at::where(hit, at::arange(n, idx.options()).unsqueeze(1), n);
    Tensor first = at::full({num_bags + 1, dim}, n, idx.options()).scatter_reduce_(0, bag2, pos, "amin", true);
    first = first.narrow(0, 0, num_bags);
    Tensor empty = (bag_size == 0).unsqueeze(1);
    out = at::where(empty, 0.0, full.narrow(0, 0, num_bags)).to(weight.scalar_type());
    Tensor idx_pad = at::cat({idx, at::full({1}, -1, idx.options())});
    max_indices = at::where(empty, -1, idx_pad.index_select(0, first.reshape({-1})).view({num_bags, dim}));
  } else {
    Tensor r = rows;
    if (psw.has_value() && psw->defined())
      r = r * psw->unsqueeze(1);
    r = at::where(valid.unsqueeze(1), r, 0.0).to(weight.scalar_type());
    out = at::zeros({num_bags + 1, dim}, weight.options()).index_add_(0, bag, r).narrow(0, 0, num_bags);
    if (mode == kMean)
      out = out / bag_size.clamp_min(1).unsqueeze(1).to(weight.scalar_type());
    max_indices = at::zeros({num_bags}, idx.options());
  }
  return {out.contiguous(), o2b, bag_size, max_indices};
}

Tensor embedding_bag_dense_backward(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                                    const Tensor& bag_size, const Tensor& max_indices, int64_t num_weights,
                                    bool scale_grad_by_freq, int64_t mode, const std::optional<Tensor>& psw,
                                    int64_t padding_idx) {
  const int64_t n = indices.numel(), dim = grad.size(1), num_bags = grad.size(0);
  Tensor idx = indices.to(at::kLong);
  Tensor gw = at::zeros({num_weights, dim}, grad.options());
  if (n == 0)
    return gw;
  Tensor freq;
  if (scale_grad_by_freq)
    freq = at::zeros({num_weights}, grad.options()).index_add_(0, idx, at::ones({n}, grad.options()));
  if (mode == kMax) {
    Tensor mi = max_indices.reshape({-1});
    Tensor g = grad.reshape({-1});
    Tensor keep = mi >= 0;
    if (padding_idx >= 0)
      keep = keep & (mi != padding_idx);
    Tensor safe = at::where(keep, mi, 0);
    if (scale_grad_by_freq)
      g = g / freq.index_select(0, safe).clamp_min(1);
    Tensor flat = safe * dim + at::arange(dim, mi.options()).repeat({num_bags});
    gw.view({-1}).index_add_(0, flat, at::where(keep, g, 0.0).to(grad.scalar_type()));
    return gw;
  }
  Tensor bag = at::where(offset2bag < num_bags, offset2bag, 0);
  Tensor in_range = offset2bag < num_bags;
  Tensor g = grad.index_select(0, bag);
  if (mode == kMean)
    g = g / bag_size.index_select(0, bag).clamp_min(1).unsqueeze(1).to(grad.scalar_type());
  if (psw.has_value() && psw->defined())
    g = g * psw->unsqueeze(1);
  if (scale_grad_by_freq)
    g = g / freq.index_select(0, idx).unsqueeze(1);
  Tensor keep = in_range;
  if (padding_idx >= 0)
    keep = keep & (idx != padding_idx);
  gw.index_add_(0, idx, at::where(keep.unsqueeze(1), g, 0.0).to(grad.scalar_type()));
  return gw;
}

Tensor embedding_bag_psw_backward(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                  const Tensor& offsets, const Tensor& offset2bag, int64_t mode, int64_t padding_idx) {
  TORCH_CHECK(mode == kSum, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  Tensor idx = indices.to(at::kLong);
  const int64_t num_bags = grad.size(0);
  Tensor in_range = offset2bag < num_bags;
  Tensor bag = at::where(in_range, offset2bag, 0);
  Tensor r = (grad.index_select(0, bag) * weight.index_select(0, idx)).sum(1);
  Tensor keep = in_range;
  if (padding_idx >= 0)
    keep = keep & (idx != padding_idx);
  return at::where(keep, r, 0.0).to(grad.scalar_type());
}

Tensor embedding_bag_backward(const Tensor& grad, const Tensor& indices, const Tensor& offsets,
                              const Tensor& offset2bag, const Tensor& bag_size, const Tensor& max_indices,
                              int64_t num_weights, bool scale_grad_by_freq, int64_t mode, bool sparse,
                              const std::optional<Tensor>& psw, int64_t padding_idx) {
  TORCH_CHECK_NOT_IMPLEMENTED(!sparse, "embedding_bag(sparse=True): sparse gradients are not supported on the ocl "
                              "device; use sparse=False");
  return embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, max_indices, num_weights,
                                      scale_grad_by_freq, mode, psw, padding_idx);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_embedding_bag_backward", embedding_bag_backward);
  m.impl("_embedding_bag", embedding_bag);
  m.impl("_embedding_bag_forward_only", embedding_bag);
  m.impl("_embedding_bag_dense_backward", embedding_bag_dense_backward);
  m.impl("_embedding_bag_per_sample_weights_backward", embedding_bag_psw_backward);
}

}  // namespace
}  // namespace torch_ocl
