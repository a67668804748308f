// ocl_index_ops.cpp - indexing ops on the runtime's gather/scatter kernels
// (include/tocl/index.h): index_select, gather, scatter*, index_add/copy/
// fill, advanced indexing (index, index_put), take/put, masked_select/
// scatter, nonzero, embedding backward, one_hot.
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

#include "ocl_common.h"
#include "tocl/index.h"

namespace torch_ocl {
namespace {

int dev_of(const at::Tensor& t) { return t.device().index(); }
int stream_of(const at::Tensor& t) { return tocl_stream_current(dev_of(t)); }

// t's data with other sizes/strides (a view the runtime reads, not an at::Tensor).
tocl_tensor restride(const at::Tensor& t, c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  tocl_tensor v = to_tocl_tensor(t);
  TORCH_CHECK(sizes.size() <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: too many dimensions: ", sizes.size());
  v.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < v.ndim; d++) {
    v.sizes[d] = sizes[d];
    v.strides[d] = strides[d];
  }
  return v;
}

std::vector<int64_t> zero_strides_except(size_t n, int64_t dim, int64_t stride) {
  std::vector<int64_t> s(n, 0);
  if (dim >= 0 && dim < static_cast<int64_t>(n))
    s[dim] = stride;
  return s;
}

void check_same_device(const at::Tensor& self, const at::Tensor& other, const char* op, const char* what) {
  TORCH_CHECK(other.device() == self.device(), op, ": expected ", what, " on ", self.device(), " but got it on ",
              other.device());
}

// Min and max of an index tensor (numel > 0): the one host wait of an op.
std::pair<int64_t, int64_t> index_range(const at::Tensor& idx) {
  tocl_tensor t = to_tocl_tensor(idx);
  int64_t mn = 0, mx = 0;
  TOCL_CHECK(tocl_index_minmax(dev_of(idx), stream_of(idx), &t, &mn, &mx));
  return {mn, mx};
}

// The offending value of a range check: the min if it is too small.
int64_t bad_value(std::pair<int64_t, int64_t> r, int64_t lo) { return r.first < lo ? r.first : r.second; }

bool deterministic() { return at::globalContext().deterministicAlgorithms(); }

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

int64_t size0(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }
int64_t stride0(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.stride(dim); }

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
  auto r = index_range(index);
  if (r.first < 0 || r.second >= n) {
    // The CPU raises RuntimeError on its dim-1 path and IndexError elsewhere.
    TORCH_CHECK(!(self.dim() > 1 && dim == 1), "INDICES element is out of DATA bounds, id=", bad_value(r, 0),
                " axis_dim=", n);
    TORCH_CHECK_INDEX(false, "index out of range in self");
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
  int64_t n = size0(self, dim);
  auto r = index_range(index);
  TORCH_CHECK(r.first >= 0 && r.second < n, "index ", bad_value(r, 0), " is out of bounds for dimension ", dim,
              " with size ", n);
  c10::DeviceGuard guard(self.device());
  std::vector<int64_t> st(index.dim(), 0);
  for (int64_t d = 0; d < index.dim(); d++)
    st[d] = d == dim ? 0 : stride0(self, d);
  Spec sp;
  sp.add(to_tocl_tensor(index), n, stride0(self, dim));
  tocl_tensor dst = to_tocl_tensor(out), src = restride(self, index.sizes(), st);
  TOCL_CHECK(tocl_index_gather(dev_of(self), stream_of(self), &dst, &src, &sp.s));
  return out;
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad) {
  at::Tensor out = at::empty({0}, self.options());
  return gather_out(self, dim, index, sparse_grad, out);
}

// ---- scatter family -------------------------------------------------------

// out[... index[i] ...] op= src[i] (or value) along dim; out already holds self.
void scatter_into(const at::Tensor& out, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                  const c10::Scalar& value, tocl_index_reduce op, const char* name) {
  if (index.numel() == 0)
    return;
  check_same_device(out, index, name, "index");
  if (src)
    check_same_device(out, *src, name, "src");
  int64_t n = size0(out, dim);
  auto r = index_range(index);
  TORCH_CHECK(r.first >= 0 && r.second < n, "index ", bad_value(r, 0), " is out of bounds for dimension ", dim,
              " with size ", n);
  c10::DeviceGuard guard(out.device());
  std::vector<int64_t> st(index.dim(), 0);
  for (int64_t d = 0; d < index.dim(); d++)
    st[d] = d == dim ? 0 : stride0(out, d);
  Spec sp;
  sp.add(to_tocl_tensor(index), n, stride0(out, dim));
  if (index.dim() > 0)
    sp.serial(dim);  // elements that may collide, in index order: deterministic
  tocl_tensor dst = restride(out, index.sizes(), st);
  tocl_tensor s{};
  if (src)
    s = restride(*src, index.sizes(), src->dim() ? src->strides() : c10::IntArrayRef(st));
  TOCL_CHECK(tocl_index_scatter(dev_of(out), stream_of(out), &dst, src ? &s : nullptr, to_tocl_scalar(value), op,
                                to_tocl_scalar(c10::Scalar(1)), &sp.s));
}

tocl_index_reduce reduce_of(c10::string_view reduce, const char* name) {
  if (reduce == "add")
    return TOCL_INDEX_ADD;
  if (reduce == "multiply")
    return TOCL_INDEX_MUL;
  TORCH_CHECK(false, "reduce argument must be either add or multiply.");
}

void scatter_checks(const at::Tensor& self, int64_t dim, const at::Tensor& index, const std::optional<at::Tensor>& src,
                    const char* name) {
  at::native::scatter_gather_dtype_check(name, self, index, src);
  at::native::scatter_shape_check(self, dim, index, src);
}

// Prepare out (= self unless in place); returns the wrapped dim.
int64_t scatter_prepare(const at::Tensor& self, int64_t dim, const at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (!out.is_same(self)) {
    resize_out(out, self.sizes());
    out.copy_(self);
  }
  return dim;
}

template <int KIND>  // 0 src, 1 value
struct Scatter {
  static at::Tensor& run(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                         const c10::Scalar& value, std::optional<c10::string_view> reduce, at::Tensor& out) {
    dim = at::maybe_wrap_dim(dim, self.dim());
    scatter_checks(self, dim, index, src ? std::optional<at::Tensor>(*src) : std::nullopt, "scatter");
    tocl_index_reduce op = reduce ? reduce_of(*reduce, "scatter") : TOCL_INDEX_ASSIGN;
    scatter_prepare(self, dim, out);
    scatter_into(out, dim, index, src, value, op, "scatter");
    return out;
  }
};

at::Tensor& scatter_src_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            at::Tensor& out) {
  return Scatter<0>::run(self, dim, index, &src, 0, std::nullopt, out);
}
at::Tensor scatter_src(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  at::Tensor out = at::empty({0}, self.options());
  return scatter_src_out(self, dim, index, src, out);
}
at::Tensor& scatter_src_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return scatter_src_out(self, dim, index, src, self);
}
at::Tensor& scatter_value_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value,
                              at::Tensor& out) {
  return Scatter<1>::run(self, dim, index, nullptr, value, std::nullopt, out);
}
at::Tensor scatter_value(const at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value) {
  at::Tensor out = at::empty({0}, self.options());
  return scatter_value_out(self, dim, index, value, out);
}
at::Tensor& scatter_value_(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value) {
  return scatter_value_out(self, dim, index, value, self);
}
at::Tensor& scatter_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, at::Tensor& out) {
  return Scatter<0>::run(self, dim, index, &src, 0, reduce, out);
}
at::Tensor scatter_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce) {
  at::Tensor out = at::empty({0}, self.options());
  return scatter_reduce_out(self, dim, index, src, reduce, out);
}
at::Tensor& scatter_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            c10::string_view reduce) {
  return scatter_reduce_out(self, dim, index, src, reduce, self);
}
at::Tensor& scatter_value_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                     const c10::Scalar& value, c10::string_view reduce, at::Tensor& out) {
  return Scatter<1>::run(self, dim, index, nullptr, value, reduce, out);
}
at::Tensor scatter_value_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const c10::Scalar& value, c10::string_view reduce) {
  at::Tensor out = at::empty({0}, self.options());
  return scatter_value_reduce_out(self, dim, index, value, reduce, out);
}
at::Tensor& scatter_value_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value,
                                  c10::string_view reduce) {
  return scatter_value_reduce_out(self, dim, index, value, reduce, self);
}

