// ocl_shape_ops.cpp - data movement without index tensors: cat (strided
// copies into slices of the output), flip, roll, tril/triu, reflection and
// replication pads and their backward (runtime/ops/shape.c); channel_shuffle. stack, split,
// chunk, tile, repeat, diag, diag_embed, constant_pad_nd and _pad_circular
// are PyTorch composites over these, views and copies.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_common.h"
#include "tocl/index.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

int dev_of(const at::Tensor& t) { return t.device().index(); }
int stream_of(const at::Tensor& t) { return tocl_stream_current(dev_of(t)); }

// ---- cat ------------------------------------------------------------------

// The legacy rule: 1-D empty tensors are skipped in shape checks.
bool skipped(const at::Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  auto list = tensors.materialize();
  TORCH_CHECK(!list.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const at::Tensor* ref = nullptr;
  for (size_t i = 0; i < list.size(); i++) {
    const at::Tensor& t = list[i];
    TORCH_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    TORCH_CHECK(t.device() == out.device(), "Expected all tensors to be on the same device, but found at least two devices, ",
                out.device(), " and ", t.device(), "!");
    if (!ref && !skipped(t))
      ref = &t;
  }
  auto dtype = at::native::result_type(tensors);
  // TORCH_CHECK_TYPE: a TypeError, as on the CPU
  TORCH_CHECK_TYPE(c10::canCast(dtype, out.scalar_type()),
                   "torch.cat(): input types can't be cast to the desired output type ", out.scalar_type());
  if (!ref) {  // every input is a skipped empty tensor
    resize_out(out, {0});
    return out;
  }
  dim = at::legacy_cat_wrap_dim(dim, list);
  std::vector<int64_t> sizes = ref->sizes().vec();
  int64_t total = 0;
  for (size_t i = 0; i < list.size(); i++) {
    const at::Tensor& t = list[i];
    if (skipped(t))
      continue;
    TORCH_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                t.dim());
    for (int64_t d = 0; d < t.dim(); d++)
      TORCH_CHECK(d == dim || t.size(d) == ref->size(d), "Sizes of tensors must match except in dimension ", dim,
                  ". Expected size ", ref->size(d), " but got size ", t.size(d), " for tensor number ", i,
                  " in the list.");
    total += t.size(dim);
  }
  sizes[dim] = total;
  for (size_t i = 0; i < list.size(); i++)
    if (!skipped(list[i]) && out.numel() > 0)
      at::assert_no_overlap(out, list[i]);
  resize_out(out, sizes);
  if (out.numel() == 0)
    return out;
  c10::DeviceGuard guard(out.device());
  std::vector<at::Tensor> parts;
  bool same_dtype = true;
  for (const at::Tensor& t : list) {
    if (skipped(t) || t.size(dim) == 0)
      continue;
    parts.push_back(t);
    same_dtype = same_dtype && t.scalar_type() == out.scalar_type();
  }
  int64_t off = 0;
  if (same_dtype && parts.size() > 1 && out.element_size() <= 8) {
    // Up to TOCL_CAT_MAX_SOURCES per launch: a KV cache's cat is one
    // launch, not two (runtime/ops/shape.c).
    for (size_t i = 0; i < parts.size(); i += TOCL_CAT_MAX_SOURCES) {
      size_t n = std::min(parts.size() - i, static_cast<size_t>(TOCL_CAT_MAX_SOURCES));
      int64_t len = 0;
      std::vector<tocl_tensor> ts(n);
      std::vector<const tocl_tensor*> ps(n);
      for (size_t k = 0; k < n; k++) {
        ts[k] = to_tocl_tensor(parts[i + k]);
        ps[k] = &ts[k];
        len += parts[i + k].size(dim);
      }
      tocl_tensor d = to_tocl_tensor(out.narrow(dim, off, len));
      TOCL_CHECK(tocl_shape_cat(dev_of(out), stream_of(out), &d, static_cast<int>(n), ps.data(),
                                static_cast<int>(dim)));
      off += len;
    }
    return out;
  }
  for (const at::Tensor& t : parts) {
    at::Tensor slice = out.narrow(dim, off, t.size(dim));
    tocl_tensor d = to_tocl_tensor(slice), s = to_tocl_tensor(t);
    TOCL_CHECK(tocl_op_copy(dev_of(out), stream_of(out), &d, &s));  // converts dtypes and layouts
    off += t.size(dim);
  }
  return out;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  auto list = tensors.materialize();
  TORCH_CHECK(!list.empty(), "torch.cat(): expected a non-empty list of Tensors");
  // Channels-last and other dense layouts of the inputs are not kept: the
  // output is contiguous, values are what the CPU gives.
  at::Tensor out = at::empty({0}, list[0].get().options().dtype(at::native::result_type(tensors)));
  return cat_out(tensors, dim, out);
}

