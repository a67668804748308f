// ocl_sort_ops.cpp - the sort/search family on ocl: sort, topk, kthvalue,
// median, nanmedian, mode, searchsorted, bucketize, histc, bincount, unique,
// unique_consecutive, isin, repeat_interleave. Shapes, checks and messages follow PyTorch's CPU
// kernels; the work is include/tocl/sort.h. Ops whose output size depends
// on the data (unique, bincount, histc without a range, the sorter check of
// searchsorted) read a count or a range back: those host waits are in the
// runtime calls marked "host wait" and are commented where they are used.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SortingUtils.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/stack.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Half.h>
#include <c10/util/BFloat16.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "../fallback.h"
#include "ocl_common.h"
#include "tocl/sort.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

constexpr int64_t kMaxRowDims = 11;  // TOCL_SORT_MAX_BATCH batch dims + the row

// t with dim moved last (a view); a 0-dim tensor becomes one row of 1.
at::Tensor rows_view(const at::Tensor& t, int64_t dim) {
  if (t.dim() == 0)
    return t.unsqueeze(0);
  return dim == t.dim() - 1 ? t : t.transpose(dim, -1);
}

bool overlaps(const at::Tensor& a, const at::Tensor& b) {
  return at::get_overlap_status(a, b) != at::MemOverlapStatus::No;
}

// Sort self along dim and write the selection `take` into values/indices,
// which already have self's shape with size kout (or 1) at dim.
void run_sort(const at::Tensor& self, int64_t dim, const at::Tensor& values, const at::Tensor& indices, bool desc,
              tocl_sort_take take, int64_t k) {
  if (values.numel() == 0)
    return;
  c10::DeviceGuard guard(self.device());
  int dev = self.device().index();
  at::Tensor src = rows_view(self, dim), vr = rows_view(values, dim), ir = rows_view(indices, dim);
  bool big = self.dim() > kMaxRowDims;
  bool tmp = big || overlaps(values, self) || overlaps(indices, self);
  if (big)
    src = src.contiguous();
  at::Tensor vo = tmp ? at::empty(vr.sizes(), vr.options()) : vr;
  at::Tensor io = tmp ? at::empty(ir.sizes(), ir.options()) : ir;
  tocl_tensor a = to_tocl_tensor(src), b = to_tocl_tensor(vo), c = to_tocl_tensor(io);
  TOCL_CHECK(tocl_sort_rows(dev, current_stream(dev), &a, &b, &c, desc ? 1 : 0, take, k));
  if (tmp) {
    vr.copy_(vo);
    ir.copy_(io);
  }
}

void check_outputs(const at::Tensor& self, const at::Tensor& values, const at::Tensor& indices) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "output values must be of same type as input, got ",
              values.scalar_type(), " for input of ", self.scalar_type());
  TORCH_CHECK(indices.scalar_type() == at::kLong, "output indices must be of scalar type Long");
}

// ---- sort, topk ----

std::tuple<at::Tensor&, at::Tensor&> sort_out(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                              bool descending, at::Tensor& values, at::Tensor& indices) {
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  check_outputs(self, values, indices);
  resize_out(values, self.sizes());
  resize_out(indices, self.sizes());
  run_sort(self, dim, values, indices, descending, TOCL_SORT_TAKE_RANGE, 0);  // always stable
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                        bool descending) {
  at::Tensor values = at::empty(self.sizes(), self.options());
  at::Tensor indices = at::empty(self.sizes(), self.options().dtype(at::kLong));
  sort_out(self, stable, dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, c10::SymInt k_, int64_t dim, bool largest,
                                              bool sorted, at::Tensor& values, at::Tensor& indices) {
  int64_t k = k_.guard_int(__FILE__, __LINE__);
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  TORCH_CHECK(self.scalar_type() != at::kBool, "topk does not support bool dtypes on ocl");
  TORCH_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.size(dim) : 1), "selected index k out of range");
  check_outputs(self, values, indices);
  auto sizes = self.sizes().vec();
  if (!sizes.empty())
    sizes[dim] = k;
  resize_out(values, sizes);
  resize_out(indices, sizes);
  // Full sort of each row, then its first k: sorted=False is sorted too.
  run_sort(self, dim, values, indices, largest, TOCL_SORT_TAKE_RANGE, 0);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest,
                                        bool sorted) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  topk_out(self, k, dim, largest, sorted, values, indices);
  return {values, indices};
}