at::Tensor& scatter_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  scatter_checks(self, dim, index, src, "scatter_add");
  scatter_prepare(self, dim, out);
  scatter_into(out, dim, index, &src, 0, TOCL_INDEX_ADD, "scatter_add");
  return out;
}
at::Tensor scatter_add(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  at::Tensor out = at::empty({0}, self.options());
  return scatter_add_out(self, dim, index, src, out);
}
at::Tensor& scatter_add_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return scatter_add_out(self, dim, index, src, self);
}

// scatter_reduce.two: sum, prod, mean, amax, amin; include_self=False first
// sets the scattered positions to the reduction's identity, as the CPU does.
at::Tensor& scatter_reduce_two_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce, bool include_self,
                                   at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  scatter_checks(self, dim, index, src, "scatter_reduce");
  tocl_index_reduce op;
  bool mean = false;
  if (reduce == "sum") {
    op = TOCL_INDEX_ADD;
  } else if (reduce == "prod") {
    op = TOCL_INDEX_MUL;
  } else if (reduce == "mean") {
    op = TOCL_INDEX_ADD;
    mean = true;
  } else if (reduce == "amax") {
    op = TOCL_INDEX_MAX;
  } else if (reduce == "amin") {
    op = TOCL_INDEX_MIN;
  } else {
    TORCH_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  }
  scatter_prepare(self, dim, out);
  if (index.numel() == 0)
    return out;
  if (!include_self) {
    c10::Scalar init = 0;
    auto t = out.scalar_type();
    if (op == TOCL_INDEX_MUL) {
      init = 1;
    } else if (op == TOCL_INDEX_MAX) {
      init = at::isFloatingType(t) ? c10::Scalar(-std::numeric_limits<double>::infinity())
             : t == at::kBool      ? c10::Scalar(false)
                                   : c10::Scalar(t == at::kByte ? int64_t(0)
                                                 : t == at::kChar ? int64_t(INT8_MIN)
                                                 : t == at::kShort ? int64_t(INT16_MIN)
                                                 : t == at::kInt ? int64_t(INT32_MIN) : INT64_MIN);
    } else if (op == TOCL_INDEX_MIN) {
      init = at::isFloatingType(t) ? c10::Scalar(std::numeric_limits<double>::infinity())
             : t == at::kBool      ? c10::Scalar(true)
                                   : c10::Scalar(t == at::kByte ? int64_t(255)
                                                 : t == at::kChar ? int64_t(INT8_MAX)
                                                 : t == at::kShort ? int64_t(INT16_MAX)
                                                 : t == at::kInt ? int64_t(INT32_MAX) : INT64_MAX);
    }
    scatter_into(out, dim, index, nullptr, init, TOCL_INDEX_ASSIGN, "scatter_reduce");
  }
  scatter_into(out, dim, index, &src, 0, op, "scatter_reduce");
  if (mean) {
    at::Tensor count = at::empty(out.sizes(), out.options().dtype(at::kLong));
    count.fill_(include_self ? 1 : 0);
    scatter_into(count, dim, index, nullptr, 1, TOCL_INDEX_ADD, "scatter_reduce");
    tocl_tensor o = to_tocl_tensor(out), c = to_tocl_tensor(count);
    TOCL_CHECK(tocl_index_div_count(dev_of(out), stream_of(out), &o, &c));
  }
  return out;
}
at::Tensor scatter_reduce_two(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                              c10::string_view reduce, bool include_self) {
  at::Tensor out = at::empty({0}, self.options());
  return scatter_reduce_two_out(self, dim, index, src, reduce, include_self, out);
}
at::Tensor& scatter_reduce_two_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                c10::string_view reduce, bool include_self) {
  return scatter_reduce_two_out(self, dim, index, src, reduce, include_self, self);
}