// torch_ocl::cat_pair: (cat(a, dim), cat(b, dim)) in one launch when the
// two results have one shape and dtype (compile/cat_pairs.py pairs a
// decoding step's key and value cats: four launches fewer per step of a
// 4-layer model). Anything else is the two cats it replaced.
std::tuple<at::Tensor, at::Tensor> cat_pair(at::TensorList a, at::TensorList b, int64_t dim) {
  TORCH_CHECK(!a.empty() && !b.empty(), "cat_pair: expected two non-empty lists of tensors");
  const at::Tensor& ref = a[0];
  // dim in range for the first source, else at::cat says what is wrong (a
  // legacy 1-D empty source, which cat skips, ends here too)
  bool fast = a.size() + b.size() <= TOCL_CAT_MAX_SOURCES && ref.dim() > 0 && ref.element_size() <= 8 &&
              dim >= -ref.dim() && dim < ref.dim();
  int64_t d = fast ? at::maybe_wrap_dim(dim, ref.dim()) : 0;
  std::vector<int64_t> sizes[2];
  const at::TensorList lists[2] = {a, b};
  for (int g = 0; g < 2 && fast; g++) {
    sizes[g] = lists[g][0].sizes().vec();
    int64_t total = 0;
    for (const at::Tensor& t : lists[g]) {
      fast = fast && t.device() == ref.device() && t.scalar_type() == ref.scalar_type() && t.dim() == ref.dim();
      for (int64_t i = 0; fast && i < t.dim(); i++)
        fast = i == d || t.size(i) == sizes[g][i];
      total += fast ? t.size(d) : 0;
    }
    if (fast)
      sizes[g][d] = total;
  }
  fast = fast && sizes[0] == sizes[1] && c10::multiply_integers(sizes[0]) > 0;
  if (!fast)
    return {at::cat(a, dim), at::cat(b, dim)};
  at::Tensor out0 = at::empty(sizes[0], ref.options()), out1 = at::empty(sizes[1], ref.options());
  c10::DeviceGuard guard(ref.device());
  std::vector<tocl_tensor> ts;
  for (const at::TensorList& l : lists)
    for (const at::Tensor& t : l)
      ts.push_back(to_tocl_tensor(t));
  std::vector<const tocl_tensor*> ps;
  for (const tocl_tensor& t : ts)
    ps.push_back(&t);
  tocl_tensor d0 = to_tocl_tensor(out0), d1 = to_tocl_tensor(out1);
  TOCL_CHECK(tocl_shape_cat_pair(dev_of(out0), stream_of(out0), &d0, &d1, static_cast<int>(a.size()),
                                 static_cast<int>(ps.size()), ps.data(), static_cast<int>(d)));
  return {out0, out1};
}

// ---- remaps ---------------------------------------------------------------

void remap(const at::Tensor& dst, const at::Tensor& src, const std::vector<tocl_remap_mode>& modes,
           const std::vector<int64_t>& shift, const c10::Scalar& value = 0) {
  if (dst.numel() == 0)
    return;
  c10::DeviceGuard guard(dst.device());
  tocl_tensor d = to_tocl_tensor(dst), s = to_tocl_tensor(src);
  TOCL_CHECK(tocl_shape_remap(dev_of(dst), stream_of(dst), &d, &s, modes.data(), shift.data(), to_tocl_scalar(value)));
}

// ---- narrow_copy.out ----------------------------------------------------------
//
// The narrow view copied into out. (PyTorch has a CPU kernel only; it
// memcpy's into out as if out were contiguous, so a strided out gets the
// values scrambled and elements outside the view written.)
at::Tensor& narrow_copy_out(const at::Tensor& self, int64_t dim, c10::SymInt start, c10::SymInt length,
                            at::Tensor& out) {
  TORCH_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  at::Tensor view = self.narrow_symint(dim, std::move(start), std::move(length));
  resize_out(out, view.sizes());
  if (out.numel())
    out.copy_(view);
  return out;
}

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  auto flags = at::dim_list_to_bitset(dims, self.dim());
  at::Tensor out = at::empty(self.sizes(), self.options());
  std::vector<tocl_remap_mode> modes(self.dim(), TOCL_REMAP_ID);
  for (int64_t d = 0; d < self.dim(); d++)
    if (flags[d])
      modes[d] = TOCL_REMAP_FLIP;
  if (self.dim() == 0) {
    out.copy_(self);
    return out;
  }
  remap(out, self, modes, std::vector<int64_t>(self.dim(), 0));
  return out;
}