// ---- one value per row: kthvalue, median, nanmedian, mode ----

void select_out(const at::Tensor& self, int64_t dim, bool keepdim, tocl_sort_take take, int64_t k,
                at::Tensor& values, at::Tensor& indices) {
  at::native::_reduction_with_indices_allocate_or_resize_output(values, indices, self, dim, keepdim);
  run_sort(self, dim, values, indices, false, take, k);
  if (!keepdim && self.dim() > 0) {
    values.squeeze_(dim);
    indices.squeeze_(dim);
  }
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, c10::SymInt k_, int64_t dim,
                                                  bool keepdim, at::Tensor& values, at::Tensor& indices) {
  int64_t k = k_.guard_int(__FILE__, __LINE__);
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  at::native::zero_numel_check_dims(self, dim, "kthvalue()");
  int64_t slice = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK(k >= 1 && k <= slice, "kthvalue(): selected number k out of range for dimension ", dim);
  select_out(self, dim, keepdim, TOCL_SORT_TAKE_KTH, k - 1, values, indices);
  return {values, indices};
}

template <tocl_sort_take TAKE>
std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                    at::Tensor& values, at::Tensor& indices) {
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  at::native::zero_numel_check_dims(self, dim, TAKE == TOCL_SORT_TAKE_MEDIAN ? "median()" : "nanmedian()");
  select_out(self, dim, keepdim, TAKE, 0, values, indices);
  return {values, indices};
}

// median() / nanmedian() over all elements: a 0-dim result (NaN if empty).
template <tocl_sort_take TAKE>
at::Tensor median_all(const at::Tensor& self) {
  if (self.numel() == 0)
    return at::full({}, std::numeric_limits<double>::quiet_NaN(), self.options());
  at::Tensor flat = self.reshape({-1});
  at::Tensor values = at::empty({1}, self.options());
  at::Tensor indices = at::empty({1}, self.options().dtype(at::kLong));
  run_sort(flat, 0, values, indices, false, TAKE, 0);
  return values.squeeze(0);
}

std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values,
                                              at::Tensor& indices) {
  // (mode.values has only a composite kernel, which refuses every device but
  // the CPU, CUDA and XPU.) The CPU's checks and messages:
  TORCH_CHECK(self.scalar_type() == values.scalar_type(), "expected scalar type '", self.scalar_type(),
              "' but got '", values.scalar_type(), "' for values output");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "expected scalar type '", at::kLong, "' but got '",
              indices.scalar_type(), "' for indices output");
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  at::native::zero_numel_check_dims(self, dim, "mode()");
  select_out(self, dim, keepdim, TOCL_SORT_TAKE_MODE, 0, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  at::native::zero_numel_check_dims(self, dim, "mode()");
  at::Tensor values, indices;
  select_out(self, dim, keepdim, TOCL_SORT_TAKE_MODE, 0, values, indices);
  return {values, indices};
}

// ---- searchsorted, bucketize ----