// ---- index_add / index_copy / index_fill ----------------------------------

// out.select(dim, index[i]) op= source.select(dim, i): iterate over source.
void index_scatter(const at::Tensor& out, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                   tocl_index_reduce op, const c10::Scalar& alpha, bool negative_ok, const char* name,
                   bool index_error) {
  if (index.numel() == 0 || source.numel() == 0)
    return;
  check_same_device(out, index, name, "index");
  check_same_device(out, source, name, "source");
  int64_t n = size0(out, dim);
  auto r = index_range(index);
  int64_t lo = negative_ok ? -n : 0;
  if (r.first < lo || r.second >= n) {
    TORCH_CHECK_INDEX(!index_error, name, "(): index ", bad_value(r, lo), " is out of bounds for dimension ", dim,
                      " with size ", n);
    TORCH_CHECK(false, "index ", bad_value(r, lo), " is out of bounds for dimension ", dim, " with size ", n);
  }
  c10::DeviceGuard guard(out.device());
  int64_t nd = source.dim();
  std::vector<int64_t> st(nd, 0);
  for (int64_t d = 0; d < nd; d++)
    st[d] = d == dim ? 0 : out.stride(d);
  Spec sp;
  sp.add(restride(index, source.sizes(), zero_strides_except(nd, nd ? dim : -1, index.dim() ? index.stride(0) : 0)),
         n, stride0(out, dim));
  if (nd)
    sp.serial(dim);
  tocl_tensor dst = restride(out, source.sizes(), st), src = to_tocl_tensor(source);
  TOCL_CHECK(tocl_index_scatter(dev_of(out), stream_of(out), &dst, &src, to_tocl_scalar(0), op, to_tocl_scalar(alpha),
                                &sp.s));
}

