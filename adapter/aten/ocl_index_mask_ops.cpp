// ocl_index_mask_ops.cpp - boolean-mask ops on runtime/ops/index_mask.c: nonzero,
// nonzero_static, masked_select, masked_scatter_ (count, then prefix-scan positions).
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

// nonzero_static: nonzero's rows, cut or padded with fill_value to `size` rows.
at::Tensor& nonzero_static_out(const at::Tensor& self, int64_t size, int64_t fill_value, at::Tensor& out) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero_static: Expected out tensor to have scalar type Long but got "
              "scalar type", out.scalar_type());
  at::Tensor nz = at::nonzero(self);
  at::native::resize_output(out, {size, self.dim()});
  int64_t n = std::min(size, nz.size(0));
  if (n < size)
    out.narrow(0, n, size - n).fill_(fill_value);
  if (n > 0)
    out.narrow(0, 0, n).copy_(nz.narrow(0, 0, n));
  return out;
}

at::Tensor nonzero_static(const at::Tensor& self, int64_t size, int64_t fill_value) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return nonzero_static_out(self, size, fill_value, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("nonzero_static", nonzero_static);
  m.impl("nonzero_static.out", nonzero_static_out);
  m.impl("nonzero", nonzero);
  m.impl("nonzero.out", nonzero_out);
  m.impl("masked_select", masked_select);
  m.impl("masked_select.out", masked_select_out);
  m.impl("masked_scatter_", masked_scatter_);
}

}  // namespace torch_ocl