at::Tensor& searchsorted_out(const at::Tensor& boundaries, const at::Tensor& input, bool out_int32, bool right,
                             std::optional<std::string_view> side, const std::optional<at::Tensor>& sorter_opt,
                             at::Tensor& result) {
  at::Tensor sorter = sorter_opt.has_value() ? *sorter_opt : at::Tensor();
  // PyTorch's checks, except the sorter's range (it would read it through
  // aminmax on the CPU path): that one is done below on the device.
  at::native::searchsorted_pre_check(boundaries, input, result, out_int32, right, side, at::Tensor());
  if (sorter.defined()) {
    TORCH_CHECK(sorter.device() == boundaries.device(), "torch.searchsorted(): sorter and boundary tensors should ",
                "have same device type, but got sorter tensor device type ", sorter.device(),
                " and input value tensor device type ", boundaries.device());
    TORCH_CHECK(sorter.sizes() == boundaries.sizes(), "torch.searchsorted(): boundary and sorter must have the same "
                "size, but got boundary tensor ", boundaries.sizes(), "and got sorter tensor ", sorter.sizes());
    TORCH_CHECK(sorter.scalar_type() == at::kLong, "torch.searchsorted(): sorter must be a tensor of long ",
                "dtype but got dtype ", sorter.scalar_type());
  }
  resize_out(result, input.sizes());
  if (input.numel() == 0)
    return result;
  c10::DeviceGuard guard(input.device());
  int dev = input.device().index();
  if (sorter.defined() && sorter.numel() > 0) {
    tocl_tensor st = to_tocl_tensor(sorter.reshape({-1}));
    tocl_scalar mn, mx;
    int nan = 0;
    // Host wait: an out-of-range sorter is an error PyTorch raises.
    TOCL_CHECK(tocl_minmax(dev, current_stream(dev), &st, &mn, &mx, &nan));
    TORCH_CHECK(mn.i >= 0 && mx.i < sorter.sizes().back(), "torch.searchsorted(): sorter index out of range");
  }
  bool is_right = (side && *side == "right") || right;
  at::Tensor bd = boundaries, in = input;
  if (bd.scalar_type() != in.scalar_type()) {
    at::native::ResultTypeState state = {};
    state = at::native::update_result_type_state(boundaries, state);
    state = at::native::update_result_type_state(input, state);
    auto common = at::native::result_type(state);
    bd = bd.to(common);
    in = in.to(common);
  }
  at::Tensor vr = rows_view(in, -1), outr = rows_view(result, -1);
  at::Tensor sr = sorter.defined() ? sorter : at::Tensor();
  if (bd.dim() == 1 && vr.dim() > 1) {  // one boundary row for every value row
    auto sizes = vr.sizes().vec();
    sizes.back() = bd.size(0);
    bd = bd.expand(sizes);
    if (sr.defined())
      sr = sr.expand(sizes);
  }
  bool big = vr.dim() > kMaxRowDims;
  if (big) {
    vr = vr.contiguous();
    bd = bd.contiguous();
    if (sr.defined())
      sr = sr.contiguous();
  }
  at::Tensor out = (big || overlaps(result, input) || overlaps(result, boundaries)) ? at::empty(outr.sizes(), outr.options())
                                                                                 : outr;
  tocl_tensor tb = to_tocl_tensor(bd), tv = to_tocl_tensor(vr), to = to_tocl_tensor(out), ts;
  if (sr.defined())
    ts = to_tocl_tensor(sr);
  TOCL_CHECK(tocl_searchsorted(dev, current_stream(dev), &tb, &tv, sr.defined() ? &ts : nullptr, &to,
                               is_right ? 1 : 0));
  if (!out.is_same(outr))
    outr.copy_(out);
  return result;
}

at::Tensor ocl_searchsorted(const at::Tensor& boundaries, const at::Tensor& input, bool out_int32, bool right,
                            std::optional<std::string_view> side, const std::optional<at::Tensor>& sorter) {
  at::Tensor result = at::empty({0}, input.options().dtype(out_int32 ? at::kInt : at::kLong));
  return searchsorted_out(boundaries, input, out_int32, right, side, sorter, result);
}

at::Tensor& searchsorted_scalar_out(const at::Tensor& boundaries, const c10::Scalar& v, bool out_int32, bool right,
                                    std::optional<std::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& result) {
  return searchsorted_out(boundaries, at::native::searchsorted_scalar_tensor(v, boundaries.device()), out_int32,
                          right, side, sorter, result);
}

