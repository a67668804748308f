// ocl_copy.cpp - _copy_from: host<->device and device<->device copies. Dtype
// conversion, broadcasting and strided layouts are done on the device by the
// elementwise engine; the host only moves contiguous bytes.
#include <ATen/ExpandUtils.h>
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "ocl_common.h"
#include "ocl_value_range.h"
#include "ocl_wide_unsigned.h"

namespace torch_ocl {
namespace {

bool is_ocl(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// Same dtype, same shape, both contiguous: a raw byte transfer is enough.
bool raw_compatible(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes().equals(b.sizes()) && a.is_contiguous() &&
         b.is_contiguous() && !a.is_conj() && !b.is_conj() && !a.is_neg() && !b.is_neg();
}

// In-place elementwise graphs the copies below need.
void run_graph(int dev, const tocl_ir_graph& g, const tocl_tensor& out, const tocl_tensor* in) {
  TOCL_CHECK(tocl_ew_run(dev, tocl_stream_current(dev), &g, &out, in, nullptr));
}

// t := -t.
void negate(int dev, const tocl_tensor& t) {
  tocl_ir_graph g;
  tocl_ir_init(&g);
  tocl_dtype c = tocl_dtype_compute(t.dtype);
  int x = tocl_ir_cast(&g, tocl_ir_input(&g, t.dtype), c);
  tocl_ir_output(&g, tocl_ir_unary(&g, TOCL_IR_NEG, c, x), t.dtype);
  run_graph(dev, g, t, &t);
}

// bool dst := re != 0 || im != 0, as a complex value converts to bool.
void complex_to_bool(int dev, const tocl_tensor& dst, const tocl_tensor& re, const tocl_tensor& im) {
  tocl_ir_graph g;
  tocl_ir_init(&g);
  int a = tocl_ir_input(&g, re.dtype), b = tocl_ir_input(&g, im.dtype);
  int za = tocl_ir_cast(&g, a, TOCL_BOOL), zb = tocl_ir_cast(&g, b, TOCL_BOOL);
  tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_LOGICAL_OR, TOCL_BOOL, za, zb), TOCL_BOOL);
  tocl_tensor in[2] = {re, im};
  run_graph(dev, g, dst, in);
}

// dst (ocl) := src (ocl, possibly another device), with cast and broadcast.
// Complex values are copied as pairs of their real dtype; a real source
// gives a zero imaginary part, a complex source to a real dst keeps the real
// part (the CPU warns of that in copy_ before it gets here). The conj and
// neg bits are resolved here: dst's physical values are made to read back
// as src's values.
void device_copy(const at::Tensor& dst, const at::Tensor& src) {
  int dev = dst.device().index();
  c10::DeviceGuard guard(dst.device());
  at::Tensor s = src.expand_as(dst);
  int stream = tocl_stream_current(dev);
  auto bits = signed_of_width(dst.scalar_type());
  if (bits && s.scalar_type() == dst.scalar_type()) {
    tocl_tensor d = to_tocl_tensor(dst.view(*bits)), t = to_tocl_tensor(s.view(*bits));
    TOCL_CHECK(tocl_op_copy(dev, stream, &d, &t));
    return;
  }
  if (dst.is_complex() == s.is_complex()) {
    tocl_tensor d = to_tocl_pairs(dst), t = to_tocl_pairs(s);
    TOCL_CHECK(tocl_op_copy(dev, stream, &d, &t));
  } else if (dst.is_complex()) {
    tocl_tensor re = complex_part(dst, 0), im = complex_part(dst, 1), t = to_tocl_tensor(s);
    TOCL_CHECK(tocl_op_copy(dev, stream, &re, &t));
    TOCL_CHECK(tocl_op_fill(dev, stream, &im, to_tocl_scalar(c10::Scalar(0.0))));
  } else {
    tocl_tensor d = to_tocl_tensor(dst), re = complex_part(s, 0);
    if (dst.scalar_type() == at::kBool) {
      complex_to_bool(dev, d, re, complex_part(s, 1));
      return;
    }
    TOCL_CHECK(tocl_op_copy(dev, stream, &d, &re));
  }
  if (dst.is_complex() && s.is_complex() && dst.is_conj() != s.is_conj())
    negate(dev, complex_part(dst, 1));
  if (dst.is_neg() != s.is_neg())
    negate(dev, to_tocl_pairs(dst));
}

// Raw byte transfers move physical values: both sides without conj/neg bits.
bool plain_bits(const at::Tensor& t) { return !t.is_conj() && !t.is_neg(); }

// The host has the values it sends: an index tensor's range is noted for
// checks that would otherwise read the device back (ocl_value_range.h).
// Labels and indices are int64 or int32 and small; uint8 is mostly images,
// and a scan of a large upload would cost more than the wait it spares.
void note_sent_range(const at::Tensor& dst, const at::Tensor& src) {
  auto dt = src.scalar_type();
  if (src.numel() == 0 || src.numel() > (1 << 20) || dt != dst.scalar_type() ||
      (dt != at::kLong && dt != at::kInt))
    return;
  auto [mn, mx] = at::aminmax(src);
  note_value_range(dst, mn.item<int64_t>(), mx.item<int64_t>());
}

void host_to_device(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  note_sent_range(dst, src);
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
  at::Tensor host = src.resolve_conj().resolve_neg().contiguous();
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
  if (!(s.scalar_type() == dst.scalar_type() && s.sizes().equals(dst.sizes()) && s.is_contiguous() &&
        plain_bits(s))) {
    at::Tensor tmp = at::empty(dst.sizes(), src.options().dtype(dst.scalar_type()));
    device_copy(tmp, src);
    s = tmp;
  }
  if (dst.is_contiguous() && plain_bits(dst)) {
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
    note_copied_range(dst, self);
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

// copy_ reaches a backend outside PyTorch's own through _copy_from, which
// PyTorch's Conjugate and Negative fallbacks do not pass through: they would
// materialise a conj source by clone -> copy_ -> _copy_from again, without
// end. The kernels above resolve both bits themselves (device_copy), so the
// two keys fall through to them, as they do for copy_.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace torch_ocl
