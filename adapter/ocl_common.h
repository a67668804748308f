// ocl_common.h - what every adapter file shares: the one macro that turns a
// runtime status into a Python-visible exception, and at::Tensor -> tocl_tensor.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include "tocl/device.h"
#include "tocl/dtype.h"
#include "tocl/mem.h"
#include "tocl/ops.h"
#include "tocl/status.h"
#include "tocl/stream.h"

namespace torch_ocl {

// Raise the runtime's message as a c10 error (Python: RuntimeError), or as
// torch.OutOfMemoryError for TOCL_E_OOM. The only place a status becomes an
// exception; carries the caller's file and line.
[[noreturn]] void throw_status(tocl_status s, const char* expr, const char* file, int line);

#define TOCL_CHECK(expr)                                                   \
  do {                                                                     \
    tocl_status tocl_check_s_ = (expr);                                    \
    if (C10_UNLIKELY(tocl_check_s_ != TOCL_OK))                            \
      ::torch_ocl::throw_status(tocl_check_s_, #expr, __FILE__, __LINE__); \
  } while (0)

// Device index of an ocl device (current device when the index is -1).
int device_index(const c10::Device& d);
int current_device();
int current_stream(int dev);

// dtype mapping; raises a clear error naming the dtype if unsupported.
tocl_dtype to_tocl_dtype(c10::ScalarType t);
bool is_supported_dtype(c10::ScalarType t);
// What an ocl tensor may hold: the above, complex32/64/128, which are pairs
// of their real dtype (to_tocl_pairs, complex_part), and uint16/32/64, held
// as bits (aten/ocl_wide_unsigned.h).
bool is_storage_dtype(c10::ScalarType t);

// A strided view of an ocl tensor for the runtime (data address includes the
// storage offset).
tocl_tensor to_tocl_tensor(const at::Tensor& t);
// A complex tensor as its real dtype with a trailing pair dim [.., 2] of
// stride 1 (view_as_real's layout); any other tensor as to_tocl_tensor.
tocl_tensor to_tocl_pairs(const at::Tensor& t);
// The real (part 0) or imaginary (part 1) values of a complex tensor, as a
// strided tensor of its real dtype with t's shape.
tocl_tensor complex_part(const at::Tensor& t, int part);
// The synthetic device address of t's first element. Raises for a tensor
// that is not on an ocl device: a host pointer is never taken for a device
// address.
tocl_addr device_addr(const at::Tensor& t);
// at::native::resize_output for an out= argument, after checking that the
// out tensor is on an ocl device (the CPU and CUDA backends refuse a
// wrong-device out with this message). Returns whether it resized.
bool resize_out(const at::Tensor& out, c10::IntArrayRef shape);
tocl_scalar to_tocl_scalar(const c10::Scalar& s);

// Fallback policy (adapter/fallback.cpp).
void fallback_reset_stats();

}  // namespace torch_ocl
