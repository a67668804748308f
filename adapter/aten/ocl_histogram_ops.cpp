// ocl_histogram_ops.cpp - torch.histogram and torch.histogramdd, composed
// from ops native on ocl: bin edges as the CPU's (range or the input's
// min/max, an empty range widened by 0.5 each side, linspace), bin indices by
// searchsorted (the upper bound the CPU kernel's search finds, the rightmost
// edge inclusive), weights summed with index_add, density as the CPU
// normalizes it.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <tuple>
#include <vector>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

void hist_check_inputs(const Tensor& self, const std::optional<Tensor>& weight, int64_t n_dims) {
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions, but got ",
              self.dim());
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "torch.histogramdd: input tensor must be floating point, got ",
              self.scalar_type());
  TORCH_CHECK(self.size(-1) == n_dims, "torch.histogramdd: expected ", n_dims, " sequences of bin edges for a ",
              self.size(-1), "-dimensional histogram but got ", n_dims);
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->scalar_type() == self.scalar_type(), "torch.histogramdd: if weight tensor is provided, it "
                "should have the same dtype as the input tensor, but got weight ", weight->scalar_type(),
                " and input ", self.scalar_type());
    auto expect = self.sizes().slice(0, self.dim() - 1);
    TORCH_CHECK(weight->sizes() == expect, "torch.histogramdd: if weight tensor is provided it should have the same "
                "shape as the input tensor excluding its innermost dimension, but got input with shape ",
                self.sizes(), " and weight with shape ", weight->sizes());
  }
}

// The CPU's outer edges per dimension (select_outer_bin_edges): one host read
// of the input's min and max when no range is given.
std::pair<std::vector<double>, std::vector<double>> outer_edges(const Tensor& x2d,
                                                                std::optional<at::ArrayRef<double>> range) {
  const int64_t N = x2d.size(-1);
  std::vector<double> lo(N, 0.), hi(N, 1.);
  if (range.has_value()) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * N, "torch.histogramdd: for a ", N, "-dimensional histogram",
                " range should have ", 2 * N, " elements, but got ", range->size());
    for (int64_t d = 0; d < N; d++) {
      lo[d] = (*range)[2 * d];
      hi[d] = (*range)[2 * d + 1];
    }
  } else if (x2d.numel() > 0) {
    auto mm = at::aminmax(x2d, 0);
    Tensor mins = std::get<0>(mm).to(at::kDouble).cpu(), maxs = std::get<1>(mm).to(at::kDouble).cpu();
    for (int64_t d = 0; d < N; d++) {
      lo[d] = mins[d].item<double>();
      hi[d] = maxs[d].item<double>();
    }
  }
  for (int64_t d = 0; d < N; d++) {
    TORCH_CHECK(std::isfinite(lo[d]) && std::isfinite(hi[d]), "torch.histogramdd: dimension ", d, "'s range [", lo[d],
                ", ", hi[d], "] is not finite");
    TORCH_CHECK(lo[d] <= hi[d], "torch.histogramdd: min should not exceed max, but got", " min ", lo[d], " max ", hi[d],
                " for dimension ", d);
    if (lo[d] == hi[d]) {
      lo[d] -= 0.5;
      hi[d] += 0.5;
    }
  }
  return {lo, hi};
}

std::vector<Tensor> edges_from_counts(const Tensor& self, at::IntArrayRef bins,
                                      std::optional<at::ArrayRef<double>> range) {
  const int64_t N = self.size(-1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == N, "histogramdd: expected ", N, " bin counts but got ",
              bins.size());
  for (int64_t d = 0; d < N; d++)
    TORCH_CHECK(bins[d] > 0, "torch.histogramdd(): bins must be > 0, but got ", bins[d], " for dimension ", d);
  auto lh = outer_edges(self.reshape({-1, N}), range);
  std::vector<Tensor> edges;
  for (int64_t d = 0; d < N; d++)
    edges.push_back(at::linspace(lh.first[d], lh.second[d], bins[d] + 1, self.options()));
  return edges;
}

// Counts (or summed weights) over the grid of `edges`, shaped by their bin counts.
Tensor counts(const Tensor& self, at::TensorList edges, const std::optional<Tensor>& weight, bool density) {
  const int64_t N = self.size(-1);
  Tensor x = self.reshape({-1, N});
  const int64_t M = x.size(0);
  Tensor lin = at::zeros({M}, x.options().dtype(at::kLong));
  Tensor valid = at::ones({M}, x.options().dtype(at::kBool));
  int64_t stride = 1;
  std::vector<int64_t> shape(N);
  for (int64_t d = N - 1; d >= 0; d--) {
    const Tensor& e = edges[d];
    TORCH_CHECK(e.dim() == 1 && e.numel() >= 2, "torch.histogramdd: bins tensor should have one dimension and at "
                "least 2 elements, but got ", e.sizes());
    const int64_t nb = e.numel() - 1;
    Tensor xd = x.select(1, d).contiguous();
    Tensor pos = (at::searchsorted(e.contiguous(), xd, false, /*right=*/true) - 1).clamp_max(nb - 1);
    valid = valid & (xd >= e.select(0, 0)) & (xd <= e.select(0, nb));
    lin = lin + pos * stride;
    stride *= nb;
    shape[d] = nb;
  }
  lin = at::where(valid, lin, stride);  // out of range: one spare bin, dropped
  Tensor w = weight.has_value() && weight->defined() ? weight->reshape({-1}) : at::ones({M}, x.options());
  Tensor hist = at::zeros({stride + 1}, x.options()).index_add_(0, lin, w).narrow(0, 0, stride).reshape(shape);
  if (density) {
    hist.div_(hist.sum());
    for (int64_t d = 0; d < N; d++) {
      std::vector<int64_t> view(N, 1);
      view[d] = -1;
      hist.div_(edges[d].diff().view(view));
    }
  }
  return hist;
}