at::Tensor searchsorted_scalar(const at::Tensor& boundaries, const c10::Scalar& v, bool out_int32, bool right,
                               std::optional<std::string_view> side, const std::optional<at::Tensor>& sorter) {
  return ocl_searchsorted(boundaries, at::native::searchsorted_scalar_tensor(v, boundaries.device()), out_int32,
                          right, side, sorter);
}

at::Tensor& bucketize_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right,
                          at::Tensor& result) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted_out(boundaries, self, out_int32, right, std::nullopt, std::nullopt, result);
}

at::Tensor ocl_bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  at::Tensor result = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return bucketize_out(self, boundaries, out_int32, right, result);
}

at::Tensor bucketize_scalar(const c10::Scalar& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  return ocl_bucketize(at::native::searchsorted_scalar_tensor(self, boundaries.device()), boundaries, out_int32,
                       right);
}

// ---- histc, bincount ----

// A double rounded to the storage precision of a floating dtype.
double round_to(double v, at::ScalarType t) {
  switch (t) {
    case at::kHalf: return static_cast<float>(c10::Half(static_cast<float>(v)));
    case at::kBFloat16: return static_cast<float>(c10::BFloat16(static_cast<float>(v)));
    case at::kFloat: return static_cast<float>(v);
    default: return v;
  }
}

at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const c10::Scalar& min, const c10::Scalar& max,
                      at::Tensor& out) {
  // Integer input, as CUDA takes it (Hugging Face's mixture-of-experts layers count tokens per
  // expert with histc on int32 ids off the CPU): binned in double, exact for every int32 and
  // for int64 below 2^53, or in float where the device lacks fp64; the counts keep self's dtype.
  if (at::isIntegralType(self.scalar_type(), /*includeBool=*/false)) {
    TORCH_CHECK(out.scalar_type() == self.scalar_type(), "torch.histogram: input tensor and hist tensor should",
                " have the same dtype, but got input ", self.scalar_type(), " and hist ", out.scalar_type());
    tocl_device_props props;
    TOCL_CHECK(tocl_device_props_get(self.device().index(), &props));
    at::Tensor wide = self.to(props.has_fp64 ? at::kDouble : at::kFloat);
    at::Tensor counts = at::empty({0}, wide.options());
    histc_out(wide, bins, min, max, counts);
    resize_out(out, counts.sizes());
    return out.copy_(counts);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"histogram_cpu\" not implemented for '",
                              self.scalar_type(), "'");
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "torch.histogram: input tensor and hist tensor should",
              " have the same dtype, but got input ", self.scalar_type(), " and hist ", out.scalar_type());
  c10::DeviceGuard guard(self.device());
  int dev = self.device().index();
  at::Tensor flat = self.reshape({-1});
  double lo = min.toDouble(), hi = max.toDouble();
  if (lo == hi && self.numel() > 0) {
    tocl_tensor t = to_tocl_tensor(flat);
    tocl_scalar mn, mx;
    int nan = 0;
    // Host wait: the data's range sets the bins and may be an error.
    TOCL_CHECK(tocl_minmax(dev, current_stream(dev), &t, &mn, &mx, &nan));
    lo = nan ? std::numeric_limits<double>::quiet_NaN() : mn.f;
    hi = nan ? std::numeric_limits<double>::quiet_NaN() : mx.f;
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)), "torch.histc: range of [",
              lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  resize_out(out, {bins});
  double rlo = round_to(lo, self.scalar_type()), rhi = round_to(hi, self.scalar_type());
  TORCH_CHECK(rlo < rhi, "torch.histc: range [", lo, ", ", hi, "] is empty in ", self.scalar_type());
  tocl_tensor t = to_tocl_tensor(flat), o = to_tocl_tensor(out);
  TOCL_CHECK(tocl_histc(dev, current_stream(dev), &t, &o, rlo, rhi));
  return out;
}

at::Tensor histc(const at::Tensor& self, int64_t bins, const c10::Scalar& min, const c10::Scalar& max) {
  at::Tensor out = at::empty({0}, self.options());
  return histc_out(self, bins, min, max, out);
}