at::Tensor roll_impl(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    at::Tensor flat = self.contiguous().view({-1});
    int64_t zero[1] = {0};
    return roll_impl(flat, shifts, zero).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (self.numel() == 0)
    return out;
  std::vector<tocl_remap_mode> modes(self.dim(), TOCL_REMAP_ID);
  std::vector<int64_t> shift(self.dim(), 0);
  std::vector<int64_t> total(self.dim(), 0);
  for (size_t i = 0; i < dims.size(); i++) {
    // wrap_scalar=false: a 0-dim tensor has no dim 0 (the CPU's IndexError; wrapping it indexed an empty vector)
    int64_t d = at::maybe_wrap_dim(dims[i], self.dim(), /*wrap_scalar=*/false);
    total[d] += shifts[i];
    modes[d] = TOCL_REMAP_ROLL;
  }
  for (int64_t d = 0; d < self.dim(); d++) {
    int64_t n = self.size(d);
    shift[d] = ((total[d] % n) + n) % n;
  }
  remap(out, self, modes, shift);
  return out;
}

// ---- tril / triu ----------------------------------------------------------

template <int UPPER>
struct Tri {
  static at::Tensor& out(const at::Tensor& self, int64_t diagonal, at::Tensor& result) {
    TORCH_CHECK(self.dim() >= 2, UPPER ? "triu" : "tril", ": input tensor must have at least 2 dimensions");
    if (!result.is_same(self)) {
      TORCH_CHECK(result.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
                  ", but got ", result.scalar_type(), " instead");
      resize_out(result, self.sizes());
    }
    if (self.numel() == 0)
      return result;
    c10::DeviceGuard guard(self.device());
    tocl_tensor d = to_tocl_tensor(result), s = to_tocl_tensor(self);
    TOCL_CHECK(tocl_shape_tri(dev_of(self), stream_of(self), &d, &s, UPPER, diagonal));
    return result;
  }
  static at::Tensor fn(const at::Tensor& self, int64_t diagonal) {
    at::Tensor result = at::empty({0}, self.options());
    return out(self, diagonal, result);
  }
  static at::Tensor& inplace(at::Tensor& self, int64_t diagonal) { return out(self, diagonal, self); }
};

// ---- reflection / replication pads ----------------------------------------

// Output sizes for padding the last padding.size()/2 dims; checks follow the
// CPU's messages.
std::vector<int64_t> pad_sizes(const at::Tensor& self, at::IntArrayRef padding, int k, bool reflect) {
  const char* name = reflect ? "reflection_pad" : "replication_pad";
  TORCH_CHECK(static_cast<int>(padding.size()) == 2 * k, "padding size is expected to be ", 2 * k, ", but got: ",
              padding.size());
  TORCH_CHECK(self.dim() == k + 1 || self.dim() == k + 2, "Expected ", k + 1, "D or ", k + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
              self.sizes());
  // as ATen's padding::check_valid_input: only a batch dim may be empty
  for (int64_t d = self.dim() == k + 2 ? 1 : 0; d < self.dim(); d++)
    TORCH_CHECK(self.size(d) != 0, "Expected ", k + 1, "D or ", k + 2,
                "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
                self.sizes());
  auto sizes = self.sizes().vec();
  for (int i = 0; i < k; i++) {
    int64_t d = self.dim() - 1 - i, l = padding[2 * i], r = padding[2 * i + 1], n = self.size(d);
    if (reflect)
      TORCH_CHECK(l < n && r < n, "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                  l, ", ", r, ") at dimension ", d, " of input ", self.sizes());
    sizes[d] = n + l + r;
    TORCH_CHECK(sizes[d] >= 1, name, ": input (", self.sizes(), ") is too small. Calculated output ",
                c10::IntArrayRef(sizes), " is too small");
  }
  return sizes;
}