void index_source_checks(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                         const char* name) {
  TORCH_CHECK_INDEX(index.dim() <= 1, name, "(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, name,
              "(): Expected dtype int32/int64 for index");
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), name, "(): self (", self.scalar_type(), ") and source (",
              source.scalar_type(), ") must have the same scalar type");
  TORCH_CHECK(dim == 0 || dim < source.dim(), name, "(): Indexing dim ", dim, " is out of bounds of the source tensor with dim ",
              source.dim());
  TORCH_CHECK(index.numel() == (source.dim() == 0 ? 1 : source.size(dim)), name, "(): Number of indices (",
              index.numel(), ") should be equal to source.size(dim) (", (source.dim() == 0 ? 1 : source.size(dim)), ")");
  TORCH_CHECK(source.dim() == self.dim() || (source.dim() <= 1 && self.dim() <= 1), name,
              "(): self and source must have the same number of dimensions, got ", self.dim(), " and ", source.dim());
  for (int64_t d = 0; d < source.dim(); d++)
    TORCH_CHECK(d == dim || source.size(d) == self.size(d), name, "(): source size ", source.sizes(),
                " must match self size ", self.sizes(), " except in dimension ", dim);
}

at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          const c10::Scalar& alpha, at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  index_source_checks(self, dim, index, source, "index_add");
  scatter_prepare(self, dim, out);
  // 0-dim source into 1-element dims: view both as 1-D.
  at::Tensor o = out.dim() == 0 ? out.view({1}) : out, s = source.dim() == 0 ? source.view({1}) : source;
  index_scatter(o, dim, index, s, TOCL_INDEX_ADD, alpha, false, "index_add", false);
  return out;
}
at::Tensor index_add(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const c10::Scalar& alpha) {
  at::Tensor out = at::empty({0}, self.options());
  return index_add_out(self, dim, index, source, alpha, out);
}
at::Tensor& index_add_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                       const c10::Scalar& alpha) {
  return index_add_out(self, dim, index, source, alpha, self);
}

at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                           at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() < 2, "index_copy_(): Index should have dimension 1 or 0 (got ", index.dim(), ")");
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_copy_(): Expected a long tensor for index, but got ",
                    index.scalar_type());
  index_source_checks(self, dim, index, source, "index_copy_");
  scatter_prepare(self, dim, out);
  at::Tensor o = out.dim() == 0 ? out.view({1}) : out, s = source.dim() == 0 ? source.view({1}) : source;
  index_scatter(o, dim, index, s, TOCL_INDEX_ASSIGN, 1, false, "index_copy_", true);
  return out;
}
at::Tensor index_copy(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  at::Tensor out = at::empty({0}, self.options());
  return index_copy_out(self, dim, index, source, out);
}
at::Tensor& index_copy_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  return index_copy_out(self, dim, index, source, self);
}

at::Tensor& index_fill_scalar_(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  at::assert_no_partial_overlap(self, index);
  if (index.numel() == 0 || self.numel() == 0)
    return self;
  check_same_device(self, index, "index_fill_()", "index");
  at::Tensor o = self.dim() == 0 ? self.view({1}) : self;
  int64_t n = o.size(dim);
  auto r = index_range(index);
  TORCH_CHECK_INDEX(r.first >= -n && r.second < n, "index ", bad_value(r, -n), " is out of bounds for dimension ", dim,
                    " with size ", n);
  c10::DeviceGuard guard(self.device());
  auto sizes = o.sizes().vec();
  sizes[dim] = index.numel();
  auto st = o.strides().vec();
  st[dim] = 0;
  Spec sp;
  sp.add(restride(index, sizes, zero_strides_except(sizes.size(), dim, index.dim() ? index.stride(0) : 0)), n,
         o.stride(dim));
  tocl_tensor dst = restride(o, sizes, st);
  TOCL_CHECK(tocl_index_scatter(dev_of(self), stream_of(self), &dst, nullptr, to_tocl_scalar(value), TOCL_INDEX_ASSIGN,
                                to_tocl_scalar(1), &sp.s));
  return self;
}
at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return index_fill_scalar_(self, dim, index, value.item());
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

