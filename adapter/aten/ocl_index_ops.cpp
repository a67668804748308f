// ocl_index_ops.cpp - gathers on the runtime's index kernels (include/tocl/index.h):
// index_select, gather, advanced indexing (index, index_put), take/put.
//
// Each op with an index tensor first reads the index's min/max back (one
// small host wait, tocl_index_minmax) so an out-of-range index raises the
// CPU's error, naming it, before anything is written. Accumulating scatters
// (scatter_add/reduce, index_add, index_put(accumulate=True), put
// (accumulate), embedding backward) walk colliding elements in a fixed order
// in one work-item: deterministic, no float atomics. Assignments with
// duplicate indices keep the last write in that order too, except
// index_put_/put_ without accumulate, which run fully parallel (duplicates
// are undefined there, as on CUDA) unless torch.use_deterministic_algorithms.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/IndexingUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/ScatterGatherChecks.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_index_util.h"
#include "ocl_value_range.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace index_util;

// ---- index_select ---------------------------------------------------------

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "index_select(): self and result must have the same scalar type");
  TORCH_CHECK(self.dim() > 0 || index.numel() <= 1, "index_select(): Index to scalar can have only 1 value, got ",
              index.numel(), " value(s)");
  check_same_device(self, index, "index_select()", "index");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  auto sizes = self.sizes().vec();
  if (self.dim() > 0)
    sizes[dim] = index.numel();
  resize_out(out, sizes);
  if (index.numel() == 0 || out.numel() == 0)
    return out;
  int64_t n = size0(self, dim);
  // The CPU raises on a bad index before writing: the bounds come to the
  // host, which waits for everything queued before (a decoding step: the
  // whole previous step). Indices the host knows to be in range (an argmax,
  // randint, a copy from the host) are checked without that wait; a value
  // changed behind the version counter fails the next synchronization
  // (ocl_value_range.h). Not under capture: a replay reads new indices.
  if (!tocl_graph_capturing() && values_known_within(index, 0, n - 1)) {
    tocl_tensor ti = to_tocl_tensor(index);
    TOCL_CHECK(tocl_index_check_later(dev_of(index), stream_of(index), &ti, 0, n - 1));
    count_check(CheckKind::index, true);
  } else {
    count_check(CheckKind::index, false);
    auto r = index_range(index);
    if (r.first < 0 || r.second >= n) {
      // The CPU raises RuntimeError on its dim-1 path and IndexError elsewhere.
      TORCH_CHECK(!(self.dim() > 1 && dim == 1), "INDICES element is out of DATA bounds, id=", bad_value(r, 0),
                  " axis_dim=", n);
      TORCH_CHECK_INDEX(false, "index out of range in self");
    }
    note_bounds(0, n - 1);
  }
  c10::DeviceGuard guard(self.device());
  auto st = self.strides().vec();
  if (self.dim() > 0)
    st[dim] = 0;
  Spec sp;
  sp.add(restride(index, out.sizes(), zero_strides_except(out.dim(), self.dim() ? dim : -1, index.dim() ? index.stride(0) : 0)),
         n, stride0(self, dim));
  tocl_tensor dst = to_tocl_tensor(out), src = restride(self, out.sizes(), st);
  TOCL_CHECK(tocl_index_gather(dev_of(self), stream_of(self), &dst, &src, &sp.s));
  return out;
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return index_select_out(self, dim, index, out);
}

// ---- gather ---------------------------------------------------------------

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad,
                       at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (index.numel() != 0)
    at::native::gather_shape_check(self, dim, index);
  at::native::scatter_gather_dtype_check("gather", self, index, std::nullopt);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "gather(): Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  check_same_device(self, index, "gather()", "index");
  resize_out(out, index.sizes());
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_partial_overlap(out, index);
  if (index.numel() == 0)
    return out;
  c10::DeviceGuard guard(self.device());
  Spec sp;
  std::vector<int64_t> st = along_dim(self, dim, index, sp);
  tocl_tensor dst = to_tocl_tensor(out), src = restride(self, index.sizes(), st);
  TOCL_CHECK(tocl_index_gather(dev_of(self), stream_of(self), &dst, &src, &sp.s));
  return out;
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad) {
  at::Tensor out = at::empty({0}, self.options());
  return gather_out(self, dim, index, sparse_grad, out);
}

// ---- advanced indexing ----------------------------------------------------

// Self (possibly transposed so the indexed dims are adjacent) and the
// broadcast index tensors, as PyTorch's make_info prepares them.
struct Advanced {
  at::Tensor self;
  std::vector<at::Tensor> idx;  // defined ones, in order
  int64_t before = 0;           // dims of self before the indexed ones
  std::vector<int64_t> result;  // result shape
  std::vector<int64_t> bshape;  // broadcast index shape
};

