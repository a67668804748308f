// ocl_segment_reduce_ops.cpp - torch.segment_reduce (sum, mean, max, min,
// prod over consecutive segments given by lengths or offsets) and its
// backward, composed from ops native on ocl: each element's segment by
// searchsorted over the segment ends, the reduction by scatter_reduce from
// the CPU's start value (initial, or the reduction's identity), empty
// segments as the CPU fills them, and the CPU's gradient rules (ties of
// max/min share the gradient; prod's zeros get the product of the others).
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <string>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

enum class SegRed { Sum, Mean, Max, Min, Prod };

SegRed seg_reduction(c10::string_view r) {
  if (r == "sum")
    return SegRed::Sum;
  if (r == "mean")
    return SegRed::Mean;
  if (r == "max")
    return SegRed::Max;
  if (r == "min")
    return SegRed::Min;
  if (r == "prod")
    return SegRed::Prod;
  TORCH_CHECK(false, "reduce argument must be either sum, prod, max, min or mean, got ", r);
}

// The segments as offsets [*B, S + 1] (from lengths or given), the segment of
// every position along `axis` as an index shaped like data (S for none), and
// the segment lengths [*B, S].
struct Segments {
  Tensor offsets, lengths, index;
  int64_t count = 0;
};

Segments segments_of(const Tensor& data, const std::optional<Tensor>& lengths, const std::optional<Tensor>& offsets,
                     int64_t axis) {
  Segments s;
  if (offsets.has_value() && offsets->defined()) {
    s.offsets = offsets->to(at::kLong);
    s.lengths = s.offsets.diff(1, -1);
  } else {
    s.lengths = lengths->to(at::kLong);
    auto shape = s.lengths.sizes().vec();
    shape.back() = 1;
    s.offsets = at::cat({at::zeros(shape, s.lengths.options()), s.lengths.cumsum(-1)}, -1);
  }
  s.count = s.lengths.size(-1);
  // position j of data along axis lies in segment searchsorted(ends, j, right)
  const int64_t L = data.size(axis);
  auto bshape = s.offsets.sizes().vec();
  bshape.back() = L;
  Tensor pos = at::arange(L, s.offsets.options()).expand(bshape).contiguous();
  Tensor seg = at::searchsorted(s.offsets.narrow(-1, 1, s.count).contiguous(), pos, false, /*right=*/true);
  // broadcast over the dimensions after axis
  std::vector<int64_t> view = seg.sizes().vec();
  for (int64_t d = axis + 1; d < data.dim(); d++)
    view.push_back(1);
  s.index = seg.view(view).expand(data.sizes());
  return s;
}

void seg_checks(const Tensor& data, const std::optional<Tensor>& lengths, const std::optional<Tensor>& indices,
                const std::optional<Tensor>& offsets, int64_t axis, bool unsafe) {
  TORCH_CHECK(!indices.has_value(), "segment_reduce(): indices based reduction is not supported yet.");
  const bool has_len = lengths.has_value() && lengths->defined(), has_off = offsets.has_value() && offsets->defined();
  TORCH_CHECK(has_len || has_off, "segment_reduce(): Either lengths or offsets must be defined.");
  const Tensor& t = has_off ? *offsets : *lengths;
  TORCH_CHECK(data.get_device() == t.get_device(), "segment_reduce(): Expected all tensors to be on the same device");
  TORCH_CHECK(data.dim() >= t.dim(), "segment_reduce(): Expected data to have at least as many dims as ",
              has_off ? "offsets" : "lengths");
  TORCH_CHECK(axis == t.dim() - 1, "segment_reduce(): Expected axis to be the last dimension of ",
              has_off ? "offsets" : "lengths", " but got ", axis, ".");
  if (!has_off && !unsafe) {
    TORCH_CHECK(lengths->numel() == 0 || lengths->min().item<int64_t>() >= 0, "lengths contains negative value!");
    TORCH_CHECK(at::all(lengths->sum({-1}) == data.size(axis)).item<bool>(),
                "segment_reduce(): Expected all rows of lengths along axis ",
                "to sum to data.size(lengths.dim()-1) when !unsafe.");
  }
}

// Broadcast a [*B, S] per-segment tensor to the output's shape [*B, S, *rest].
Tensor per_segment(const Tensor& t, const Tensor& like, int64_t axis) {
  std::vector<int64_t> view = t.sizes().vec();
  for (int64_t d = axis + 1; d < like.dim(); d++)
    view.push_back(1);
  return t.view(view).expand(like.sizes());
}

