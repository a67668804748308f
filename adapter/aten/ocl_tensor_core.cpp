// ocl_tensor_core.cpp - the minimal aten set that makes `ocl` a device:
// allocation, views (never through the CPU fallback), resize, set_, scalar
// reads, fill and zero.
#include <ATen/EmptyTensor.h>
#include <ATen/InferSize.h>
#include <ATen/TensorUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cstring>

#include "../runtime/ocl_allocator.h"
#include "ocl_common.h"
#include "ocl_wide_unsigned.h"

namespace torch_ocl {
namespace {

constexpr auto kOcl = c10::DispatchKey::PrivateUse1;

// What ocl tensors hold (is_storage_dtype); anything else raises the
// runtime's dtype error.
void check_dtype(std::optional<c10::ScalarType> dtype) {
  c10::ScalarType t = dtype.value_or(c10::get_default_dtype_as_scalartype());
  if (!is_storage_dtype(t))
    to_tocl_dtype(t);
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!layout || *layout == c10::Layout::Strided, "torch_ocl: only strided tensors are supported, got ",
              *layout);
  check_dtype(dtype);
  c10::Device dev = device.value_or(c10::Device(c10::DeviceType::PrivateUse1));
  int idx = device_index(dev);
  TOCL_CHECK(tocl_device_check(idx));
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(idx)));
  return at::detail::empty_generic(size, device_allocator(), c10::DispatchKeySet(kOcl),
                                   dtype.value_or(c10::get_default_dtype_as_scalartype()), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  TORCH_CHECK(!layout || *layout == c10::Layout::Strided, "torch_ocl: only strided tensors are supported");
  check_dtype(dtype);
  c10::Device dev = device.value_or(c10::Device(c10::DeviceType::PrivateUse1));
  int idx = device_index(dev);
  TOCL_CHECK(tocl_device_check(idx));
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(idx)));
  return at::detail::empty_strided_generic(size, stride, device_allocator(), c10::DispatchKeySet(kOcl),
                                           dtype.value_or(c10::get_default_dtype_as_scalartype()));
}

// Make the storage hold at least `bytes`, growing it on the device.
void ensure_storage_bytes(const at::Tensor& self, size_t bytes) {
  c10::StorageImpl* st = self.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
  if (bytes <= st->nbytes())
    return;
  c10::DeviceGuard guard(self.device());
  at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(self.storage(), bytes);
}