Advanced advanced(const at::Tensor& self_in, const c10::List<std::optional<at::Tensor>>& orig) {
  TORCH_CHECK_INDEX(orig.size() <= static_cast<size_t>(self_in.dim()), "too many indices for tensor of dimension ",
                    self_in.dim(), " (got ", orig.size(), ")");
  at::native::checkIndexTensorTypes(orig, /*allow_int=*/true);
  at::Tensor self = self_in;
  auto indices = at::native::expandTensors(self, orig, /*ensure_same_device=*/true);
  try {
    indices = at::expand_outplace(indices);
  } catch (std::exception&) {
    std::ostringstream os;
    bool first = true;
    for (auto& t : indices)
      if (t.defined()) {
        os << (first ? "" : ", ") << t.sizes();
        first = false;
      }
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ", os.str());
  }
  while (indices.size() < static_cast<size_t>(self.dim()))
    indices.emplace_back();
  if (!at::native::hasContiguousSubspace(indices))
    std::tie(self, indices) = at::native::transposeToFront(self, indices);
  Advanced a;
  bool all_int = true;
  for (auto& t : indices)
    if (t.defined())
      all_int = all_int && t.scalar_type() == at::kInt;
  int64_t d = 0;
  while (d < static_cast<int64_t>(indices.size()) && !indices[d].defined())
    d++;
  a.before = d;
  for (auto& t : indices)
    if (t.defined()) {
      a.idx.push_back(all_int ? t : t.to(at::kLong));
      if (a.bshape.empty())
        a.bshape = t.sizes().vec();
    }
  for (int64_t i = 0; i < a.before; i++)
    a.result.push_back(self.size(i));
  for (auto s : a.bshape)
    a.result.push_back(s);
  for (int64_t i = a.before + static_cast<int64_t>(a.idx.size()); i < self.dim(); i++)
    a.result.push_back(self.size(i));
  a.self = self;
  return a;
}

// Spec and the restrided self for the iteration over a.result; serial
// marks the broadcast index dims (where accumulation collides).
tocl_tensor advanced_spec(const Advanced& a, Spec& sp, bool serial) {
  int64_t nb = static_cast<int64_t>(a.bshape.size()), k = static_cast<int64_t>(a.idx.size());
  size_t nr = a.result.size();
  std::vector<int64_t> st(nr, 0);
  for (int64_t i = 0; i < a.before; i++)
    st[i] = a.self.stride(i);
  for (int64_t i = a.before + k; i < a.self.dim(); i++)
    st[i - k + nb] = a.self.stride(i);
  for (int64_t j = 0; j < k; j++) {
    const at::Tensor& t = a.idx[j];
    int64_t n = a.self.size(a.before + j);
    if (t.numel() > 0 && std::accumulate(a.result.begin(), a.result.end(), int64_t(1), std::multiplies<>()) > 0) {
      auto r = index_range(t);
      TORCH_CHECK_INDEX(r.first >= -n && r.second < n, "index ", bad_value(r, -n), " is out of bounds for dimension ",
                        a.before + j, " with size ", n);
      note_bounds(-n, n - 1);
    }
    std::vector<int64_t> is(nr, 0);
    for (int64_t i = 0; i < nb; i++)
      is[a.before + i] = t.stride(i);
    sp.add(restride(t, a.result, is), n, a.self.stride(a.before + j));
  }
  if (serial)
    for (int64_t i = 0; i < nb; i++)
      sp.serial(a.before + i);
  return restride(a.self, a.result, st);
}

at::Tensor& index_out(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices, at::Tensor& out) {
  Advanced a = advanced(self, indices);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "index_out: self (", self.scalar_type(), ") and result (",
              out.scalar_type(), ") must have the same scalar type");
  resize_out(out, a.result);
  if (out.numel() == 0)
    return out;
  if (a.idx.empty()) {
    out.copy_(a.self);
    return out;
  }
  c10::DeviceGuard guard(self.device());
  Spec sp;
  tocl_tensor src = advanced_spec(a, sp, false), dst = to_tocl_tensor(out);
  TOCL_CHECK(tocl_index_gather(dev_of(self), stream_of(self), &dst, &src, &sp.s));
  return out;
}
at::Tensor index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  at::Tensor out = at::empty({0}, self.options());
  return index_out(self, indices, out);
}

