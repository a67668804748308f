// ocl_nn_util.h - what the row-kernel families (softmax, norm, loss) share:
// optional tensors as nullable tocl_tensor pointers, dense copies and out= delivery.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "ocl_common.h"
#include "tocl/nn.h"

namespace torch_ocl::nn_util {

using OptT = std::optional<at::Tensor>;

inline int dev_of(const at::Tensor& t) { return t.device().index(); }
inline int stream_of(const at::Tensor& t) { return tocl_stream_current(dev_of(t)); }
inline at::Tensor opt(const OptT& t) { return t.has_value() ? *t : at::Tensor(); }
inline at::Tensor dense(const at::Tensor& t) { return t.defined() ? t.contiguous() : t; }

// tocl_tensor pointer of a defined tensor, or NULL.
struct TT {
  tocl_tensor t{};
  bool def = false;
  explicit TT(const at::Tensor& x) : def(x.defined()) {
    if (def)
      t = to_tocl_tensor(x);
  }
  const tocl_tensor* p() const { return def ? &t : nullptr; }
};

inline void check_float(const at::Tensor& t, const char* op) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), "\"", op, "\" not implemented for '",
              c10::toString(t.scalar_type()), "'");
}

// Write `res` into `out` (resized as needed) unless they are the same tensor.
inline at::Tensor& deliver(const at::Tensor& res, at::Tensor& out) {
  if (out.is_same(res))
    return out;
  resize_out(out, res.sizes());
  out.copy_(res);
  return out;
}

// Dense destination for `out` of shape/dtype: out itself when it already is.
inline at::Tensor dest_for(at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dt) {
  if (out.defined() && out.scalar_type() == dt && out.sizes().equals(sizes) && out.is_contiguous())
    return out;
  return at::empty(sizes, out.options().dtype(dt));
}

}  // namespace torch_ocl::nn_util