std::vector<Tensor> histdd_bin_edges(const Tensor& self, at::IntArrayRef bins,
                                     std::optional<at::ArrayRef<double>> range, const std::optional<Tensor>& weight,
                                     bool density) {
  hist_check_inputs(self, weight, static_cast<int64_t>(bins.size()));
  return edges_from_counts(self, bins, range);
}

Tensor histdd_from_bin_cts(const Tensor& self, at::IntArrayRef bins, std::optional<at::ArrayRef<double>> range,
                           const std::optional<Tensor>& weight, bool density) {
  hist_check_inputs(self, weight, static_cast<int64_t>(bins.size()));
  auto edges = edges_from_counts(self, bins, range);
  return counts(self, edges, weight, density);
}

Tensor histdd_from_bin_tensors(const Tensor& self, at::TensorList bins, const std::optional<Tensor>& weight,
                               bool density) {
  hist_check_inputs(self, weight, static_cast<int64_t>(bins.size()));
  for (const auto& b : bins)
    TORCH_CHECK(b.scalar_type() == self.scalar_type(), "torch.histogramdd: input tensor and bins tensors should ",
                "have the same dtype, but got input with dtype ", self.scalar_type(), " and bins with dtype ",
                b.scalar_type());
  return counts(self, bins, weight, density);
}

// torch.histogram's weight, flattened like its input (checked as the CPU does).
std::optional<Tensor> flat_weight(const Tensor& self, const std::optional<Tensor>& weight) {
  if (!weight.has_value() || !weight->defined())
    return std::nullopt;
  TORCH_CHECK(weight->sizes() == self.sizes(), "torch.histogram: if weight tensor is provided it should have the "
              "same shape as the input tensor, but got input with shape ", self.sizes(), " and weight with shape ",
              weight->sizes());
  return weight->reshape({-1});
}

std::tuple<Tensor, Tensor> histogram_bin_ct(const Tensor& self, int64_t bins, std::optional<at::ArrayRef<double>> range,
                                            const std::optional<Tensor>& weight, bool density) {
  Tensor x = self.reshape({-1, 1});
  std::optional<Tensor> w = flat_weight(self, weight);
  hist_check_inputs(x, w, 1);
  auto edges = edges_from_counts(x, {bins}, range);
  return {counts(x, edges, w, density), edges[0]};
}

std::tuple<Tensor, Tensor> histogram_bins(const Tensor& self, const Tensor& bins, const std::optional<Tensor>& weight,
                                          bool density) {
  TORCH_CHECK(bins.dim() == 1, "torch.histogram: bins tensor should have 1 dimension, but got ", bins.dim(),
              " dimensions");
  Tensor x = self.reshape({-1, 1});
  std::optional<Tensor> w = flat_weight(self, weight);
  Tensor b = bins.contiguous();
  return {histdd_from_bin_tensors(x, {b}, w, density), bins.clone()};
}

// The CPU's out= checks of torch.histogram (before anything is computed).
void hist_check_outs(const Tensor& self, const Tensor& hist, const Tensor& edges) {
  TORCH_CHECK(self.dtype() == hist.dtype(), "torch.histogram: input tensor and hist tensor should",
              " have the same dtype, but got input ", self.dtype(), " and hist ", hist.dtype());
  TORCH_CHECK(self.dtype() == edges.dtype(), "torch.histogram: input tensor and bin_edges tensor should",
              " have the same dtype, but got input ", self.dtype(), " and bin_edges ", edges.dtype());
}

std::tuple<Tensor&, Tensor&> deliver_hist(const std::tuple<Tensor, Tensor>& r, Tensor& hist, Tensor& edges) {
  at::native::resize_output(hist, std::get<0>(r).sizes());
  hist.copy_(std::get<0>(r));
  at::native::resize_output(edges, std::get<1>(r).sizes());
  edges.copy_(std::get<1>(r));
  return {hist, edges};
}

std::tuple<Tensor&, Tensor&> histogram_bin_ct_out(const Tensor& self, int64_t bins,
                                                  std::optional<at::ArrayRef<double>> range,
                                                  const std::optional<Tensor>& weight, bool density, Tensor& hist,
                                                  Tensor& edges) {
  hist_check_outs(self, hist, edges);
  return deliver_hist(histogram_bin_ct(self, bins, range, weight, density), hist, edges);
}

std::tuple<Tensor&, Tensor&> histogram_bins_out(const Tensor& self, const Tensor& bins,
                                                const std::optional<Tensor>& weight, bool density, Tensor& hist,
                                                Tensor& edges) {
  hist_check_outs(self, hist, edges);
  return deliver_hist(histogram_bins(self, bins, weight, density), hist, edges);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("histogram.bin_ct", histogram_bin_ct);
  m.impl("histogram.bin_ct_out", histogram_bin_ct_out);
  m.impl("histogram.bins_tensor", histogram_bins);
  m.impl("histogram.bins_tensor_out", histogram_bins_out);
  m.impl("_histogramdd_bin_edges", histdd_bin_edges);
  m.impl("_histogramdd_from_bin_cts", histdd_from_bin_cts);
  m.impl("_histogramdd_from_bin_tensors", histdd_from_bin_tensors);
}

}  // namespace
}  // namespace torch_ocl