at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values, bool accumulate, bool unsafe) {
  TORCH_CHECK_INDEX(indices.size() <= static_cast<size_t>(self.dim()), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", indices.size(), ")");
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes)
    TORCH_WARN("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
               "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor");
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Index put requires the source and destination dtypes match, got ",
              self.scalar_type(), " for the destination and ", values.scalar_type(), " for the source.");
  at::Tensor v = values.device() == self.device() ? values : values.to(self.device());
  Advanced a = advanced(self, indices);
  at::Tensor ve;
  try {
    ve = v.expand(a.result);
  } catch (std::exception&) {
    TORCH_CHECK(false, "shape mismatch: value tensor of shape ", values.sizes(),
                " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(a.result));
  }
  int64_t numel = std::accumulate(a.result.begin(), a.result.end(), int64_t(1), std::multiplies<>());
  if (numel == 0)
    return self;
  if (a.idx.empty()) {
    a.self.copy_(ve);  // never accumulates into a view of itself through the fallback
    return self;
  }
  c10::DeviceGuard guard(self.device());
  Spec sp;
  tocl_tensor dst = advanced_spec(a, sp, accumulate || deterministic());
  tocl_tensor src = to_tocl_tensor(ve);
  TOCL_CHECK(tocl_index_scatter(dev_of(self), stream_of(self), &dst, &src, to_tocl_scalar(0),
                                accumulate ? TOCL_INDEX_ADD : TOCL_INDEX_ASSIGN, to_tocl_scalar(1), &sp.s));
  return self;
}

// ---- take / put -----------------------------------------------------------

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  TORCH_CHECK(index.scalar_type() == at::kLong, "take(): Expected a long tensor for index, but got ",
              index.scalar_type());
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "take(): self and out expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and out.dtype = ", out.scalar_type());
  check_same_device(self, index, "take()", "index");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, index);
  at::assert_no_overlap(out, self);
  resize_out(out, index.sizes());
  if (index.numel() == 0)
    return out;
  TORCH_CHECK_INDEX(self.numel() > 0, "take(): tried to take from an empty tensor");
  int64_t n = self.numel();
  auto r = index_range(index);
  TORCH_CHECK_INDEX(r.first >= -n && r.second < n, "out of range: tried to access index ", bad_value(r, -n),
                    " on a tensor of ", n, " elements.");
  note_bounds(-n, n - 1);
  c10::DeviceGuard guard(self.device());
  at::Tensor flat = self.contiguous();
  Spec sp;
  sp.add(to_tocl_tensor(index), n, 1);
  tocl_tensor dst = to_tocl_tensor(out), src = restride(flat, index.sizes(), std::vector<int64_t>(index.dim(), 0));
  TOCL_CHECK(tocl_index_gather(dev_of(self), stream_of(self), &dst, &src, &sp.s));
  return out;
}
at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return take_out(self, index, out);
}

at::Tensor& put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source, bool accumulate) {
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "put_(): Expected a long tensor for index, but got ",
                    index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK(source.numel() == index.numel(), "put_(): Expected source and index to have the same number of elements, but got source.numel() = ",
              source.numel(), ", index.numel() = ", index.numel());
  check_same_device(self, index, "put_()", "index");
  check_same_device(self, source, "put_()", "source");
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, index);
  if (index.numel() == 0)
    return self;
  TORCH_CHECK_INDEX(self.numel() > 0, "put_(): Tried to put elements into an empty tensor");
  int64_t n = self.numel();
  auto r = index_range(index);
  TORCH_CHECK_INDEX(r.first >= -n && r.second < n, "out of range: tried to access index ", bad_value(r, -n),
                    " on a tensor of ", n, " elements.");
  note_bounds(-n, n - 1);
  c10::DeviceGuard guard(self.device());
  at::Tensor flat = self.is_contiguous() ? self : self.contiguous();
  at::Tensor idx = index.reshape({-1}).contiguous(), src = source.reshape({-1}).contiguous();
  int64_t m = idx.numel();
  Spec sp;
  sp.add(to_tocl_tensor(idx), n, 1);
  if (accumulate || deterministic())
    sp.serial(0);
  tocl_tensor dst = restride(flat, {m}, {0}), s = to_tocl_tensor(src);
  TOCL_CHECK(tocl_index_scatter(dev_of(self), stream_of(self), &dst, &s, to_tocl_scalar(0),
                                accumulate ? TOCL_INDEX_ADD : TOCL_INDEX_ASSIGN, to_tocl_scalar(1), &sp.s));
  if (!flat.is_same(self))
    self.copy_(flat);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("index_select", index_select);
  m.impl("index_select.out", index_select_out);
  m.impl("gather", gather);
  m.impl("gather.out", gather_out);
  m.impl("index.Tensor", index);
  m.impl("index.Tensor_out", index_out);
  m.impl("_index_put_impl_", index_put_impl_);
  m.impl("take", take);
  m.impl("take.out", take_out);
  m.impl("put_", put_);
}

}  // namespace torch_ocl
