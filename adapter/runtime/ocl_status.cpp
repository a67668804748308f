// ocl_status.cpp - status -> exception, dtype/tensor conversion helpers.
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>
#include <ATen/native/Resize.h>

#include <string>

#include "ocl_common.h"

namespace torch_ocl {

void throw_status(tocl_status s, const char* expr, const char* file, int line) {
  std::string msg = tocl_last_error();
  if (msg.empty())
    msg = std::string("torch_ocl runtime call failed with ") + tocl_status_name(s);
  // Python users read the message; the call site helps us when they report it.
  msg += "\n(torch_ocl: " + std::string(tocl_status_name(s)) + " from " + expr + " at " +
         file + ":" + std::to_string(line) + ")";
  if (s == TOCL_E_OOM)
    throw c10::OutOfMemoryError(c10::SourceLocation{__func__, file, static_cast<uint32_t>(line)}, msg);
  throw c10::Error(c10::SourceLocation{__func__, file, static_cast<uint32_t>(line)}, msg);
}

static tocl_dtype map_dtype(c10::ScalarType t, bool* ok) {
  *ok = true;
  switch (t) {
    case c10::ScalarType::Bool: return TOCL_BOOL;
    case c10::ScalarType::Byte: return TOCL_U8;
    case c10::ScalarType::Char: return TOCL_I8;
    case c10::ScalarType::Short: return TOCL_I16;
    case c10::ScalarType::Int: return TOCL_I32;
    case c10::ScalarType::Long: return TOCL_I64;
    case c10::ScalarType::Half: return TOCL_F16;
    case c10::ScalarType::BFloat16: return TOCL_BF16;
    case c10::ScalarType::Float: return TOCL_F32;
    case c10::ScalarType::Double: return TOCL_F64;
    default: *ok = false; return TOCL_F32;
  }
}

bool is_supported_dtype(c10::ScalarType t) {
  bool ok;
  map_dtype(t, &ok);
  return ok;
}

tocl_dtype to_tocl_dtype(c10::ScalarType t) {
  bool ok;
  tocl_dtype d = map_dtype(t, &ok);
  TORCH_CHECK_TYPE(ok, "torch_ocl: dtype ", t,
                   " is not supported on the ocl device (supported: bool, uint8, int8, int16, "
                   "int32, int64, float16, bfloat16, float32, float64)");
  return d;
}

tocl_tensor to_tocl_tensor(const at::Tensor& t) {
  TORCH_CHECK(t.dim() <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: tensors of more than ",
              TOCL_TENSOR_MAX_DIMS, " dimensions are not supported, got ", t.dim());
  tocl_tensor r{};
  r.data = device_addr(t);
  r.dtype = to_tocl_dtype(t.scalar_type());
  r.ndim = static_cast<int>(t.dim());
  for (int i = 0; i < r.ndim; i++) {
    r.sizes[i] = t.size(i);
    r.strides[i] = t.stride(i);
  }
  return r;
}

bool is_storage_dtype(c10::ScalarType t) {
  return is_supported_dtype(t) || t == c10::ScalarType::ComplexHalf || t == c10::ScalarType::ComplexFloat ||
         t == c10::ScalarType::ComplexDouble || t == c10::ScalarType::UInt16 || t == c10::ScalarType::UInt32 ||
         t == c10::ScalarType::UInt64;
}

// A complex element is two values of its real dtype, real part first (as
// c10::complex and std::complex): [.., n] complex is [.., n, 2] real with
// every stride doubled, the layout of view_as_real. Conj and neg bits are
// the caller's (physical values are what is described).
tocl_tensor to_tocl_pairs(const at::Tensor& t) {
  if (!t.is_complex())
    return to_tocl_tensor(t);
  TORCH_CHECK(t.dim() + 1 <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: complex tensors of more than ",
              TOCL_TENSOR_MAX_DIMS - 1, " dimensions are not supported, got ", t.dim());
  tocl_tensor r = complex_part(t, 0);
  r.sizes[r.ndim] = 2;
  r.strides[r.ndim] = 1;
  r.ndim++;
  return r;
}

tocl_tensor complex_part(const at::Tensor& t, int part) {
  TORCH_CHECK(t.is_complex(), "torch_ocl: internal error: complex_part of a ", t.scalar_type(), " tensor");
  TORCH_CHECK(t.dim() <= TOCL_TENSOR_MAX_DIMS, "torch_ocl: tensors of more than ", TOCL_TENSOR_MAX_DIMS,
              " dimensions are not supported, got ", t.dim());
  c10::ScalarType real = c10::toRealValueType(t.scalar_type());
  tocl_tensor r{};
  r.data = device_addr(t) + static_cast<tocl_addr>(part) * c10::elementSize(real);
  r.dtype = to_tocl_dtype(real);
  r.ndim = static_cast<int>(t.dim());
  for (int i = 0; i < r.ndim; i++) {
    r.sizes[i] = t.size(i);
    r.strides[i] = 2 * t.stride(i);
  }
  return r;
}

tocl_addr device_addr(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "torch_ocl: expected a tensor on the ocl device, but got one on ",
              t.device(), " (shape ", t.sizes(), ")");
  return reinterpret_cast<tocl_addr>(t.data_ptr());
}

tocl_scalar to_tocl_scalar(const c10::Scalar& s) {
  tocl_scalar r{};
  if (s.isFloatingPoint()) {
    r.is_float = 1;
    r.f = s.toDouble();
    r.i = static_cast<int64_t>(r.f);
  } else if (s.isBoolean()) {
    r.i = s.toBool() ? 1 : 0;
    r.f = static_cast<double>(r.i);
  } else {
    TORCH_CHECK(!s.isComplex(), "torch_ocl: complex scalars are not supported");
    r.i = s.toLong();
    r.f = static_cast<double>(r.i);
  }
  return r;
}

bool resize_out(const at::Tensor& out, c10::IntArrayRef shape) {
  TORCH_CHECK(out.device().type() == c10::DeviceType::PrivateUse1, "Expected out tensor to have device ",
              c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(current_device())),
              ", but got ", out.device(), " instead");
  return at::native::resize_output(out, shape);
}

}  // namespace torch_ocl
