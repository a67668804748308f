// ocl_copy.cpp - _copy_from: host<->device and device<->device copies. Dtype
// conversion, broadcasting and strided layouts are done on the device by the
// elementwise engine; the host only moves contiguous bytes.
#include <ATen/ExpandUtils.h>
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_common.h"

namespace torch_ocl {
namespace {

bool is_ocl(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// Same dtype, same shape, both contiguous: a raw byte transfer is enough.
bool raw_compatible(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes().equals(b.sizes()) && a.is_contiguous() &&
         b.is_contiguous();
}

// dst (ocl) := src (ocl, possibly another device), with cast and broadcast.
void device_copy(const at::Tensor& dst, const at::Tensor& src) {
  int dev = dst.device().index();
  c10::DeviceGuard guard(dst.device());
  at::Tensor s = src.expand_as(dst);
  tocl_tensor d = to_tocl_tensor(dst), t = to_tocl_tensor(s);
  TOCL_CHECK(tocl_op_copy(dev, tocl_stream_current(dev), &d, &t));
}

void host_to_device(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  int dev = dst.device().index();
  c10::DeviceGuard guard(dst.device());
  if (raw_compatible(dst, src)) {
    bool async = non_blocking && tocl_host_is_pinned(src.data_ptr());
    TOCL_CHECK(tocl_copy_h2d(dev, tocl_stream_current(dev), reinterpret_cast<tocl_addr>(dst.data_ptr()),
                             src.data_ptr(), src.nbytes(), async ? 0 : 1));
    return;
  }
  // Upload the source as it is (host makes it contiguous only if needed),
  // then convert and scatter on the device.
  at::Tensor host = src.contiguous();
  at::Tensor staged = at::empty(host.sizes(), host.options().device(dst.device()));
  bool async = non_blocking && host.is_same(src) && tocl_host_is_pinned(host.data_ptr());
  if (host.nbytes())
    TOCL_CHECK(tocl_copy_h2d(dev, tocl_stream_current(dev), reinterpret_cast<tocl_addr>(staged.data_ptr()),
                             host.data_ptr(), host.nbytes(), async ? 0 : 1));
  device_copy(dst, staged);
}

void device_to_host(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  int dev = src.device().index();
  c10::DeviceGuard guard(src.device());
  at::Tensor s = src;
  // Convert, broadcast and compact on the device first.
  if (!(s.scalar_type() == dst.scalar_type() && s.sizes().equals(dst.sizes()) && s.is_contiguous())) {
    at::Tensor tmp = at::empty(dst.sizes(), src.options().dtype(dst.scalar_type()));
    device_copy(tmp, src);
    s = tmp;
  }
  if (dst.is_contiguous()) {
    bool async = non_blocking && tocl_host_is_pinned(dst.data_ptr());
    if (s.nbytes())
      TOCL_CHECK(tocl_copy_d2h(dev, tocl_stream_current(dev), dst.data_ptr(),
                               reinterpret_cast<tocl_addr>(s.data_ptr()), s.nbytes(), async ? 0 : 1));
    return;
  }
  at::Tensor host = at::empty(s.sizes(), dst.options());
  if (s.nbytes())
    TOCL_CHECK(tocl_copy_d2h(dev, tocl_stream_current(dev), host.data_ptr(),
                             reinterpret_cast<tocl_addr>(s.data_ptr()), s.nbytes(), 1));
  dst.copy_(host);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(self.defined() && dst.defined(), "torch_ocl: copy of an undefined tensor");
  TORCH_CHECK(!self.is_complex() && !dst.is_complex(), "torch_ocl: complex tensors are not supported");
  // An empty destination still needs a source that broadcasts to it, as copy_ on the CPU
  // checks (found by torch_ocl.fuzz: copy_ of a [0, 1, 1] source into [0, 1] returned).
  TORCH_CHECK(at::is_expandable_to(self.sizes(), dst.sizes()), "output with shape ", dst.sizes(),
              " doesn't match the broadcast shape of the source ", self.sizes());
  if (dst.numel() == 0 || self.is_same(dst))
    return dst;
  // Two views of the same elements (an expanded dst included): nothing to copy, as the CPU
  // returns before its overlap checks (fuzz seed 100207: x.expand(3, 2)[...] = x.expand(3, 2)).
  if (is_ocl(self) && is_ocl(dst) && self.is_alias_of(dst) && self.storage_offset() == dst.storage_offset() &&
      self.sizes().equals(dst.sizes()) && self.strides().equals(dst.strides()) &&
      self.scalar_type() == dst.scalar_type() && self.is_conj() == dst.is_conj() && self.is_neg() == dst.is_neg())
    return dst;
  // The same checks, and messages, as copy_ on the CPU.
  at::assert_no_internal_overlap(dst);
  if (is_ocl(self) && is_ocl(dst)) {
    at::assert_no_partial_overlap(dst, self);
    device_copy(dst, self);
  } else if (is_ocl(dst)) {
    TORCH_CHECK(self.device().is_cpu(), "torch_ocl: cannot copy from ", self.device(), " to ", dst.device());
    host_to_device(dst, self, non_blocking);
  } else {
    TORCH_CHECK(dst.device().is_cpu(), "torch_ocl: cannot copy from ", self.device(), " to ", dst.device());
    device_to_host(dst, self, non_blocking);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (!dst.sizes().equals(self.sizes()))
    dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

}  // namespace torch_ocl
