// ocl_index_util.h - what the indexing families share: index range checks (one
// host wait per op), index specs and restrided views for include/tocl/index.h.
#pragma once

#include <ATen/Context.h>

#include <utility>
#include <vector>

#include "ocl_common.h"
#include "tocl/graph.h"
#include "tocl/index.h"

namespace torch_ocl::index_util {

inline int dev_of(const at::Tensor& t) { return t.device().index(); }
inline int stream_of(const at::Tensor& t) { return tocl_stream_current(dev_of(t)); }

// t's data with other sizes/strides (a view the runtime reads, not an at::Tensor).
inline tocl_tensor restride(const at::Tensor& t, c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  tocl_tensor v = to_tocl_tensor(t);
  TORCH_CHECK(sizes.size() <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: too many dimensions: ", sizes.size());
  v.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < v.ndim; d++) {
    v.sizes[d] = sizes[d];
    v.strides[d] = strides[d];
  }
  return v;
}

inline std::vector<int64_t> zero_strides_except(size_t n, int64_t dim, int64_t stride) {
  std::vector<int64_t> s(n, 0);
  if (dim >= 0 && dim < static_cast<int64_t>(n))
    s[dim] = stride;
  return s;
}

inline void check_same_device(const at::Tensor& self, const at::Tensor& other, const char* op, const char* what) {
  TORCH_CHECK(other.device() == self.device(), op, ": expected ", what, " on ", self.device(), " but got it on ",
              other.device());
}

// Min and max of an index tensor (numel > 0): the one host wait of an op.
inline std::pair<int64_t, int64_t> index_range(const at::Tensor& idx) {
  tocl_tensor t = to_tocl_tensor(idx);
  int64_t mn = 0, mx = 0;
  TOCL_CHECK(tocl_index_minmax(dev_of(idx), stream_of(idx), &t, &mn, &mx));
  return {mn, mx};
}

// After a range check passed: a captured graph repeats it at each replay
// (tocl/graph.h); [lo, hi] are the values the op accepts.
inline void note_bounds(int64_t lo, int64_t hi) { tocl_graph_check_bounds(lo, hi); }

// The offending value of a range check: the min if it is too small.
inline int64_t bad_value(std::pair<int64_t, int64_t> r, int64_t lo) { return r.first < lo ? r.first : r.second; }

inline bool deterministic() { return at::globalContext().deterministicAlgorithms(); }

struct Spec {
  tocl_index_spec s{};
  void add(const tocl_tensor& idx, int64_t bound, int64_t stride) {
    TORCH_CHECK(s.nidx < TOCL_INDEX_MAX_INDICES, "torch_ocl: advanced indexing with more than ",
                TOCL_INDEX_MAX_INDICES, " index tensors is not supported on ocl");
    s.idx[s.nidx] = idx;
    s.bound[s.nidx] = bound;
    s.stride[s.nidx] = stride;
    s.nidx++;
  }
  void serial(int64_t dim) {
    if (dim >= 0)
      s.serial_dims |= 1u << dim;
  }
};

inline int64_t size0(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }
inline int64_t stride0(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.stride(dim); }

// gather and scatter along dim: checks index's values against base's size
// at dim, makes index the spec's indexed operand (the offset along dim),
// and returns base's strides at index's sizes with 0 at dim, for restride().
inline std::vector<int64_t> along_dim(const at::Tensor& base, int64_t dim, const at::Tensor& index, Spec& sp) {
  int64_t n = size0(base, dim);
  auto r = index_range(index);
  TORCH_CHECK(r.first >= 0 && r.second < n, "index ", bad_value(r, 0), " is out of bounds for dimension ", dim,
              " with size ", n);
  std::vector<int64_t> st(index.dim(), 0);
  for (int64_t d = 0; d < index.dim(); d++)
    st[d] = d == dim ? 0 : stride0(base, d);
  sp.add(to_tocl_tensor(index), n, stride0(base, dim));
  return st;
}

}  // namespace torch_ocl::index_util