// ---- masks ----------------------------------------------------------------

struct Scan {
  tocl_mask_scan s{};
  ~Scan() { tocl_mask_scan_release(&s); }
};

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  TORCH_CHECK(self.dim() <= TOCL_INDEX_MAX_DIMS, "nonzero is not supported on ocl for tensors with more than ",
              TOCL_INDEX_MAX_DIMS, " dimensions");
  c10::DeviceGuard guard(self.device());
  Scan sc;
  tocl_tensor m = to_tocl_tensor(self);
  TOCL_CHECK(tocl_mask_count(dev_of(self), stream_of(self), &m, &sc.s));
  resize_out(out, {sc.s.total, self.dim()});
  if (!out.is_contiguous()) {
    at::Tensor tmp = at::empty({sc.s.total, self.dim()}, out.options());
    tocl_tensor o = to_tocl_tensor(tmp);
    TOCL_CHECK(tocl_mask_nonzero(dev_of(self), stream_of(self), &m, &sc.s, &o));
    out.copy_(tmp);
    return out;
  }
  tocl_tensor o = to_tocl_tensor(out);
  TOCL_CHECK(tocl_mask_nonzero(dev_of(self), stream_of(self), &m, &sc.s, &o));
  return out;
}
at::Tensor nonzero(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return nonzero_out(self, out);
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "masked_select(): self and result must have the same scalar type");
  check_same_device(self, mask, "masked_select()", "mask");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, mask);
  auto [m, s] = at::expand_outplace(mask, self);
  TORCH_CHECK(m->dim() <= TOCL_INDEX_MAX_DIMS, "masked_select is not supported on ocl for more than ",
              TOCL_INDEX_MAX_DIMS, " dimensions");
  c10::DeviceGuard guard(self.device());
  Scan sc;
  tocl_tensor tm = to_tocl_tensor(*m);
  TOCL_CHECK(tocl_mask_count(dev_of(self), stream_of(self), &tm, &sc.s));
  resize_out(out, {sc.s.total});
  at::Tensor dst = out.is_contiguous() ? out : at::empty({sc.s.total}, out.options());
  tocl_tensor ts = to_tocl_tensor(*s), td = to_tocl_tensor(dst);
  TOCL_CHECK(tocl_mask_select(dev_of(self), stream_of(self), &tm, &sc.s, &ts, &td));
  if (!dst.is_same(out))
    out.copy_(dst);
  return out;
}
at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out = at::empty({0}, self.options());
  return masked_select_out(self, mask, out);
}

at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "masked_scatter_: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  check_same_device(self, mask, "masked_scatter_()", "mask");
  check_same_device(self, source, "masked_scatter_()", "source");
  at::assert_no_internal_overlap(self);
  auto m = at::expand_inplace(self, mask, "masked_scatter_");
  if (self.numel() == 0)
    return self;
  TORCH_CHECK(m->dim() <= TOCL_INDEX_MAX_DIMS, "masked_scatter_ is not supported on ocl for more than ",
              TOCL_INDEX_MAX_DIMS, " dimensions");
  c10::DeviceGuard guard(self.device());
  Scan sc;
  tocl_tensor tm = to_tocl_tensor(*m);
  TOCL_CHECK(tocl_mask_count(dev_of(self), stream_of(self), &tm, &sc.s));
  TORCH_CHECK(sc.s.total <= source.numel(), "Number of elements of source < number of ones in mask");
  if (sc.s.total == 0)
    return self;
  at::Tensor src = source.contiguous().view({-1});
  tocl_tensor ts = to_tocl_tensor(src), td = to_tocl_tensor(self);
  TOCL_CHECK(tocl_mask_scatter(dev_of(self), stream_of(self), &tm, &sc.s, &td, &ts));
  return self;
}

// ---- embedding backward, one_hot ------------------------------------------