// Stable ascending sort of a 1-D tensor: (sorted values, permutation).
std::pair<at::Tensor, at::Tensor> sort_1d(const at::Tensor& flat) {
  at::Tensor values = at::empty({flat.numel()}, flat.options());
  at::Tensor perm = at::empty({flat.numel()}, flat.options().dtype(at::kLong));
  run_sort(flat, 0, values, perm, false, TOCL_SORT_TAKE_RANGE, 0);
  return {values, perm};
}

at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt, c10::SymInt minlength_) {
  int64_t minlength = minlength_.guard_int(__FILE__, __LINE__);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(self.scalar_type(), /*includeBool=*/false),
                              "\"bincount_cpu\" not implemented for '", self.scalar_type(), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  bool has_w = weights_opt.has_value() && weights_opt->defined();
  at::ScalarType out_t = !has_w ? at::kLong : weights_opt->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
  auto opts = self.options().dtype(out_t);
  if (self.dim() == 1 && self.numel() == 0)  // int64 even with weights, as on the CPU
    return at::zeros({minlength}, self.options().dtype(at::kLong));
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  if (has_w)
    TORCH_CHECK(weights_opt->dim() == 1 && weights_opt->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  c10::DeviceGuard guard(self.device());
  int dev = self.device().index();
  at::Tensor x = self.to(at::kLong);
  tocl_tensor tx = to_tocl_tensor(x);
  tocl_scalar mn, mx;
  int nan = 0;
  // Host wait: the largest value sets the output size (and a negative one is an error).
  TOCL_CHECK(tocl_minmax(dev, current_stream(dev), &tx, &mn, &mx, &nan));
  TORCH_CHECK(mn.i >= 0, "bincount only supports 1-d non-negative integral inputs.");
  int64_t nbins = std::max(mx.i + 1, minlength);
  auto [sorted, perm] = sort_1d(x);
  at::Tensor out = at::empty({nbins}, opts);
  at::Tensor w = has_w ? weights_opt->to(out_t) : at::Tensor();
  tocl_tensor ts = to_tocl_tensor(sorted), tp = to_tocl_tensor(perm), to = to_tocl_tensor(out), tw;
  if (has_w)
    tw = to_tocl_tensor(w);
  TOCL_CHECK(tocl_bincount_sorted(dev, current_stream(dev), &ts, &tp, has_w ? &tw : nullptr, &to));
  return out;
}

// ---- unique, unique_consecutive ----

// Groups of `seq` (1-D contiguous; sorted, or in input order when perm is
// undefined): (values, inverse shaped like `shape_of`, counts).
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_groups(const at::Tensor& self, const at::Tensor& seq,
                                                              const at::Tensor& perm, bool return_inverse,
                                                              bool return_counts) {
  int dev = self.device().index();
  at::Tensor gid = at::empty({seq.numel()}, self.options().dtype(at::kLong));
  tocl_tensor ts = to_tocl_tensor(seq), tg = to_tocl_tensor(gid);
  int64_t count = 0;
  // Host wait: the number of distinct values sizes the outputs.
  TOCL_CHECK(tocl_unique_groups(dev, current_stream(dev), &ts, &tg, &count));
  at::Tensor values = at::empty({count}, self.options());
  at::Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, self.options().dtype(at::kLong));
  at::Tensor counts = at::empty({return_counts ? count : 0}, self.options().dtype(at::kLong));
  tocl_tensor tv = to_tocl_tensor(values), ti = to_tocl_tensor(inverse), tc = to_tocl_tensor(counts), tp;
  if (perm.defined())
    tp = to_tocl_tensor(perm);
  TOCL_CHECK(tocl_unique_fill(dev, current_stream(dev), &ts, perm.defined() ? &tp : nullptr, &tg, count, &tv,
                              return_inverse ? &ti : nullptr, return_counts ? &tc : nullptr));
  return {values, inverse, counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool sorted, bool return_inverse,
                                                       bool return_counts) {
  if (self.numel() == 0) {
    return {at::empty({0}, self.options()),
            at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, self.options().dtype(at::kLong)),
            at::empty({0}, self.options().dtype(at::kLong))};
  }
  c10::DeviceGuard guard(self.device());
  // Always sorted: sorted=False leaves the order unspecified.
  auto [seq, perm] = sort_1d(self.reshape({-1}));
  return unique_groups(self, seq, perm, return_inverse, return_counts);
}