template <int K, bool REFLECT>
struct Pad {
  static at::Tensor& out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& result) {
    auto sizes = pad_sizes(self, padding, K, REFLECT);
    resize_out(result, sizes);
    std::vector<tocl_remap_mode> modes(self.dim(), TOCL_REMAP_ID);
    std::vector<int64_t> shift(self.dim(), 0);
    for (int i = 0; i < K; i++) {
      int64_t d = self.dim() - 1 - i;
      modes[d] = REFLECT ? TOCL_REMAP_REFLECT : TOCL_REMAP_REPLICATE;
      shift[d] = padding[2 * i];
    }
    remap(result, self, modes, shift);
    return result;
  }
  static at::Tensor fn(const at::Tensor& self, at::IntArrayRef padding) {
    at::Tensor result = at::empty({0}, self.options());
    return out(self, padding, result);
  }
  static at::Tensor& backward_out(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef padding,
                                  at::Tensor& grad_input) {
    auto sizes = pad_sizes(self, padding, K, REFLECT);
    TORCH_CHECK(grad_output.sizes().vec() == sizes, "grad_output size ", grad_output.sizes(),
                " does not match the padded size ", c10::IntArrayRef(sizes));
    resize_out(grad_input, self.sizes());
    if (grad_input.numel() == 0)
      return grad_input;
    int64_t before[3] = {0, 0, 0};
    for (int i = 0; i < K; i++)
      before[K - 1 - i] = padding[2 * i];
    c10::DeviceGuard guard(self.device());
    tocl_tensor gi = to_tocl_tensor(grad_input), go = to_tocl_tensor(grad_output);
    TOCL_CHECK(tocl_shape_pad_backward(dev_of(self), stream_of(self), &gi, &go,
                                       REFLECT ? TOCL_REMAP_REFLECT : TOCL_REMAP_REPLICATE, K, before));
    return grad_input;
  }
  static at::Tensor backward(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef padding) {
    at::Tensor grad_input = at::empty(self.sizes(), grad_output.options());
    return backward_out(grad_output, self, padding, grad_input);
  }
};

// ---- channel_shuffle ------------------------------------------------------

// (N, g * k, ...) -> (N, k * g, ...): a transposing copy, laid out in the
// input's suggested memory format as the CPU's kernel lays it out.
at::Tensor channel_shuffle(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s)");
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.", " Value of groups:", groups);
  TORCH_CHECK((self.size(1) % groups) == 0, "Number of channels must be divisible by groups. Got ", self.size(1),
              " channels and ", groups, " groups.");
  if (self.numel() == 0)
    return self.clone(self.suggest_memory_format());
  at::Tensor r = self.reshape({self.size(0), groups, self.size(1) / groups, -1});
  r = r.permute({0, 2, 1, 3}).contiguous().reshape(self.sizes());
  return r.contiguous(self.suggest_memory_format());
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_ocl, m) { m.def("cat_pair(Tensor[] a, Tensor[] b, int dim=0) -> (Tensor, Tensor)"); }

TORCH_LIBRARY_IMPL(torch_ocl, PrivateUse1, m) { m.impl("cat_pair", TORCH_FN(cat_pair)); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("channel_shuffle", channel_shuffle);
  m.impl("cat", cat);
  m.impl("cat.out", cat_out);
  m.impl("narrow_copy.out", narrow_copy_out);
  m.impl("flip", flip);
  m.impl("roll", roll_impl);
  m.impl("tril", Tri<0>::fn);
  m.impl("tril_", Tri<0>::inplace);
  m.impl("tril.out", Tri<0>::out);
  m.impl("triu", Tri<1>::fn);
  m.impl("triu_", Tri<1>::inplace);
  m.impl("triu.out", Tri<1>::out);
  m.impl("reflection_pad1d", Pad<1, true>::fn);
  m.impl("reflection_pad1d.out", Pad<1, true>::out);
  m.impl("reflection_pad2d", Pad<2, true>::fn);
  m.impl("reflection_pad2d.out", Pad<2, true>::out);
  m.impl("reflection_pad3d", Pad<3, true>::fn);
  m.impl("reflection_pad3d.out", Pad<3, true>::out);
  m.impl("replication_pad1d", Pad<1, false>::fn);
  m.impl("replication_pad1d.out", Pad<1, false>::out);
  m.impl("replication_pad2d", Pad<2, false>::fn);
  m.impl("replication_pad2d.out", Pad<2, false>::out);
  m.impl("replication_pad3d", Pad<3, false>::fn);
  m.impl("replication_pad3d.out", Pad<3, false>::out);
  m.impl("reflection_pad1d_backward", Pad<1, true>::backward);
  m.impl("reflection_pad1d_backward.grad_input", Pad<1, true>::backward_out);
  m.impl("reflection_pad2d_backward", Pad<2, true>::backward);
  m.impl("reflection_pad2d_backward.grad_input", Pad<2, true>::backward_out);
  m.impl("reflection_pad3d_backward", Pad<3, true>::backward);
  m.impl("reflection_pad3d_backward.grad_input", Pad<3, true>::backward_out);
  m.impl("replication_pad1d_backward", Pad<1, false>::backward);
  m.impl("replication_pad1d_backward.grad_input", Pad<1, false>::backward_out);
  m.impl("replication_pad2d_backward", Pad<2, false>::backward);
  m.impl("replication_pad2d_backward.grad_input", Pad<2, false>::backward_out);
  m.impl("replication_pad3d_backward", Pad<3, false>::backward);
  m.impl("replication_pad3d_backward.grad_input", Pad<3, false>::backward_out);
}

}  // namespace torch_ocl
