// ocl_scatter_ops.cpp - scatters on the runtime's index kernels (include/tocl/index.h):
// scatter*, scatter_add/reduce, index_add/copy/fill/reduce, embedding backward, one_hot.
// Accumulating scatters walk colliding elements in a fixed order in one
// work-item: deterministic, no float atomics (ocl_index_ops.cpp says more).
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
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using namespace index_util;

// ---- scatter family -------------------------------------------------------

// out[... index[i] ...] op= src[i] (or value) along dim; out already holds self.
void scatter_into(const at::Tensor& out, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                  const c10::Scalar& value, tocl_index_reduce op, const char* name) {
  if (index.numel() == 0)
    return;
  check_same_device(out, index, name, "index");
  if (src)
    check_same_device(out, *src, name, "src");
  c10::DeviceGuard guard(out.device());
  Spec sp;
  std::vector<int64_t> st = along_dim(out, dim, index, sp);
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
  note_bounds(lo, n - 1);
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
  note_bounds(-n, n - 1);
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
  else {
    TORCH_CHECK(num_classes > r.second, "Class values must be smaller than num_classes.");
    note_bounds(0, num_classes - 1);  // num_classes == -1 sized the output from the data: no bounds, no replay
  }
  shape.push_back(num_classes);
  at::Tensor ret = at::zeros(shape, self.options());
  ret.scatter_(-1, self.unsqueeze(-1), 1);
  return ret;
}

// index_reduce (prod / mean / amax / amin): source slices reduced into self
// at index along dim. It is scatter_reduce with the index broadcast over
// the source, whose rules (include_self, the mean's count, floor division
// for integers) are index_reduce's too. Checks and messages are the CPU's.
at::Tensor& index_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                             c10::string_view reduce, bool include_self, at::Tensor& out) {
  TORCH_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t numel = index.numel();
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_reduce_(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_reduce_(): Expected dtype int32/int64 for index");
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "index_reduce_(): self (", self.scalar_type(),
              ") and source (", source.scalar_type(), ") must have the same scalar type");
  TORCH_CHECK(dim == 0 || dim < source.dim(), "index_reduce_(): Indexing dim ", dim, " is out of bounds of tensor");
  TORCH_CHECK(numel == (source.dim() == 0 ? 1 : source.size(dim)), "index_reduce_(): Number of indices (", numel,
              ") should be equal to source.size(dim) (", (source.dim() == 0 ? 1 : source.size(dim)), ")");
  if (!out.is_same(self)) {
    at::native::resize_output(out, self.sizes());
    out.copy_(self);
  }
  if (numel == 0)
    return out;
  at::Tensor dst = self.dim() == 0 ? out.view({1}) : out;
  at::Tensor src = source.dim() == 0 ? source.view({1}) : source;
  std::vector<int64_t> shape(src.dim(), 1);
  shape[dim] = numel;
  at::Tensor idx = index.to(at::kLong).reshape(shape).expand(src.sizes());
  dst.scatter_reduce_(dim, idx, src, reduce, include_self);
  return out;
}

at::Tensor index_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                        c10::string_view reduce, bool include_self) {
  at::Tensor out = at::empty_like(self);
  return index_reduce_out(self, dim, index, source, reduce, include_self, out);
}

at::Tensor& index_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          c10::string_view reduce, bool include_self) {
  return index_reduce_out(self, dim, index, source, reduce, include_self, self);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("index_reduce", index_reduce);
  m.impl("index_reduce_", index_reduce_);
  m.impl("index_reduce.out", index_reduce_out);
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
  m.impl("embedding_dense_backward", embedding_dense_backward);
  m.impl("one_hot", one_hot);
}

}  // namespace torch_ocl