std::tuple<at::Tensor, at::Tensor> unique(const at::Tensor& self, bool sorted, bool return_inverse) {
  auto [values, inverse, counts] = unique2(self, sorted, return_inverse, false);
  return {values, inverse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self, bool return_inverse,
                                                                  bool return_counts, std::optional<int64_t> dim) {
  if (dim.has_value() && !(self.dim() == 1 && at::maybe_wrap_dim(*dim, 1) == 0)) {
    // Slices along a dim: not native yet. Run it on the CPU under the
    // fallback policy, so it is counted and visible like any fallback.
    note_fallback("aten::unique_consecutive (dim=)");
    auto [v, i, c] = at::unique_consecutive(self.cpu(), return_inverse, return_counts, dim);
    return {v.to(self.device()), i.to(self.device()), c.to(self.device())};
  }
  if (self.numel() == 0) {
    return {at::empty({0}, self.options()),
            at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, self.options().dtype(at::kLong)),
            at::empty({0}, self.options().dtype(at::kLong))};
  }
  c10::DeviceGuard guard(self.device());
  return unique_groups(self, self.reshape({-1}).contiguous(), at::Tensor(), return_inverse, return_counts);
}

// ---- isin ----

void check_isin_dtype(at::ScalarType t) {
  TORCH_CHECK(t != at::kBool && !at::isComplexType(t), "Unsupported input type encountered for isin(): ", t);
}

at::Tensor& isin_out(const at::Tensor& elements, const at::Tensor& test, bool assume_unique, bool invert,
                     at::Tensor& out) {
  check_isin_dtype(elements.scalar_type());
  check_isin_dtype(test.scalar_type());
  TORCH_CHECK(out.scalar_type() == at::kBool, "isin: out must be a bool tensor, got ", out.scalar_type());
  resize_out(out, elements.sizes());
  if (elements.numel() == 0)
    return out;
  if (test.numel() == 0)
    return out.fill_(invert);
  c10::DeviceGuard guard(elements.device());
  int dev = elements.device().index();
  auto common = at::result_type(elements, test);
  at::Tensor el = elements.to(common);
  auto [sorted, perm] = sort_1d(test.to(common).reshape({-1}));
  at::Tensor er = rows_view(el, -1), outr = rows_view(out, -1);
  bool big = er.dim() > kMaxRowDims;
  if (big)
    er = er.contiguous();
  at::Tensor o = (big || overlaps(out, elements) || overlaps(out, test)) ? at::empty(outr.sizes(), outr.options())
                                                                         : outr;
  tocl_tensor te = to_tocl_tensor(er), tt = to_tocl_tensor(sorted), to = to_tocl_tensor(o);
  TOCL_CHECK(tocl_isin_sorted(dev, current_stream(dev), &te, &tt, &to, invert ? 1 : 0));
  if (!o.is_same(outr))
    outr.copy_(o);
  return out;
}

at::Tensor isin(const at::Tensor& elements, const at::Tensor& test, bool assume_unique, bool invert) {
  at::Tensor out = at::empty({0}, elements.options().dtype(at::kBool));
  return isin_out(elements, test, assume_unique, invert, out);
}

at::Tensor& isin_ts_out(const at::Tensor& elements, const c10::Scalar& test, bool assume_unique, bool invert,
                        at::Tensor& out) {
  return isin_out(elements, at::native::searchsorted_scalar_tensor(test, elements.device()), assume_unique, invert,
                  out);
}

at::Tensor isin_ts(const at::Tensor& elements, const c10::Scalar& test, bool assume_unique, bool invert) {
  at::Tensor out = at::empty({0}, elements.options().dtype(at::kBool));
  return isin_ts_out(elements, test, assume_unique, invert, out);
}