at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_backward: Expected indices to have type Long or Int but got ", indices.scalar_type());
  int64_t d = grad.size(-1);
  at::Tensor gw = at::zeros({num_weights, d}, grad.options());
  if (indices.numel() == 0 || d == 0 || num_weights == 0)
    return gw;
  c10::DeviceGuard guard(grad.device());
  at::Tensor idx = indices.reshape({-1}).contiguous();
  at::Tensor g2 = grad.reshape({idx.numel(), d});
  // Rows of the source are summed into gw[idx[i]] in order of i.
  Spec sp;
  sp.add(restride(idx, g2.sizes(), {1, 0}), num_weights, gw.stride(0));
  sp.serial(0);
  sp.s.has_skip = 1;
  sp.s.skip = padding_idx;
  tocl_tensor dst = restride(gw, g2.sizes(), {0, gw.stride(1)}), src = to_tocl_tensor(g2);
  TOCL_CHECK(tocl_index_scatter(dev_of(grad), stream_of(grad), &dst, &src, to_tocl_scalar(0), TOCL_INDEX_ADD,
                                to_tocl_scalar(1), &sp.s));
  if (scale_grad_by_freq) {
    at::Tensor count = at::zeros({num_weights}, grad.options().dtype(at::kLong));
    Spec cs;
    cs.add(to_tocl_tensor(idx), num_weights, 1);
    cs.serial(0);
    tocl_tensor cd = restride(count, idx.sizes(), {0});
    TOCL_CHECK(tocl_index_scatter(dev_of(grad), stream_of(grad), &cd, nullptr, to_tocl_scalar(1), TOCL_INDEX_ADD,
                                  to_tocl_scalar(1), &cs.s));
    tocl_tensor o = to_tocl_tensor(gw), c = restride(count, gw.sizes(), {1, 0});
    TOCL_CHECK(tocl_index_div_count(dev_of(grad), stream_of(grad), &o, &c));
  }
  return gw;
}

at::Tensor one_hot(const at::Tensor& self, int64_t num_classes) {
  TORCH_CHECK(self.scalar_type() == at::kLong, "one_hot is only applicable to index tensor of type LongTensor.");
  auto shape = self.sizes().vec();
  if (self.numel() == 0) {
    TORCH_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return at::empty(shape, self.options());
  }
  auto r = index_range(self);
  TORCH_CHECK(r.first >= 0, "Class values must be non-negative.");
  if (num_classes == -1)
    num_classes = r.second + 1;
  else
    TORCH_CHECK(num_classes > r.second, "Class values must be smaller than num_classes.");
  shape.push_back(num_classes);
  at::Tensor ret = at::zeros(shape, self.options());
  ret.scatter_(-1, self.unsqueeze(-1), 1);
  return ret;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select);
  m.impl("index_select.out", index_select_out);
  m.impl("gather", gather);
  m.impl("gather.out", gather_out);
  m.impl("scatter.src", scatter_src);
  m.impl("scatter_.src", scatter_src_);
  m.impl("scatter.src_out", scatter_src_out);
  m.impl("scatter.value", scatter_value);
  m.impl("scatter_.value", scatter_value_);
  m.impl("scatter.value_out", scatter_value_out);
  m.impl("scatter.reduce", scatter_reduce);
  m.impl("scatter_.reduce", scatter_reduce_);
  m.impl("scatter.reduce_out", scatter_reduce_out);
  m.impl("scatter.value_reduce", scatter_value_reduce);
  m.impl("scatter_.value_reduce", scatter_value_reduce_);
  m.impl("scatter.value_reduce_out", scatter_value_reduce_out);
  m.impl("scatter_add", scatter_add);
  m.impl("scatter_add_", scatter_add_);
  m.impl("scatter_add.out", scatter_add_out);
  m.impl("scatter_reduce.two", scatter_reduce_two);
  m.impl("scatter_reduce_.two", scatter_reduce_two_);
  m.impl("scatter_reduce.two_out", scatter_reduce_two_out);
  m.impl("index_add", index_add);
  m.impl("index_add_", index_add_);
  m.impl("index_add.out", index_add_out);
  m.impl("index_copy", index_copy);
  m.impl("index_copy_", index_copy_);
  m.impl("index_copy.out", index_copy_out);
  m.impl("index_fill_.int_Scalar", index_fill_scalar_);
  m.impl("index_fill_.int_Tensor", index_fill_tensor_);
  m.impl("index.Tensor", index);
  m.impl("index.Tensor_out", index_out);
  m.impl("_index_put_impl_", index_put_impl_);
  m.impl("take", take);
  m.impl("take.out", take_out);
  m.impl("put_", put_);
  m.impl("nonzero", nonzero);
  m.impl("nonzero.out", nonzero_out);
  m.impl("masked_select", masked_select);
  m.impl("masked_select.out", masked_select_out);
  m.impl("masked_scatter_", masked_scatter_);
  m.impl("embedding_dense_backward", embedding_dense_backward);
  m.impl("one_hot", one_hot);
}

}  // namespace torch_ocl