size_t storage_bytes_needed(c10::IntArrayRef size, c10::IntArrayRef stride, int64_t offset, size_t itemsize) {
  int64_t last = 0;
  for (size_t i = 0; i < size.size(); i++) {
    if (size[i] == 0)
      return 0;
    last += (size[i] - 1) * stride[i];
  }
  return static_cast<size_t>(offset + last + 1) * itemsize;
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  for (auto s : size)
    TORCH_CHECK(s >= 0, "torch_ocl: resize_ got a negative size ", size);
  auto* impl = self.unsafeGetTensorImpl();
  // As the CPU's resize_: a tensor that already has the size keeps its
  // strides (an out= view stays a view); a memory format restrides it.
  if (self.sizes() != size)
    impl->set_sizes_contiguous(size);
  if (memory_format && *memory_format != c10::MemoryFormat::Preserve)
    impl->empty_tensor_restride(*memory_format);
  size_t need = storage_bytes_needed(self.sizes(), self.strides(), self.storage_offset(), self.itemsize());
  ensure_storage_bytes(self, need);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size,
                        c10::IntArrayRef stride) {
  TORCH_CHECK(source.device().type() == c10::DeviceType::PrivateUse1,
              "torch_ocl: set_ expects a storage on the ocl device, got ", source.device());
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(offset);
  impl->set_sizes_and_strides(size, stride);
  size_t need = storage_bytes_needed(size, stride, offset, self.itemsize());
  ensure_storage_bytes(self, need);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  size_t n = source.nbytes() / self.itemsize();
  int64_t len = static_cast<int64_t>(n);
  return set_storage(self, std::move(source), 0, {len}, {1});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& src) {
  if (self.is_same(src))
    return self;
  return set_storage(self, src.storage(), src.storage_offset(), src.sizes(), src.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage st(c10::Storage::use_byte_size_t(), 0, device_allocator(), true);
  return set_storage(self, std::move(st), 0, {0}, {1});
}

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "torch_ocl: a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  int dev = self.device().index();
  union {
    uint8_t b[16];
    bool z;
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t h, u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
  } v{};
  TOCL_CHECK(tocl_copy_d2h(dev, tocl_stream_current(dev), v.b, reinterpret_cast<tocl_addr>(self.data_ptr()),
                           self.itemsize(), 1));
  switch (self.scalar_type()) {
    case c10::ScalarType::Bool: return c10::Scalar(v.u8 != 0);
    case c10::ScalarType::Byte: return c10::Scalar(static_cast<int64_t>(v.u8));
    case c10::ScalarType::Char: return c10::Scalar(static_cast<int64_t>(v.i8));
    case c10::ScalarType::Short: return c10::Scalar(static_cast<int64_t>(v.i16));
    case c10::ScalarType::Int: return c10::Scalar(static_cast<int64_t>(v.i32));
    case c10::ScalarType::Long: return c10::Scalar(v.i64);
    case c10::ScalarType::Half: return c10::Scalar(c10::Half(v.h, c10::Half::from_bits()));
    case c10::ScalarType::BFloat16: return c10::Scalar(c10::BFloat16(v.h, c10::BFloat16::from_bits()));
    case c10::ScalarType::Float: return c10::Scalar(v.f32);
    case c10::ScalarType::Double: return c10::Scalar(v.f64);
    case c10::ScalarType::UInt16: return c10::Scalar(static_cast<int64_t>(v.u16));
    case c10::ScalarType::UInt32: return c10::Scalar(static_cast<int64_t>(v.u32));
    case c10::ScalarType::UInt64: return c10::Scalar(v.u64);
    case c10::ScalarType::ComplexHalf: {
      c10::Half h[2];
      std::memcpy(h, v.b, sizeof h);
      return c10::Scalar(c10::complex<c10::Half>(h[0], h[1]));
    }
    case c10::ScalarType::ComplexFloat: {
      float f[2];
      std::memcpy(f, v.b, sizeof f);
      return c10::Scalar(c10::complex<float>(f[0], f[1]));
    }
    case c10::ScalarType::ComplexDouble: {
      double d[2];
      std::memcpy(d, v.b, sizeof d);
      return c10::Scalar(c10::complex<double>(d[0], d[1]));
    }
    default: TORCH_CHECK(false, "torch_ocl: unsupported dtype ", self.scalar_type());
  }
}

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  if (self.numel() == 0)
    return self;
  int dev = self.device().index();
  if (self.is_complex()) {
    // Each part from the value's part; the conj and neg bits describe
    // what the physical values mean, so fill what reads back as value.
    c10::complex<double> z = value.toComplexDouble();
    double re = self.is_neg() ? -z.real() : z.real();
    double im = (self.is_neg() != self.is_conj()) ? -z.imag() : z.imag();
    for (int part = 0; part < 2; part++) {
      tocl_tensor t = complex_part(self, part);
      TOCL_CHECK(tocl_op_fill(dev, tocl_stream_current(dev), &t, to_tocl_scalar(c10::Scalar(part ? im : re))));
    }
    return self;
  }
  TORCH_CHECK(!value.isComplex(), "value cannot be converted to type ", self.scalar_type(), " without overflow");
  if (auto as = signed_of_width(self.scalar_type())) {
    // The value's bits, written as the signed type of the same width.
    uint64_t u = value.isFloatingPoint() ? static_cast<uint64_t>(value.toDouble()) : value.toUInt64();
    int64_t bits = *as == c10::ScalarType::Short ? static_cast<int16_t>(static_cast<uint16_t>(u))
                   : *as == c10::ScalarType::Int ? static_cast<int32_t>(static_cast<uint32_t>(u))
                                                 : static_cast<int64_t>(u);
    tocl_tensor t = to_tocl_tensor(self.view(*as));
    TOCL_CHECK(tocl_op_fill(dev, tocl_stream_current(dev), &t, to_tocl_scalar(c10::Scalar(bits))));
    return self;
  }
  tocl_tensor t = to_tocl_tensor(self);
  TOCL_CHECK(tocl_op_fill(dev, tocl_stream_current(dev), &t, to_tocl_scalar(value)));
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  return fill_scalar(self, value.item());
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, c10::Scalar(0)); }

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

// Keep the tensor's block from reuse until work queued on `s` is done.
void record_stream(at::Tensor& self, c10::Stream s) {
  TORCH_CHECK(s.device() == self.device(), "torch_ocl: record_stream: stream is on ", s.device(),
              " but the tensor is on ", self.device());
  void* base = self.storage().data_ptr().get();
  if (base)
    TOCL_CHECK(tocl_mem_record_stream(reinterpret_cast<tocl_addr>(base), static_cast<int>(s.id())));
}

// Whether `self.data = from` may swap storage in place. PyTorch answers yes only
// between its own dense backends, so without this `module.to("ocl")` would give
// every module its own copy of a shared (tied) parameter instead of keeping one
// Parameter object, as it does for CUDA. Dense CPU and ocl tensors share the
// TensorImpl layout, so they are compatible in both directions.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    return t.layout() == at::kStrided && !t.is_quantized() && !t.is_nested() &&
           (t.device().type() == c10::DeviceType::CPU || t.device().type() == c10::DeviceType::PrivateUse1);
  };
  if (dense(self) && dense(from))
    return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", as_strided);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero_);
  m.impl("record_stream", record_stream);
}

}  // namespace torch_ocl