Tensor ocl_segment_reduce(const Tensor& data, c10::string_view reduce, const std::optional<Tensor>& lengths,
                      const std::optional<Tensor>& indices, const std::optional<Tensor>& offsets, int64_t axis,
                      bool unsafe, const std::optional<at::Scalar>& initial) {
  axis = at::maybe_wrap_dim(axis, data.dim());
  seg_checks(data, lengths, indices, offsets, axis, unsafe);
  const SegRed red = seg_reduction(reduce);
  Segments s = segments_of(data, lengths, offsets, axis);
  auto oshape = data.sizes().vec();
  oshape[axis] = s.count + 1;  // a spare segment for positions past the last end, dropped
  double start;
  switch (red) {
  case SegRed::Max: start = -std::numeric_limits<double>::infinity(); break;
  case SegRed::Min: start = std::numeric_limits<double>::infinity(); break;
  case SegRed::Prod: start = 1; break;
  default: start = 0;
  }
  if (initial.has_value())
    start = initial->toDouble();
  const char* how = red == SegRed::Max ? "amax" : red == SegRed::Min ? "amin" : red == SegRed::Prod ? "prod" : "sum";
  Tensor out = at::full(oshape, start, data.options()).scatter_reduce_(axis, s.index, data, how, /*include_self=*/true);
  out = out.narrow(axis, 0, s.count);
  if (red == SegRed::Max || red == SegRed::Min) {  // a NaN in a segment makes it NaN, as the CPU
    Tensor nan = at::zeros(oshape, data.options()).scatter_add_(axis, s.index, data.isnan().to(data.scalar_type()));
    out = at::where(nan.narrow(axis, 0, s.count) > 0, std::numeric_limits<double>::quiet_NaN(), out);
  }
  if (red == SegRed::Mean) {
    Tensor len = per_segment(s.lengths, out, axis).to(data.scalar_type());
    Tensor empty_value = initial.has_value() ? at::full({}, start, data.options())
                                             : at::full({}, std::numeric_limits<double>::quiet_NaN(), data.options());
    out = at::where(len > 0, out / len, empty_value);
  }
  return out.contiguous();
}

Tensor& segment_reduce_out(const Tensor& data, c10::string_view reduce, const std::optional<Tensor>& lengths,
                           const std::optional<Tensor>& indices, const std::optional<Tensor>& offsets, int64_t axis,
                           bool unsafe, const std::optional<at::Scalar>& initial, Tensor& out) {
  Tensor r = ocl_segment_reduce(data, reduce, lengths, indices, offsets, axis, unsafe, initial);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor segment_reduce_backward(const Tensor& grad, const Tensor& output, const Tensor& data, c10::string_view reduce,
                               const std::optional<Tensor>& lengths, const std::optional<Tensor>& offsets,
                               int64_t axis, const std::optional<at::Scalar>& initial) {
  axis = at::maybe_wrap_dim(axis, data.dim());
  const SegRed red = seg_reduction(reduce);
  Segments s = segments_of(data, lengths, offsets, axis);
  // per-segment values gathered back to every element (the spare segment reads 0)
  auto padded = [&](const Tensor& t) {
    auto shape = t.sizes().vec();
    shape[axis] = 1;
    return at::cat({t, at::zeros(shape, t.options())}, axis);
  };
  auto at_elements = [&](const Tensor& per_seg) { return padded(per_seg).gather(axis, s.index); };
  Tensor g = at_elements(grad.contiguous());
  switch (red) {
  case SegRed::Sum:
    return g;
  case SegRed::Mean: {
    Tensor len = per_segment(s.lengths, output, axis).to(grad.scalar_type());
    return at_elements(at::where(len > 0, grad / len, at::zeros({}, grad.options())));
  }
  case SegRed::Max:
  case SegRed::Min: {
    Tensor hit = (data.isnan() | (data == at_elements(output))).to(grad.scalar_type());
    auto cshape = output.sizes().vec();
    cshape[axis] = s.count + 1;
    Tensor ties = at::zeros(cshape, grad.options()).scatter_add_(axis, s.index, hit);
    Tensor share = padded(grad / ties.narrow(axis, 0, s.count).clamp_min(1)).gather(axis, s.index);
    return share * hit;
  }
  case SegRed::Prod: {
    // nonzero elements: grad * output / x; a zero (or NaN) element: grad times
    // the product of the others (initial included), nonzero only if it is
    // its segment's one zero
    Tensor special = data.isnan() | (data == 0);
    Tensor safe = at::where(special, at::ones({}, data.options()), data);
    auto cshape = output.sizes().vec();
    cshape[axis] = s.count + 1;
    double start = initial.has_value() ? initial->toDouble() : 1.0;
    Tensor prod_others = at::full(cshape, start, data.options()).scatter_reduce_(axis, s.index, safe, "prod", true);
    Tensor nspecial = at::zeros(cshape, data.options()).scatter_add_(axis, s.index, special.to(data.scalar_type()));
    Tensor excl = prod_others.gather(axis, s.index) * (nspecial.gather(axis, s.index) == 1).to(data.scalar_type());
    return at::where(special, g * excl, g * at_elements(output) / safe);
  }
  }
  return g;
}

Tensor& segment_reduce_backward_out(const Tensor& grad, const Tensor& output, const Tensor& data,
                                    c10::string_view reduce, const std::optional<Tensor>& lengths,
                                    const std::optional<Tensor>& offsets, int64_t axis,
                                    const std::optional<at::Scalar>& initial, Tensor& out) {
  Tensor r = segment_reduce_backward(grad, output, data, reduce, lengths, offsets, axis, initial);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("segment_reduce", ocl_segment_reduce);
  m.impl("segment_reduce.out", segment_reduce_out);
  m.impl("_segment_reduce_backward", segment_reduce_backward);
  m.impl("_segment_reduce_backward.out", segment_reduce_backward_out);
}

}  // namespace
}  // namespace torch_ocl
