// ocl_wide_unsigned.h - uint16/32/64 on ocl: held, filled and copied as the
// bits of the signed type of their width (no kernel computes in them; ops on
// them take the CPU fallback, ocl_complex_route.h).
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>

namespace torch_ocl {

// The signed dtype whose kernels move a wide unsigned tensor's bits; nullopt
// for every other dtype.
inline std::optional<c10::ScalarType> signed_of_width(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::UInt16: return c10::ScalarType::Short;
    case c10::ScalarType::UInt32: return c10::ScalarType::Int;
    case c10::ScalarType::UInt64: return c10::ScalarType::Long;
    default: return std::nullopt;
  }
}

}  // namespace torch_ocl