at::Tensor& isin_st_out(const c10::Scalar& element, const at::Tensor& test, bool assume_unique, bool invert,
                        at::Tensor& out) {
  return isin_out(at::native::searchsorted_scalar_tensor(element, test.device()), test, assume_unique, invert, out);
}

at::Tensor isin_st(const c10::Scalar& element, const at::Tensor& test, bool assume_unique, bool invert) {
  at::Tensor out = at::empty({0}, test.options().dtype(at::kBool));
  return isin_st_out(element, test, assume_unique, invert, out);
}

// ---- repeat_interleave ----

// repeat_interleave(repeats)[j] is the i with cumsum[i-1] <= j < cumsum[i]: a
// right-sided search of 0..total-1 in the inclusive cumsum, both native. The
// self_int / self_Tensor forms are composite (this + index_select). Checks and
// messages are the CPU kernel's. Host wait unless output_size is given: the
// total sizes the output and a negative repeat is an error (one read for both).
at::Tensor repeat_interleave_tensor(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  if (repeats.size(0) == 0)
    return at::empty_like(repeats, at::MemoryFormat::Contiguous);
  c10::DeviceGuard guard(repeats.device());
  at::Tensor cum = repeats.cumsum(0, at::kLong);
  int64_t total;
  if (output_size.has_value()) {
    total = output_size->expect_int();
    TORCH_CHECK(total >= 0, "repeat_interleave: output_size must be non-negative, got ", total);
  } else {
    at::Tensor host = at::stack({cum[-1], repeats.min().to(at::kLong)}).cpu();
    TORCH_CHECK(host[1].item<int64_t>() >= 0, "repeats can not be negative");
    total = host[0].item<int64_t>();
  }
  at::Tensor pos = at::arange(total, repeats.options().dtype(at::kLong));
  return at::searchsorted(cum, pos, repeats.scalar_type() == at::kInt, /*right=*/true);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("repeat_interleave.Tensor", repeat_interleave_tensor);
  m.impl("sort.stable", sort);
  m.impl("sort.values_stable", sort_out);
  m.impl("topk", topk);
  m.impl("topk.values", topk_out);
  m.impl("kthvalue.values", kthvalue_out);
  m.impl("median", median_all<TOCL_SORT_TAKE_MEDIAN>);
  m.impl("median.dim_values", median_dim_out<TOCL_SORT_TAKE_MEDIAN>);
  m.impl("nanmedian", median_all<TOCL_SORT_TAKE_NANMEDIAN>);
  m.impl("nanmedian.dim_values", median_dim_out<TOCL_SORT_TAKE_NANMEDIAN>);
  m.impl("mode", mode);
  m.impl("mode.values", mode_out);
  m.impl("searchsorted.Tensor", ocl_searchsorted);
  m.impl("searchsorted.Tensor_out", searchsorted_out);
  m.impl("searchsorted.Scalar", searchsorted_scalar);
  m.impl("searchsorted.Scalar_out", searchsorted_scalar_out);
  m.impl("bucketize.Tensor", ocl_bucketize);
  m.impl("bucketize.Tensor_out", bucketize_out);
  m.impl("bucketize.Scalar", bucketize_scalar);
  m.impl("histc", histc);
  m.impl("histc.out", histc_out);
  m.impl("bincount", bincount);
  m.impl("_unique2", unique2);
  m.impl("_unique", unique);
  m.impl("unique_consecutive", unique_consecutive);
  m.impl("isin.Tensor_Tensor", isin);
  m.impl("isin.Tensor_Tensor_out", isin_out);
  m.impl("isin.Tensor_Scalar", isin_ts);
  m.impl("isin.Tensor_Scalar_out", isin_ts_out);
  m.impl("isin.Scalar_Tensor", isin_st);
  m.impl("isin.Scalar_Tensor_out", isin_st_out);
}

}  // namespace torch_ocl
